"""Regenerate the golden playthroughs: `python tests/rules/golden/generate.py`.

Each case plays one match from a fixed (config, seed) with seeded, deterministic
policies and writes its transcript, `CASE.jsonl`, next to this script;
`actions.txt` lists the action space. `tests/rules/test_golden.py` replays every
case and compares. Run this only when a change is meant to alter what they pin,
and say so in the commit: a diff in these files means the v1 action numbering
changed (which `game.proto` promises never happens), or the rules' random stream
(the tournament schedule's dealer balance relies on it; so does Python's own
`random`, should a new Python change it), or what a move does, what a seat sees,
or the bytes the server sends a bot.

A transcript is JSON lines, in the order things happen:
- a header: the case, its seed, policy and config;
- every event of the match log (unfiltered) as it is appended, `{"event": KIND, ...fields}`;
- one line per decision: `n`, `seat`, the action's `id` and `text`; the first
  `Case.full` decisions also carry `observations`, every seat's, in seat order
  (the seat to move in full, every other seat as the fields where its view differs
  from the mover's, so a leak of hidden cards shows), and `request`, the base64 of
  `reference_encoder.decision_request_bytes` as the server sends it to the seat to move (its
  `events`: what that seat has not been sent by an earlier request of this
  transcript, as `seen_by` filters them; the first request carries the log so far);
- the result.
"""

from __future__ import annotations

import base64
import enum
import json
import random
import sys
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

if __name__ == "__main__":  # run as a script: the repository's root, for `tests`
    sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests import reference_encoder
from uno_arena.rules import (
    ACTIONS,
    KEEP,
    Action,
    ActionKind,
    Card,
    DealerRule,
    Event,
    FirstWildChooser,
    FirstWildDrawFour,
    Observation,
    Phase,
    Policy,
    RulesConfig,
    Scoring,
    legal_actions,
    new_match,
    observe,
    play,
    seen_by,
)
from uno_arena.v1 import codec

HERE = Path(__file__).resolve().parent
ACTIONS_FILE = "actions.txt"
DEADLINE_MS = 1000


@dataclass(frozen=True)
class Case:
    """One pinned match. `policy` has a letter per seat: `e` eager (plays whenever it can, so
    hands end), `r` random (any legal action: draws, keeps, lets hands stall)."""

    name: str
    config: RulesConfig
    seed: int
    policy: str
    full: int  # how many decisions, from the first, carry observations and the request

    @property
    def file(self) -> str:
        return f"{self.name}.jsonl"


# Low targets, short hands for 10 players and a cap on full decisions keep the files small.
# Between them: every non-default option, 2, 3, 4 and 10 players, every phase, action kind,
# event kind, hand and match end (test_golden checks that coverage; seeds were picked for it).
CASES: tuple[Case, ...] = (
    Case("two_players_official", RulesConfig(players=2, target_score=100), seed=16, policy="ee", full=120),
    Case(
        "three_players_table_options",
        RulesConfig(
            players=3,
            dealer=DealerRule.ROTATE_LEFT,
            first_wild_chooser=FirstWildChooser.FIRST_PLAYER,
            first_wild_draw_four=FirstWildDrawFour.RESHUFFLE,
            uno_penalty=4,
            target_score=150,
        ),
        seed=80,
        policy="eee",
        full=120,
    ),
    Case(
        "four_players_penalty_points",
        RulesConfig(players=4, scoring=Scoring.PENALTY_POINTS, draw_until_playable=True, target_score=100),
        seed=95,
        policy="rree",
        full=100,
    ),
    Case(
        "ten_players_short_hands",
        RulesConfig(
            players=10, hand_size=10, max_turns_per_hand=200, max_hands_per_match=2, target_score=10_000
        ),
        seed=27,
        policy="rrrrrrrrrr",
        full=50,
    ),
    # RULINGS 25: stacked Draw Twos (a total of 10 accepted), a stacked Wild Draw Four challenged
    Case(
        "four_players_stacking",
        RulesConfig(players=4, stacking=True, target_score=100),
        seed=58,
        policy="eeer",
        full=100,
    ),
    # RULINGS 26-28 with 25: jump-ins, cards laid together, 7 swaps and 0 passes, all four at once
    Case(
        "five_players_house_rules",
        RulesConfig(
            players=5, stacking=True, jump_in=True, seven_zero=True, multi_play=True, target_score=100
        ),
        seed=2,
        policy="eeeer",
        full=100,
    ),
)


def policies(case: Case) -> list[Policy]:
    """One generator per seat, seeded from the case: a seat's choices do not depend on the others'.

    Written here rather than taken from `uno_arena.rules.runner`, so that changing those
    example policies does not show up as a change of the rules.
    """
    if len(case.policy) != case.config.players:
        raise ValueError(f"{case.name}: policy {case.policy!r} is not one letter per seat")
    make = {"e": _eager, "r": _random}
    return [make[kind](random.Random(case.seed * 1000 + seat)) for seat, kind in enumerate(case.policy)]


def _random(rng: random.Random) -> Policy:
    """Uniform over the legal actions."""

    def choose(seen: Observation) -> Action:
        return _kept_unplayable(seen) or rng.choice(seen.legal_actions)

    return choose


def _eager(rng: random.Random) -> Policy:
    """Uniform over the plays when there is one (a drawn playable card is played), else over all."""

    def choose(seen: Observation) -> Action:
        plays = [a for a in seen.legal_actions if a.kind is ActionKind.PLAY]
        return _kept_unplayable(seen) or rng.choice(plays or seen.legal_actions)

    return choose


def _kept_unplayable(seen: Observation) -> Action | None:
    """KEEP after drawing a card that does not play, without a random number. The rules ask that
    decision since every draw is asked (RULINGS 29); before, the turn ended by itself. Drawing no
    number for it leaves every other choice of the seats as the transcripts pinned it, so that
    change shows in them as the KEEP decisions it adds, and nothing else."""
    if seen.phase is Phase.DRAWN and seen.legal_actions == (KEEP,):
        return KEEP
    return None


def transcript(case: Case) -> list[str]:
    """The case's lines, as `CASE.jsonl` holds them (without line ends)."""
    config = case.config
    match_id = f"golden-{case.name}"
    match = new_match(config, random.Random(case.seed))
    choose = policies(case)
    header = {"case": case.name, "seed": case.seed, "policy": case.policy, "full": case.full}
    lines = [_dump({**header, "config": config.to_dict()})]
    logged = 0
    sent = [0] * config.players
    asked = [0] * config.players
    n = 0
    while match.result is None:
        lines += [_dump(_event(e)) for e in match.events[logged:]]
        logged = len(match.events)
        seat = match.hand.to_move
        views = [observe(match, s) for s in range(config.players)]
        action = choose[seat](views[seat])
        n += 1
        record: dict[str, Any] = {"n": n, "seat": seat, "id": action.id, "text": str(action)}
        if n <= case.full:
            unsent = [codec.event_element(seen_by(e, seat)) for e in match.events[sent[seat] :]]
            sent[seat] = len(match.events)
            asked[seat] += 1
            request_id = f"{match_id}#{seat}.{asked[seat]}"  # as the server numbers them: per seat
            request = reference_encoder.decision_request_bytes(
                match, seat, legal_actions(match), match_id, request_id, DEADLINE_MS, unsent
            )
            record["observations"] = _observations(views, seat)
            record["request"] = base64.b64encode(request).decode("ascii")
        lines.append(_dump(record))
        play(match, action, seat)
    lines += [_dump(_event(e)) for e in match.events[logged:]]
    result = match.result
    summary = {
        "reason": result.reason.value,
        "winners": list(result.winners),
        "totals": list(result.totals),
        "hands": len(result.hands),
        "decisions": len(result.actions),
    }
    lines.append(_dump({"result": summary}))
    return lines


def action_lines() -> list[str]:
    """The v1 action space, one `id text` per line."""
    return [f"{a.id} {a}" for a in ACTIONS]


def _observations(views: list[Observation], mover: int) -> list[dict[str, Any]]:
    full = _plain_fields(views[mover])
    return [
        full if seat == mover else {k: v for k, v in _plain_fields(view).items() if v != full[k]}
        for seat, view in enumerate(views)
    ]


def _event(value: Event) -> dict[str, Any]:
    return {"event": type(value).__name__, **_plain_fields(value)}


UNPINNED = ("match_id",)
"""Fields the transcripts leave out: an observation's `match_id` (always "" here; it came after them)."""


def _plain_fields(value: Any) -> dict[str, Any]:
    return {f.name: _plain(getattr(value, f.name)) for f in fields(value) if f.name not in UNPINNED}


def _plain(value: Any) -> Any:
    """JSON values: cards by name, enums by value, actions by id."""
    if isinstance(value, Card):
        return str(value)
    if isinstance(value, Action):
        return value.id
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    return value


def _dump(value: dict[str, Any]) -> str:
    return json.dumps(value, separators=(",", ":"))


def expected_files() -> dict[str, list[str]]:
    """Every golden file's name and lines."""
    files = {case.file: transcript(case) for case in CASES}
    files[ACTIONS_FILE] = action_lines()
    return files


def main() -> None:
    for name, lines in expected_files().items():
        path = HERE / name
        path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
        print(f"{name}: {len(lines)} lines, {path.stat().st_size:,} bytes", file=sys.stderr)


if __name__ == "__main__":
    main()
