"""Hosted bots: code submitted once, stored in Redis by version, run by `uno-arena runner` (docs/hosting.md).

Keys (under the configured prefix):
- `{prefix}:hosted-bots`: set, the names of the bots with submitted code.
- `{prefix}:hosted:{name}`: hash, `latest` (the highest version number) and `active` (the version
  runners run; a new submission makes itself active, so it replaces the old one for the next matches).
- `{prefix}:hosted:{name}:token`: string, the bot's token as given at the last submission: a runner
  connects the bot with it (the server keeps only its hash, `identity`); see docs/hosting.md.
- `{prefix}:hosted:{name}:v{n}`: hash, one version: `code` (a zip, at most `MAX_PACKED_BYTES`), `entry`
  (`path/in/zip.py:Class`), `sha256`, `size`, `files`, `submitted` (unix seconds), `status` (`Status`),
  `reason` (why it is disabled or stopped), `runner` (the runner that runs it), `crashes`, `updated`.
- `{prefix}:hosted:{name}:v{n}:log`: string, the last `LOG_BYTES` the version printed (stdout and
  stderr, every run of it), written by the runner that runs it.
- `{prefix}:hosted:{name}:lease`: string, the id of the runner that runs the bot, with an expiry it
  renews: a bot runs on one runner at a time; a dead runner's lease expires and another takes the bot.
- `{prefix}:runner:{id}`: hash of the runner's host, pid and bots, expiring unless its heartbeat renews it.
"""

from __future__ import annotations

import ast
import enum
import hashlib
import io
import re
import stat
import time
import tomllib
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from uno_arena.records.identity import bot_key, check_name, same_digest, token_digest

if TYPE_CHECKING:
    import redis

MAX_PACKED_BYTES = 1024 * 1024  # a submission's zip; larger is refused before anything is stored
MAX_UNPACKED_BYTES = 8 * 1024 * 1024  # what it may unpack to (a runner checks again before unpacking)
MAX_FILES = 256
LOG_BYTES = 64 * 1024  # the last bytes a version printed, kept per version
MANIFEST = "uno-arena-bot.toml"
_ENTRY = re.compile(r"(?P<path>[A-Za-z0-9_][A-Za-z0-9_./-]*\.py):(?P<cls>[A-Za-z_][A-Za-z0-9_]*)")
_SKIPPED = frozenset({"__pycache__", ".git", ".venv", ".mypy_cache", ".pytest_cache"})


class SubmitError(ValueError):
    """A submission that cannot be stored, and why (too big, no entry point, a bad manifest, a bad token)."""


class Status(enum.StrEnum):
    SUBMITTED = "submitted"  # stored, no runner has started it yet
    RUNNING = "running"  # a runner runs it (field `runner`)
    RESTARTING = "restarting"  # it exited or crashed; the runner starts it again after a backoff
    REPLACED = "replaced"  # a newer version runs instead
    DISABLED = "disabled"  # it kept crashing: `reason` says why; a new submission is needed


@dataclass(frozen=True, slots=True)
class Package:
    """A bot's code, packed: what a submission stores."""

    code: bytes  # a zip
    entry: str  # path/in/zip.py:Class
    files: int
    size: int  # unpacked bytes

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.code).hexdigest()


@dataclass(frozen=True, slots=True)
class Version:
    name: str
    number: int
    entry: str
    sha256: str
    packed: int
    size: int
    files: int
    submitted: int
    status: Status
    reason: str
    runner: str
    crashes: int
    active: bool

    @property
    def label(self) -> str:
        return f"v{self.number}"


@dataclass(frozen=True, slots=True)
class Keys:
    prefix: str
    name: str

    @property
    def bot(self) -> str:
        return f"{self.prefix}:hosted:{self.name}"

    @property
    def token(self) -> str:
        return f"{self.bot}:token"

    @property
    def lease(self) -> str:
        return f"{self.bot}:lease"

    def version(self, number: int) -> str:
        return f"{self.bot}:v{number}"

    def log(self, number: int) -> str:
        return f"{self.bot}:v{number}:log"


def index_key(prefix: str) -> str:
    return f"{prefix}:hosted-bots"


def runner_key(prefix: str, runner_id: str) -> str:
    return f"{prefix}:runner:{runner_id}"


def parse_version(text: str) -> int:
    """`v3` or `3` -> 3."""
    match = re.fullmatch(r"v?([1-9][0-9]{0,8})", text.strip())
    if not match:
        raise SubmitError(f"bad version {text!r}: expected v1, v2, ... (or 1, 2, ...)")
    return int(match.group(1))


# ------------------------------------------------------------------ packing


def pack(path: Path) -> Package:
    """A submission from `path`: `file.py:Class` (that file alone) or a folder holding `uno-arena-bot.toml`
    with `entry = "file.py:Class"` (every file of the folder but caches and dot-folders)."""
    text = str(path)
    if not path.is_dir():
        where, sep, cls = text.rpartition(":")
        if not sep or not where.endswith(".py"):
            raise SubmitError(f"{text}: expected path/to/bot.py:ClassName, or a folder with {MANIFEST}")
        file = Path(where)
        if not file.is_file():
            raise SubmitError(f"no such file: {file}")
        files = {file.name: file.read_bytes()}
        entry = f"{file.name}:{cls}"
    else:
        files, entry = _folder(path)
    _check_entry(files, entry)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        for name in sorted(files):
            archive.writestr(zipfile.ZipInfo(name, (2020, 1, 1, 0, 0, 0)), files[name])
    code = buffer.getvalue()
    size = sum(len(data) for data in files.values())
    if len(code) > MAX_PACKED_BYTES:
        raise SubmitError(
            f"{text}: {len(code)} bytes packed, over the limit of {MAX_PACKED_BYTES} "
            '(docs/hosting.md, "Limits")'
        )
    if size > MAX_UNPACKED_BYTES:
        raise SubmitError(f"{text}: {size} bytes unpacked, over the limit of {MAX_UNPACKED_BYTES}")
    return Package(code, entry, len(files), size)


def _folder(folder: Path) -> tuple[dict[str, bytes], str]:
    manifest = folder / MANIFEST
    if not manifest.is_file():
        raise SubmitError(f'{folder}: no {MANIFEST} (it names the entry point: entry = "bot.py:MyBot")')
    try:
        values = tomllib.loads(manifest.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise SubmitError(f"{manifest}: not valid TOML: {error}") from None
    unknown = sorted(set(values) - {"entry"})
    if unknown:
        raise SubmitError(f"{manifest}: unknown key {', '.join(unknown)} (the one key is entry)")
    entry = values.get("entry")
    if not isinstance(entry, str):
        raise SubmitError(f'{manifest}: entry must be a string: entry = "bot.py:MyBot"')
    files: dict[str, bytes] = {}
    total = 0
    for item in sorted(folder.rglob("*")):
        relative = item.relative_to(folder)
        if any(part in _SKIPPED or part.startswith(".") for part in relative.parts):
            continue
        if item.is_symlink():
            raise SubmitError(f"{item}: a symbolic link (copy the file in instead)")
        if item.is_file():
            files[relative.as_posix()] = data = item.read_bytes()
            total += len(data)
            if len(files) > MAX_FILES:
                raise SubmitError(f"{folder}: more than {MAX_FILES} files")
            if total > MAX_UNPACKED_BYTES:
                raise SubmitError(f"{folder}: over {MAX_UNPACKED_BYTES} bytes unpacked")
    return files, entry


def _check_entry(files: dict[str, bytes], entry: str) -> None:
    match = _ENTRY.fullmatch(entry)
    if not match or ".." in PurePosixPath(match["path"]).parts:
        raise SubmitError(f"bad entry point {entry!r}: expected path/in/folder.py:ClassName")
    path, cls = match["path"], match["cls"]
    if path not in files:
        raise SubmitError(f"missing entry point: no file {path} (entry {entry!r})")
    try:
        tree = ast.parse(files[path], path)
    except SyntaxError as error:
        raise SubmitError(f"{path}: syntax error, line {error.lineno}: {error.msg}") from None
    if not any(isinstance(node, ast.ClassDef) and node.name == cls for node in tree.body):
        raise SubmitError(f"missing entry point: {path} defines no class {cls} at its top level")


def unpack(code: bytes, folder: Path) -> None:
    """Write a stored zip's files under `folder`, refusing what no submission holds: paths out of the
    folder, links, too many files or bytes (whoever wrote the Redis key, the runner checks)."""
    with zipfile.ZipFile(io.BytesIO(code)) as archive:
        infos = archive.infolist()
        if len(infos) > MAX_FILES or sum(i.file_size for i in infos) > MAX_UNPACKED_BYTES:
            raise SubmitError("stored code over the limits")
        for info in infos:
            parts = PurePosixPath(info.filename).parts
            if info.filename.startswith("/") or ".." in parts or stat.S_ISLNK(info.external_attr >> 16):
                raise SubmitError(f"stored code holds a bad path {info.filename!r}")
            target = folder.joinpath(*parts)
            if info.is_dir():
                target.mkdir(parents=True, exist_ok=True)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            data = archive.read(info)
            if len(data) != info.file_size:
                raise SubmitError("stored code over the limits")
            target.write_bytes(data)


# ------------------------------------------------------------------ storing


def token_matches(client: redis.Redis, prefix: str, name: str, token: str) -> bool:
    """Whether `token` is bot `name`'s (constant-time; False for unknown bots)."""
    check_name(name)
    stored = client.hget(bot_key(prefix, name), "token_sha256")
    text = stored.decode() if isinstance(stored, bytes) else stored
    return same_digest(text, token_digest(token))


def _authenticate(client: redis.Redis, prefix: str, name: str, token: str) -> None:
    if not token_matches(client, prefix, name, token):
        raise SubmitError(f"bot {name!r}: not registered, or not its token (uno-arena bot register NAME)")


def submit(client: redis.Redis, prefix: str, name: str, token: str, package: Package) -> int:
    """Store `package` as bot `name`'s next version and make it the active one; return its number."""
    _authenticate(client, prefix, name, token)
    if len(package.code) > MAX_PACKED_BYTES:
        raise SubmitError(f"{len(package.code)} bytes packed, over the limit of {MAX_PACKED_BYTES}")
    keys = Keys(prefix, name)
    number = int(client.hincrby(keys.bot, "latest", 1))
    now = str(int(time.time()))
    fields: dict[str, bytes | str | int] = {
        "code": package.code,
        "entry": package.entry,
        "sha256": package.sha256,
        "size": package.size,
        "files": package.files,
        "submitted": now,
        "updated": now,
        "status": Status.SUBMITTED.value,
        "reason": "",
        "runner": "",
        "crashes": 0,
    }
    with client.pipeline() as pipe:
        pipe.hset(keys.version(number), mapping=fields)  # type: ignore[arg-type]
        pipe.hset(keys.bot, "active", number)
        pipe.set(keys.token, token)
        pipe.sadd(index_key(prefix), name)
        pipe.execute()
    return number


def hosted_names(client: redis.Redis, prefix: str) -> list[str]:
    return sorted(_text(n) for n in client.smembers(index_key(prefix)))


def active_version(client: redis.Redis, prefix: str, name: str) -> int:
    """The version runners should run (0: none)."""
    return int(client.hget(Keys(prefix, name).bot, "active") or 0)


def runner_token(client: redis.Redis, prefix: str, name: str) -> str:
    return _text(client.get(Keys(prefix, name).token) or b"")


def code_of(client: redis.Redis, prefix: str, name: str, number: int) -> tuple[bytes, str]:
    code, entry = client.hmget(Keys(prefix, name).version(number), "code", "entry")
    if not code or not entry:
        raise SubmitError(f"bot {name!r} has no version v{number}")
    return _bytes(code), _text(entry)


def versions(client: redis.Redis, prefix: str, name: str) -> list[Version]:
    """Every stored version of bot `name`, oldest first."""
    check_name(name)
    keys = Keys(prefix, name)
    latest, active = (int(v or 0) for v in client.hmget(keys.bot, "latest", "active"))
    fields = ("entry", "sha256", "size", "files", "submitted", "status", "reason", "runner", "crashes")
    with client.pipeline(transaction=False) as pipe:
        for number in range(1, latest + 1):
            pipe.hmget(keys.version(number), *fields)
            pipe.hstrlen(keys.version(number), "code")
        stored = pipe.execute()
    found = []
    for number in range(1, latest + 1):
        values, packed = stored[2 * number - 2], stored[2 * number - 1]
        if values[0] is None:
            continue
        texts = [_text(v or b"") for v in values]
        entry, sha, size, files, submitted, status, reason, runner, crashes = texts
        found.append(
            Version(
                name,
                number,
                entry,
                sha,
                int(packed),
                int(size or 0),
                int(files or 0),
                int(submitted or 0),
                Status(status or Status.SUBMITTED),
                reason,
                runner,
                int(crashes or 0),
                number == active,
            )
        )
    return found


def set_status(
    client: redis.Redis,
    prefix: str,
    name: str,
    number: int,
    status: Status,
    *,
    reason: str = "",
    runner: str = "",
    crashes: int | None = None,
) -> None:
    fields: dict[str, str | int] = {
        "status": status.value,
        "reason": reason[:500],
        "runner": runner,
        "updated": int(time.time()),
    }
    if crashes is not None:
        fields["crashes"] = crashes
    key = Keys(prefix, name).version(number)
    if client.exists(key):
        client.hset(key, mapping=fields)  # type: ignore[arg-type]


def logs(
    client: redis.Redis, prefix: str, name: str, token: str, number: int | None = None
) -> tuple[int, bytes]:
    """The last `LOG_BYTES` version `number` (default: the active one) printed: for its author only."""
    _authenticate(client, prefix, name, token)
    number = number or active_version(client, prefix, name)
    if not number or not client.exists(Keys(prefix, name).version(number)):
        missing = f"has no version v{number}" if number else "has no code submitted"
        raise SubmitError(f"bot {name!r} {missing}")
    return number, _bytes(client.get(Keys(prefix, name).log(number)) or b"")


def store_log(client: redis.Redis, prefix: str, name: str, number: int, tail: bytes) -> None:
    client.set(Keys(prefix, name).log(number), tail[-LOG_BYTES:])


def _text(value: object) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def stored_bytes(value: object) -> bytes:
    """A Redis reply as bytes (a client that decodes replies gives str)."""
    return value.encode() if isinstance(value, str) else bytes(value)  # type: ignore[call-overload]


_bytes = stored_bytes
