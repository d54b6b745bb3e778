"""Engine speed: full-rules random play, side by side with RLCard's UNO game.

Run: `pip install -e '.[bench]'` then `python bench/engine.py [--seconds S]`.

What is measured, all in one process on one core, one after the other:
- ours, "random": uniform over legal actions (the trusted `apply` plus
  `legal_actions`), for 2, 4 and 10 players: hands/s and decisions/s.
- ours, "eager": uniform over the plays when there is one (draw only when no
  card can be played, always play a playable drawn card) -- the random-play
  rule RLCard's own game imposes -- still under the full rules.
- RLCard's `UnoGame` (2 players), its own random legal play: hands/s, steps/s.
- whole matches to 500 per second for 2 and 4 players (uniform random).
- the same hands with all four house rules on (stacking, jump_in, seven_zero,
  multi_play; RULINGS 25-28), beside the official rules, eager and random, 2
  and 4 players: `house_ratio_*` is house-rules hands/s over official hands/s.
  The house rules add decisions (a jump-in window asks every other seat after
  most plays, a `lay` decision follows every play), so a hand costs more.

Why two policies: under the official rules a player may always draw instead
of playing (RULINGS 13), so uniform random play draws about a third of the
time and a hand lasts ~1,000 decisions; RLCard forbids drawing while a card
can be played, so its hands last ~46 steps. hands/s of the two are therefore
not like for like; decisions/s and the eager policy are.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from uno_arena.rules import Action, RulesConfig, legal_actions, new_hand, new_match
from uno_arena.rules.hand import apply
from uno_arena.rules.legal import legal_actions as hand_legal_actions
from uno_arena.rules.match import apply as match_apply
from uno_arena.rules.runner import eager_choices

Chooser = Callable[[Sequence[Action]], Sequence[Action]]


def uniform(legal: Sequence[Action]) -> Sequence[Action]:
    return legal


HOUSE_RULES = {"stacking": True, "jump_in": True, "seven_zero": True, "multi_play": True}


def ours_hands(
    players: int, seconds: float, narrow: Chooser, seed: int, house: bool = False
) -> tuple[float, float]:
    """(hands/s, decisions/s) of whole hands played with `narrow`ed uniform choices, under the
    official rules or with all four house rules (`house`)."""
    config = RulesConfig(players=players, **(HOUSE_RULES if house else {}))
    rng = random.Random(seed)
    hands = decisions = 0
    started = time.perf_counter()
    deadline = started + seconds
    while time.perf_counter() < deadline:
        hand = new_hand(config, rng)
        while hand.result is None:
            apply(hand, rng.choice(narrow(hand_legal_actions(hand))))
            decisions += 1
        hands += 1
    elapsed = time.perf_counter() - started
    return hands / elapsed, decisions / elapsed


def ours_matches(players: int, seconds: float, seed: int) -> float:
    """Whole matches to 500 per second, uniform random play."""
    config = RulesConfig(players=players)
    rng = random.Random(seed)
    matches = 0
    started = time.perf_counter()
    while time.perf_counter() - started < seconds or matches == 0:
        match = new_match(config, rng)
        while match.result is None:
            match_apply(match, rng.choice(legal_actions(match)))
        matches += 1
    return matches / (time.perf_counter() - started)


def rlcard_hands(seconds: float, seed: int) -> tuple[float, float]:
    """(hands/s, steps/s) of RLCard's UnoGame, 2 players, random over its legal actions."""
    import numpy as np
    from rlcard.games.uno.game import UnoGame

    game = UnoGame(num_players=2)
    game.np_random = np.random.RandomState(seed)
    rng = random.Random(seed)
    hands = steps = 0
    started = time.perf_counter()
    deadline = started + seconds
    while time.perf_counter() < deadline:
        game.init_game()
        while not game.is_over():
            game.step(rng.choice(game.get_legal_actions()))
            steps += 1
        hands += 1
    elapsed = time.perf_counter() - started
    return hands / elapsed, steps / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=5.0, help="time per measurement")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    s, seed = args.seconds, args.seed

    figures: dict[str, float] = {}
    for players in (2, 4, 10):
        hands, decisions = ours_hands(players, s, uniform, seed)
        figures[f"hands_per_s_{players}p"] = hands
        figures[f"decisions_per_s_{players}p"] = decisions
        print(f"ours random {players:>2}p: {hands:9.1f} hands/s {decisions:11.0f} decisions/s")
    eager_hands, eager_decisions = ours_hands(2, s, eager_choices, seed)
    figures["eager_hands_per_s_2p"] = eager_hands
    print(f"ours eager   2p: {eager_hands:9.1f} hands/s {eager_decisions:11.0f} decisions/s")
    rl_hands, rl_steps = rlcard_hands(s, seed)
    figures["rlcard_hands_per_s_2p"] = rl_hands
    figures["rlcard_steps_per_s_2p"] = rl_steps
    print(f"rlcard       2p: {rl_hands:9.1f} hands/s {rl_steps:11.0f} steps/s")
    for players in (2, 4):
        rate = ours_matches(players, s, seed)
        figures[f"matches_to_500_per_s_{players}p"] = rate
        print(f"ours random {players:>2}p: {rate:9.2f} matches to 500 per second")

    for players in (2, 4):
        for policy, narrow in (("eager", eager_choices), ("random", uniform)):
            official = ours_hands(players, s, narrow, seed)[0]
            house, house_decisions = ours_hands(players, s, narrow, seed, house=True)
            figures[f"house_{policy}_hands_per_s_{players}p"] = house
            figures[f"house_ratio_{policy}_{players}p"] = house / official
            print(f"ours {policy:<6} {players:>2}p, all four house rules: {house:9.1f} hands/s "
                  f"{house_decisions:11.0f} decisions/s ({house / official:.2f}x the official rules' "
                  f"{official:.1f} hands/s)")  # fmt: skip

    figures["ratio_2p"] = figures["hands_per_s_2p"] / rl_hands
    figures["decision_ratio_2p"] = figures["decisions_per_s_2p"] / rl_steps
    figures["eager_ratio_2p"] = eager_hands / rl_hands
    keys = [
        "hands_per_s_2p",
        "hands_per_s_4p",
        "hands_per_s_10p",
        "rlcard_hands_per_s_2p",
        "ratio_2p",
        "decisions_per_s_2p",
        "rlcard_steps_per_s_2p",
        "decision_ratio_2p",
        "eager_hands_per_s_2p",
        "eager_ratio_2p",
        "matches_to_500_per_s_2p",
        "matches_to_500_per_s_4p",
        "house_eager_hands_per_s_2p",
        "house_ratio_eager_2p",
        "house_eager_hands_per_s_4p",
        "house_ratio_eager_4p",
        "house_random_hands_per_s_4p",
        "house_ratio_random_4p",
    ]
    print("RESULT " + " ".join(f"{k}={figures[k]:.{3 if 'ratio' in k else 1}f}" for k in keys))


if __name__ == "__main__":
    main()
