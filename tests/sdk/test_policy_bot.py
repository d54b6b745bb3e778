"""`PolicyBot`: where its weights come from, what it refuses, what it plays, and that the SDK imports
without numpy."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from uno_arena.sdk import PolicyBot
from uno_arena.sdk.encoding import ACTION_COUNT
from uno_arena.sdk.network import INPUT_SIZE, PolicyNetwork, WeightsError
from uno_arena.sdk.policy import WEIGHTS_VARIABLE
from uno_arena.sdk.testkit import position


def weights_preferring(action_id: int, folder: Path) -> Path:
    """A one-layer network that scores `action_id` above everything else."""
    weights = np.zeros((INPUT_SIZE, ACTION_COUNT), np.float32)
    bias = np.zeros(ACTION_COUNT, np.float32)
    bias[action_id] = 1.0
    return PolicyNetwork([(weights, bias)]).save(folder / f"prefers-{action_id}.npz")


def test_it_plays_the_best_scored_legal_action(tmp_path: Path) -> None:
    seen = position(hand="red 3, blue 7, wild", top="red 9")
    draw = seen.legal.draw
    assert draw is not None
    assert PolicyBot(weights_preferring(draw.id, tmp_path)).decide(seen) is draw
    # an illegal favourite is never played: the best scored among the legal ones
    illegal = 130  # done
    assert PolicyBot(weights_preferring(illegal, tmp_path)).decide(seen) in seen.legal


def test_where_the_weights_come_from(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = weights_preferring(120, tmp_path)
    monkeypatch.delenv(WEIGHTS_VARIABLE, raising=False)
    with pytest.raises(ValueError, match=r"PolicyBot needs a weights file: PolicyBot\(weights=\.\.\.\), a"):
        PolicyBot()

    class Mine(PolicyBot):
        weights = path

    assert Mine().network.layers[0][1][120] == 1.0
    monkeypatch.setenv(WEIGHTS_VARIABLE, str(path))
    assert PolicyBot().network.layers[0][1][120] == 1.0


def test_bad_weights_are_refused_with_the_reason(tmp_path: Path) -> None:
    with pytest.raises(WeightsError, match="no weights file at"):
        PolicyBot(tmp_path / "missing.npz")
    (tmp_path / "text.npz").write_text("not an archive")
    with pytest.raises(WeightsError, match="not a weights file"):
        PolicyBot(tmp_path / "text.npz")
    np.savez(tmp_path / "old.npz", encoding_version=np.array(0), observation_size=np.array(300),
             W0=np.zeros((300, 141)), b0=np.zeros(141))  # fmt: skip
    with pytest.raises(WeightsError, match=r"trained on encoding version 0 \(300 values\).*train again"):
        PolicyBot(tmp_path / "old.npz")
    np.savez(tmp_path / "short.npz", encoding_version=np.array(1), observation_size=np.array(851),
             W0=np.zeros((992, 10)), b0=np.zeros(10))  # fmt: skip
    with pytest.raises(WeightsError, match="the last layer has 10 outputs, not 141"):
        PolicyBot(tmp_path / "short.npz")
    np.savez(tmp_path / "narrow.npz", encoding_version=np.array(1), observation_size=np.array(851),
             W0=np.zeros((851, 141)), b0=np.zeros(141))  # fmt: skip
    with pytest.raises(WeightsError, match=r"layer 0: W0 is \(851, 141\) .*expected \(992, n\)"):
        PolicyBot(tmp_path / "narrow.npz")


def test_the_sdk_imports_without_numpy() -> None:
    """numpy is loaded when a PolicyBot is made, not with the SDK (the base install has none)."""
    script = "import sys, uno_arena.sdk.encoding\nprint([m for m in sys.modules if 'numpy' in m])"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "[]", done.stdout + done.stderr


def test_without_numpy_a_policy_bot_says_what_to_install(tmp_path: Path) -> None:
    script = textwrap.dedent(f"""
        import importlib.abc, sys
        class NoNumpy(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path, target=None):
                if name.partition(".")[0] == "numpy":
                    raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        sys.meta_path.insert(0, NoNumpy())
        from uno_arena.sdk import PolicyBot
        try:
            PolicyBot({str(tmp_path / "policy.npz")!r})
        except ModuleNotFoundError as missing:
            print(missing)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "PolicyBot needs numpy: pip install numpy (or 'uno-arena[rl]')"
