"""A tournament spec: who plays, at what tables, how often, under which rules.

Organisers write it as TOML (see docs/tournaments.md) and may override any
top-level field with CLI flags. `spec_from_dict` refuses anything it cannot
run, and the message always starts with the field's name.
"""

from __future__ import annotations

import tomllib
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from uno_arena.records.identity import NAME  # a spec name has a bot name's shape
from uno_arena.rules import ConfigError, RulesConfig
from uno_arena.rules.config import MAX_PLAYERS, MIN_PLAYERS
from uno_arena.v1 import DEFAULT_SERVER

MAX_SEED = 2**64 - 1
_RULES = RulesConfig()  # the rules' own defaults (a spec's `target` is the rules' target score)


class SpecError(ValueError):
    """A spec that cannot be run; the message names the field."""


@dataclass(frozen=True, slots=True)
class Deadlines:
    """Per-match limits: what a tournament sends the match server with every match (all four, always).

    These defaults are also the match server's (`uno_arena.server.settings`): the one place they live.
    `disconnect_grace_ms = 0` means no grace and `wait_for_bots_ms = 0` no wait.
    """

    decision_ms: int = 1000
    max_strikes: int = 3
    disconnect_grace_ms: int = 10_000
    wait_for_bots_ms: int = 30_000


MAX_ATTEMPTS = 101
DEFAULT_ATTEMPTS = 4  # the first try and three retries, one per default backoff


@dataclass(frozen=True, slots=True)
class Retries:
    """How often a match that could not be played (e.g. a bot not connected) is tried, and how long RQ
    waits before each retry.

    `attempts` counts tries, the first one included: 1 is a single try with no retry. (It once
    counted retries; a tournament stored then is read with one added: `records.tournament`.)
    """

    attempts: int = DEFAULT_ATTEMPTS
    backoff_s: tuple[int, ...] = (5, 30, 120)  # the last one repeats

    @property
    def retries(self) -> int:
        """The tries after the first."""
        return self.attempts - 1


@dataclass(frozen=True, slots=True)
class TournamentSpec:
    name: str
    bots: tuple[str, ...]
    seats: int = MIN_PLAYERS  # bots per table, MIN_PLAYERS to MAX_PLAYERS (the rules' 2 to 10)
    cycles: int = 1  # each cycle plays the whole design again with new seeds
    target: int = _RULES.target_score  # score that ends a match
    seed: int = 0  # everything random (schedule, seat order, match seeds) follows from it
    server: str = DEFAULT_SERVER  # the match server the workers ask to play ...
    pool: str = ""  # ... or, when set, the pool of servers (`uno-arena server --pool NAME`) to place them on
    # players and target follow seats and target (the default too: the rules' defaults at MIN_PLAYERS seats)
    rules: RulesConfig = field(default_factory=lambda: RulesConfig(players=MIN_PLAYERS))
    deadlines: Deadlines = field(default_factory=Deadlines)
    retries: Retries = field(default_factory=Retries)

    def to_dict(self) -> dict[str, Any]:
        values = asdict(self)
        values["bots"] = list(self.bots)
        values["retries"]["backoff_s"] = list(self.retries.backoff_s)
        values["rules"] = {
            k: v for k, v in self.rules.to_dict().items() if k not in ("players", "target_score")
        }
        del values["server" if self.pool else "pool"]  # one or the other, as a spec names them
        return values


_TOP = {f.name for f in fields(TournamentSpec)}
DEFAULTS = TournamentSpec(name="", bots=())
"""A spec's defaults, the one place they are written (the dataclass's): every field but the name and bots."""


def load_spec(path: Path, overrides: dict[str, Any] | None = None) -> TournamentSpec:
    """Read a TOML spec; `overrides` (non-None values) replace its top-level fields. Where matches play
    is one thing: an override's `server` replaces the spec's `pool` too, and its `pool` the `server`."""
    try:
        values = tomllib.loads(path.read_text())
    except OSError as error:
        raise SpecError(f"{path}: cannot read: {error.strerror}") from None
    except tomllib.TOMLDecodeError as error:
        raise SpecError(f"{path}: not valid TOML: {error}") from None
    given = {k: v for k, v in (overrides or {}).items() if v is not None}
    for one, other in (("server", "pool"), ("pool", "server")):
        if one in given and other not in given:
            values.pop(other, None)
    return spec_from_dict({**values, **given})


def spec_from_dict(values: dict[str, Any]) -> TournamentSpec:
    unknown = sorted(set(values) - _TOP)
    if unknown:
        raise SpecError(f"{unknown[0]}: unknown field (known: {', '.join(sorted(_TOP))})")
    for required in ("name", "bots"):
        if required not in values:
            raise SpecError(f"{required}: required")
    seats = _int(values, "seats", DEFAULTS.seats, MIN_PLAYERS, MAX_PLAYERS)
    target = _int(values, "target", DEFAULTS.target, 1, 10**9)
    if "pool" in values and "server" in values:
        raise SpecError("pool: a spec names either a server or a pool of servers, not both (pool "
                        f"{values['pool']!r}, server {values['server']!r})")  # fmt: skip
    return TournamentSpec(
        name=_name(values["name"]),
        bots=_bots(values["bots"], seats),
        seats=seats,
        cycles=_int(values, "cycles", DEFAULTS.cycles, 1, 10_000),
        target=target,
        seed=_int(values, "seed", DEFAULTS.seed, 0, MAX_SEED),
        server=_server(values.get("server", DEFAULTS.server)),
        pool=_pool(values.get("pool", DEFAULTS.pool)),
        rules=_rules(values.get("rules", {}), seats, target),
        deadlines=_deadlines(values.get("deadlines", {})),
        retries=_retries(values.get("retries", {})),
    )


def _name(value: Any) -> str:
    if not isinstance(value, str) or not NAME.fullmatch(value):
        raise SpecError(
            f"name: {value!r}: 1-63 letters, digits, '_', '.' or '-', starting with a letter or digit"
        )
    return value


def _bots(value: Any, seats: int) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [b.strip() for b in value.split(",") if b.strip()]
    if not isinstance(value, list) or not all(isinstance(b, str) for b in value):
        raise SpecError(f"bots: expected a list of bot names, got {value!r}")
    for bot in value:
        if not NAME.fullmatch(bot):
            raise SpecError(f"bots: {bot!r} is not a bot name")
    repeated = sorted({b for b in value if value.count(b) > 1})
    if repeated:
        raise SpecError(f"bots: {repeated[0]!r} is listed twice")
    if len(value) < seats:
        raise SpecError(f"bots: too few bots ({len(value)}) for {seats} seats per table")
    return tuple(value)


def _int(values: dict[str, Any], name: str, default: int, low: int, high: int, where: str = "") -> int:
    value = values.get(name, default)
    if not isinstance(value, int) or isinstance(value, bool):
        raise SpecError(f"{where}{name}: expected an integer, got {value!r}")
    if not low <= value <= high:
        raise SpecError(f"{where}{name}: must be {low} to {high}, got {value}")
    return value


def _server(value: Any) -> str:
    host, _, port = str(value).rpartition(":")
    if not isinstance(value, str) or not host or not port.isdigit():
        raise SpecError(f"server: expected HOST:PORT, got {value!r}")
    return value


def _pool(value: Any) -> str:
    if value == "":
        return ""
    if not isinstance(value, str) or not NAME.fullmatch(value):
        raise SpecError(f"pool: {value!r}: a pool's name (`uno-arena server --pool NAME`): 1-63 letters, "
                        "digits, '_', '.' or '-', starting with a letter or digit")  # fmt: skip
    return value


def _rules(value: Any, seats: int, target: int) -> RulesConfig:
    if not isinstance(value, dict):
        raise SpecError(f"rules: expected a table of rules options, got {value!r}")
    for fixed, source in (("players", "seats"), ("target_score", "target")):
        if fixed in value:
            raise SpecError(f"rules.{fixed}: set by the spec's `{source}`, not in [rules]")
    try:
        return RulesConfig.from_dict({**value, "players": seats, "target_score": target})
    except ConfigError as error:
        raise SpecError(f"rules.{error}") from None


def _deadlines(value: Any) -> Deadlines:
    if not isinstance(value, dict):
        raise SpecError(f"deadlines: expected a table, got {value!r}")
    known: dict[str, int] = asdict(Deadlines())
    unknown = sorted(set(value) - set(known))
    if unknown:
        raise SpecError(f"deadlines.{unknown[0]}: unknown field (known: {', '.join(known)})")
    limits = {"decision_ms": (1, 600_000), "max_strikes": (1, 1000), "disconnect_grace_ms": (0, 3_600_000),
              "wait_for_bots_ms": (0, 3_600_000)}  # fmt: skip
    return Deadlines(**{k: _int(value, k, d, *limits[k], where="deadlines.") for k, d in known.items()})


def _retries(value: Any) -> Retries:
    if not isinstance(value, dict):
        raise SpecError(f"retries: expected a table, got {value!r}")
    unknown = sorted(set(value) - {"attempts", "backoff_s"})
    if unknown:
        raise SpecError(f"retries.{unknown[0]}: unknown field (known: attempts, backoff_s)")
    if value.get("attempts") == 0:  # it once meant "no retry"; a try is the least a match gets
        raise SpecError("retries.attempts: counts tries, the first included: 1 is a single try with no retry "
                        "(0 would never play the match)")  # fmt: skip
    attempts = _int(value, "attempts", DEFAULTS.retries.attempts, 1, MAX_ATTEMPTS, where="retries.")
    backoff = value.get("backoff_s", list(DEFAULTS.retries.backoff_s))
    valid = isinstance(backoff, list) and all(isinstance(b, int) and b >= 0 for b in backoff)
    if not valid or not backoff:
        raise SpecError(f"retries.backoff_s: expected a list of seconds >= 0, got {backoff!r}")
    return Retries(attempts, tuple(backoff))
