"""Train a small policy on the single-agent environment with numpy only, and save it for `PolicyBot`.

    python -m uno_arena.env.examples.train_policy --out policy.npz
    UNO_ARENA_POLICY=policy.npz uno-arena bot play uno_arena.sdk:PolicyBot \\
        uno_arena.sdk.examples.random_bot:RandomBot --matches 500

The learner plays heads-up matches to 500 against an example bot (the random bot by default) in
`uno_arena.env.single_agent`, a seat drawn for each match, with the hand rewards (each hand's score
margin over the target score). The policy is a network with one tanh hidden layer
(`uno_arena.sdk.network.PolicyNetwork`) over the observation vector and the legal actions' mask
(`info["action_mask"]`); an action is drawn with the softmax of its scores over the legal action ids. It
learns by REINFORCE: after each batch of matches, every decision's log-probability is pushed up in
proportion to how much better than the batch's average its hand went (the hand's reward, which comes at the
hand's end), with Adam, the learning rate falling linearly to a tenth of `--rate` over the training time.
The weights go to `--out` every `--save-every` batches and at the end; `PolicyBot` plays them, greedily,
with numpy only. docs/rl.md tells the rest.
"""

from __future__ import annotations

import argparse
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import numpy.typing as npt

from uno_arena.env.single import SingleAgentEnv, single_agent
from uno_arena.rules import RulesConfig
from uno_arena.rules.statistics import wilson
from uno_arena.sdk.arena import play
from uno_arena.sdk.bot import Bot
from uno_arena.sdk.encoding import ACTION_COUNT
from uno_arena.sdk.examples.greedy_bot import GreedyBot
from uno_arena.sdk.examples.random_bot import RandomBot
from uno_arena.sdk.examples.strong_bot import StrongBot
from uno_arena.sdk.network import PolicyNetwork, network_input
from uno_arena.sdk.policy import PolicyBot

log = logging.getLogger(__name__)

Array = npt.NDArray[np.float32]
CHUNK = 4096  # decisions per step of the gradient's computation
OPPONENTS: dict[str, Callable[[int], Bot]] = {
    "random": RandomBot,
    "greedy": lambda seed: GreedyBot(),
    "strong": lambda seed: StrongBot(),
}


@dataclass
class Batch:
    """The learner's decisions over some matches: what it saw, could do and did, and how its hand went."""

    inputs: list[Array] = field(default_factory=list)  # `network_input`: the vector and the mask
    legal: list[npt.NDArray[np.intp]] = field(default_factory=list)
    actions: list[int] = field(default_factory=list)
    returns: list[float] = field(default_factory=list)
    matches: int = 0
    wins: float = 0.0
    hand_rewards: list[float] = field(default_factory=list)


@dataclass
class Adam:
    """Adam over a network's layers, in place."""

    rate: float
    moments: list[list[npt.NDArray[np.float64]]] = field(default_factory=list)
    steps: int = 0

    def step(self, network: PolicyNetwork, gradients: list[tuple[Array, Array]]) -> None:
        if not self.moments:
            self.moments = [[np.zeros_like(p, dtype=np.float64) for p in layer for _ in (0, 1)]
                            for layer in network.layers]  # fmt: skip
        self.steps += 1
        beta1, beta2, epsilon = 0.9, 0.999, 1e-8
        for layer, grads, moments in zip(network.layers, gradients, self.moments, strict=True):
            for k, (parameter, gradient) in enumerate(zip(layer, grads, strict=True)):
                first, second = moments[2 * k], moments[2 * k + 1]
                first *= beta1
                first += (1 - beta1) * gradient
                second *= beta2
                second += (1 - beta2) * gradient**2
                unbiased = first / (1 - beta1**self.steps)
                scale = np.sqrt(second / (1 - beta2**self.steps)) + epsilon
                parameter -= (self.rate * unbiased / scale).astype(np.float32)


def play_matches(
    env: SingleAgentEnv, network: PolicyNetwork, matches: int, rng: np.random.Generator
) -> Batch:
    """`matches` matches of the learner, its actions drawn from the policy; each decision's return is the
    reward of the hand it was made in."""
    batch = Batch()
    for _ in range(matches):
        vector, info = env.reset(seed=int(rng.integers(2**63)))
        start = len(batch.actions)
        hands: list[int] = []
        rewards: list[float] = []
        done = False
        while not done:
            legal = info["action_mask"].nonzero()[0]
            x = network_input(vector, legal)
            scores = network.scores(x)[legal]
            odds = np.exp(scores - scores.max())
            choice = int(np.searchsorted(np.cumsum(odds), rng.random() * odds.sum()))
            action = int(legal[min(choice, len(legal) - 1)])
            hand = info["hand_number"]
            batch.inputs.append(x)
            batch.legal.append(legal)
            batch.actions.append(action)
            vector, reward, done, _, info = env.step(action)
            hands.append(hand)
            rewards.append(float(reward))
        # a hand's reward comes with the decision after which it ended: it is the return of every
        # decision of that hand
        by_hand: dict[int, float] = {}
        for hand, reward in zip(hands, rewards, strict=True):
            by_hand[hand] = by_hand.get(hand, 0.0) + reward
        batch.returns += [by_hand[hand] for hand in hands]
        batch.hand_rewards += list(by_hand.values())
        result = env.table.match.result
        assert result is not None and len(batch.returns) - start == len(hands)
        batch.matches += 1
        if env.seat in result.winners:
            batch.wins += 1 / len(result.winners)
    return batch


def gradients(network: PolicyNetwork, batch: Batch, entropy: float) -> list[tuple[Array, Array]]:
    """The gradient of the REINFORCE loss -mean(advantage * log pi(action)) - entropy * H(pi), the
    advantage being each return less the batch's mean, over its standard deviation; computed a chunk
    of decisions at a time (a batch of a barely trained policy's matches holds tens of thousands)."""
    returns = np.asarray(batch.returns)
    advantage = (returns - returns.mean()) / (returns.std() + 1e-8)
    total = [(np.zeros_like(w), np.zeros_like(b)) for w, b in network.layers]
    for start in range(0, len(returns), CHUNK):
        rows = slice(start, start + CHUNK)
        part = _gradients(network, batch, rows, advantage[rows], entropy)
        total = [(w + dw, b + db) for (w, b), (dw, db) in zip(total, part, strict=True)]
    scale = np.float32(1 / len(returns))
    return [(w * scale, b * scale) for w, b in total]


def _gradients(
    network: PolicyNetwork, batch: Batch, rows: slice, advantage: npt.NDArray[np.float64], entropy: float
) -> list[tuple[Array, Array]]:
    """The summed gradients of the decisions in `rows` (see `gradients`)."""
    x = np.stack(batch.inputs[rows])
    hidden: list[Array] = []
    h = x
    for i, (weights, bias) in enumerate(network.layers):
        h = h @ weights + bias
        if i < len(network.layers) - 1:
            h = np.tanh(h)
            hidden.append(h)
    legal_mask = np.zeros((len(x), ACTION_COUNT), dtype=bool)
    for row, legal in enumerate(batch.legal[rows]):
        legal_mask[row, legal] = True
    scores = np.where(legal_mask, h, -np.inf)
    scores -= scores.max(axis=1, keepdims=True)
    odds = np.exp(scores)
    p = odds / odds.sum(axis=1, keepdims=True)
    chosen = np.zeros_like(p)
    chosen[np.arange(len(x)), batch.actions[rows]] = 1.0
    log_p = np.where(legal_mask, np.log(np.where(legal_mask, p, 1.0)), 0.0)
    entropy_gradient = p * (log_p - (p * log_p).sum(axis=1, keepdims=True))  # d(-H)/d scores
    d = ((p - chosen) * advantage[:, None] + entropy * entropy_gradient).astype(np.float32)
    grads: list[tuple[Array, Array]] = []
    inputs = [x, *hidden]
    for i in range(len(network.layers) - 1, -1, -1):
        weights, _ = network.layers[i]
        grads.append((inputs[i].T @ d, d.sum(axis=0)))
        if i:
            d = (d @ weights.T) * (1 - inputs[i] ** 2)
    return grads[::-1]


def evaluate(
    weights: Path, opponent: str, matches: int, seed: int, rules: RulesConfig
) -> tuple[float, float, float]:
    """The saved policy's win rate and its 95% interval against `opponent`, heads-up matches to 500
    in the local arena (what `uno-arena bot play` runs), playing greedily as `PolicyBot` does."""
    make_opponent = OPPONENTS[opponent]
    bots = {"policy": lambda: PolicyBot(weights), opponent: lambda: make_opponent(seed)}
    result = play(bots, seats=2, matches=matches, rules=rules, seed=seed, keep_matches=False)
    stats = result.stats("policy")
    return stats.win_rate, *wilson(stats.wins, stats.matches)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", type=Path, default=Path("policy.npz"), help="where to write the weights")
    parser.add_argument("--minutes", type=float, default=5.0, help="training time (wall clock)")
    parser.add_argument("--batches", type=int, default=0, help="stop after this many batches (0: time only)")
    parser.add_argument("--batch-matches", type=int, default=8, help="matches per policy update")
    parser.add_argument("--hidden", type=int, default=64, help="units of the hidden layer")
    parser.add_argument("--rate", type=float, default=3e-3, help="Adam's learning rate")
    parser.add_argument("--entropy", type=float, default=0.01, help="weight of the entropy bonus")
    parser.add_argument("--opponent", choices=sorted(OPPONENTS), default="random")
    parser.add_argument("--target", type=int, default=500, help="the matches' target score")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--save-every", type=int, default=20, help="batches between saves")
    parser.add_argument("--evaluate", type=int, default=200, help="matches played at the end (0: none)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    rng = np.random.default_rng(args.seed)
    rules = RulesConfig(players=2, target_score=args.target)
    env = single_agent([OPPONENTS[args.opponent](args.seed)], rules=rules, reward="hand")
    network = PolicyNetwork.initial([args.hidden], rng)
    optimiser = Adam(args.rate)
    started = time.monotonic()
    batches = 0
    budget = args.minutes * 60
    while time.monotonic() - started < budget and (not args.batches or batches < args.batches):
        done = max((time.monotonic() - started) / budget, batches / args.batches if args.batches else 0.0)
        optimiser.rate = args.rate * (1 - 0.9 * min(done, 1.0))
        batch = play_matches(env, network, args.batch_matches, rng)
        optimiser.step(network, gradients(network, batch, args.entropy))
        batches += 1
        if batches % 5 == 0 or batches == 1:
            reward, seconds = float(np.mean(batch.hand_rewards)), time.monotonic() - started
            log.info("batch %d, %.0f s: %d decisions, hand reward %+.3f, won %.0f of %d matches",
                     batches, seconds, len(batch.actions), reward, batch.wins, batch.matches)  # fmt: skip
        if batches % args.save_every == 0:
            network.save(args.out)
    saved = network.save(args.out)
    log.info("trained %d batches in %.0f s; weights in %s", batches, time.monotonic() - started, saved)
    if args.evaluate:
        rate, low, high = evaluate(saved, args.opponent, args.evaluate, args.seed + 1_000_000, rules)
        log.info("greedy policy vs %s, %d matches to %d: won %.3f (95%% interval %.3f-%.3f)",
                 args.opponent, args.evaluate, args.target, rate, low, high)  # fmt: skip


if __name__ == "__main__":
    main()
