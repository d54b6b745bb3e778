"""A tournament archive: the file `uno-arena tournament export` writes and `tournament import` reads.

The file is gzip-compressed JSON lines (UTF-8), one JSON object a line, in three parts:

1. the header, first: `{"format": "uno-arena-tournament", "version": 1, "tournament_id": ...,
   "listed_at": ..., "exported_at": ..., "exported_by": ..., "prefix": ..., "about": {...}}`.
   `listed_at` is the tournament's score in the prefix's index (its creation time); `prefix` the key
   prefix it was exported from; `about` is for people and tools reading the file (name, status,
   spec, standings ...): an import never reads it.
2. the keys, each as one or more lines `{"key": NAME, "type": TYPE, "items": [...]}`: NAME is the
   Redis key without the prefix and its colon (`tournament:cup-1a2b3c`, `match:cup-1a2b3c-m00003`),
   TYPE as Redis's `TYPE` says it, and `items` its contents: a hash's `[field, value]` pairs, a list's
   values in order, a set's members, a sorted set's `[member, score]` pairs, a string's one value. A
   big key is cut into several lines of the same NAME, in order (at most `CHUNK_ITEMS` items and about
   `CHUNK_BYTES` of them a line), which an import adds up.
3. the trailer, last: `{"end": true, "keys": N, "lines": L}`: how many keys and key lines came before.
   A file without it was cut short.

Every value (field, member, string) is a JSON string when it is UTF-8 text, else `{"base64": "..."}`
(a match's `finished` and `log` fields: zlib-compressed protobuf messages, docs/redis.md).

Reading checks the whole shape and is bounded: a line over `MAX_LINE_BYTES`, or more than `max_bytes`
of JSON in all (after decompression), is refused, as is a file that is not gzip or JSON lines, cut
short, of another format, or of a newer version. `VERSION` changes whenever a reader of this version
would misread a newer file; a reader reads every version up to its own.
"""

from __future__ import annotations

import base64
import contextlib
import gzip
import hashlib
import io
import json
import math
import os
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from uno_arena.records.owned import KeyType

FORMAT = "uno-arena-tournament"
VERSION = 1
SUFFIX = ".jsonl.gz"  # the suffix `tournament export` suggests (any name is read)
MAX_LINE_BYTES = 64 * 2**20  # a line's length at most: the writer's are about CHUNK_BYTES
DEFAULT_MAX_BYTES = 4 * 2**30  # JSON read from one file at most, decompressed (`import --max-mib`)
CHUNK_ITEMS = 1000  # items a key line holds at most ...
CHUNK_BYTES = 2**20  # ... and about this much of them (a line ends once it is reached)
_GZIP_MAGIC = b"\x1f\x8b"

Value = bytes
Item = bytes | tuple[bytes, bytes] | tuple[bytes, float]


class ArchiveError(ValueError):
    """A file that is not a tournament archive this version can read, saying where and why."""


@dataclass(frozen=True, slots=True)
class Header:
    tournament_id: str
    listed_at: float  # its score in the prefix's index of tournaments: when it was created
    exported_at: float  # unix seconds
    exported_by: str  # `uno-arena X.Y.Z`
    prefix: str  # the key prefix it was exported from
    about: dict[str, Any] = field(default_factory=dict)  # for readers; never read by an import
    version: int = VERSION

    def to_dict(self) -> dict[str, Any]:
        return {"format": FORMAT, "version": self.version, "tournament_id": self.tournament_id,
                "listed_at": self.listed_at, "exported_at": self.exported_at,
                "exported_by": self.exported_by, "prefix": self.prefix, "about": self.about}  # fmt: skip


@dataclass(frozen=True, slots=True)
class KeyLines:
    """One line of a key: `name` without the prefix, its type, and some of its items."""

    name: str
    type: KeyType
    items: list[Item]


def _encoded(value: bytes) -> str | dict[str, str]:
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError:
        return {"base64": base64.b64encode(value).decode("ascii")}


def _decoded(value: Any, where: str) -> bytes:
    if isinstance(value, str):
        return value.encode("utf-8")
    if isinstance(value, dict) and set(value) == {"base64"} and isinstance(value["base64"], str):
        try:
            return base64.b64decode(value["base64"], validate=True)
        except ValueError:
            raise ArchiveError(f"{where}: not base64") from None
    raise ArchiveError(f'{where}: expected a string or {{"base64": ...}}, got {_shown(value)}')


def _shown(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _item_json(kind: KeyType, item: Item) -> Any:
    if kind in (KeyType.HASH, KeyType.ZSET):
        assert isinstance(item, tuple)
        first, second = item
        if kind is KeyType.ZSET:
            assert isinstance(second, float)
            if not math.isfinite(second):
                raise ValueError(f"a score that JSON cannot hold: {second}")
            return [_encoded(first), second]
        assert isinstance(second, bytes)
        return [_encoded(first), _encoded(second)]
    assert isinstance(item, bytes)
    return _encoded(item)


def _item_size(item: Item) -> int:
    if isinstance(item, tuple):
        return len(item[0]) + (len(item[1]) if isinstance(item[1], bytes) else 24)
    return len(item)


class ArchiveWriter:
    """Writes an archive to `path` through a temporary file beside it, renamed into place by `close`:
    a failed export leaves no file (and never a half-written one under the name asked for)."""

    def __init__(self, path: Path, header: Header, overwrite: bool = False) -> None:
        if path.exists() and not overwrite:
            raise FileExistsError(f"{path} exists")
        self.path = path
        self.partial = path.with_name(f".{path.name}.partial")
        self._file = gzip.GzipFile(self.partial, "wb", compresslevel=6)
        self.keys = 0
        self.lines = 0
        self.bytes = 0  # of JSON written, before compression
        self._line(header.to_dict())

    def _line(self, values: dict[str, Any]) -> None:
        data = json.dumps(values, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()
        self._file.write(data + b"\n")
        self.bytes += len(data) + 1

    def add(self, name: str, kind: KeyType, items: Sequence[Item]) -> None:
        """A key's contents, in as many lines as it takes. A key with no items is not written (Redis
        holds no empty key)."""
        if kind is KeyType.STREAM:
            raise ValueError(f"{name}: a stream is never archived")
        if kind is KeyType.STRING and len(items) != 1:
            raise ValueError(f"{name}: a string has one value, not {len(items)}")
        if not items:
            return
        self.keys += 1
        chunk: list[Any] = []
        size = 0
        for item in items:
            chunk.append(_item_json(kind, item))
            size += _item_size(item)
            if len(chunk) >= CHUNK_ITEMS or size >= CHUNK_BYTES:
                self._line({"key": name, "type": kind.value, "items": chunk})
                self.lines += 1
                chunk, size = [], 0
        if chunk:
            self._line({"key": name, "type": kind.value, "items": chunk})
            self.lines += 1

    def close(self) -> int:
        """Write the trailer and put the file in place; its size in bytes."""
        self._line({"end": True, "keys": self.keys, "lines": self.lines})
        self._file.close()
        os.replace(self.partial, self.path)
        return self.path.stat().st_size

    def abort(self) -> None:
        """Drop what was written."""
        with contextlib.suppress(OSError):
            self._file.close()
        with contextlib.suppress(FileNotFoundError):
            self.partial.unlink()

    def __enter__(self) -> ArchiveWriter:
        return self

    def __exit__(self, kind: object, *_: object) -> None:
        if kind is not None:
            self.abort()


class ArchiveReader:
    """Reads an archive: `header` once opened, then `key_lines()` yields each key line in order and, at the
    end, checks the trailer. Every error is an `ArchiveError` naming the file and the line."""

    def __init__(self, path: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.path = path
        self.max_bytes = max_bytes
        self.read_bytes = 0
        self.line_number = 0
        self._digest = hashlib.sha256()  # of every line read: a file read twice is the same file
        try:
            raw = path.open("rb")
        except FileNotFoundError:
            raise ArchiveError(f"{path}: no such file") from None
        except OSError as error:
            raise ArchiveError(f"{path}: cannot read: {error.strerror}") from None
        self._raw = raw
        try:
            magic = raw.read(2)
            raw.seek(0)
            self._file: gzip.GzipFile | io.BufferedReader = (
                gzip.GzipFile(fileobj=raw, mode="rb") if magic == _GZIP_MAGIC else raw
            )
            self.header = self._header()
        except BaseException:
            raw.close()
            raise

    def close(self) -> None:
        self._file.close()
        self._raw.close()

    def digest(self) -> str:
        """SHA-256 of the (decompressed) lines read so far: read to the end, the file's contents."""
        return self._digest.hexdigest()

    def __enter__(self) -> ArchiveReader:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def _error(self, message: str) -> ArchiveError:
        return ArchiveError(f"{self.path}: line {self.line_number}: {message}")

    def _next(self) -> dict[str, Any] | None:
        """The next line's object; None at the end of the file."""
        try:
            line = self._file.readline(MAX_LINE_BYTES + 1)
        except (gzip.BadGzipFile, zlib.error) as error:
            raise ArchiveError(f"{self.path}: damaged compressed data after line {self.line_number} "
                               f"({error})") from None  # fmt: skip
        except EOFError:
            raise ArchiveError(f"{self.path}: cut short: the compressed data ends after line "
                               f"{self.line_number}") from None  # fmt: skip
        except OSError as error:
            raise ArchiveError(f"{self.path}: cannot read: {error}") from None
        if not line:
            return None
        self.line_number += 1
        self.read_bytes += len(line)
        self._digest.update(line)
        if len(line) > MAX_LINE_BYTES:
            raise self._error(f"longer than {MAX_LINE_BYTES // 2**20} MiB: not a line this format has")
        if self.read_bytes > self.max_bytes:
            raise ArchiveError(f"{self.path}: more than {self.max_bytes // 2**20} MiB of JSON (the "
                               "limit: tournament import --max-mib)")  # fmt: skip
        if not line.endswith(b"\n"):
            raise ArchiveError(f"{self.path}: cut short: line {self.line_number} has no end")
        try:
            values = json.loads(line)
        except (UnicodeDecodeError, ValueError):
            if self.line_number == 1:
                raise ArchiveError(f"{self.path}: not a tournament archive (gzip-compressed JSON lines, "
                                   "written by uno-arena tournament export)") from None  # fmt: skip
            raise self._error("not a JSON object") from None
        if not isinstance(values, dict):
            raise self._error(f"expected a JSON object, got {_shown(values)}")
        return values

    def _header(self) -> Header:
        values = self._next()
        if values is None:
            raise ArchiveError(f"{self.path}: empty")
        if values.get("format") != FORMAT:
            raise ArchiveError(f"{self.path}: not a tournament archive (its first line has no "
                               f"\"format\": \"{FORMAT}\")")  # fmt: skip
        version = values.get("version")
        if not isinstance(version, int) or isinstance(version, bool) or version < 1:
            raise self._error(f"bad format version {_shown(version)}")
        if version > VERSION:
            raise ArchiveError(f"{self.path}: format version {version}, newer than this uno-arena reads "
                               f"(up to {VERSION}): import it with a newer uno-arena")  # fmt: skip
        about = values.get("about")
        try:
            return Header(
                tournament_id=_string(values, "tournament_id"),
                listed_at=_number(values, "listed_at"),
                exported_at=_number(values, "exported_at"),
                exported_by=_string(values, "exported_by"),
                prefix=_string(values, "prefix"),
                about=about if isinstance(about, dict) else {},
                version=version,
            )
        except ValueError as error:
            raise self._error(f"header: {error}") from None

    def key_lines(self) -> Iterator[KeyLines]:
        """Each key line, in order; then the trailer is checked (ArchiveError if it is missing, wrong,
        or followed by anything)."""
        keys: set[str] = set()
        lines = 0
        strings: set[str] = set()
        while True:
            values = self._next()
            if values is None:
                raise ArchiveError(f"{self.path}: cut short after line {self.line_number} (no end line: "
                                   "an export that did not finish, or a file truncated since)")  # fmt: skip
            if values.get("end") is True:
                break
            found = self._key_lines(values)
            if found.type is KeyType.STRING:
                if found.name in strings:
                    raise self._error(f"{found.name}: a string given twice")
                strings.add(found.name)
            keys.add(found.name)
            lines += 1
            yield found
        if values.get("keys") != len(keys) or values.get("lines") != lines:
            counted = f"{_shown(values.get('keys'))} keys in {_shown(values.get('lines'))} lines"
            raise self._error(f"the end line counts {counted}; the file has {len(keys)} in {lines}")
        if self._next() is not None:
            raise self._error("more after the end line")

    def _key_lines(self, values: dict[str, Any]) -> KeyLines:
        name, kind_name, items = values.get("key"), values.get("type"), values.get("items")
        if not isinstance(name, str) or not name:
            raise self._error('expected a key line: {"key": NAME, "type": TYPE, "items": [...]}')
        try:
            kind = KeyType(str(kind_name))
        except ValueError:
            raise self._error(f"{name}: unknown type {_shown(kind_name)}") from None
        if kind is KeyType.STREAM:
            raise self._error(f"{name}: a stream is never archived")
        if not isinstance(items, list) or not items:
            raise self._error(f"{name}: expected a non-empty list of items")
        if len(items) > CHUNK_ITEMS:
            raise self._error(f"{name}: more than {CHUNK_ITEMS} items on one line")
        where = f"{name}"
        if kind is KeyType.STRING:
            if len(items) != 1:
                raise self._error(f"{name}: a string has one value, not {len(items)}")
            return KeyLines(name, kind, [self._value(items[0], where)])
        if kind in (KeyType.LIST, KeyType.SET):
            return KeyLines(name, kind, [self._value(item, where) for item in items])
        pairs: list[Item] = []
        for item in items:
            if not isinstance(item, list) or len(item) != 2:
                pair = "field, value" if kind is KeyType.HASH else "member, score"
                raise self._error(f"{name}: expected [{pair}] pairs, got {_shown(item)}")
            first = self._value(item[0], where)
            if kind is KeyType.HASH:
                pairs.append((first, self._value(item[1], where)))
            else:
                score = item[1]
                if not isinstance(score, int | float) or isinstance(score, bool):
                    raise self._error(f"{name}: a score must be a number, got {_shown(score)}")
                pairs.append((first, float(score)))
        return KeyLines(name, kind, pairs)

    def _value(self, value: Any, where: str) -> bytes:
        try:
            return _decoded(value, where)
        except ArchiveError as error:
            raise self._error(str(error)) from None


def _string(values: dict[str, Any], name: str) -> str:
    value = values.get(name)
    if not isinstance(value, str):
        raise ValueError(f"{name}: expected a string, got {_shown(value)}")
    return value


def _number(values: dict[str, Any], name: str) -> float:
    value = values.get(name)
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise ValueError(f"{name}: expected a number, got {_shown(value)}")
    return float(value)
