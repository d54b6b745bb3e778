"""`uno-arena rules ...`: the rules core from the command line (show options, simulate matches)."""

from __future__ import annotations

import json
import random
import time
from collections import Counter
from collections.abc import Mapping
from typing import Any

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from uno_arena.cli.tables import Column, json_option, print_fitted, wide_option
from uno_arena.cli.words import plural
from uno_arena.rules import (
    ConfigError,
    MatchResult,
    RulesConfig,
    eager_random_policy,
    random_policy,
    run_match,
)
from uno_arena.rules.config import MAX_PLAYERS, MIN_PLAYERS
from uno_arena.rules.runner import Policy

POLICIES = {"random": random_policy, "eager": eager_random_policy}


def parse_options(options: tuple[str, ...], players: int | None) -> RulesConfig:
    """`key=value` pairs (values as in TOML: numbers, true/false, names) into a config."""
    values: dict[str, Any] = {}
    for option in options:
        key, sep, raw = option.partition("=")
        if not sep:
            raise click.BadParameter(f"{option!r} is not key=value", param_hint="--option")
        values[key.strip()] = _plain_value(raw.strip())
    if players is not None:
        values["players"] = players
    try:
        return RulesConfig.from_dict(values)
    except ConfigError as error:
        raise click.BadParameter(str(error), param_hint="--option") from None


def parse_rules(text: str, players: int, fixed: Mapping[str, str] | None = None) -> RulesConfig:
    """`stacking,target_score=200,scoring=penalty_points`: NAME turns a boolean option on, NAME=VALUE
    sets any option (numbers, true/false, names as `uno-arena rules show` prints them). `fixed` names
    the options another flag sets (option -> that flag), refused here; `players` is the table's size,
    at which options such as hand_size are checked."""
    values = {**rules_values(text, {"players": "--seats", **(fixed or {})}), "players": players}
    try:
        return RulesConfig.from_dict(values)
    except ConfigError as error:
        raise click.BadParameter(str(error), param_hint="--rules") from None


def rules_values(text: str, refused: Mapping[str, str]) -> dict[str, Any]:
    """The `--rules` text as option values, unchecked (`parse_rules`, or a tournament spec, checks them at
    the table's size) but for the options another flag sets (`refused`: option -> that flag)."""
    values: dict[str, Any] = {}
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        name, sep, raw = item.partition("=")
        name = name.strip()
        if name in refused:
            raise click.BadParameter(f"{name}: set by {refused[name]}", param_hint="--rules")
        values[name] = _plain_value(raw.strip()) if sep else True
    return values


def _with_rules(config: RulesConfig, text: str, fixed: Mapping[str, str] | None = None) -> RulesConfig:
    """`config` with the `--rules` options applied on top (the same parser as `bot play`'s)."""
    if not text:
        return config
    overridden = parse_rules(text, config.players, fixed).to_dict()
    named = {part.partition("=")[0].strip() for part in text.split(",") if part.strip()}
    values = {**config.to_dict(), **{k: v for k, v in overridden.items() if k in named}}
    return RulesConfig.from_dict(values)


def _described(config: RulesConfig) -> str:
    """The house rules on and the options changed, in the words `bot play --rules` takes."""
    default = RulesConfig(players=config.players).to_dict()
    changed = [k if v is True and default[k] is False else f"{k}={v}"
               for k, v in config.to_dict().items() if k != "players" and v != default[k]]  # fmt: skip
    return ",".join(changed) or "the official rules"


def _plain_value(raw: str) -> Any:
    if raw.lower() in ("true", "false"):
        return raw.lower() == "true"
    try:
        return int(raw)
    except ValueError:
        return raw


@click.group()
def rules() -> None:
    """The rules: options and in-process simulations."""


# Each option: the ruling that names it (docs/rulings.md) and what it does, as `rules show` prints it.
OPTIONS: dict[str, tuple[int, str]] = {
    "players": (2, f"seats at the table, {MIN_PLAYERS} to {MAX_PLAYERS}"),
    "dealer": (3, "draw_each_hand: a dealer drawn every hand | rotate_left: drawn once, then passed left"),
    "hand_size": (4, "cards dealt to each player"),
    "first_wild_chooser": (9, "who names the colour of a Wild turned up first: dealer | first_player"),
    "first_wild_draw_four": (10, "a Wild Draw Four turned up first: draw_four | reshuffle"),
    "draw_until_playable": (13, "a player who draws keeps drawing until a card can be played"),
    "uno_penalty": (19, "cards a player caught without calling UNO draws"),
    "target_score": (22, "the score that ends the match"),
    "scoring": (23, "winner_takes: the winner scores the others' cards | penalty_points: each their own"),
    "max_turns_per_hand": (24, "turns after which a hand ends with no winner"),
    "max_hands_per_match": (24, "hands after which the match ends: the leader wins"),
    "stacking": (25, "house rule: a Draw Two on a Draw Two (a Wild Draw Four on one) passes the penalty on"),
    "jump_in": (26, "house rule: a card identical to the one just played may be played out of turn"),
    "seven_zero": (27, "house rule: a 7 swaps hands with a seat of the player's choice; a 0 passes them all"),
    "multi_play": (28, "house rule: several cards of one number or symbol are played together"),
}


RULES_HELP = (
    "Rules options by name, as 'bot play' takes them: NAME turns a house rule on, NAME=VALUE sets any."
)


@rules.command("show")
@click.option("--rules", "rules_text", default="", metavar="NAME[=V],...", help=RULES_HELP)
@click.option("-o", "--option", "options", multiple=True, metavar="KEY=VALUE", help="Override an option.")
@wide_option
@json_option
def show(rules_text: str, options: tuple[str, ...], wide: bool, as_json: bool) -> None:
    """Print the rules configuration (defaults, or with overrides): each option, its value, its ruling."""
    config = _with_rules(parse_options(options, None), rules_text)
    listed = [(key, value, *OPTIONS.get(key, (0, ""))) for key, value in config.to_dict().items()]
    if as_json:
        click.echo(json.dumps([{"option": key, "value": value, "ruling": ruling or None, "what": what}
                               for key, value, ruling, what in listed], indent=1))  # fmt: skip
        return
    caption = (  # "\\[": a bracket, not rich markup
        "the house rules are off by default and combine freely: --rules stacking,jump_in here, "
        "and in bot play, match play, demo; \\[rules] in a tournament spec"
    )
    rows = [[key, str(value), str(ruling or ""), what] for key, value, ruling, what in listed]
    print_fitted(Console(), _OPTION_COLUMNS, rows, wide, title="Rules configuration", caption=caption)


_OPTION_COLUMNS = (Column("option", whole=True), Column("value", whole=True), Column("RULINGS", whole=True,
                   drop=1), Column("what it does"))  # fmt: skip


@rules.command("simulate")
@click.option(
    "-p",
    "--players",
    type=click.IntRange(MIN_PLAYERS, MAX_PLAYERS),
    default=RulesConfig().players,
    show_default=True,
)
@click.option("-n", "--matches", type=click.IntRange(1), default=20, show_default=True)
@click.option("-s", "--seed", type=int, default=0, show_default=True, help="Seed of the first match.")
@click.option(
    "--policy",
    type=click.Choice(sorted(POLICIES)),
    default="eager",
    show_default=True,
    help="random: uniform over legal actions; eager: plays whenever it can.",
)
@click.option("--rules", "rules_text", default="", metavar="NAME[=V],...", help=RULES_HELP)
@click.option(
    "-o", "--option", "options", multiple=True, metavar="KEY=VALUE", help="Override a rules option."
)
def simulate(
    players: int, matches: int, seed: int, policy: str, rules_text: str, options: tuple[str, ...]
) -> None:
    """Play MATCHES whole matches between random in-process players and summarise them."""
    config = _with_rules(parse_options(options, players), rules_text, {"players": "--players"})
    Console().print(f"rules: {_described(config)}")
    results: list[MatchResult] = []
    started = time.perf_counter()
    columns = (TextColumn("matches"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
    with Progress(*columns, transient=True) as progress:
        task = progress.add_task("matches", total=matches)
        for index in range(matches):
            match_seed = seed + index
            policies: list[Policy] = [
                POLICIES[policy](random.Random(f"{match_seed}/{seat}")) for seat in range(players)
            ]
            results.append(run_match(config, match_seed, policies))
            progress.advance(task)
    _print_summary(results, players, time.perf_counter() - started)


def _print_summary(results: list[MatchResult], players: int, elapsed: float) -> None:
    wins: Counter[int] = Counter()
    for result in results:
        for seat in result.winners:
            wins[seat] += 1
    table = Table("seat", "wins", "shared", "mean total", title=plural(len(results), "match"))
    for seat in range(players):
        shared = sum(1 for r in results if seat in r.winners and r.shared)
        mean = sum(r.totals[seat] for r in results) / len(results)
        table.add_row(str(seat), str(wins[seat]), str(shared), f"{mean:.0f}")
    console = Console()
    console.print(table)
    reasons = Counter(r.reason.value for r in results)
    hands = sum(len(r.hands) for r in results)
    endings = Counter(h.reason.value for r in results for h in r.hands)
    console.print(
        f"match ends: {dict(reasons)}; hands: {hands} ({dict(endings)}); "
        f"decisions: {sum(len(r.actions) for r in results)}; {elapsed:.1f} s"
    )
