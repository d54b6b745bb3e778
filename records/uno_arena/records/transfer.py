"""A tournament out of Redis into an archive, and back into any Redis: `uno-arena tournament export`
and `tournament import`.

What moves is every *kept* key the tournament owns (`uno_arena.records.owned`: its record, schedule,
states, errors, attempts, results, retries, every match record with its replay, its stored
leaderboard), as Redis holds it, byte for byte, so that everything reading them (the leaderboard, the
web view, `replay`, `status`) reads the same after an import as before the export. The file's format is
`uno_arena.records.archive`.

An import checks the whole file before it writes anything: its shape, and that every key in it is one
of the tournament's kept keys with the type that key has (an archive cannot write a bot, a control
token or another tournament's keys). It refuses a tournament that exists (any of its keys, or its id
in the index), writes the keys, checks that the tournament reads, and lists it in the index last, so
it appears whole or not at all; if anything fails on the way, what it wrote is deleted.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from uno_arena.records import ruleset
from uno_arena.records.archive import (
    DEFAULT_MAX_BYTES,
    ArchiveError,
    ArchiveReader,
    ArchiveWriter,
    Header,
    Item,
    KeyLines,
)
from uno_arena.records.owned import (
    KeyRole,
    KeyType,
    OwnedKey,
    existing,
    kept_key,
    owned_keys,
    tournament_keys,
)
from uno_arena.records.tournament import (
    TournamentError,
    check_exists,
    check_id,
    exists,
    index_key,
    load,
    text,
)

if TYPE_CHECKING:
    import redis

Progress = Callable[[int, int], None]  # (done, total): keys exported, or key lines imported
READ_BATCH = 200  # keys read in one round trip
WRITE_BATCH_BYTES = 4 * 2**20  # about this much written in one round trip


class TournamentExists(TournamentError):
    """An import of a tournament whose id (or any of its keys) is already in the Redis."""


@dataclass(frozen=True, slots=True)
class Exported:
    tournament_id: str
    path: Path
    keys: int
    matches: int  # match records
    bytes: int  # the file's size


@dataclass(frozen=True, slots=True)
class ArchiveSummary:
    """What a checked archive holds."""

    header: Header
    keys: int
    lines: int
    matches: int  # match records
    names: frozenset[str] = field(default_factory=frozenset)  # its keys, without the prefix


def exported_by() -> str:
    try:
        return f"uno-arena {version('uno-arena')}"
    except PackageNotFoundError:
        return "uno-arena (version unknown: not installed)"


def about(client: redis.Redis, prefix: str, tournament_id: str) -> dict[str, Any]:
    """The header's `about`: the tournament as `tournament list --json` and `status --json` show it."""
    t = load(client, prefix, tournament_id)
    return {"name": t.spec.name, "status": str(t.status), "matches": t.matches, "done": t.done,
            "created": t.created, "started": t.started, "finished": t.finished,
            "rules": ruleset.summary(t.spec.rules), "spec": t.spec.to_dict()}  # fmt: skip


def export_tournament(
    client: redis.Redis, prefix: str, tournament_id: str, path: Path, extra: dict[str, Any] | None = None,
    overwrite: bool = False, progress: Progress | None = None,
) -> Exported:  # fmt: skip
    """Write the tournament's kept keys to `path` (`extra` joins the header's `about`). FileExistsError if
    `path` exists and not `overwrite`; TournamentError for an unknown tournament, or a key of an
    unexpected type."""
    check_exists(client, prefix, tournament_id)
    listed_at = client.zscore(index_key(prefix), tournament_id)
    header = Header(tournament_id, float(listed_at or 0.0), time.time(), exported_by(), prefix,
                    {**about(client, prefix, tournament_id), **(extra or {})})  # fmt: skip
    kept = [key for key in tournament_keys(client, prefix, tournament_id) if key.kept]
    matches = 0
    with ArchiveWriter(path, header, overwrite) as writer:
        done = 0
        for start in range(0, len(kept), READ_BATCH):
            batch = kept[start : start + READ_BATCH]
            for key, items in _read(client, batch):
                writer.add(key.name[len(prefix) + 1 :], key.type, items)
                matches += key.kind is KeyRole.MATCH
            done += len(batch)
            if progress is not None:
                progress(done, len(kept))
        keys = writer.keys
        size = writer.close()
    return Exported(tournament_id, path, keys, matches, size)


def _read(client: redis.Redis, keys: list[OwnedKey]) -> Iterator[tuple[OwnedKey, list[Item]]]:
    """Each existing key of `keys` with its items, as the archive holds them (a hash's and a set's
    sorted, so an export of the same data is the same file)."""
    with client.pipeline(transaction=False) as pipe:
        for key in keys:
            pipe.type(key.name)
        types = [text(found) for found in pipe.execute()]
    present = []
    for key, found in zip(keys, types, strict=True):
        if found == "none":
            continue
        if found != key.type:
            raise TournamentError(f"{key.name} is a {found}, not the {key.type} it should be: not exported")
        present.append(key)
    with client.pipeline(transaction=False) as pipe:
        for key in present:
            if key.type is KeyType.HASH:
                pipe.hgetall(key.name)
            elif key.type is KeyType.LIST:
                pipe.lrange(key.name, 0, -1)
            elif key.type is KeyType.SET:
                pipe.smembers(key.name)
            elif key.type is KeyType.ZSET:
                pipe.zrange(key.name, 0, -1, withscores=True)
            else:
                pipe.get(key.name)
        values = pipe.execute()
    for key, value in zip(present, values, strict=True):
        items: list[Item]
        if key.type is KeyType.HASH:
            items = sorted((_bytes(k), _bytes(v)) for k, v in value.items())
        elif key.type is KeyType.SET:
            items = sorted(_bytes(m) for m in value)
        elif key.type is KeyType.ZSET:
            items = [(_bytes(m), float(score)) for m, score in value]
        elif key.type is KeyType.LIST:
            items = [_bytes(v) for v in value]
        elif value is None:  # gone since its type was read
            continue
        else:
            items = [_bytes(value)]
        if items:
            yield key, items


def _bytes(value: bytes | str) -> bytes:
    return value if isinstance(value, bytes) else value.encode()


def check_archive(path: Path, prefix: str, max_bytes: int = DEFAULT_MAX_BYTES) -> ArchiveSummary:
    """Read the whole archive and check it: ArchiveError saying where and why, else what it holds."""
    with ArchiveReader(path, max_bytes) as reader:
        header = reader.header
        tournament_id = header.tournament_id
        try:
            check_id(tournament_id)
        except TournamentError as error:
            raise ArchiveError(f"{path}: {error}") from None
        names: set[str] = set()
        lines = matches = 0
        for found in reader.key_lines():
            key = _kept(prefix, tournament_id, found)
            if key is None:
                raise ArchiveError(f"{path}: line {reader.line_number}: {found.name!r} is not a key of "
                                   f"tournament {tournament_id!r} an archive holds")  # fmt: skip
            if key.type is not found.type:
                raise ArchiveError(f"{path}: line {reader.line_number}: {found.name} is a {key.type}, "
                                   f"not a {found.type}")  # fmt: skip
            if found.name not in names:
                matches += key.kind is KeyRole.MATCH
            names.add(found.name)
            lines += 1
    if f"tournament:{tournament_id}" not in names:
        raise ArchiveError(f"{path}: holds no record of tournament {tournament_id!r}")
    return ArchiveSummary(header, len(names), lines, matches, frozenset(names))


def _kept(prefix: str, tournament_id: str, found: KeyLines) -> OwnedKey | None:
    return kept_key(prefix, tournament_id, f"{prefix}:{found.name}")


@dataclass(frozen=True, slots=True)
class Imported:
    tournament_id: str
    keys: int
    matches: int


def conflicts(client: redis.Redis, prefix: str, summary: ArchiveSummary) -> list[str]:
    """What of the archive's tournament is already in this Redis: its id in the index, and any key
    it owns (of the matches the Redis or the archive name)."""
    tournament_id = summary.header.tournament_id
    found = [index_key(prefix)] if exists(client, prefix, tournament_id) else []
    indices = [int(name.rpartition("-m")[2]) for name in summary.names if name.startswith("match:")]
    known = {key.name: key for key in tournament_keys(client, prefix, tournament_id)}
    known.update((key.name, key) for key in owned_keys(prefix, tournament_id, indices))
    return found + [key.name for key in existing(client, list(known.values()))]


def import_tournament(
    client: redis.Redis, prefix: str, path: Path, max_bytes: int = DEFAULT_MAX_BYTES,
    progress: Progress | None = None, summary: ArchiveSummary | None = None,
) -> Imported:  # fmt: skip
    """Write the archive's tournament into this Redis under `prefix`. ArchiveError for a file that does
    not check (`check_archive`, unless its `summary` is given), TournamentExists if the tournament is
    here already (nothing written), TournamentError if what was written does not read as a tournament
    (then deleted)."""
    summary = summary or check_archive(path, prefix, max_bytes)
    tournament_id = summary.header.tournament_id
    taken = conflicts(client, prefix, summary)
    if taken:
        raise TournamentExists(f"tournament {tournament_id!r} is already here under {prefix!r} ({len(taken)} "
                               f"of its keys, e.g. {taken[0]})")  # fmt: skip
    written: set[str] = set()
    try:
        with ArchiveReader(path, max_bytes) as reader:
            _write(client, prefix, reader, written, summary.lines, progress)
        try:
            load(client, prefix, tournament_id)
        except (ValueError, KeyError, TypeError) as error:  # TournamentError too: a ValueError
            raise TournamentError(f"{path}: its tournament does not read ({error}): not imported") from None
        if not client.zadd(index_key(prefix), {tournament_id: summary.header.listed_at}, nx=True):
            raise TournamentExists(f"tournament {tournament_id!r} was created here during the import")
    except BaseException:
        _delete(client, sorted(written))
        raise
    return Imported(tournament_id, summary.keys, summary.matches)


def _write(client: redis.Redis, prefix: str, reader: ArchiveReader, written: set[str], total: int,
           progress: Progress | None) -> None:  # fmt: skip
    pipe = client.pipeline(transaction=False)
    size = done = 0
    for found in reader.key_lines():
        name = f"{prefix}:{found.name}"
        written.add(name)
        items = found.items
        if found.type is KeyType.HASH:
            pipe.hset(name, mapping=dict(items))  # type: ignore[arg-type]
        elif found.type is KeyType.LIST:
            pipe.rpush(name, *cast(list[bytes], items))
        elif found.type is KeyType.SET:
            pipe.sadd(name, *cast(list[bytes], items))
        elif found.type is KeyType.ZSET:
            pipe.zadd(name, dict(items))  # type: ignore[arg-type]
        else:
            pipe.set(name, items[0])  # type: ignore[arg-type]
        size += sum(len(i) if isinstance(i, bytes) else len(i[0]) + 24 for i in items)
        done += 1
        if size >= WRITE_BATCH_BYTES:
            pipe.execute()
            size = 0
            if progress is not None:
                progress(done, total)
    pipe.execute()
    if progress is not None:
        progress(done, total)


def _delete(client: redis.Redis, names: list[str], batch: int = 500) -> None:
    for start in range(0, len(names), batch):
        client.delete(*names[start : start + batch])
