"""`render_mode="ansi"`: the table as text, for a person watching (every hand shown: this is not a
seat's view, which is the observation)."""

from __future__ import annotations

from uno_arena.rules import Match


def table_text(match: Match, agents: list[str]) -> str:
    """The match now: scores, the top card and colour, whose decision, and every seat's cards."""
    hand = match.hand
    lines = [f"hand {match.hand_number}, turn {hand.turns}, target {match.config.target_score}"]
    if match.result is not None:
        winners = ", ".join(agents[seat] for seat in match.result.winners)
        lines.append(f"match over ({match.result.reason.value}): won by {winners}")
    colour = hand.colour.value if hand.colour is not None else "to be named"
    way = "to higher seats" if hand.direction > 0 else "to lower seats"
    lines.append(
        f"top {hand.top} (colour {colour}), play goes {way}, phase {hand.phase.value}, "
        f"penalty {hand.penalty}, draw pile {len(hand.draw_pile)}, discards {len(hand.discards)}"
    )
    for seat, held in enumerate(hand.cards):
        marks = ("to move " if seat == hand.to_move and match.result is None else "") + (
            "dealer" if seat == hand.dealer else ""
        )
        cards = " ".join(str(card) for card in sorted(held))
        lines.append(f"  {agents[seat]:>9} {match.totals[seat]:>4} points {len(held):>3} cards: {cards}"
                     + (f"  [{marks.strip()}]" if marks else ""))  # fmt: skip
    return "\n".join(lines)
