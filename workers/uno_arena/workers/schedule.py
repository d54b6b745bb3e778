"""The round-robin schedule: which bots meet at which table, in which seats.

Deterministic from the spec's seed. Two seats: every pair. k seats: every
k-combination, or when there are more than `MAX_FULL_TABLES` of them, a
balanced design in which every bot plays equally often and every pair shares
a table equally often (within one). Seat order is balanced over the whole
tournament: each bot sits in each position, and deals the first hand, as
evenly as possible. The first dealer is drawn by the rules (RULINGS 3), so a
match's seed is picked among candidates derived from the tournament seed so
that the draw falls to the bot whose turn it is to deal first.
"""

from __future__ import annotations

import dataclasses
import itertools
import logging
import math
import random
from collections import Counter
from collections.abc import Sequence

from uno_arena.records.tournament import ScheduledMatch
from uno_arena.rules import RulesConfig, new_match

log = logging.getLogger(__name__)

MAX_FULL_TABLES = 200  # per cycle; above this a balanced design replaces all combinations
_DEALER_TRIES = 64


def schedule(
    bots: Sequence[str], seats: int, cycles: int, seed: int, rules: RulesConfig
) -> list[ScheduledMatch]:
    rng = random.Random(f"schedule/{seed}")
    design = tables(len(bots), seats, rng)
    orders = balance_seats([list(t) for _ in range(cycles) for t in design], rng)
    dealers = balance_dealers(orders, rng)
    matches = []
    for index, (order, wanted) in enumerate(zip(orders, dealers, strict=True)):
        chosen, dealer = _seed_for_dealer(len(order), wanted, rules, f"{seed}/{index}")
        matches.append(
            ScheduledMatch(index, index // len(design), tuple(bots[b] for b in order), chosen, dealer)
        )
    return matches


def tables(players: int, seats: int, rng: random.Random) -> list[tuple[int, ...]]:
    """The tables of one cycle, as sorted tuples of bot indexes, in a shuffled playing order."""
    if math.comb(players, seats) <= MAX_FULL_TABLES or seats == 2:
        design = list(itertools.combinations(range(players), seats))
    else:
        design = balanced_tables(players, seats, rng)
    rng.shuffle(design)
    return design


def balanced_tables(players: int, seats: int, rng: random.Random) -> list[tuple[int, ...]]:
    """A cyclic design: a few base tables, each turned through all `players` rotations.

    Rotation gives every bot the same number of tables. Two bots x and y then
    share a table as often as the distance between them (y - x mod players,
    either way) occurs inside the base tables, so the base tables are searched
    for distances that all occur equally often, within one. More base tables
    are tried until that works. Tables of more than half the bots are the
    complements of a design for the rest, which keeps its balance. If no such
    set is found (e.g. 20 bots at 8 seats), a design with one fixed bot and the
    rest rotating is searched (`_fixed_point_design`); failing that too, the
    most even set found is used and a warning is logged.
    """
    if 2 * seats > players:  # complements of a balanced design are balanced too
        everyone = set(range(players))
        return sorted(
            tuple(sorted(everyone - set(t))) for t in balanced_tables(players, players - seats, rng)
        )
    least = math.ceil((players // 2) / math.comb(seats, 2))
    best: tuple[int, list[list[int]]] | None = None
    for blocks in range(least, least + 4):
        for _ in range(3):
            spread, base = _difference_blocks(players, seats, blocks, rng)
            if best is None or (spread, len(base)) < (best[0], len(best[1])):
                best = (spread, base)
            if spread <= 1:
                return _develop(base, players)
    fixed = _fixed_point_design(players, seats, rng)
    if fixed is not None:
        return fixed
    assert best is not None
    log.warning("%d bots at %d seats: pair counts differ by up to %d", players, seats, best[0])
    return _develop(best[1], players)


def _fixed_point_design(players: int, seats: int, rng: random.Random) -> list[tuple[int, ...]] | None:
    """The other classic cyclic design: bots 0..n-2 rotate modulo n-1, bot n-1 stays put.

    Some base tables hold the fixed bot, which then meets every other bot
    (seats - 1) times per such table; the rest are searched so that every
    distance on the ring occurs that often too, within one. With n*g/k base
    tables of which g hold the fixed bot (g = k / gcd(n, k)), every bot plays
    equally often.
    """
    ring, share = players - 1, math.gcd(players, seats)
    with_fixed, blocks = seats // share, players // share
    target = (seats - 1) * with_fixed
    for _ in range(5):
        base = [rng.sample(range(ring), seats - (1 if i < with_fixed else 0)) for i in range(blocks)]
        counts = [0] * (ring // 2 + 1)
        for block in base:
            _count(block, ring, counts, 1)
        steps = 3000 * blocks * seats
        for step in range(steps):
            if step % 50 == 0 and _count_spread([0, *counts[1:], target]) <= 1:
                return sorted(_rotated(block, shift, ring, i < with_fixed) for i, block in enumerate(base)
                              for shift in range(ring))  # fmt: skip
            block = base[rng.randrange(blocks)]
            position, replacement = rng.randrange(len(block)), rng.randrange(ring)
            if replacement in block:
                continue
            change = _distance_changes(block, block[position], replacement, ring)
            cost = sum((counts[d] + c - target) ** 2 - (counts[d] - target) ** 2 for d, c in change.items())
            temperature = 2.0 * (1 - step / steps)
            if cost <= 0 or rng.random() < math.exp(-cost / max(temperature, 1e-3)):
                block[position] = replacement
                for d, c in change.items():
                    counts[d] += c
    return None


def _rotated(block: list[int], shift: int, ring: int, with_fixed: bool) -> tuple[int, ...]:
    """A base table turned by `shift` on the ring of bots 0..ring-1, plus the fixed bot if it sits there."""
    return tuple(sorted([*((b + shift) % ring for b in block), *([ring] if with_fixed else [])]))


def _develop(base: list[list[int]], players: int) -> list[tuple[int, ...]]:
    return sorted(
        tuple(sorted((b + shift) % players for b in block)) for block in base for shift in range(players)
    )


def _difference_blocks(
    players: int, seats: int, blocks: int, rng: random.Random
) -> tuple[int, list[list[int]]]:
    """Anneal base tables towards equal pair counts after rotation; (spread of the counts, tables).

    A pair that never meets counts as a spread of two, so success means
    every pair meets, all within one as often as any other.
    """
    base = [rng.sample(range(players), seats) for _ in range(blocks)]
    counts = [0] * (players // 2 + 1)
    for block in base:
        _count(block, players, counts, 1)
    steps = 2000 * blocks * seats
    for step in range(steps):
        if step % 50 == 0 and _count_spread(counts) <= 1:
            break
        block = base[rng.randrange(blocks)]
        position, replacement = rng.randrange(seats), rng.randrange(players)
        if replacement in block:
            continue
        old = block[position]
        change = _distance_changes(block, old, replacement, players)
        cost = sum((counts[d] + c) ** 2 - counts[d] ** 2 for d, c in change.items())
        temperature = 2.0 * (1 - step / steps)
        if cost <= 0 or rng.random() < math.exp(-cost / max(temperature, 1e-3)):
            block[position] = replacement
            for d, c in change.items():
                counts[d] += c
    return _count_spread(counts), base


def _count_spread(counts: list[int]) -> int:
    low, high = min(counts[1:]), max(counts[1:])
    return max(high - low, 2 if low == 0 else 0)


def _distance_changes(block: list[int], old: int, new: int, players: int) -> Counter[int]:
    """How the counts by distance change if `old` in `block` becomes `new`."""
    change: Counter[int] = Counter()
    for other in block:
        if other != old:
            change[_distance(old, other, players)] -= _weight(old, other, players)
            change[_distance(new, other, players)] += _weight(new, other, players)
    return change


def _distance(a: int, b: int, players: int) -> int:
    d = (a - b) % players
    return min(d, players - d)


def _weight(a: int, b: int, players: int) -> int:
    return 2 if 2 * ((a - b) % players) == players else 1


def _count(block: list[int], players: int, counts: list[int], sign: int) -> None:
    """Add (or remove) a base table's pairs to the counts by distance d (1..players//2):
    after rotation, bots d apart meet this often; the half-way distance counts twice."""
    for a, b in itertools.combinations(block, 2):
        counts[_distance(a, b, players)] += sign * _weight(a, b, players)


def balance_seats(orders: list[list[int]], rng: random.Random) -> list[list[int]]:
    """Reorder each table so every bot sits in every seat as evenly as possible."""
    used: Counter[tuple[int, int]] = Counter()
    for order in orders:
        rng.shuffle(order)
        used.update((bot, seat) for seat, bot in enumerate(order))
    for step in range(200 * len(orders) * len(orders[0])):
        if step % 500 == 0 and _seat_spread(used, orders) <= 1:
            break
        order = orders[rng.randrange(len(orders))]
        i, j = rng.sample(range(len(order)), 2)
        a, b = order[i], order[j]
        before = [used[(a, i)], used[(a, j)], used[(b, j)], used[(b, i)]]
        after = [before[0] - 1, before[1] + 1, before[2] - 1, before[3] + 1]
        if sum(x * x for x in after) <= sum(x * x for x in before):
            used.subtract([(a, i), (b, j)])
            used.update([(a, j), (b, i)])
            order[i], order[j] = b, a
    return orders


def _seat_spread(used: Counter[tuple[int, int]], orders: list[list[int]]) -> int:
    seats = len(orders[0])
    bots = {b for order in orders for b in order}
    return max(
        max(used[(b, s)] for s in range(seats)) - min(used[(b, s)] for s in range(seats)) for b in bots
    )


def balance_dealers(orders: list[list[int]], rng: random.Random) -> list[int]:
    """The seat that should deal first at each table, so each bot deals first as evenly as possible."""
    dealt: Counter[int] = Counter({b: 0 for order in orders for b in order})
    dealers = []
    for order in orders:
        seat = min(range(len(order)), key=lambda s: (dealt[order[s]], rng.random()))
        dealt[order[seat]] += 1
        dealers.append(seat)
    for step in range(100 * len(orders)):
        if step % 200 == 0 and max(dealt.values()) - min(dealt.values()) <= 1:
            break
        index = rng.randrange(len(orders))
        order, seat = orders[index], rng.randrange(len(orders[index]))
        old, new = order[dealers[index]], order[seat]
        if dealt[new] + 1 <= dealt[old]:
            dealt[old] -= 1
            dealt[new] += 1
            dealers[index] = seat
    return dealers


def first_dealer(rules: RulesConfig, players: int, seed: int) -> int:
    """The seat the rules draw to deal the first hand of a match with this seed."""
    config = dataclasses.replace(rules, players=players)
    return new_match(config, random.Random(seed)).hand.dealer


def _seed_for_dealer(players: int, wanted: int, rules: RulesConfig, label: str) -> tuple[int, int]:
    """The first of a series of seeds derived from `label` whose dealer draw gives `wanted`."""
    first = None
    for attempt in range(_DEALER_TRIES):
        seed = random.Random(f"match/{label}/{attempt}").getrandbits(63)
        dealer = first_dealer(rules, players, seed)
        first = first or (seed, dealer)
        if dealer == wanted:
            return seed, dealer
    assert first is not None
    return first
