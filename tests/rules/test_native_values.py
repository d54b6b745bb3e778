"""The values with hand-written constructors (every event, `Observation`) behave as the dataclasses
they were: fields in order, defaults, equality, hashing, frozenness, `replace`, copies and pickles.

They run on whichever build is installed; CI runs them on both (docs/building.md).
"""

from __future__ import annotations

import copy
import dataclasses
import itertools
import pickle
import random
from typing import Any, get_args

import pytest

from uno_arena.rules import (
    ACTIONS,
    FACES,
    Colour,
    Event,
    HandEnd,
    MatchEnd,
    Observation,
    Phase,
    RulesConfig,
    legal_actions,
    new_match,
    observe,
)
from uno_arena.rules.event import DrawReason, ShuffleReason, seen_by
from uno_arena.rules.hand import _ATTRIBUTES, _fisher_yates, _shuffle, _shuffle_matches
from uno_arena.rules.match import apply

VALUES: list[type[Any]] = [*get_args(Event), Observation]


_SEATS_AND_COUNTS = {
    "seat", "round", "count", "cards_left", "direction", "catcher", "challenger", "to", "other",
    "giver", "winner", "number", "players", "to_move", "turn_seat", "dealer", "draw_pile_size",
    "penalty", "turn", "target_score", "hand_number",
}  # fmt: skip
_CARD_TUPLES = {"cards", "discards"}
_INT_TUPLES = {"points", "totals", "hand_sizes", "scores", "winners"}
_ENUMS: dict[tuple[str, str], Any] = {
    ("Shuffled", "reason"): ShuffleReason,
    ("Drew", "reason"): DrawReason,
    ("HandEnded", "reason"): HandEnd,
    ("MatchEnded", "reason"): MatchEnd,
    ("Observation", "phase"): Phase,
}


def _value(kind: type[Any], name: str, n: int) -> Any:
    """A value for field `name` of `kind`, different for each `n`; by name, since a compiled class's
    fields no longer carry their full annotations (`Card | None` reads `type`)."""
    if (kind.__name__, name) in _ENUMS:
        members = list(_ENUMS[kind.__name__, name])
        return members[n % len(members)]
    if name in _SEATS_AND_COUNTS or (name == "cards" and kind.__name__ in ("Shuffled", "Reshuffled")):
        return n
    if name in _CARD_TUPLES:
        return (FACES[n % 54], FACES[(n + 1) % 54])
    if name in _INT_TUPLES:
        return (n, n + 1)
    makers: dict[str, Any] = {
        "uno": lambda: n % 2 == 0,
        "jump_in": lambda: n % 2 == 0,
        "guilty": lambda: n % 2 == 0,
        "reason": lambda: f"reason {n}",
        "card": lambda: FACES[n % 54],
        "top": lambda: FACES[n % 54],
        "drawn": lambda: FACES[n % 54],
        "colour": lambda: list(Colour)[n % 4],
        "shown": lambda: ((n, (FACES[n % 54],)),),
        "legal_actions": lambda: (ACTIONS[n % len(ACTIONS)],),
        "match_id": lambda: f"match {n}",
    }
    return makers[name]()  # a new field: give it a sample here


def _arguments(kind: type[Any], offset: int = 0) -> dict[str, Any]:
    return {f.name: _value(kind, f.name, i + offset) for i, f in enumerate(dataclasses.fields(kind), 1)}


@pytest.mark.parametrize("kind", VALUES, ids=lambda kind: kind.__name__)
def test_the_constructor_sets_each_field_from_its_own_argument(kind: type[Any]) -> None:
    arguments = _arguments(kind)
    by_position = kind(*arguments.values())
    by_name = kind(**arguments)
    for name, expected in arguments.items():
        assert getattr(by_position, name) == expected, name
        assert getattr(by_name, name) == expected, name
    assert by_position == by_name
    assert repr(by_name) == f"{kind.__name__}({', '.join(f'{k}={v!r}' for k, v in arguments.items())})"


@pytest.mark.parametrize("kind", VALUES, ids=lambda kind: kind.__name__)
def test_defaults_are_the_fields_defaults(kind: type[Any]) -> None:
    required = {f.name: v for f, v in zip(dataclasses.fields(kind), _arguments(kind).values(), strict=True)
                if f.default is dataclasses.MISSING}  # fmt: skip
    value = kind(**required)
    for field in dataclasses.fields(kind):
        if field.default is not dataclasses.MISSING:
            assert getattr(value, field.name) == field.default


@pytest.mark.parametrize("kind", VALUES, ids=lambda kind: kind.__name__)
def test_equality_and_hashing_are_by_value(kind: type[Any]) -> None:
    one, same = kind(**_arguments(kind)), kind(**_arguments(kind))
    assert one == same and hash(one) == hash(same)
    assert len({one, same}) == 1
    for field in dataclasses.fields(kind):
        changed = dataclasses.replace(one, **{field.name: _value(kind, field.name, 1000)})
        if getattr(changed, field.name) != getattr(one, field.name):
            assert changed != one, field.name


@pytest.mark.parametrize("kind", VALUES, ids=lambda kind: kind.__name__)
def test_values_are_frozen(kind: type[Any]) -> None:
    value = kind(**_arguments(kind))
    for field in dataclasses.fields(kind):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(value, field.name, getattr(value, field.name))
    assert not hasattr(value, "__dict__")  # slots: no attribute can be added either


@pytest.mark.parametrize("kind", VALUES, ids=lambda kind: kind.__name__)
def test_copies_and_pickles_are_equal_values(kind: type[Any]) -> None:
    value = kind(**_arguments(kind))
    for twin in (copy.copy(value), copy.deepcopy(value), pickle.loads(pickle.dumps(value))):
        assert twin == value and type(twin) is kind


def test_cards_keep_identity_hashing_and_order() -> None:
    """Interned faces: equal only to themselves, hashable (a compiled class defining `__lt__` would
    lose its inherited `__hash__`), sorted by index, copied and pickled as the same face."""
    assert len(set(FACES)) == len(FACES)
    assert {face: face.index for face in FACES}[FACES[7]] == 7
    assert sorted(reversed(FACES)) == list(FACES)
    for face in FACES:
        assert copy.deepcopy(face) is face and pickle.loads(pickle.dumps(face)) is face
    for action in ACTIONS[:5]:
        assert pickle.loads(pickle.dumps(action)) is action and hash(action) == hash(copy.copy(action))


def test_real_events_and_observations_round_trip() -> None:
    """The events of whole matches (all four house rules) and every seat's views: copies equal,
    and `seen_by` hides another seat's cards through `replace`."""
    config = RulesConfig(players=3, stacking=True, jump_in=True, seven_zero=True, multi_play=True)
    rng = random.Random(5)
    for seed in range(3):
        match = new_match(config, random.Random(seed))
        while match.result is None:
            for seat in range(config.players):
                view = observe(match, seat)
                assert pickle.loads(pickle.dumps(view)) == view
            apply(match, rng.choice(legal_actions(match)))
        assert pickle.loads(pickle.dumps(match.events)) == match.events
        for event in match.events:
            hidden = seen_by(event, -1)
            assert getattr(hidden, "cards", None) is None or event is hidden
            assert type(hidden) is type(event)


def test_shuffle_orders_as_the_standard_library_does() -> None:
    """Replays depend on it: the same generator state gives the same order, for any length."""
    assert _shuffle_matches()
    for seed, length in itertools.product(range(30), (0, 1, 2, 3, 7, 108, 300)):
        ours = [FACES[i % len(FACES)] for i in range(length)]
        theirs = list(ours)
        rng_ours, rng_theirs = random.Random(seed), random.Random(seed)
        _fisher_yates(rng_ours, ours)
        rng_theirs.shuffle(theirs)
        assert ours == theirs
        assert rng_ours.getstate() == rng_theirs.getstate()


def test_shuffle_leaves_other_generators_to_their_own_shuffle() -> None:
    class Loaded(random.Random):
        def shuffle(self, x: Any) -> None:
            x.reverse()

    cards = list(FACES[:5])
    _shuffle(Loaded(1), cards)
    assert cards == list(reversed(FACES[:5]))


def test_clones_copy_every_attribute() -> None:
    match = new_match(RulesConfig(players=4, jump_in=True), random.Random(3))
    rng = random.Random(4)
    for _ in range(60):
        apply(match, rng.choice(legal_actions(match)))
    twin = match.clone()
    for name in _ATTRIBUTES:
        mine, theirs = getattr(match.hand, name), getattr(twin.hand, name)
        assert mine == theirs or name == "rng", name
        if isinstance(mine, list):
            assert mine is not theirs, name  # the twin's lists are its own
    assert match.hand.rng.getstate() == twin.hand.rng.getstate() == twin.rng.getstate()
    for name in ("totals", "hand_results", "actions", "result", "hand_number", "config"):
        assert getattr(match, name) == getattr(twin, name), name
    for _ in range(200):
        if match.result is not None:
            break
        action = rng.choice(legal_actions(match))
        apply(match, action)
        apply(twin, action)
    assert twin.events == match.events and twin.totals == match.totals
