"""The training example runs, saves weights that `PolicyBot` loads, and the bot plays them through
`uno-arena bot play` with numpy only: PettingZoo and Gymnasium not importable."""

from __future__ import annotations

import logging
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from uno_arena.env.examples import train_policy
from uno_arena.rules import RulesConfig
from uno_arena.sdk import PolicyBot
from uno_arena.sdk.arena import play
from uno_arena.sdk.examples.random_bot import RandomBot
from uno_arena.sdk.network import PolicyNetwork, network_input


def test_the_training_loop_runs_saves_and_the_policy_plays(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    out = tmp_path / "policy.npz"
    caplog.set_level(logging.INFO, logger=train_policy.__name__)
    train_policy.main(["--out", str(out), "--batches", "3", "--batch-matches", "1", "--hidden", "8",
                       "--target", "60", "--evaluate", "2", "--seed", "3"])  # fmt: skip
    assert (
        "trained 3 batches" in caplog.text and "greedy policy vs random, 2 matches to 60: won" in caplog.text
    )
    network = PolicyNetwork.load(out)
    assert [w.shape for w, _ in network.layers] == [(851 + 141, 8), (8, 141)]
    assert np.abs(network.layers[-1][0]).sum() > 0  # trained: the last layer starts at zero
    result = play([lambda: PolicyBot(out), RandomBot], seats=2, matches=2, rules=RulesConfig(target_score=60),
                  seed=1)  # fmt: skip
    assert result.stats("<lambda>").exceptions == 0 and sum(b.wins for b in result.bots) == 2


def test_a_gradient_step_makes_the_rewarded_choice_likelier() -> None:
    """REINFORCE's sign: of two legal actions, the one taken in the better hand gains probability."""
    rng = np.random.default_rng(0)
    network = PolicyNetwork.initial([4], rng)
    legal = np.array([3, 120])
    x = network_input(rng.random(851).astype(np.float32), legal)
    batch = train_policy.Batch(inputs=[x, x], legal=[legal, legal], actions=[3, 120], returns=[1.0, -1.0])
    before = network.scores(x)[3] - network.scores(x)[120]
    train_policy.Adam(0.01).step(network, train_policy.gradients(network, batch, entropy=0.0))
    assert network.scores(x)[3] - network.scores(x)[120] > before


NO_RL_PACKAGES = """
import importlib.abc, sys
class NoRL(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.partition(".")[0] in {"pettingzoo", "gymnasium"}:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, NoRL())
"""


def test_bot_play_plays_a_policy_with_numpy_only(tmp_path: Path) -> None:
    weights = PolicyNetwork.initial([8], np.random.default_rng(1)).save(tmp_path / "policy")
    assert weights.name == "policy.npz"
    (tmp_path / "my_policy.py").write_text(
        textwrap.dedent("""
        from pathlib import Path
        from uno_arena.sdk import PolicyBot

        class MyPolicy(PolicyBot):
            weights = Path(__file__).with_name("policy.npz")
    """)
    )
    script = NO_RL_PACKAGES + textwrap.dedent("""
        from uno_arena.cli.main import cli
        try:
            cli(["bot", "play", "my_policy.py:MyPolicy", "uno_arena.sdk.examples.random_bot:RandomBot",
                 "--matches", "2", "--rules", "target_score=60", "--seed", "4"], prog_name="uno-arena")
        except SystemExit as done:
            assert done.code == 0, done.code
        loaded = sorted(m for m in sys.modules if m.partition(".")[0] in {"pettingzoo", "gymnasium"})
        assert not loaded and "numpy" in sys.modules, loaded
        print("rl packages loaded:", loaded)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path,
                          timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "MyPolicy" in done.stdout and "rl packages loaded: []" in done.stdout


def test_without_the_rl_extra_the_environments_say_what_to_install() -> None:
    script = NO_RL_PACKAGES + textwrap.dedent("""
        import uno_arena.env  # the package itself imports: its names load on use
        try:
            uno_arena.env.env
        except ModuleNotFoundError as missing:
            print(missing)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "uno_arena.env needs gymnasium: pip install 'uno-arena[rl]'"
