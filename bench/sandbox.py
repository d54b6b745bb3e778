"""Hostile hosted bots: each attack runs in a runner's sandbox while an honest hosted bot plays (hosting.md).

Run: `nice -n 19 python bench/sandbox.py [--redis-url URL] [--matches 3] [--only NAME ...]` as root, with
bubblewrap and writable cgroups. It starts `uno-arena server --unix-socket` and `uno-arena runner` in
processes of their own, registers `honest`, `partner` and `attacker` under a fresh key prefix (deleted at
the end), and submits each attack as the next version of `attacker`. During each attack `honest` plays
`--matches` matches against `partner` (`uno-arena match play`); its decisions time a fixed piece of work
and print how long it took, so a sandbox that leaks CPU, memory or processes to its neighbours shows in
their p99. An attack is contained when the runner and the server live on, the honest matches finish, and
the attack's own check holds: the attack said CONTAINED and never ESCAPED, or the runner recorded its
crash (out of memory, a crash loop disabled), or the server its faults. The last line:
`RESULT attacks=N contained=N honest_p99_ratio=R` (R: the worst attack's honest p99 over the p99 measured
just before it with an idle attacker, so that the host's other load drifting cancels; the issue asks for
at most 2).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import redis

from uno_arena.records import hosted, identity

HONEST = """
import sys, time
from uno_arena.sdk.examples.greedy_bot import GreedyBot

class Hosted(GreedyBot):
    def decide(self, observation):
        started = time.perf_counter()
        total = sum(i * i for i in range(40000))  # a fixed piece of work, timed
        took = time.perf_counter() - started
        print(f"lat {time.time():.3f} {took * 1e6:.0f} {total % 7}", flush=True)
        return super().decide(observation)
"""

# Each attack: module-level code run once the bot is made (`attack()`), and how its verdict is read.
ATTACK_HEADER = """
import os, socket, sys, threading, time
from uno_arena.sdk.examples.greedy_bot import GreedyBot

def report(ok, what):
    print(("CONTAINED " if ok else "ESCAPED ") + what, flush=True)
"""
ATTACK_FOOTER = """
class Hosted(GreedyBot):
    def __init__(self):
        super().__init__()
        attack()
"""


@dataclass(frozen=True)
class Attack:
    name: str
    code: str
    # "said": CONTAINED lines and no ESCAPED; "oom" / "disabled": the runner's record; "faults": a match
    # against it records its faults
    verdict: str = "said"


ATTACKS = [
    Attack(
        "fork_bomb",
        """
def attack():
    children = 0
    try:
        while True:
            if os.fork() == 0:
                time.sleep(60)
                os._exit(0)
            children += 1
    except OSError as error:
        report(children < 100, f"fork refused after {children} children: {error}")
""",
    ),
    Attack(
        "memory_without_end",
        """
def attack():
    hoard = []
    while True:
        hoard.append(bytearray(8 << 20))
        hoard[-1][::4096] = b"x" * len(hoard[-1][::4096])
""",
        verdict="oom",
    ),
    Attack(
        "spin_every_core",
        """
def attack():
    def spin():
        while True:
            pass
    for _ in range(2 * (os.cpu_count() or 1)):
        threading.Thread(target=spin, daemon=True).start()
    report(True, "spinning (the cgroup's cpu quota holds it to its share)")
""",
    ),
    Attack(
        "read_shadow",
        """
def attack():
    try:
        text = open("/etc/shadow").read()
        report(False, f"read /etc/shadow: {len(text)} bytes")
    except OSError as error:
        report(True, f"/etc/shadow: {error}")
""",
    ),
    Attack(
        "read_others_files",
        """
def attack():
    import glob
    seen = []
    for pattern in ("{work}/*/*/*", "{work}/*", "/var/lib/redis/*", "/root/*", "/home/*", "/etc/*",
                    "/proc/1/environ", "/proc/1/root/*", "/work/*"):
        for path in glob.glob(pattern):
            try:
                with open(path, "rb") as found:
                    found.read(1)
                if not path.startswith(("/proc/self", "/bot")):
                    seen.append(path)
            except OSError:
                pass
    report(not seen, f"readable outside its own: {{seen[:5]}}")
""",
    ),
    Attack(
        "write_outside_tmpfs",
        """
def attack():
    written = []
    for path in ("/bot/x.py", "/usr/x", "/x", "/run/uno-arena/x", "/dev/shm/x", "/proc/sys/kernel/hostname",
                 "/run/uno-arena/server.sock"):
        try:
            with open(path, "w") as out:
                out.write("x")
            written.append(path)
        except OSError:
            pass
    report(not written, f"written outside /tmp: {written}")
""",
    ),
    Attack(
        "fill_tmpfs",
        """
def attack():
    total = 0
    try:
        with open("/tmp/fill", "wb") as out:
            while True:
                out.write(b"x" * (1 << 20))
                out.flush()
                total += 1 << 20
    except OSError as error:
        report(total <= 16 << 20, f"/tmp full after {total >> 20} MiB: {error}")
""",
    ),
    Attack(
        "connect_out",
        """
def attack():
    reached = []
    for host, port in (("127.0.0.1", 6379), ("127.0.0.1", {server_port}), ("1.1.1.1", 53), ("8.8.8.8", 443),
                       ("::1", 6379)):
        try:
            with socket.create_connection((host, port), timeout=1):
                reached.append(f"{host}:{port}")
        except OSError:
            pass
    report(not reached, f"reached {reached}")
""",
    ),
    Attack(
        "signal_and_ptrace",
        """
def attack():
    import ctypes, signal
    hit = []
    mine = os.getpid()
    for pid in range(1, 5000):
        if pid == mine:
            continue
        try:
            os.kill(pid, signal.SIGKILL)
            hit.append(pid)
        except OSError:
            pass
    libc = ctypes.CDLL(None, use_errno=True)
    traced = libc.ptrace(16, 1, 0, 0) == 0  # PTRACE_ATTACH to pid 1 (the sandbox's init)
    report(not hit and not traced, f"signalled {hit[:5]}, ptrace of pid 1: {traced}")
""",
    ),
    Attack(
        "print_without_end",
        """
def attack():
    line = "spam " * 2000 + "\\n"
    while True:
        sys.stdout.write(line)
""",
        verdict="bounded_log",
    ),
    Attack(
        "sleep_past_deadlines",
        """
def attack():
    pass

def _slow(self, observation):
    time.sleep(5)
    return GreedyBot.decide(self, observation)

GreedyBot.decide = _slow
""",
        verdict="faults",
    ),
    Attack(
        "exit_at_once_in_a_loop",
        """
def attack():
    os._exit(0)
""",
        verdict="disabled",
    ),
]


def source(attack: Attack, work: Path, server_port: int) -> str:
    body = textwrap.dedent(attack.code).replace("{work}", str(work))
    body = body.replace("{server_port}", str(server_port))
    body = body.replace("{{", "{").replace("}}", "}")
    return ATTACK_HEADER + body + ATTACK_FOOTER


def free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def wait_until(condition: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out waiting for {what}")
        time.sleep(0.1)


def cli(*args: str, cwd: Path | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "uno_arena.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
    )


class Platform:
    """A server (TCP and a Unix socket), a runner, and the three bots, under a fresh key prefix."""

    def __init__(self, redis_url: str, folder: Path, matches: int = 3) -> None:
        self.redis_url, self.folder, self.matches = redis_url, folder, matches
        self.prefix = f"uno-arena-sandbox-{uuid.uuid4().hex[:8]}"
        self.client = redis.Redis.from_url(redis_url)
        self.port = free_port()
        self.socket = folder / "server.sock"
        self.work = folder / "work"
        self.processes: list[subprocess.Popen[bytes]] = []
        self.tokens: dict[str, str] = {}
        self.base = ["--redis-url", redis_url, "--key-prefix", self.prefix]

    def start(self) -> None:
        with (self.folder / "server.log").open("ab") as out:
            self.processes.append(
                subprocess.Popen(
                    [
                        sys.executable,
                        "-m",
                        "uno_arena.cli",
                        "server",
                        "--listen",
                        f"127.0.0.1:{self.port}",
                        "--unix-socket",
                        str(self.socket),
                        "--decision-timeout-ms",
                        "1000",
                        *self.base,
                    ],
                    stdout=out,
                    stderr=out,
                )
            )
        wait_until(self.socket.exists, 30, "the server's socket")
        with (self.folder / "runner.log").open("ab") as out:
            self.runner = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "uno_arena.cli",
                    "runner",
                    "--server-socket",
                    str(self.socket),
                    "--work-dir",
                    str(self.work),
                    "--id",
                    "bench",
                    "--lease-ms",
                    "2000",
                    "--crash-limit",
                    "3",
                    "--drain-seconds",
                    "1",
                    "--uid-base",
                    "240000",
                    *self.base,
                ],
                stdout=out,
                stderr=out,
                start_new_session=True,
            )
        self.processes.append(self.runner)
        self.control = identity.create_control_token(self.client, self.prefix)
        for name in ("honest", "partner", "attacker"):
            self.tokens[name] = identity.register_bot(self.client, self.prefix, name)
        self.submit("honest", HONEST)
        self.submit("partner", HONEST.replace("print(", "(lambda *a, **k: None)("))

    def submit(self, name: str, code: str) -> int:
        path = self.folder / f"{name}-{time.monotonic_ns()}.py"
        path.write_text(code)
        package = hosted.pack(Path(f"{path}:Hosted"))
        return hosted.submit(self.client, self.prefix, name, self.tokens[name], package)

    def status(self, name: str, number: int) -> hosted.Version:
        [found] = [v for v in hosted.versions(self.client, self.prefix, name) if v.number == number]
        return found

    def log(self, name: str, number: int) -> str:
        stored = hosted.logs(self.client, self.prefix, name, self.tokens[name], number)[1]
        return stored.decode(errors="replace")

    def connected(self, name: str) -> bool:
        done = cli(
            "bot",
            "list",
            "--control-token",
            self.control,
            "--server",
            f"127.0.0.1:{self.port}",
            "--json",
            *self.base,
        )
        if done.returncode != 0:
            return False
        return any(bot["bot"] == name and bot["connected"] for bot in json.loads(done.stdout))

    def play(self, *bots: str, target: int = 100) -> subprocess.CompletedProcess[str]:
        return cli(
            "match",
            "play",
            *bots,
            "--server",
            f"127.0.0.1:{self.port}",
            "--control-token",
            self.control,
            "--target",
            str(target),
            cwd=self.folder,
            timeout=300,
        )

    def honest_latencies(self, since: float, until: float) -> list[float]:
        found = []
        for line in self.log("honest", 1).splitlines():
            parts = line.split()
            if len(parts) == 4 and parts[0] == "lat" and since <= float(parts[1]) <= until:
                found.append(float(parts[2]))
        return found

    def honest_window(self) -> tuple[list[float], bool]:
        """Play `matches` honest matches; their decisions' latencies, and whether every match finished."""
        since = time.time()
        ok = all(self.play("honest", "partner").returncode == 0 for _ in range(self.matches))
        time.sleep(1.2)  # the runner stores logs every second
        return self.honest_latencies(since, time.time()), ok

    def alive(self) -> bool:
        return all(p.poll() is None for p in self.processes)

    def stop(self) -> None:
        for process in reversed(self.processes):
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
                try:
                    process.wait(30)
                except subprocess.TimeoutExpired:
                    process.kill()
        for key in self.client.scan_iter(match=f"{self.prefix}:*", count=500):
            self.client.delete(key)


@contextlib.contextmanager
def platform(redis_url: str, matches: int = 3) -> Iterator[Platform]:
    folder = Path(tempfile.mkdtemp(prefix="uno-arena-sandbox-"))
    running = Platform(redis_url, folder, matches)
    try:
        running.start()
        wait_until(
            lambda: running.connected("honest") and running.connected("partner"),
            90,
            "the honest bots to connect",
        )
        yield running
    finally:
        running.stop()
        shutil.rmtree(folder, ignore_errors=True)


def run_attack(running: Platform, attack: Attack) -> tuple[bool, str]:
    """Submit `attack` as the attacker's next version, let it act, and judge it: (contained, why)."""
    number = running.submit("attacker", source(attack, running.work, running.port))
    wait_until(
        lambda: running.status("attacker", number).status is not hosted.Status.SUBMITTED,
        60,
        f"{attack.name} to start",
    )
    detail = ""
    if attack.verdict == "said":
        wait_until(
            lambda: (
                "CONTAINED" in running.log("attacker", number) or "ESCAPED" in running.log("attacker", number)
            ),
            60,
            f"{attack.name} to report",
        )
        said = running.log("attacker", number)
        ok = "ESCAPED" not in said
        detail = next(line for line in said.splitlines() if line.startswith(("CONTAINED", "ESCAPED")))
    elif attack.verdict == "bounded_log":  # the runner keeps reading at its rate, and keeps 64 KiB
        wait_until(lambda: len(running.log("attacker", number)) > hosted.LOG_BYTES // 2, 60, "the flood")
        time.sleep(2)
        kept = len(running.log("attacker", number).encode())
        ok, detail = kept <= hosted.LOG_BYTES, f"{kept} bytes kept of a flood without end"
    elif attack.verdict == "oom":
        wait_until(lambda: "out of memory" in running.status("attacker", number).reason, 60, "an OOM kill")
        ok, detail = True, running.status("attacker", number).reason
    elif attack.verdict == "disabled":
        wait_until(
            lambda: running.status("attacker", number).status is hosted.Status.DISABLED,
            90,
            "the crash loop to be disabled",
        )
        ok, detail = True, running.status("attacker", number).reason
    else:  # faults: a match against it is played to its end, the attacker faulted
        wait_until(lambda: running.connected("attacker"), 60, "the attacker to connect")
        played = running.play("attacker", "partner", target=20)
        said = played.stdout.lower()
        ok = played.returncode == 0 and ("fault" in said or "forfeit" in said)
        detail = played.stdout.strip().splitlines()[-1] if played.stdout.strip() else played.stderr[-300:]
    return ok and running.alive(), detail


def p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))] if ordered else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/13")
    parser.add_argument("--matches", type=int, default=3, help="honest matches during each attack")
    parser.add_argument("--only", nargs="*", default=None, help="attack names (default: every one)")
    args = parser.parse_args()
    chosen = [a for a in ATTACKS if args.only is None or a.name in args.only]
    contained, worst = 0, 0.0
    with platform(args.redis_url, args.matches) as running:
        baseline, _ = running.honest_window()
        base = p99(baseline)
        print(f"baseline: {len(baseline)} honest decisions, p99 {base:.0f} us", flush=True)
        for attack in chosen:
            # a baseline beside each attack, with an idle attacker: the host's other load drifts
            running.submit("attacker", ATTACK_HEADER + "\ndef attack():\n    pass\n" + ATTACK_FOOTER)
            quiet, _ = running.honest_window()
            base = min(base, p99(quiet)) if quiet else base
            ok, detail = run_attack(running, attack)
            latencies, finished = running.honest_window()
            ratio = p99(latencies) / (p99(quiet) if quiet else base)
            ok = ok and finished and running.alive()
            contained += ok
            worst = max(worst, ratio)
            print(
                f"{attack.name}: {'contained' if ok else 'NOT CONTAINED'}; "
                f"honest p99 {p99(latencies):.0f} us "
                f"(x{ratio:.2f}, {len(latencies)} decisions); {detail[:200]}",
                flush=True,
            )
    print(f"RESULT attacks={len(chosen)} contained={contained} honest_p99_ratio={worst:.2f}")


if __name__ == "__main__":
    sys.exit(main())
