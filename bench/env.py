"""Environment speed: `uno_arena.env` against RLCard's UNO environment, a random masked policy on each.

Run: `pip install -e '.[bench,rl]'` then `python bench/env.py [--seconds S] [--compiled-python PATH]`.

A step is one decision: the agent to act reads its observation and legal actions, picks one of them
uniformly at random, and the environment applies it and moves on to the next agent's observation.
- ours: `uno_arena.env.raw_env(players=2)` through PettingZoo's AEC loop (`agent_iter`, `last`,
  `step`), the action drawn from the observation's `action_mask` (`mask.nonzero()[0]`); the official
  rules, matches to 500. Also with PettingZoo's standard wrappers (`uno_arena.env.env`, which checks
  every call: `wrapped_env_steps_per_s`), at 4 and 10 players, and with all four house rules.
- RLCard's `rlcard.make("uno")` (2 players, the only table it plays correctly), its own loop
  (`env.reset`, `env.step`), the action drawn from the state's `legal_actions`.
Each figure is steps per CPU second of the measuring process (`time.process_time`), ours and RLCard's in
the same process, measured in alternating rounds so that both see the same spells of a shared machine;
`ratio` is ours over RLCard's.

Which build (docs/building.md): as `bench/engine.py`, every figure is measured in a worker process per
build, and the RESULT line gives the compiled build's figures when there is one (`build=compiled`; the
editable development install is interpreted and looks for a compiled install at `--compiled-python`,
default build/venv-compiled/bin/python), the other build's beside them prefixed with its name. The
environments' hot path (`uno_arena.env.table`) is compiled with the rules core.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from uno_arena.rules.build import BUILD, ENVIRONMENT  # noqa: E402

DEFAULT_COMPILED_PYTHON = ROOT / "build" / "venv-compiled" / "bin" / "python"
HOUSE_RULES = {"stacking": True, "jump_in": True, "seven_zero": True, "multi_play": True}
ROUNDS = 5  # alternating rounds of ours and RLCard's


def ours(
    seconds: float, seed: int, players: int = 2, wrapped: bool = False, house: bool = False
) -> list[float]:
    """[steps, CPU seconds] of `uno_arena.env` with a random masked policy, whole matches."""
    import uno_arena.env

    make = uno_arena.env.env if wrapped else uno_arena.env.raw_env
    environment = make(players=players, rules=HOUSE_RULES if house else None)
    chance = random.Random(seed).random
    steps, match = 0, seed
    started = time.process_time()
    while time.process_time() - started < seconds:
        environment.reset(seed=match)
        match += 1
        for _agent in environment.agent_iter():
            observation, _reward, terminated, truncated, _info = environment.last()
            if terminated or truncated:
                environment.step(None)
                continue
            legal = observation["action_mask"].nonzero()[0]
            environment.step(legal[int(chance() * len(legal))])
            steps += 1
    return [steps, time.process_time() - started]


def rlcard(seconds: float, seed: int) -> list[float]:
    """[steps, CPU seconds] of RLCard's UNO environment with a random masked policy, whole games."""
    import rlcard as rlcard_package

    environment = rlcard_package.make("uno", config={"seed": seed})
    chance = random.Random(seed).random
    steps = 0
    started = time.process_time()
    while time.process_time() - started < seconds:
        state, _player = environment.reset()
        while not environment.is_over():
            legal = list(state["legal_actions"])
            state, _player = environment.step(legal[int(chance() * len(legal))])
            steps += 1
    return [steps, time.process_time() - started]


MEASUREMENTS: dict[str, Callable[..., list[float]]] = {"ours": ours, "rlcard": rlcard}


def worker() -> None:
    """Measure on request: a JSON line in (`[name, args]`), a JSON line out; this build's name first."""
    print(json.dumps(BUILD), flush=True)
    for line in sys.stdin:
        name, arguments = json.loads(line)
        print(json.dumps(MEASUREMENTS[name](*arguments)), flush=True)


class Build:
    """A worker process measuring one build."""

    def __init__(self, python: str, environment: dict[str, str]) -> None:
        command = [python, str(Path(__file__).resolve()), "--worker"]
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                        env={**os.environ, **environment})  # fmt: skip
        self.name: str = self._read()

    def measure(self, name: str, *arguments: object) -> list[float]:
        stdin = self.process.stdin
        assert stdin is not None
        stdin.write(json.dumps([name, arguments]) + "\n")
        stdin.flush()
        measured: list[float] = self._read()
        return measured

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


def rate(totals: list[float]) -> float:
    return totals[0] / totals[1] if totals[1] > 0 else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=10.0, help="CPU seconds of each side per figure")
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
    seconds, seed = args.seconds, args.seed
    builds = start_builds(args.compiled_python)
    print("builds measured: " + ", ".join(build.name for build in builds))
    figures: dict[str, dict[str, float]] = {build.name: {} for build in builds}
    per_round = seconds / ROUNDS
    for build in builds:
        mine, theirs = [0.0, 0.0], [0.0, 0.0]
        for round_number in range(ROUNDS):  # alternating, so both see the same spells of the machine
            for totals, measured in (
                (mine, build.measure("ours", per_round, seed + round_number)),
                (theirs, build.measure("rlcard", per_round, seed + round_number)),
            ):
                totals[0] += measured[0]
                totals[1] += measured[1]
        values = figures[build.name]
        values["env_steps_per_s"] = rate(mine)
        values["rlcard_env_steps_per_s"] = rate(theirs)
        values["ratio"] = rate(mine) / rate(theirs)
        print(f"{build.name:<11} ours 2p: {rate(mine):9.0f} steps/s, RLCard 2p: {rate(theirs):9.0f} "
              f"steps/s, ratio {values['ratio']:.2f}")  # fmt: skip
        for key, arguments in (
            ("wrapped_env_steps_per_s", (seconds / 2, seed, 2, True)),
            ("env_steps_per_s_4p", (seconds / 2, seed, 4)),
            ("env_steps_per_s_10p", (seconds / 2, seed, 10)),
            ("house_env_steps_per_s_4p", (seconds / 2, seed, 4, False, True)),
        ):
            values[key] = rate(build.measure("ours", *arguments))
            print(f"{build.name:<11} {key}: {values[key]:9.0f}")
    for build in builds:
        build.close()

    keys = ["env_steps_per_s", "rlcard_env_steps_per_s", "ratio", "wrapped_env_steps_per_s",
            "env_steps_per_s_4p", "env_steps_per_s_10p", "house_env_steps_per_s_4p"]  # fmt: skip
    primary, *others = [build.name for build in builds]
    fields = [f"{k}={figures[primary][k]:.{3 if k == 'ratio' else 0}f}" for k in keys[:3]]
    fields.append(f"build={primary}")
    fields += [f"{k}={figures[primary][k]:.0f}" for k in keys[3:]]
    for other in others:
        fields += [f"{other}_{k}={figures[other][k]:.{3 if k == 'ratio' else 0}f}" for k in keys]
    print("RESULT " + " ".join(fields))


if __name__ == "__main__":
    main()
