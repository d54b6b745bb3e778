"""`uno-arena runner`: runs each active hosted bot version once across runners, sandboxed (docs/hosting.md).

A runner registers in Redis with an expiring heartbeat. For each hosted bot whose active version is not
disabled it tries to take the bot's lease (SET NX PX); the runner holding it renews it every third of its
life, and a dead runner's lease expires, so another runner takes the bot over. A held bot runs as an SDK
bot process (`bot run`) in its sandbox (`sandbox`). Its output goes to a bounded ring buffer, stored in Redis
every second. A process that exits without being asked is restarted after a backoff that doubles each
time (0.5 s up to 30 s); `crash_limit` exits within `crash_window_s` disable the version, with the reason
in `bot versions`. A new active version drains the old process (its running matches finish) and starts
the new one.
"""

from __future__ import annotations

import collections
import contextlib
import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING

from uno_arena.records import hosted
from uno_arena.runner import sandbox

if TYPE_CHECKING:
    import redis

log = logging.getLogger(__name__)

_RENEW = (
    "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) end "
    "return 0"
)
_RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0"


@dataclass(frozen=True, slots=True)
class RunnerSettings:
    server_socket: Path  # the match server's Unix socket (`uno-arena server --unix-socket`)
    work_dir: Path  # where each bot's code is unpacked (one private folder per bot)
    key_prefix: str = "uno-arena"
    runner_id: str = ""  # default: host-pid-random
    limits: sandbox.Limits = field(default_factory=sandbox.Limits)
    max_bots: int = 16  # bots this runner runs at once
    max_matches: int = 4  # matches each bot plays at once (`bot run --max-matches`)
    lease_ms: int = 10_000  # a dead runner's bots start elsewhere after at most this
    heartbeat_ms: int = 1_000
    uid_base: int = 200_000  # bot i of this runner runs as uid/gid uid_base + i (a range per runner)
    restart_min_s: float = 0.5
    restart_max_s: float = 30.0
    crash_limit: int = 5  # this many exits within crash_window_s disable the version
    crash_window_s: float = 120.0
    drain_s: float = 60.0  # a replaced or stopped bot's matches get this long to finish
    log_read_bytes_per_s: int = 256 * 1024  # a bot printing faster blocks on its own writes
    python: str = sys.executable


class OutputTail:
    """The last `hosted.LOG_BYTES` a process printed, read from its pipe at a bounded rate."""

    def __init__(self, initial: bytes, rate: int) -> None:
        self.buffer = bytearray(initial[-hosted.LOG_BYTES :])
        self.rate = rate
        self.lock = threading.Lock()
        self.dirty = False

    def follow(self, pipe: IO[bytes]) -> threading.Thread:
        thread = threading.Thread(target=self._read, args=(pipe,), daemon=True, name="bot-output")
        thread.start()
        return thread

    def _read(self, pipe: IO[bytes]) -> None:
        chunk = 16 * 1024
        fd = pipe.fileno()
        while True:
            try:
                data = os.read(fd, chunk)
            except OSError:
                break
            if not data:
                break
            with self.lock:
                self.buffer += data
                if len(self.buffer) > 2 * hosted.LOG_BYTES:
                    del self.buffer[: len(self.buffer) - hosted.LOG_BYTES]
                self.dirty = True
            time.sleep(len(data) / self.rate)  # the rate limit: the pipe fills and the bot waits
        pipe.close()

    def add(self, line: str) -> None:
        with self.lock:
            self.buffer += line.encode()
            self.dirty = True

    def take(self) -> bytes | None:
        with self.lock:
            if not self.dirty:
                return None
            self.dirty = False
            del self.buffer[: max(0, len(self.buffer) - hosted.LOG_BYTES)]
            return bytes(self.buffer)

    def last_line(self) -> str:
        with self.lock:
            text = bytes(self.buffer[-2048:]).decode("utf-8", "replace")
        lines = [line for line in text.strip().splitlines() if not line.startswith("--- uno-arena runner")]
        return lines[-1][:300] if lines else ""


@dataclass
class HostedBot:
    """One bot this runner holds the lease of, and its process."""

    name: str
    slot: int
    version: int = 0
    process: subprocess.Popen[bytes] | None = None
    cgroup: sandbox.BotCgroup | None = None
    output: OutputTail | None = None
    started: float = 0.0
    stopping_since: float = 0.0  # asked to drain (a new version, the runner stopping): not a crash
    restart_at: float = 0.0
    exits: collections.deque[float] = field(default_factory=collections.deque)
    oom_seen: int = 0
    pids_seen: int = 0


class Runner:
    def __init__(self, client: redis.Redis, settings: RunnerSettings) -> None:
        self.client = client
        self.settings = settings
        self.id = settings.runner_id or f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"
        self.prefix = settings.key_prefix
        self.cgroups = sandbox.Cgroups.detect()
        self.bots: dict[str, HostedBot] = {}
        # the runner's cgroups: its id and pid, so that two runners on one host never share one
        self.cgroup_folder = f"{self.id}-{os.getpid()}"
        self.stop_event = threading.Event()
        self._renew = client.register_script(_RENEW)
        self._release = client.register_script(_RELEASE)
        self._last_heartbeat = 0.0
        self._last_renew = 0.0

    # ------------------------------------------------------------ the loop

    def run(self) -> None:
        sandbox.check_host()
        if not self.settings.server_socket.exists():
            raise sandbox.SandboxError(
                f"no match server socket at {self.settings.server_socket} "
                "(uno-arena server --unix-socket PATH)"
            )
        self.settings.work_dir.mkdir(parents=True, exist_ok=True)
        os.chmod(self.settings.work_dir, 0o711)
        self.cgroups.prepare(self.cgroup_folder)
        log.info(
            "runner %s: up to %d bots, sandboxed (cgroup v%d), server socket %s",
            self.id,
            self.settings.max_bots,
            self.cgroups.version,
            self.settings.server_socket,
        )
        try:
            while not self.stop_event.is_set():
                self.tick(time.monotonic())
                self.stop_event.wait(0.2)
        finally:
            self.shutdown()

    def stop(self) -> None:
        self.stop_event.set()

    def tick(self, now: float) -> None:
        if now - self._last_heartbeat >= self.settings.heartbeat_ms / 1000:
            self._heartbeat()
            self._last_heartbeat = now
        if now - self._last_renew >= self.settings.lease_ms / 3000:
            self._renew_leases()
            self._last_renew = now
            self._take_new_bots()
        for bot in list(self.bots.values()):
            self._supervise(bot, now)
        self._flush_logs()

    def _heartbeat(self) -> None:
        key = hosted.runner_key(self.prefix, self.id)
        with self.client.pipeline() as pipe:
            pipe.hset(
                key,
                mapping={
                    "host": socket.gethostname(),
                    "pid": os.getpid(),
                    "seen": int(time.time()),
                    "bots": ",".join(sorted(self.bots)),
                },
            )
            pipe.pexpire(key, 3 * self.settings.heartbeat_ms)
            pipe.execute()

    def _renew_leases(self) -> None:
        for name in list(self.bots):
            if not self._renew(
                keys=[hosted.Keys(self.prefix, name).lease], args=[self.id, self.settings.lease_ms]
            ):
                log.warning("runner %s lost the lease of bot %s: stopping it at once", self.id, name)
                self._kill(self.bots.pop(name))

    def _take_new_bots(self) -> None:
        for name in hosted.hosted_names(self.client, self.prefix):
            if name in self.bots or len(self.bots) >= self.settings.max_bots:
                continue
            if not self._runnable(name):
                continue
            lease = hosted.Keys(self.prefix, name).lease
            if self.client.set(lease, self.id, nx=True, px=self.settings.lease_ms):
                slot = min(set(range(self.settings.max_bots)) - {b.slot for b in self.bots.values()})
                self.bots[name] = HostedBot(name, slot)
                log.info("runner %s took bot %s", self.id, name)

    def _runnable(self, name: str) -> int:
        """The version of `name` to run: its active one unless disabled (0: none)."""
        number = hosted.active_version(self.client, self.prefix, name)
        if not number:
            return 0
        status = self.client.hget(hosted.Keys(self.prefix, name).version(number), "status")
        return 0 if status in (None, hosted.Status.DISABLED.value.encode()) else number

    # ------------------------------------------------------------ one bot

    def _supervise(self, bot: HostedBot, now: float) -> None:
        wanted = self._runnable(bot.name)
        process = bot.process
        if process is not None and process.poll() is not None:
            self._exited(bot, process.returncode, now, replaced=wanted != bot.version)
            process, wanted = None, self._runnable(bot.name)  # it may have been disabled just now
        if process is not None:
            if wanted != bot.version and not bot.stopping_since:
                log.info("bot %s: v%d replaced by v%s, draining it", bot.name, bot.version, wanted or "none")
                bot.stopping_since = now
                with contextlib.suppress(ProcessLookupError):
                    process.send_signal(signal.SIGTERM)
            elif bot.stopping_since and now - bot.stopping_since > self.settings.drain_s:
                self._kill(bot, keep=True)
            return
        if not wanted:  # nothing to run (disabled, or the code was deleted): let another runner see
            self._release(keys=[hosted.Keys(self.prefix, bot.name).lease], args=[self.id])
            del self.bots[bot.name]
            return
        if wanted != bot.version:
            bot.exits.clear()
            bot.restart_at = 0.0
        if now >= bot.restart_at:
            self._start(bot, wanted, now)

    def _start(self, bot: HostedBot, number: int, now: float) -> None:
        settings = self.settings
        uid = settings.uid_base + bot.slot
        previous = bot.version == number and bot.output is not None
        bot.version = number
        keys = hosted.Keys(self.prefix, bot.name)
        try:
            code, entry = hosted.code_of(self.client, self.prefix, bot.name, number)
            folder = settings.work_dir / bot.name / f"v{number}"
            shutil.rmtree(settings.work_dir / bot.name, ignore_errors=True)
            folder.mkdir(parents=True)
            hosted.unpack(code, folder)
            _own(settings.work_dir / bot.name, uid)
            if bot.cgroup is not None:
                bot.cgroup.remove()
            bot.cgroup = self.cgroups.create(self.cgroup_folder, bot.name, settings.limits)
            argv = sandbox.command(
                python=settings.python,
                entry=entry,
                bot_name=bot.name,
                code=folder,
                server_socket=settings.server_socket,
                uid=uid,
                cgroup=bot.cgroup,
                limits=settings.limits,
                max_matches=settings.max_matches,
            )
        except (hosted.SubmitError, sandbox.SandboxError, OSError, ValueError) as error:
            reason = f"cannot start: {error}"
            log.error("bot %s v%d %s", bot.name, number, reason)
            hosted.set_status(
                self.client, self.prefix, bot.name, number, hosted.Status.DISABLED, reason=reason
            )
            return
        if not previous:
            bot.output = hosted_output(
                self.client, self.prefix, bot.name, number, settings.log_read_bytes_per_s
            )
        assert bot.output is not None
        when = time.strftime("%Y-%m-%d %H:%M:%S")
        bot.output.add(f"--- uno-arena runner {self.id}: starting v{number} ({when})\n")
        token = hosted.runner_token(self.client, self.prefix, bot.name)
        bot.process = subprocess.Popen(
            argv,
            env=sandbox.environment(token),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        assert bot.process.stdout is not None
        bot.output.follow(bot.process.stdout)
        bot.started, bot.stopping_since = now, 0.0
        bot.oom_seen, bot.pids_seen = bot.cgroup.oom_kills(), bot.cgroup.pids_refused()
        hosted.set_status(
            self.client,
            self.prefix,
            bot.name,
            number,
            hosted.Status.RUNNING,
            runner=self.id,
            crashes=len(bot.exits),
        )
        self.client.hset(keys.bot, "runner", self.id)
        log.info("bot %s v%d started as uid %d (pid %d)", bot.name, number, uid, bot.process.pid)

    def _exited(self, bot: HostedBot, status: int, now: float, replaced: bool) -> None:
        asked = bool(bot.stopping_since)
        assert bot.cgroup is not None and bot.output is not None
        reason = _exit_reason(
            status,
            bot.cgroup.oom_kills() > bot.oom_seen,
            bot.cgroup.pids_refused() > bot.pids_seen,
            self.settings.limits,
            bot.output,
        )
        bot.cgroup.kill()  # whatever it left behind (a pid namespace's init took them already)
        bot.process = None
        bot.output.add(f"--- uno-arena runner: v{bot.version} {reason}\n")
        if asked or replaced:
            hosted.set_status(
                self.client,
                self.prefix,
                bot.name,
                bot.version,
                hosted.Status.REPLACED,
                reason="a newer version runs instead",
            )
            bot.stopping_since = 0.0
            return
        bot.exits.append(now)
        while bot.exits and now - bot.exits[0] > self.settings.crash_window_s:
            bot.exits.popleft()
        crashes = len(bot.exits)
        if crashes >= self.settings.crash_limit:
            why = (
                f"disabled: {crashes} exits within {self.settings.crash_window_s:g} s; the last {reason}"
                " (submit a new version)"
            )
            log.warning("bot %s v%d %s", bot.name, bot.version, why)
            hosted.set_status(
                self.client,
                self.prefix,
                bot.name,
                bot.version,
                hosted.Status.DISABLED,
                reason=why,
                crashes=crashes,
            )
            return
        backoff = min(self.settings.restart_max_s, self.settings.restart_min_s * 2 ** (crashes - 1))
        bot.restart_at = now + backoff
        log.warning("bot %s v%d %s: restarting in %.1f s", bot.name, bot.version, reason, backoff)
        hosted.set_status(
            self.client,
            self.prefix,
            bot.name,
            bot.version,
            hosted.Status.RESTARTING,
            reason=f"{reason}; restart {crashes} in {backoff:g} s",
            runner=self.id,
            crashes=crashes,
        )

    def _kill(self, bot: HostedBot, keep: bool = False) -> None:
        if bot.process is not None and bot.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(bot.process.pid, signal.SIGKILL)
            bot.process.wait(10)
        if bot.cgroup is not None:
            bot.cgroup.kill()
            if not keep:
                bot.cgroup.remove()

    def _flush_logs(self) -> None:
        for bot in self.bots.values():
            tail = bot.output.take() if bot.output is not None else None
            if tail is not None and bot.version:
                hosted.store_log(self.client, self.prefix, bot.name, bot.version, tail)

    def shutdown(self) -> None:
        """Drain every bot (their matches finish, up to `drain_s`), then release the leases."""
        deadline = time.monotonic() + self.settings.drain_s
        for bot in self.bots.values():
            if bot.process is not None and bot.process.poll() is None:
                bot.stopping_since = time.monotonic()
                with contextlib.suppress(ProcessLookupError):
                    bot.process.send_signal(signal.SIGTERM)
        for bot in self.bots.values():
            if bot.process is not None:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    bot.process.wait(max(0.0, deadline - time.monotonic()))
            self._kill(bot)
            self._release(keys=[hosted.Keys(self.prefix, bot.name).lease], args=[self.id])
            if bot.version:
                hosted.set_status(
                    self.client,
                    self.prefix,
                    bot.name,
                    bot.version,
                    hosted.Status.SUBMITTED,
                    reason="its runner stopped; another runner starts it",
                )
        self._flush_logs()
        self.client.delete(hosted.runner_key(self.prefix, self.id))
        self.cgroups.remove(self.cgroup_folder)
        for name in self.bots:
            shutil.rmtree(self.settings.work_dir / name, ignore_errors=True)
        log.info("runner %s stopped", self.id)


def hosted_output(client: redis.Redis, prefix: str, name: str, number: int, rate: int) -> OutputTail:
    """The output of `name` v`number` so far (another runner's runs of it included), to go on from."""
    stored = client.get(hosted.Keys(prefix, name).log(number))
    return OutputTail(hosted.stored_bytes(stored or b""), rate)


def _exit_reason(status: int, oom: bool, pids: bool, limits: sandbox.Limits, output: OutputTail) -> str:
    if oom:
        why = f"was killed: out of memory (limit {limits.memory_bytes // (1024 * 1024)} MiB)"
    elif status < 0:
        why = f"was killed by {signal.Signals(-status).name}"
    else:
        why = f"exited with status {status}"
    if pids:
        why += f" (the limit of {limits.pids} processes refused a fork)"
    last = output.last_line()
    return why + (f": {last}" if last and not oom else "")


def _own(folder: Path, uid: int) -> None:
    """The bot's folder: its own user's, read-only to it, closed to every other."""
    for path in [folder, *folder.rglob("*")]:
        os.chown(path, uid, uid, follow_symlinks=False)
        os.chmod(path, 0o500 if path.is_dir() else 0o400)
