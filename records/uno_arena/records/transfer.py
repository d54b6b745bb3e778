"""A tournament out of Redis into an archive, and back into any Redis: `uno-arena tournament export`
and `tournament import`.

What moves is every *kept* key the tournament owns (`uno_arena.records.owned`: its record, schedule,
states, errors, attempts, results, retries, every match record with its replay, its stored
leaderboard), as Redis holds it, byte for byte, so that everything reading them (the leaderboard, the
web view, `replay`, `status`) reads the same after an import as before the export. The file's format is
`uno_arena.records.archive`.

An export is the tournament as of one moment, even while it is played (`export --force`): the keys
that change as matches are played (its record, schedule, states, errors, attempts, results, retries and
stored leaderboard) are read in one transaction, then the match records its results list names at that
moment. A match record never changes once written, and a match is recorded with its state and its
place in the results list in one script (`records.match`), so a match recorded during the export is
wholly out of the file: not in the results, the states or the records.

An import checks the whole file before it writes anything: its shape, that every key in it is one
of the tournament's kept keys with the type that key has (an archive cannot write a bot, a control
token or another tournament's keys), that its record counts the matches its schedule holds, and that
every match record is of a scheduled match. Then it writes the keys under a staging prefix
(`{prefix}:importing:{token}`, expiring after `STAGING_TTL_S` should the import never finish), checking
each line again as it is read a second time and that the file is still the one checked, and checks that
the staged tournament reads (`stage_import`). Only then are the staged keys renamed into place, each
batch refusing to overwrite a key that exists, and the tournament listed in the index last, so that it
appears whole or not at all (`publish_import`); if anything fails on the way, what it wrote is deleted.
`tournament import --replace` deletes the tournament of the same id between the two, once the new copy
is staged and known to read: a file that cannot be imported never costs the copy already there.
"""

from __future__ import annotations

import secrets
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
from uno_arena.records.match import match_key
from uno_arena.records.owned import (
    KeyRole,
    KeyType,
    OwnedKey,
    existing,
    fixed_keys,
    kept_key,
    owned_keys,
    tournament_keys,
)
from uno_arena.records.tournament import (
    Keys,
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
PUBLISH_BATCH = 250  # staged keys renamed into place by one script
STAGING_TTL_S = 86_400  # how long the staged keys of an import that never finished are left


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
    digest: str = ""  # of its contents (`ArchiveReader.digest`): the file a second read must find


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
    """Write the tournament's kept keys to `path` (`extra` joins the header's `about`), as of one moment
    (the module's docstring says how). FileExistsError if `path` exists and not `overwrite`;
    TournamentError for an unknown tournament, a key of an unexpected type, or match records deleted
    while they were read."""
    check_exists(client, prefix, tournament_id)
    listed_at = client.zscore(index_key(prefix), tournament_id)
    header = Header(tournament_id, float(listed_at or 0.0), time.time(), exported_by(), prefix,
                    {**about(client, prefix, tournament_id), **(extra or {})})  # fmt: skip
    changing = [key for key in fixed_keys(prefix, tournament_id) if key.kept]
    snapshot = list(_read(client, changing, atomic=True))
    recorded = _recorded(prefix, tournament_id, snapshot)
    total = len(changing) + len(recorded)
    with ArchiveWriter(path, header, overwrite) as writer:
        for key, items in snapshot:
            writer.add(key.name[len(prefix) + 1 :], key.type, items)
        done = len(changing)
        if progress is not None:
            progress(done, total)
        for start in range(0, len(recorded), READ_BATCH):
            batch = recorded[start : start + READ_BATCH]
            found = list(_read(client, batch))
            if len(found) != len(batch):
                gone = sorted({key.name for key in batch} - {key.name for key, _ in found})
                raise TournamentError(f"tournament {tournament_id!r} lost match records while it was "
                                      f"exported ({gone[0][len(prefix) + 1 :]}, ...: deleted meanwhile?): "
                                      "not exported")  # fmt: skip
            for key, items in found:
                writer.add(key.name[len(prefix) + 1 :], key.type, items)
            done += len(batch)
            if progress is not None:
                progress(done, total)
        keys = writer.keys
        size = writer.close()
    return Exported(tournament_id, path, keys, len(recorded), size)


def _recorded(prefix: str, tournament_id: str, snapshot: list[tuple[OwnedKey, list[Item]]]) -> list[OwnedKey]:
    """The match records the snapshot's results list names, by match index."""
    results = Keys(prefix, tournament_id).results
    named = next((items for key, items in snapshot if key.name == results), [])
    found: dict[str, OwnedKey] = {}
    for raw in named:
        match_id = _bytes(raw if isinstance(raw, bytes) else raw[0]).decode(errors="replace")
        key = kept_key(prefix, tournament_id, match_key(prefix, match_id))
        if key is None or key.kind is not KeyRole.MATCH:
            raise TournamentError(f"tournament {tournament_id!r}: its results list names {match_id!r}, not a "
                                  "match of it: not exported")  # fmt: skip
        found[key.name] = key
    return sorted(found.values(), key=lambda key: _match_index(key.name))


def _match_index(name: str) -> int:
    """The index of a match record's key (`kept_key` checked its shape)."""
    return int(name.rpartition("-m")[2])


def _read(client: redis.Redis, keys: list[OwnedKey],
          atomic: bool = False) -> Iterator[tuple[OwnedKey, list[Item]]]:  # fmt: skip
    """Each existing key of `keys` with its items, as the archive holds them (a hash's and a set's
    sorted, so an export of the same data is the same file), read in one round trip: `atomic`, in one
    transaction (MULTI/EXEC), so all as of one moment."""
    with client.pipeline(transaction=atomic) as pipe:
        for key in keys:
            pipe.type(key.name)
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
        replies = pipe.execute(raise_on_error=False)  # a key of another type: its TYPE says so below
    for key, found, value in zip(keys, replies[0::2], replies[1::2], strict=True):
        kind = text(found)
        if kind == "none":
            continue
        if kind != key.type:
            raise TournamentError(f"{key.name} is a {kind}, not the {key.type} it should be: not exported")
        if isinstance(value, Exception):
            raise value
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
        record = f"tournament:{tournament_id}"
        schedule = f"{record}:schedule"
        names: set[str] = set()
        lines = matches = 0
        scheduled: set[bytes] = set()  # the schedule's fields: match indices
        counted: bytes | None = None  # the record's `matches`
        played: dict[str, int] = {}  # match record -> its index
        for found in reader.key_lines():
            key = _checked(reader, prefix, tournament_id, found)
            if found.name not in names:
                matches += key.kind is KeyRole.MATCH
            names.add(found.name)
            lines += 1
            if found.name == schedule:
                scheduled.update(_pair(item)[0] for item in found.items)
            elif found.name == record:
                said = [value for name, value in map(_pair, found.items) if name == b"matches"]
                counted = said[-1] if said else counted
            elif key.kind is KeyRole.MATCH:
                played[found.name] = _match_index(key.name)
        digest = reader.digest()
    if record not in names:
        raise ArchiveError(f"{path}: holds no record of tournament {tournament_id!r}")
    _check_matches(path, scheduled, counted, played)
    return ArchiveSummary(header, len(names), lines, matches, frozenset(names), digest)


def _pair(item: Item) -> tuple[bytes, bytes]:
    """A hash's item: (field, value)."""
    assert isinstance(item, tuple) and isinstance(item[1], bytes)
    return item[0], item[1]


def _checked(reader: ArchiveReader, prefix: str, tournament_id: str, found: KeyLines,
             names: frozenset[str] | None = None) -> OwnedKey:  # fmt: skip
    """The kept key of the tournament that a key line is, of the type that key has, and (given the names
    of a checked file) one of those; else an ArchiveError naming the line."""
    where = f"{reader.path}: line {reader.line_number}"
    key = kept_key(prefix, tournament_id, f"{prefix}:{found.name}")
    if key is None:
        raise ArchiveError(f"{where}: {found.name!r} is not a key of tournament {tournament_id!r} an archive "
                           "holds")  # fmt: skip
    if key.type is not found.type:
        raise ArchiveError(f"{where}: {found.name} is a {key.type}, not a {found.type}")
    if names is not None and found.name not in names:
        raise ArchiveError(f"{where}: {found.name} was not in the file when it was checked: the file changed "
                           "since; not imported")  # fmt: skip
    return key


def _check_matches(path: Path, scheduled: set[bytes], counted: bytes | None, played: dict[str, int]) -> None:
    """A tournament's record counts the matches its schedule holds, each by its index, and every match
    record is of one of them: nothing else in a file can name a match index (`owned.match_indices`
    reads them to find the tournament's keys)."""
    indices: set[int] = set()
    for field_name in scheduled:
        named = field_name.decode(errors="replace")
        if not (named.isascii() and named.isdigit() and len(named) <= 9 and str(int(named)) == named):
            raise ArchiveError(f"{path}: its schedule names {named[:20]!r}, not a match index")
        indices.add(int(named))
    said = text(counted) if counted is not None else None
    if said != str(len(indices)):
        raise ArchiveError(f"{path}: its record counts {said!r} matches, its schedule holds "
                           f"{len(indices)}")  # fmt: skip
    for name, index in sorted(played.items()):
        if index not in indices:
            raise ArchiveError(f"{path}: {name} is the record of match {index}, which its schedule does not "
                               "hold")  # fmt: skip


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
    """Write the archive's tournament into this Redis under `prefix`: `stage_import`, then
    `publish_import`. ArchiveError for a file that does not check (`check_archive`, unless its `summary`
    is given) or changed since, TournamentExists if the tournament is here already (nothing written),
    TournamentError if what was written does not read as a tournament (then deleted)."""
    summary = summary or check_archive(path, prefix, max_bytes)
    tournament_id = summary.header.tournament_id
    taken = conflicts(client, prefix, summary)
    if taken:
        raise TournamentExists(f"tournament {tournament_id!r} is already here under {prefix!r} ({len(taken)} "
                               f"of its keys, e.g. {taken[0]})")  # fmt: skip
    staged = stage_import(client, prefix, path, summary, max_bytes, progress)
    return publish_import(client, staged)


@dataclass(frozen=True, slots=True)
class Staged:
    """An archive's tournament written under a staging prefix, read back whole: `publish_import` puts it
    in place, `discard` drops it."""

    summary: ArchiveSummary
    prefix: str
    staging: str  # the staging prefix: `{prefix}:importing:{token}`
    names: tuple[str, ...]  # its keys, without a prefix, in the order they are put in place

    def discard(self, client: redis.Redis) -> None:
        _delete(client, [f"{self.staging}:{name}" for name in self.names])


def stage_import(client: redis.Redis, prefix: str, path: Path, summary: ArchiveSummary,
                 max_bytes: int = DEFAULT_MAX_BYTES, progress: Progress | None = None) -> Staged:  # fmt: skip
    """Write the checked archive (`summary`) under a staging prefix of its own, each line checked again as
    it is read, and check that the file is the one checked and that the tournament reads: nothing under
    `prefix` is touched. ArchiveError or TournamentError (what was staged is deleted)."""
    tournament_id = summary.header.tournament_id
    staging = f"{prefix}:importing:{secrets.token_hex(6)}"
    written: dict[str, None] = {}  # names without a prefix, in the order written
    try:
        with ArchiveReader(path, max_bytes) as reader:
            _write(client, prefix, staging, reader, summary, written, progress)
        try:
            load(client, staging, tournament_id)
        except (ValueError, KeyError, TypeError) as error:  # TournamentError too: a ValueError
            raise TournamentError(f"{path}: its tournament does not read ({error}): not imported") from None
    except BaseException:
        _delete(client, [f"{staging}:{name}" for name in written])
        raise
    record = f"tournament:{tournament_id}"  # in place last but for the index: guarded writers wait for it
    names = tuple(sorted(written, key=lambda name: name == record))
    return Staged(summary, prefix, staging, names)


# Rename staged keys (KEYS: staged, final, staged, final ...) into place, persistent, unless one of the
# final names is taken (1: nothing renamed) or a staged key is gone (2: expired; nothing renamed).
_PUBLISH = """
for i = 1, #KEYS, 2 do
  if redis.call('EXISTS', KEYS[i]) == 0 then return 2 end
  if redis.call('EXISTS', KEYS[i + 1]) == 1 then return 1 end
end
for i = 1, #KEYS, 2 do
  redis.call('RENAME', KEYS[i], KEYS[i + 1])
  redis.call('PERSIST', KEYS[i + 1])
end
return 0
"""


def publish_import(client: redis.Redis, staged: Staged) -> Imported:
    """Put a staged tournament in place: its keys renamed (a batch at a time, none over a key that
    exists), then its id listed in the index. TournamentExists if any of its keys or its id appeared
    here meanwhile; TournamentError if the staged keys expired. On any failure, what was put in place
    and what is left staged is deleted."""
    summary, prefix = staged.summary, staged.prefix
    tournament_id = summary.header.tournament_id
    pairs = [(f"{staged.staging}:{name}", f"{prefix}:{name}") for name in staged.names]
    placed: list[str] = []
    try:
        for start in range(0, len(pairs), PUBLISH_BATCH):
            batch = pairs[start : start + PUBLISH_BATCH]
            outcome = client.eval(_PUBLISH, 2 * len(batch), *(name for pair in batch for name in pair))
            if outcome == 1:
                raise TournamentExists(f"tournament {tournament_id!r} was created here during the import")
            if outcome == 2:
                raise TournamentError(f"the import of {tournament_id!r} took longer than {STAGING_TTL_S} s: "
                                      "its staged keys expired")  # fmt: skip
            placed += [final for _, final in batch]
        if not client.zadd(index_key(prefix), {tournament_id: summary.header.listed_at}, nx=True):
            raise TournamentExists(f"tournament {tournament_id!r} was created here during the import")
    except BaseException:
        _delete(client, placed)
        staged.discard(client)
        raise
    return Imported(tournament_id, summary.keys, summary.matches)


def _write(client: redis.Redis, prefix: str, staging: str, reader: ArchiveReader, summary: ArchiveSummary,
           written: dict[str, None], progress: Progress | None) -> None:  # fmt: skip
    """Write the archive's key lines under `staging`, each checked as `check_archive` did and one of the
    names it found; then check that the file is the one it checked (ArchiveError if not)."""
    tournament_id = summary.header.tournament_id
    pipe = client.pipeline(transaction=False)
    size = done = 0
    for found in reader.key_lines():
        _checked(reader, prefix, tournament_id, found, summary.names)
        name = f"{staging}:{found.name}"
        written[found.name] = None
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
        pipe.expire(name, STAGING_TTL_S)
        size += sum(len(i) if isinstance(i, bytes) else len(i[0]) + 24 for i in items)
        done += 1
        if size >= WRITE_BATCH_BYTES:
            pipe.execute()
            size = 0
            if progress is not None:
                progress(done, summary.lines)
    pipe.execute()
    if reader.digest() != summary.digest:
        raise ArchiveError(f"{reader.path}: changed since it was checked: not imported")
    if progress is not None:
        progress(done, summary.lines)


def _delete(client: redis.Redis, names: list[str], batch: int = 500) -> None:
    for start in range(0, len(names), batch):
        client.delete(*names[start : start + batch])
