"""Engine speed: full-rules random play, side by side with RLCard's UNO game.

Run: `pip install -e '.[bench]'` then `python bench/engine.py [--seconds S] [--compiled-python PATH]`.

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

Which build (docs/building.md): every figure of ours is measured in a worker process per build, the
builds taking turns measurement by measurement, so both see the same spells of a shared machine.
The build of this interpreter is measured, and the other one beside it when it is available: a
compiled install also runs its source (`UNO_ARENA_BUILD=interpreted`); an interpreted one (the
editable development install) looks for a compiled install at `--compiled-python` (default
build/venv-compiled/bin/python, as `.ci/run` makes it). The RESULT line gives the compiled build's
figures when there are any (`build=compiled`), and the other build's beside them, prefixed with its
name (`interpreted_eager_ratio_2p=...`), with `compiled_speedup_eager_2p` (compiled hands/s over
interpreted ones, eager, 2 players).

Time is CPU time of the measuring process (`time.process_time`), ours and RLCard's alike: each
loop runs on one core, so on an idle machine it is the elapsed time, and on a loaded one the
figures and their ratios do not depend on how much of a core the process got.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from uno_arena.rules import Action, RulesConfig, legal_actions, new_hand, new_match  # noqa: E402
from uno_arena.rules.build import BUILD, ENVIRONMENT  # noqa: E402
from uno_arena.rules.hand import apply  # noqa: E402
from uno_arena.rules.legal import legal_actions as hand_legal_actions  # noqa: E402
from uno_arena.rules.match import apply as match_apply  # noqa: E402
from uno_arena.rules.runner import eager_choices  # noqa: E402

Chooser = Callable[[Sequence[Action]], Sequence[Action]]
DEFAULT_COMPILED_PYTHON = ROOT / "build" / "venv-compiled" / "bin" / "python"


def uniform(legal: Sequence[Action]) -> Sequence[Action]:
    return legal


POLICIES: dict[str, Chooser] = {"random": uniform, "eager": eager_choices}
HOUSE_RULES = {"stacking": True, "jump_in": True, "seven_zero": True, "multi_play": True}


def ours_hands(
    players: int, seconds: float, policy: str, seed: int, house: bool = False
) -> tuple[float, float]:
    """(hands/s, decisions/s) of whole hands played with `policy`'s narrowed uniform choices, under
    the official rules or with all four house rules (`house`)."""
    narrow = POLICIES[policy]
    config = RulesConfig(players=players, **(HOUSE_RULES if house else {}))
    rng = random.Random(seed)
    hands = decisions = 0
    started = time.process_time()
    deadline = started + seconds
    while time.process_time() < deadline:
        hand = new_hand(config, rng)
        while hand.result is None:
            apply(hand, rng.choice(narrow(hand_legal_actions(hand))))
            decisions += 1
        hands += 1
    elapsed = time.process_time() - started
    return hands / elapsed, decisions / elapsed


def ours_matches(players: int, seconds: float, seed: int) -> float:
    """Whole matches to 500 per second, uniform random play."""
    config = RulesConfig(players=players)
    rng = random.Random(seed)
    matches = 0
    started = time.process_time()
    while time.process_time() - started < seconds or matches == 0:
        match = new_match(config, rng)
        while match.result is None:
            match_apply(match, rng.choice(legal_actions(match)))
        matches += 1
    return matches / (time.process_time() - started)


def rlcard_hands(seconds: float, seed: int) -> tuple[float, float]:
    """(hands/s, steps/s) of RLCard's UnoGame, 2 players, random over its legal actions."""
    import numpy as np
    from rlcard.games.uno.game import UnoGame

    game = UnoGame(num_players=2)
    game.np_random = np.random.RandomState(seed)
    rng = random.Random(seed)
    hands = steps = 0
    started = time.process_time()
    deadline = started + seconds
    while time.process_time() < deadline:
        game.init_game()
        while not game.is_over():
            game.step(rng.choice(game.get_legal_actions()))
            steps += 1
        hands += 1
    elapsed = time.process_time() - started
    return hands / elapsed, steps / elapsed


MEASUREMENTS: dict[str, Callable[..., Any]] = {"hands": ours_hands, "matches": ours_matches}


def worker() -> None:
    """Measure on request: a JSON line in (`[name, args]`), a JSON line out; this build's name first."""
    print(json.dumps(BUILD), flush=True)
    for line in sys.stdin:
        name, arguments = json.loads(line)
        print(json.dumps(MEASUREMENTS[name](*arguments)), flush=True)


class Build:
    """A worker process running one build's measurements."""

    def __init__(self, python: str, environment: dict[str, str]) -> None:
        command = [python, str(Path(__file__).resolve()), "--worker"]
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                        env={**os.environ, **environment})  # fmt: skip
        self.name: str = self._read()

    def measure(self, name: str, *arguments: object) -> Any:
        stdin = self.process.stdin
        assert stdin is not None
        stdin.write(json.dumps([name, arguments]) + "\n")
        stdin.flush()
        return self._read()

    def _read(self) -> Any:
        stdout: IO[str] | None = self.process.stdout
        assert stdout is not None
        line = stdout.readline()
        if not line:
            raise RuntimeError(f"the benchmark worker {self.process.args} ended")
        return json.loads(line)

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        self.process.wait(timeout=30)


def start_builds(compiled_python: Path | None) -> list[Build]:
    """This interpreter's build, and the other one when there is one to run, compiled first."""
    here = Build(sys.executable, {})
    builds = [here]
    if here.name == "compiled":
        builds.append(Build(sys.executable, {ENVIRONMENT: "interpreted"}))
    elif compiled_python is not None and compiled_python.exists():
        other = Build(str(compiled_python), {})
        if other.name == "compiled":
            builds.insert(0, other)
        else:
            print(f"{compiled_python} runs the {other.name} build: measuring this one only", file=sys.stderr)
            other.close()
    return builds


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=5.0, help="time per measurement")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--compiled-python",
        type=Path,
        default=DEFAULT_COMPILED_PYTHON,
        help="the python of a compiled install, measured beside this interpreted one",
    )
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker()
        return
    s, seed = args.seconds, args.seed

    builds = start_builds(args.compiled_python)
    print("builds measured: " + ", ".join(build.name for build in builds))
    figures: dict[str, dict[str, float]] = {build.name: {} for build in builds}

    def each(name: str, *arguments: object) -> dict[str, Any]:
        """One measurement in every build, in turn."""
        return {build.name: build.measure(name, *arguments) for build in builds}

    for players in (2, 4, 10):
        for build_name, (hands, decisions) in each("hands", players, s, "random", seed).items():
            figures[build_name][f"hands_per_s_{players}p"] = hands
            figures[build_name][f"decisions_per_s_{players}p"] = decisions
            print(f"{build_name:<11} ours random {players:>2}p: {hands:9.1f} hands/s "
                  f"{decisions:11.0f} decisions/s")  # fmt: skip
    for build_name, (hands, decisions) in each("hands", 2, s, "eager", seed).items():
        figures[build_name]["eager_hands_per_s_2p"] = hands
        print(f"{build_name:<11} ours eager   2p: {hands:9.1f} hands/s {decisions:11.0f} decisions/s")
    rl_hands, rl_steps = rlcard_hands(s, seed)
    print(f"{'':<11} rlcard       2p: {rl_hands:9.1f} hands/s {rl_steps:11.0f} steps/s")
    for players in (2, 4):
        for build_name, rate in each("matches", players, s, seed).items():
            figures[build_name][f"matches_to_500_per_s_{players}p"] = rate
            print(f"{build_name:<11} ours random {players:>2}p: {rate:9.2f} matches to 500 per second")

    for players in (2, 4):
        for policy in ("eager", "random"):
            official = each("hands", players, s, policy, seed)
            house = each("hands", players, s, policy, seed, True)
            for build_name in figures:
                base, (rate, decisions) = official[build_name][0], house[build_name]
                figures[build_name][f"house_{policy}_hands_per_s_{players}p"] = rate
                figures[build_name][f"house_ratio_{policy}_{players}p"] = rate / base
                print(f"{build_name:<11} ours {policy:<6} {players:>2}p, all four house rules: "
                      f"{rate:9.1f} hands/s {decisions:11.0f} decisions/s "
                      f"({rate / base:.2f}x the official rules' {base:.1f} hands/s)")  # fmt: skip
    for build in builds:
        build.close()

    for values in figures.values():
        values["rlcard_hands_per_s_2p"] = rl_hands
        values["rlcard_steps_per_s_2p"] = rl_steps
        values["ratio_2p"] = values["hands_per_s_2p"] / rl_hands
        values["decision_ratio_2p"] = values["decisions_per_s_2p"] / rl_steps
        values["eager_ratio_2p"] = values["eager_hands_per_s_2p"] / rl_hands
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
    primary, *others = [build.name for build in builds]
    fields = [f"build={primary}"]
    fields += [f"{k}={figures[primary][k]:.{3 if 'ratio' in k else 1}f}" for k in keys]
    for other in others:
        fields += [f"{other}_{k}={figures[other][k]:.{3 if 'ratio' in k else 1}f}" for k in keys
                   if not k.startswith("rlcard")]  # fmt: skip
    if "compiled" in figures and "interpreted" in figures:
        speedup = figures["compiled"]["eager_hands_per_s_2p"] / figures["interpreted"]["eager_hands_per_s_2p"]
        fields.append(f"compiled_speedup_eager_2p={speedup:.2f}")
    print("RESULT " + " ".join(fields))


if __name__ == "__main__":
    main()
