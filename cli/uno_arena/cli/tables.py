"""Tables that stay readable in a narrow terminal: whole names and ids, columns dropped by priority.

Rich, left to itself, squeezes a table into the terminal by folding cells anywhere, so an id one must copy
or a bot name comes out in pieces (one per line at 80 columns), or cut short with an ellipsis. Here each
column says how it may give way: `whole` cells (ids, numbers) never wrap; the others wrap only at spaces
(names are joined by ", ", so a name is never split). If even the narrowest layout does not fit, columns
are dropped, least needed first, and `hidden_note` names them; `--wide` shows every column, unbounded.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import click
from rich import box
from rich.cells import cell_len
from rich.console import Console
from rich.markup import escape
from rich.measure import Measurement
from rich.table import Table

from uno_arena.v1.printable import printable

WIDE = 100_000  # a width no table reaches: `--wide` lines are as long as their content

wide_option = click.option(
    "--wide", is_flag=True, help="Every column, however wide the lines get (default: fit the terminal)."
)
json_option = click.option("--json", "as_json", is_flag=True, help="The same as JSON, every field.")


def shown(text: str) -> str:
    """Text from outside (a bot, a replay file, a server's message) for rich to print: control characters
    escaped (`printable`) and markup too, so `[bold]` or an ESC sequence shows as what it is."""
    return escape(printable(text))


@dataclass(frozen=True, slots=True)
class Column:
    header: str
    drop: int = 0  # 0: always shown; otherwise the higher, the sooner it is dropped when space runs out
    whole: bool = False  # never wrapped (an id, a number): the column is as wide as its widest cell
    justify: str = "left"


def _words(text: str) -> int:
    """The widest piece a wrap at spaces leaves whole."""
    return max((cell_len(word) for word in text.split()), default=0)


def _lines(text: str) -> int:
    return max((cell_len(line) for line in text.splitlines()), default=0)


def fitted(
    columns: Sequence[Column],
    rows: Sequence[Sequence[str]],
    width: int | None,
    *,
    title: str | None = None,
    caption: str | None = None,
    lines: bool = True,
) -> tuple[Table | None, list[str]]:
    """The table in at most `width` columns (None: unbounded), and the headers of the columns dropped;
    no table if even the columns never dropped do not fit side by side (`print_fitted` stacks them).

    Cells are text, never markup, with control characters escaped: they may hold what a bot sent (the
    title and caption are the caller's markup)."""
    rows = [[printable(cell) for cell in row] for row in rows]  # measured as they will show
    kept = list(range(len(columns)))
    while True:
        table = _table(columns, rows, kept, width, title, caption, lines)
        if table is not None:
            return table, [columns[i].header for i in range(len(columns)) if i not in kept]
        droppable = [i for i in kept if columns[i].drop]
        if not droppable:
            return None, []
        kept.remove(max(droppable, key=lambda i: (columns[i].drop, i)))


def _table(columns: Sequence[Column], rows: Sequence[Sequence[str]], kept: list[int], width: int | None,
           title: str | None, caption: str | None, lines: bool) -> Table | None:  # fmt: skip
    """The table of the `kept` columns within `width`, or None if it cannot fit without splitting a word."""
    cells = [[columns[i].header, *(row[i] for row in rows)] for i in kept]
    widest = [max(_lines(c) for c in column) for column in cells]
    narrowest = [w if columns[i].whole else max(_words(c) for c in column)
                 for i, w, column in zip(kept, widest, cells, strict=True)]  # fmt: skip
    chosen = list(widest)
    if width is not None:
        overhead = _overhead(len(kept), lines)
        room = width - overhead - sum(narrowest)
        if room < 0:
            return None
        chosen = list(narrowest)
        for position in range(len(kept)):  # spare room widens the wrapped columns, in column order
            extra = min(room, widest[position] - chosen[position])
            chosen[position] += extra
            room -= extra
    table = _empty(title, caption, lines)
    for i, size in zip(kept, chosen, strict=True):
        column = columns[i]
        table.add_column(column.header, width=size, no_wrap=column.whole, overflow="fold",
                         justify=column.justify)  # type: ignore[arg-type]  # fmt: skip
    for row in rows:
        table.add_row(*(escape(row[i]) for i in kept))
    return table


def _empty(title: str | None, caption: str | None, lines: bool) -> Table:
    """`lines`: rich's usual box, lines between columns; otherwise only a rule under the header (room for
    cells). No collapse_padding: rich counts a collapsed column one cell wider than it draws it."""
    return Table(box=box.HEAVY_HEAD if lines else box.SIMPLE_HEAD, title=title, caption=caption,
                 caption_justify="left")  # fmt: skip


def _overhead(count: int, lines: bool) -> int:
    """The cells a table of `count` columns takes beyond its columns' own widths (padding, edges)."""
    probe = _empty(None, None, lines)
    for _ in range(count):
        probe.add_column(width=1)
    console = Console(width=WIDE)
    return Measurement.get(console, console.options, probe).maximum - count


def hidden_note(dropped: Sequence[str], what: str = "") -> str:
    """The line under a table that says which columns did not fit, and how to see them."""
    names = ", ".join(dropped)
    noun = "column" if len(dropped) == 1 else "columns"
    return f"{what}{names} {noun} hidden: --wide or --json shows {'it' if len(dropped) == 1 else 'them'}"


def print_fitted(console: Console, columns: Sequence[Column], rows: Sequence[Sequence[str]], wide: bool, *,
                 title: str | None = None, caption: str | None = None, what: str = "",
                 lines: bool = True) -> None:  # fmt: skip
    """Print the table fitted to the console (every column with `wide`), and a note of what it hides.

    Where even the columns never dropped cannot stand side by side (long ids in a narrow terminal),
    each row is printed as a block instead: its first cell on a line of its own, then each other one
    as `header: value`, wrapped at spaces only."""
    table, dropped = fitted(columns, rows, None if wide else console.width, title=title, caption=caption,
                            lines=lines)  # fmt: skip
    if table is None:
        _print_stacked(console, columns, rows, title, caption)
        return
    (Console(width=WIDE) if wide else console).print(table)
    if dropped:
        console.print(hidden_note(dropped, what), highlight=False)


def _print_stacked(console: Console, columns: Sequence[Column], rows: Sequence[Sequence[str]],
                   title: str | None, caption: str | None) -> None:  # fmt: skip
    if title:
        console.print(title, highlight=False)
    for row in rows:
        console.print(shown(row[0]), highlight=False, overflow="ignore", crop=False)
        for column, cell in zip(columns[1:], row[1:], strict=True):
            if cell:
                console.print(f"  {column.header}: {shown(cell)}", highlight=False)
    if caption:
        console.print(caption, highlight=False)
