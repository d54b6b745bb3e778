"""The terminal standings table: names whole, and narrower columns where the full table does not fit."""

from __future__ import annotations

import io

from rich.console import Console

from uno_arena.cli.leaderboard_commands import print_leaderboard
from uno_arena.leaderboard.board import Pairing, Table
from uno_arena.leaderboard.standings import Standing
from uno_arena.rules import RulesConfig


def _row(rank: int, bot: str) -> Standing:
    return Standing(rank=rank, bot=bot, ordinal=11.4, mu=33.55, sigma=7.39, matches=40, wins=21.5,
                    win_rate=0.538, win_low=0.38, win_high=0.69, points_per_match=455, hands_won=312,
                    timeouts=3, illegal=1, disconnects=0, forfeits=0)  # fmt: skip


TABLE = Table(
    standings=(_row(1, "strong-bot-v2"), _row(2, "greedy")),
    head_to_head={
        "strong-bot-v2": {"greedy": Pairing(0.6, 10)},
        "greedy": {"strong-bot-v2": Pairing(0.4, 10)},
    },
    matches=60,
    computed=0.0,
)


def _printed(width: int, rules: RulesConfig | None = None) -> str:
    console = Console(width=width, record=True, file=io.StringIO())
    print_leaderboard(console, TABLE, "cup", rules)
    return console.export_text()


def test_a_wide_terminal_shows_every_column() -> None:
    text = _printed(140)
    assert "mu +- sigma" in text and "hands won" in text and "33.55 +- 7.39" in text
    assert "0.54 [0.38-0.69]" in text and "3/1/0/0/0" in text


def test_an_80_column_terminal_leaves_columns_out_rather_than_cutting_names() -> None:
    text = _printed(80)
    assert "strong-bot-v2" in text and "…" not in text
    assert "33.55 +- 7.39" not in text and "0.54 [0.38-0.69]" in text
    assert "mu +- sigma, wins, hands won columns hidden: --wide or --json shows them" in text
    assert max(len(line) for line in text.splitlines()) <= 80


def test_a_tournaments_rules_are_said_above_its_standings() -> None:
    rules = RulesConfig(players=3, jump_in=True, seven_zero=True, hand_size=5)
    text = _printed(140, rules)
    assert (
        text.splitlines()[0] == "cup was played under house rules: jump_in, seven_zero; options: hand_size=5"
    )
    assert _printed(140, RulesConfig()).splitlines()[0] == "cup was played under official rules"
    assert "played under" not in _printed(140)  # every tournament: no one set of rules
