"""A small policy network in numpy: the observation vector of `uno_arena.sdk.encoding` and the legal
actions' mask in, a score per action id out, fully connected layers with tanh between them. What
`PolicyBot` plays and what the training example (`python -m uno_arena.env.examples.train_policy`) trains.

A weights file is a numpy `.npz` archive: `W0`, `b0`, `W1`, `b1` ... (layer `i` maps its input to
`W{i}.T @ x + b{i}`), with `encoding_version` and `observation_size`, so that weights trained on another
encoding are refused with a clear error rather than played. Needs numpy only.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from uno_arena.sdk.encoding import ACTION_COUNT, ENCODING_VERSION, OBSERVATION_SIZE

Array = npt.NDArray[np.float32]


class WeightsError(ValueError):
    """A weights file that cannot be played: missing, unreadable, or made for another encoding."""


INPUT_SIZE = OBSERVATION_SIZE + ACTION_COUNT
"""The network's input: the observation vector, then the action mask (1.0 for each legal action id)."""


def network_input(vector: Array, legal: Sequence[int] | npt.NDArray[np.intp]) -> Array:
    """The network's input for an observation `vector` whose legal action ids are `legal`."""
    x = np.zeros(INPUT_SIZE, dtype=np.float32)
    x[:OBSERVATION_SIZE] = vector
    x[OBSERVATION_SIZE + np.asarray(legal, dtype=np.intp)] = 1.0
    return x


class PolicyNetwork:
    """Layers (W, b) from `INPUT_SIZE` inputs (`network_input`) to `ACTION_COUNT` outputs, tanh between."""

    def __init__(self, layers: Sequence[tuple[Array, Array]]) -> None:
        if not layers:
            raise WeightsError("a policy network needs at least one layer")
        inputs = INPUT_SIZE
        for i, (weights, bias) in enumerate(layers):
            if weights.ndim != 2 or weights.shape[0] != inputs or bias.shape != (weights.shape[1],):
                shapes = f"W{i} is {weights.shape} and b{i} {bias.shape}"
                raise WeightsError(f"layer {i}: {shapes}; expected ({inputs}, n) and (n,)")
            inputs = weights.shape[1]
        if inputs != ACTION_COUNT:
            raise WeightsError(f"the last layer has {inputs} outputs, not {ACTION_COUNT} (one per action)")
        self.layers = [(w.astype(np.float32), b.astype(np.float32)) for w, b in layers]

    @classmethod
    def initial(cls, hidden: Sequence[int], rng: np.random.Generator) -> PolicyNetwork:
        """A fresh network with `hidden` units per hidden layer, small random weights (the last layer
        zero, so every legal action starts equally likely)."""
        sizes = [INPUT_SIZE, *hidden, ACTION_COUNT]
        layers: list[tuple[Array, Array]] = []
        for i, (n_in, n_out) in enumerate(itertools.pairwise(sizes)):
            last = i == len(sizes) - 2
            scale = 0.0 if last else 1 / np.sqrt(n_in)
            weights = (rng.standard_normal((n_in, n_out)) * scale).astype(np.float32)
            layers.append((weights, np.zeros(n_out, dtype=np.float32)))
        return cls(layers)

    def scores(self, x: Array) -> Array:
        """The score of every action id for input(s) `x` (`network_input`: one, or one per row)."""
        for i, (weights, bias) in enumerate(self.layers):
            x = x @ weights + bias
            if i < len(self.layers) - 1:
                x = np.tanh(x)
        return x

    def choose(self, vector: Array, legal: Sequence[int], rng: np.random.Generator | None = None) -> int:
        """The action id to play among `legal` for the observation `vector`: the best scored, or with
        `rng` one drawn with the softmax of the scores over the legal ids."""
        if not legal:
            raise ValueError("no legal action to choose from")
        scores = self.scores(network_input(vector, legal))[list(legal)]
        if rng is None:
            return int(legal[int(np.argmax(scores))])
        odds = np.exp(scores - scores.max())
        return int(legal[int(rng.choice(len(legal), p=odds / odds.sum()))])

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the weights as an `.npz` file (the suffix is added if missing); the path written."""
        target = Path(path)
        if target.suffix != ".npz":
            target = target.with_name(target.name + ".npz")
        target.parent.mkdir(parents=True, exist_ok=True)
        arrays: dict[str, npt.NDArray[np.generic]] = {
            "encoding_version": np.array(ENCODING_VERSION),
            "observation_size": np.array(OBSERVATION_SIZE),
        }
        for i, (weights, bias) in enumerate(self.layers):
            arrays[f"W{i}"], arrays[f"b{i}"] = weights, bias
        with target.open("wb") as file:
            np.savez(file, **arrays)  # type: ignore[arg-type]
        return target

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> PolicyNetwork:
        """Read a weights file written by `save`; raises `WeightsError` saying what is wrong with it."""
        source = Path(path)
        if not source.is_file():
            raise WeightsError(f"no weights file at {source}")
        try:
            with np.load(source, allow_pickle=False) as archive:
                stored = {name: archive[name] for name in archive.files}
        except (OSError, ValueError) as error:
            raise WeightsError(f"{source}: not a weights file (.npz) that numpy can read: {error}") from None
        version = int(stored.get("encoding_version", -1))
        size = int(stored.get("observation_size", -1))
        if version != ENCODING_VERSION or size != OBSERVATION_SIZE:
            raise WeightsError(
                f"{source}: trained on encoding version {version} ({size} values); this SDK encodes "
                f"version {ENCODING_VERSION} ({OBSERVATION_SIZE} values): train again"
            )
        layers: list[tuple[Array, Array]] = []
        while f"W{len(layers)}" in stored:
            i = len(layers)
            if f"b{i}" not in stored:
                raise WeightsError(f"{source}: W{i} without b{i}")
            layers.append((stored[f"W{i}"], stored[f"b{i}"]))
        try:
            return cls(layers)
        except WeightsError as error:
            raise WeightsError(f"{source}: {error}") from None
