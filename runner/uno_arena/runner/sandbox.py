"""One hosted bot's sandbox: a cgroup with limits, and the bubblewrap command that runs it (docs/hosting.md).

The runner (root) starts `/bin/sh`, which moves itself into the bot's cgroup and execs bubblewrap; bubblewrap
gives the bot new PID, mount, IPC, UTS, network and cgroup namespaces, a root filesystem of read-only binds
(the Python runtime, the uno_arena packages, the bot's own code at /bot), a small tmpfs at /tmp and the match
server's Unix socket at /run/uno-arena/server.sock; inside, `setpriv` drops to the bot's own unprivileged
uid and gid, with no capabilities (nor any to gain back: an empty bounding set, no_new_privs), and execs
`python -I -m uno_arena.cli bot run`. The network namespace has a loopback interface and nothing else:
the socket is the one way out.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import shutil
import signal
import site
import sys
from dataclasses import dataclass
from pathlib import Path

SOCKET_IN_SANDBOX = "/run/uno-arena/server.sock"
CODE_IN_SANDBOX = "/bot"
CGROUP_ROOT = Path("/sys/fs/cgroup")
CGROUP_NAME = "uno-arena-runner"
_V1_CONTROLLERS = ("memory", "pids", "cpu")
# what `bot run` imports of ours (the rest of the platform is not mounted: a bot has no use for it)
_PACKAGES = ("uno_arena.rules", "uno_arena.v1", "uno_arena.sdk", "uno_arena.cli")


class SandboxError(RuntimeError):
    """The sandbox cannot be made here (no bubblewrap, no writable cgroups, not root)."""


@dataclass(frozen=True, slots=True)
class Limits:
    """What every hosted bot gets, the same for each (docs/hosting.md, "Limits")."""

    memory_bytes: int = 256 * 1024 * 1024  # its processes' memory, the tmpfs included; no swap
    pids: int = 64  # processes and threads together
    cpu_quota_us: int = 50_000  # CPU time per period: 50 ms of 100 ms, half of one core
    cpu_period_us: int = 100_000
    tmpfs_bytes: int = 16 * 1024 * 1024  # /tmp, its one writable folder


def check_host() -> None:
    """Raise `SandboxError` unless bubblewrap, setpriv and writable cgroups are here and we are root."""
    missing = [tool for tool in ("bwrap", "setpriv") if shutil.which(tool) is None]
    if missing:
        raise SandboxError(f"{' and '.join(missing)} not found: install bubblewrap and util-linux")
    if os.geteuid() != 0:
        raise SandboxError("the runner must run as root: it makes cgroups and runs each bot as its own user")
    Cgroups.detect()


class Cgroups:
    """The cgroups of one runner's bots: under `/sys/fs/cgroup/uno-arena-runner/RUNNER/` (v2), or under
    the runner's own cgroup of each v1 controller (memory, pids, cpu) where the host still has v1."""

    def __init__(self, version: int, bases: list[Path]) -> None:
        self.version = version
        self.bases = bases  # v2: one; v1: one per controller

    @classmethod
    def detect(cls) -> Cgroups:
        if (CGROUP_ROOT / "cgroup.controllers").is_file():
            wanted = {"memory", "pids", "cpu"}
            if not wanted <= set((CGROUP_ROOT / "cgroup.controllers").read_text().split()):
                raise SandboxError("cgroup v2 without the memory, pids and cpu controllers")
            return cls(2, [CGROUP_ROOT / CGROUP_NAME])
        bases = []
        own = _own_v1_paths()
        for controller in _V1_CONTROLLERS:
            mount = CGROUP_ROOT / controller
            if not (mount / "cgroup.procs").is_file():
                raise SandboxError(f"no cgroup controller {controller} at {mount}")
            bases.append(mount / own.get(controller, "").lstrip("/") / CGROUP_NAME)
        return cls(1, bases)

    def runner_folder(self, runner_id: str) -> list[Path]:
        return [base / runner_id for base in self.bases]

    def prepare(self, runner_id: str) -> None:
        """Make the runner's folder (and enable the v2 controllers down to it)."""
        try:
            if self.version == 2:
                for folder in (CGROUP_ROOT, self.bases[0]):
                    folder.mkdir(exist_ok=True)
                    (folder / "cgroup.subtree_control").write_text("+memory +pids +cpu")
                (self.bases[0] / runner_id).mkdir(exist_ok=True)
                (self.bases[0] / runner_id / "cgroup.subtree_control").write_text("+memory +pids +cpu")
            else:
                for base in self.bases:
                    (base / runner_id).mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise SandboxError(f"cannot make the runner's cgroups: {error}") from None

    def create(self, runner_id: str, name: str, limits: Limits) -> BotCgroup:
        folders = [folder / name for folder in self.runner_folder(runner_id)]
        group = BotCgroup(self.version, folders)
        group.remove()  # a leftover of a killed run of this runner id
        try:
            for folder in folders:
                folder.mkdir(exist_ok=True)
            group.limit(limits)
        except OSError as error:
            raise SandboxError(f"cannot make the cgroup of bot {name}: {error}") from None
        return group

    def remove(self, runner_id: str) -> None:
        for folder in self.runner_folder(runner_id):
            if folder.is_dir():
                for child in folder.iterdir():
                    if child.is_dir():
                        BotCgroup(self.version, [child]).remove()
                with contextlib.suppress(OSError):
                    folder.rmdir()


def _own_v1_paths() -> dict[str, str]:
    paths = {}
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(","):
            paths[controller] = path
    return paths


class BotCgroup:
    def __init__(self, version: int, folders: list[Path]) -> None:
        self.version = version
        self.folders = folders

    @property
    def procs_files(self) -> list[str]:
        return [str(folder / "cgroup.procs") for folder in self.folders]

    def _file(self, controller: str, name: str) -> Path:
        if self.version == 2:
            return self.folders[0] / name
        return self.folders[_V1_CONTROLLERS.index(controller)] / name

    def limit(self, limits: Limits) -> None:
        if self.version == 2:
            (self.folders[0] / "memory.max").write_text(str(limits.memory_bytes))
            with contextlib.suppress(OSError):  # no swap on the host: no such file
                (self.folders[0] / "memory.swap.max").write_text("0")
            (self.folders[0] / "pids.max").write_text(str(limits.pids))
            (self.folders[0] / "cpu.max").write_text(f"{limits.cpu_quota_us} {limits.cpu_period_us}")
            return
        self._file("memory", "memory.limit_in_bytes").write_text(str(limits.memory_bytes))
        with contextlib.suppress(OSError):  # memsw: memory and swap together, where swap accounting is on
            self._file("memory", "memory.memsw.limit_in_bytes").write_text(str(limits.memory_bytes))
        self._file("pids", "pids.max").write_text(str(limits.pids))
        self._file("cpu", "cpu.cfs_period_us").write_text(str(limits.cpu_period_us))
        self._file("cpu", "cpu.cfs_quota_us").write_text(str(limits.cpu_quota_us))

    def pids(self) -> set[int]:
        found: set[int] = set()
        for name in self.procs_files:
            with contextlib.suppress(OSError):
                found.update(int(p) for p in Path(name).read_text().split())
        return found

    def oom_kills(self) -> int:
        """How many of its processes the kernel killed for want of memory."""
        if self.version == 2:
            return _field(self.folders[0] / "memory.events", "oom_kill")
        return _field(self._file("memory", "memory.oom_control"), "oom_kill") or _number(
            self._file("memory", "memory.failcnt")
        )

    def pids_refused(self) -> int:
        """How many forks the pids limit refused."""
        return _field(self._file("pids", "pids.events"), "max")

    def cpu_throttled_us(self) -> int:
        if self.version == 2:
            return _field(self.folders[0] / "cpu.stat", "throttled_usec")
        return _field(self._file("cpu", "cpu.stat"), "throttled_time") // 1000

    def kill(self) -> None:
        """SIGKILL every process in it."""
        if self.version == 2 and (self.folders[0] / "cgroup.kill").exists():
            with contextlib.suppress(OSError):
                (self.folders[0] / "cgroup.kill").write_text("1")
            return
        for _ in range(50):  # a process may fork while we kill: again until none is left
            pids = self.pids()
            if not pids:
                return
            for pid in pids:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)

    def remove(self) -> None:
        self.kill()
        for folder in self.folders:
            with contextlib.suppress(FileNotFoundError, OSError):
                folder.rmdir()


def _field(path: Path, name: str) -> int:
    with contextlib.suppress(OSError, ValueError):
        for line in path.read_text().splitlines():
            key, _, value = line.partition(" ")
            if key == name:
                return int(value)
    return 0


def _number(path: Path) -> int:
    with contextlib.suppress(OSError, ValueError):
        return int(path.read_text().strip())
    return 0


def runtime_paths() -> list[str]:
    """What the bot's Python needs, read-only: this interpreter's prefixes and site-packages, and the
    folders of the uno_arena packages `bot run` imports (an editable install keeps them elsewhere)."""
    paths = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix, *site.getsitepackages()}
    for package in _PACKAGES:
        spec = importlib.util.find_spec(package)
        if spec is not None and spec.submodule_search_locations:
            paths.update(spec.submodule_search_locations)
    executable = os.path.realpath(sys.executable)
    paths.add(os.path.dirname(executable))
    kept = sorted(p for p in {os.path.realpath(p) for p in paths} | paths if os.path.isdir(p))
    # a path inside another that is bound anyway needs no bind of its own; /usr is bound whole
    covered = ["/usr"]
    for path in kept:
        if not any(path == c or path.startswith(c + "/") for c in covered):
            covered.append(path)
    return covered[1:]


def command(
    *,
    python: str,
    entry: str,
    bot_name: str,
    code: Path,
    server_socket: Path,
    uid: int,
    cgroup: BotCgroup,
    limits: Limits,
    max_matches: int,
) -> list[str]:
    """The argv that runs bot `bot_name` (`entry`: path/in/code.py:Class) in its sandbox."""
    binds: list[str] = []
    made = {"/", "/usr", "/bin", "/lib", "/lib64", "/sbin", "/tmp", "/proc", "/dev", "/run"}
    for path in runtime_paths():
        for parent in reversed(Path(path).parents):  # bubblewrap would make them 0700: unreadable to the bot
            if str(parent) not in made:
                binds += ["--perms", "0755", "--dir", str(parent)]
                made.add(str(parent))
        binds += ["--ro-bind", path, path]
        made.add(path)
    for link in ("bin", "lib", "lib64", "sbin"):
        target = Path("/") / link
        if target.is_symlink():
            binds += ["--symlink", os.readlink(target), f"/{link}"]
        elif target.is_dir():
            binds += ["--ro-bind", str(target), f"/{link}"]
    sandbox = [
        "bwrap",
        "--unshare-ipc",
        "--unshare-pid",
        "--unshare-net",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--die-with-parent",
        "--new-session",
        "--hostname",
        "uno-arena-bot",
        # only what setpriv needs to become the bot's user; it drops them all before the bot runs
        "--cap-add",
        "CAP_SETUID",
        "--cap-add",
        "CAP_SETGID",
        "--cap-add",
        "CAP_SETPCAP",
        "--ro-bind",
        "/usr",
        "/usr",
        *binds,
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--perms",
        "1777",
        "--size",
        str(limits.tmpfs_bytes),
        "--tmpfs",
        "/tmp",
        "--perms",
        "0755",
        "--dir",
        "/run",
        "--perms",
        "0755",
        "--dir",
        "/run/uno-arena",
        "--ro-bind",
        str(server_socket),
        SOCKET_IN_SANDBOX,
        "--ro-bind",
        str(code),
        CODE_IN_SANDBOX,
        "--chdir",
        CODE_IN_SANDBOX,
        "setpriv",
        f"--reuid={uid}",
        f"--regid={uid}",
        "--clear-groups",
        "--inh-caps=-all",
        "--bounding-set=-all",
        "--no-new-privs",
        "--",
        python,
        "-I",
        "-u",
        "-B",
        "-m",
        "uno_arena.cli",
        "bot",
        "run",
        f"{CODE_IN_SANDBOX}/{entry}",
        "--name",
        bot_name,
        "--server",
        f"unix:{SOCKET_IN_SANDBOX}",
        "--max-matches",
        str(max_matches),
    ]
    # sh joins the cgroup first, so that bubblewrap and every process of the bot start inside it
    join = 'while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; exec "$@"'
    return ["/bin/sh", "-c", join, "sh", *cgroup.procs_files, "--", *sandbox]


def environment(token: str) -> dict[str, str]:
    """The bot's environment, and no more: its token reaches it here, never in an argv (which
    /proc/PID/cmdline shows to everyone on the host)."""
    return {"PATH": "/usr/bin:/bin", "HOME": "/tmp", "LANG": "C.UTF-8", "UNO_ARENA_BOT_TOKEN": token}
