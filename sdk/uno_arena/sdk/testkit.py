"""Build what a bot sees from a readable position, for unit tests of a bot's `decide`.

    from uno_arena.sdk.testkit import event, position

    seen = position(hand="red 3, wild", top="red 7")
    assert MyBot().decide(seen) is seen.legal.plays(colour=Colour.RED)[0]

`position` sets up a real hand of the rules core in that position and observes it, so
`legal` is exactly what the server would offer there; `event` builds one event as a bot
receives it; `match_info` the `MatchInfo` of a position's match, for `on_match_start`.
Cards are named "red 3", "blue skip", "green draw two", "yellow reverse", "wild", "wild draw
four" (or the rules' own "red_3", "wild_draw_four"), in a string separated by commas or as a list.
"""

from __future__ import annotations

import dataclasses
import enum
import random
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypeAlias

from uno_arena import rules
from uno_arena.rules import Card, Colour, DrawReason, Event, EventKind, Observation, Phase, ShuffleReason
from uno_arena.rules.event import EVENT_CLASSES
from uno_arena.rules.observation import observe_hand
from uno_arena.sdk.messages import MatchInfo

CardName: TypeAlias = str | Card
Cards: TypeAlias = str | Iterable[CardName]
"""Cards as "red 3, wild" (comma-separated), "red_3 wild" (the rules' names), or a list of names or cards."""

ACCEPTED = ('"red 3", "blue skip", "green draw two", "yellow reverse", "wild", "wild draw four" '
            '(or "red_3", "wild_draw_four"), separated by commas')  # fmt: skip
_ALIASES = {"draw 2": "draw two", "+2": "draw two", "wild draw 4": "wild draw four",
            "wild +4": "wild draw four", "+4": "wild draw four"}  # fmt: skip
_DECK: Counter[Card] = Counter(rules.standard_deck())


def card(name: CardName) -> Card:
    """The card of a name ("red 3", "wild draw four", "blue_skip"), or a `Card` itself."""
    if isinstance(name, Card):
        return name
    words = " ".join(str(name).lower().replace("_", " ").replace("-", " ").split())
    for alias, meant in _ALIASES.items():
        if words == alias or words.endswith(" " + alias):
            words = words.removesuffix(alias) + meant
    try:
        return rules.parse_card(words.replace(" ", "_"))
    except ValueError:
        raise ValueError(f"unknown card {name!r}: cards are {ACCEPTED}") from None


def cards(names: Cards) -> list[Card]:
    """Cards from "red 3, wild", "red_3 wild" or a list of names or cards ("" is none)."""
    if not isinstance(names, str):
        return [card(name) for name in names]
    found: list[Card] = []
    for item in (part.strip() for part in names.split(",")):
        if not item:
            continue
        try:
            found.append(card(item))
        except ValueError:
            try:  # the rules' own syntax, separated by spaces: "red_7 wild blue_skip"
                found += [rules.parse_card(word) for word in item.split()]
            except ValueError:
                raise ValueError(f"unknown card {item!r}: cards are {ACCEPTED}") from None
    return found


def named_colour(name: str | Colour) -> Colour:
    try:
        return rules.Colour(str(name).strip().lower())
    except ValueError:
        raise ValueError(f"unknown colour {name!r}: one of {', '.join(c.value for c in Colour)}") from None


def _phase(name: str | Phase) -> rules.Phase:
    try:
        phase = rules.Phase(str(name).strip().lower())
    except ValueError:
        phase = rules.Phase.OVER
    if phase is rules.Phase.OVER:
        choices = ", ".join(p.value for p in Phase if p is not Phase.OVER)
        raise ValueError(f"unknown phase {name!r}: a position is one of {choices}")
    return phase


def position(
    hand: Cards,
    top: CardName,
    *,
    colour: str | Colour | None = None,
    phase: str | Phase | None = None,
    drawn: CardName | None = None,
    players: int = 2,
    seat: int = 0,
    turn_seat: int | None = None,
    hand_sizes: Sequence[int] | None = None,
    discards: Cards = (),
    draw_pile: int | None = None,
    direction: int = 1,
    dealer: int | None = None,
    scores: Sequence[int] | None = None,
    target: int = 500,
    hand_number: int = 1,
    turn: int = 1,
    rules_options: Mapping[str, Any] | None = None,
    penalty: int | None = None,
    laid: int | None = None,
    swaps: int | None = None,
    uno_called: bool = False,
    match_id: str = "test",
    seed: int = 0,
) -> Observation:
    """What `seat` sees when it must decide in this position, `legal` as the rules core gives it.

    `hand`: your cards; `top`: the top discard, with `colour` the colour named if it is a Wild;
    `discards`: the cards under it, bottom first. `phase` (default "turn", or "drawn" when
    `drawn` is given): "turn", "drawn" (`drawn`, the card you just drew, playable or not, is added to
    your hand), "catch" (`turn_seat`, by default the seat before yours, played its next-to-last
    card without calling UNO), "challenge" (the seat before yours played the Wild Draw Four on
    top), "choose_colour" (the first card, a Wild, is the only discard; you deal by default);
    with the house rules on in `rules_options`: "stack" (stacking: the seat before yours played
    the Draw Two on top), "jump_in" (jump_in: `turn_seat`, by default the seat before yours,
    played the top card, its effect applied, and you may play an identical card), "lay"
    (multi_play: you just played the top card; lay more of its number or symbol, or done),
    "swap" (seven_zero: you just played the 7 on top; choose whom to swap hands with).
    `hand_sizes` are every seat's card counts (default: the configured hand size, one for a seat
    that may be caught); the other seats' cards are dealt at random (`seed`) from the cards not
    named. `draw_pile`: cards left to draw (default: all the rest; what that leaves over goes to
    the bottom of the discards). `rules_options`: other options of `RulesConfig` by name.
    `penalty`: the draw total pending for a Draw Two or Wild Draw Four on top (default: 2 or 4
    for each card laid; more only with `rules_options={"stacking": True}`). `laid`: with
    multi_play, how many cards of the top card's number or symbol the play laid, the top card
    and those under it ("catch", "jump_in", "lay", "swap"); `swaps`: the swaps still owed in
    "swap" (one per 7 laid); `uno_called`: in "lay" or "swap", whether the play called UNO.
    """
    chosen = _phase(phase if phase is not None else ("drawn" if drawn is not None else "turn"))
    options = {"players": players, "target_score": target, **(rules_options or {})}
    config = rules.RulesConfig.from_dict(options)
    players = config.players
    if not 0 <= seat < players:
        raise ValueError(f"seat {seat} is not a seat of {players}")
    mine = cards(hand) + ([card(drawn)] if drawn is not None else [])
    under = cards(discards)
    face_up = card(top)
    _check_copies(mine, under, face_up)
    if turn_seat is None and chosen in (rules.Phase.CATCH, rules.Phase.CHALLENGE):
        turn_seat = (seat - direction) % players
    if dealer is None:
        dealer = (
            _chooser_dealer(config, face_up, seat, direction) if chosen is rules.Phase.CHOOSE_COLOUR else 0
        )
    sizes = _sizes(config, seat, len(mine), hand_sizes, turn_seat if chosen is rules.Phase.CATCH else None)
    rest = rules.standard_deck()  # the other seats' cards and the draw pile come from what is left
    for taken in (*mine, *under, face_up):
        rest.remove(taken)
    random.Random(seed).shuffle(rest)
    others = sum(sizes) - len(mine)
    if others > len(rest):
        raise ValueError(
            f"hand_sizes: the other seats would hold {others} cards, but only {len(rest)} are left"
        )
    held: list[list[Card]] = []
    for other, size in enumerate(sizes):
        held.append(mine if other == seat else [rest.pop() for _ in range(size)])
    if draw_pile is not None:
        if not 0 <= draw_pile <= len(rest):
            raise ValueError(f"draw_pile={draw_pile}: {len(rest)} cards are left to draw in this position")
        under = rest[draw_pile:] + under  # played earlier in the hand, under the named discards
        rest = rest[:draw_pile]
    named = None if colour is None else named_colour(colour)
    if named is None and face_up.is_wild and chosen is not rules.Phase.CHOOSE_COLOUR:
        raise ValueError(
            f"the top card, {face_up}, is a Wild: say which colour was named with it, e.g. colour='red'"
        )
    hand_state = rules.arranged_hand(
        config,
        cards=held,
        discards=[*under, face_up],
        draw_pile=rest,
        colour=named if named is not None or face_up.is_wild else face_up.colour,
        phase=chosen,
        to_move=seat,
        turn_seat=turn_seat,
        dealer=dealer,
        direction=direction,
        drawn=card(drawn) if drawn is not None else None,
        turns=turn,
        penalty=penalty,
        laid=laid,
        swaps=swaps,
        uno_called=uno_called,
    )
    totals = tuple(scores) if scores is not None else (0,) * players
    if len(totals) != players:
        raise ValueError(f"scores: one per seat, {players}, not {len(totals)}")
    return observe_hand(hand_state, seat, totals, hand_number, match_id)


def match_info(seen: Observation, rules_options: Mapping[str, Any] | None = None) -> MatchInfo:
    """What `Bot.on_match_start` gets for the match `seen` (a `position`) is part of: give the
    same `rules_options`, so that a bot reading the house rules from it sees them on."""
    options = {"players": seen.players, "target_score": seen.target_score, **(rules_options or {})}
    bots = [f"bot{seat}" for seat in range(seen.players)]
    return MatchInfo(seen.match_id, seen.seat, tuple(bots), rules.RulesConfig.from_dict(options), 1.0)


def _check_copies(mine: list[Card], under: list[Card], top: Card) -> None:
    named = Counter([*mine, *under, top])
    extra = {c: n for c, n in named.items() if n > _DECK[c]}
    if extra:
        listed = ", ".join(f"{n} x {c} (the deck has {_DECK[c]})" for c, n in sorted(extra.items()))
        raise ValueError(f"more copies than the deck holds, in hand, discards and top: {listed}")


def _chooser_dealer(config: rules.RulesConfig, top: Card, seat: int, direction: int) -> int:
    """The dealer that makes `seat` the one to name a first Wild's colour (RULINGS 9)."""
    first_player = (
        top.rank is rules.Rank.WILD and config.first_wild_chooser is rules.FirstWildChooser.FIRST_PLAYER
    )
    return (seat - direction) % config.players if first_player else seat


def _sizes(
    config: rules.RulesConfig, seat: int, mine: int, given: Sequence[int] | None, uncalled: int | None
) -> list[int]:
    players = config.players
    if given is None:
        sizes = [config.hand_size] * players
        if uncalled is not None and 0 <= uncalled < players:
            sizes[uncalled] = 1
        sizes[seat] = mine
        return sizes
    sizes = list(given)
    if len(sizes) != players:
        raise ValueError(f"hand_sizes: one per seat, {players}, not {len(sizes)}")
    if min(sizes) < 0:
        raise ValueError(f"hand_sizes: counts of cards, not {min(sizes)}")
    if sizes[seat] != mine:
        raise ValueError(f"hand_sizes[{seat}] is {sizes[seat]}, but your hand holds {mine} cards")
    return sizes


def event(kind: str | EventKind, **fields: Any) -> Event:
    """One event as a bot receives it (`Bot.on_events`), from its kind and fields as docs/bots.md
    lists them: `event("played", seat=1, card="wild", colour="green", cards_left=4)`.

    Cards and colours by name; `cards` left out of a deal, draw or shown hand means hidden;
    `count` defaults to the cards given; `uno` to False; a draw's `reason` to "draw".
    """
    try:
        which = EventKind(str(kind))
    except ValueError:
        raise ValueError(f"unknown event kind {kind!r}: one of {', '.join(EventKind)}") from None
    cls = EVENT_CLASSES[which]
    accepted = [f.name for f in dataclasses.fields(cls)]
    hidden = fields.pop("hidden", False) and "cards" in accepted
    unknown = sorted(set(fields) - set(accepted))
    if unknown:
        raise ValueError(f"{which} has no field {unknown[0]!r}: it has {', '.join(accepted)}")
    values = {name: _value(which, name, value) for name, value in fields.items()}
    if "cards" in accepted and which not in _COUNTED:
        if hidden and values.get("cards"):
            raise ValueError(f"{which}: hidden cards are not given")
        values.setdefault("cards", None)  # left out: another seat's cards, which you do not see
        if values["cards"] is not None and "count" in accepted:
            values.setdefault("count", len(values["cards"]))
    for name, default in _DEFAULTS.get(which, {}).items():
        values.setdefault(name, default)
    missing = [name for name in accepted if name not in values]
    if missing:
        raise ValueError(f"{which} needs {', '.join(missing)}")
    made: Event = cls(**values)
    return made


_COUNTED = (EventKind.SHUFFLED, EventKind.RESHUFFLED)  # their `cards` is a count
_DEFAULTS: dict[EventKind, dict[str, Any]] = {
    EventKind.PLAYED: {"colour": None, "uno": False, "jump_in": False},
    EventKind.DREW: {"reason": DrawReason.DRAW},
    EventKind.HAND_ENDED: {"winner": None},
}
_ENUM_FIELDS: dict[tuple[EventKind, str], type[enum.Enum]] = {
    (EventKind.SHUFFLED, "reason"): ShuffleReason,
    (EventKind.HAND_ENDED, "reason"): rules.HandEnd,
    (EventKind.MATCH_ENDED, "reason"): rules.MatchEnd,
    (EventKind.DREW, "reason"): DrawReason,
}


def _value(kind: EventKind, name: str, value: Any) -> Any:
    """A field given to `event` as the rules core's event holds it."""
    if value is None:
        return None
    if name == "card":
        return card(value)
    if name == "cards" and kind not in _COUNTED:
        return tuple(cards(value))
    if name == "colour":
        return named_colour(value)
    if (kind, name) in _ENUM_FIELDS:
        enum_type = _ENUM_FIELDS[(kind, name)]
        try:
            return enum_type(str(value))
        except ValueError:
            raise ValueError(
                f"{kind} reason {value!r}: one of {', '.join(m.value for m in enum_type)}"
            ) from None
    if isinstance(value, list):
        return tuple(value)
    return value
