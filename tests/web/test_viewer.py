"""The match viewer in Debian's headless chromium, on real matches: a real server's match in which a bot
stops answering and forfeits, stepped through by keys, buttons, the scrubber and step links; the table's
state at every step checked against the rules core's; a house-rules match whose swaps and passes never
show a card twice and whose UNO marks are the calls that count; a match the server ended inside a hand;
a live match of a real tournament (a real worker following the server's Spectate stream) followed to
its end, and a live feed's faults; the 400 px layout. Screenshots: match-replay, match-live,
match-narrow."""

from __future__ import annotations

import json
import random
import threading
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import redis
from google.protobuf.json_format import MessageToDict
from selenium.common.exceptions import (
    JavascriptException,
    NoSuchElementException,
    StaleElementReferenceException,
)
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys as Key
from selenium.webdriver.support.ui import WebDriverWait

from tests.conftest import RunningServer
from tests.endpoints import status_of
from tests.records.test_replay import forfeited_match, played_match
from tests.sdk.runner import BackgroundBot
from tests.server.botclient import TestBot, eager, play_match
from tests.web.browser import browser, horizontal_overflow, narrow_browser, screenshot, serving
from tests.workers.harness import WorkerProcess
from uno_arena.records import identity, live
from uno_arena.records.match import RecordedMatch, load_match, record
from uno_arena.records.replay import (
    automatic_events,
    export,
    placed_faults,
    recorded_match,
    write_replay_file,
)
from uno_arena.records.spec import spec_from_dict
from uno_arena.records.tournament import Keys
from uno_arena.rules import RulesConfig, eager_random_policy, new_match, observe, play
from uno_arena.rules.hand import Phase
from uno_arena.sdk import Action, Observation
from uno_arena.sdk.examples.greedy_bot import GreedyBot
from uno_arena.v1 import codec, control_pb2
from uno_arena.v1 import game_pb2 as pb
from uno_arena.web.app import create_app
from uno_arena.workers import lifecycle

__all__ = ["browser", "narrow_browser"]  # fixtures, used by name

BOTS = ("ada", "silent", "bea")  # seat 1 never answers: three timeouts and it forfeits, then plays on
SEED = 3
TARGET = 150

# what the page shows now: the step, the top card, every seat's hand size, the draw pile, the hand
READ_TABLE = """
const label = document.getElementById("step-label").textContent;
const top = document.querySelector("#top-card .card");
return {
  step: Number((/step (\\d+)/.exec(label) || [0, 0])[1]),
  top: top ? top.dataset.card : null,
  sizes: Array.from(document.querySelectorAll("#table .seat")).sort((a, b) => a.dataset.seat - b.dataset.seat)
    .map((seat) => Number(seat.querySelector(".size").dataset.size)),
  pile: Number(document.getElementById("draw-pile").textContent),
  hand: document.getElementById("hand-number").textContent,
};
"""


@dataclass(frozen=True)
class Recorded:
    client: redis.Redis
    prefix: str
    match: RecordedMatch


@pytest.fixture
def forfeited(match_server: RunningServer) -> Iterator[Recorded]:
    """A real server's match of three bots, one of which never answers (it forfeits at its third
    timeout and plays on by default actions), recorded in Redis as a tournament's worker records it."""
    client, prefix = match_server.redis, match_server.prefix
    bots = [TestBot(match_server.address, name, match_server.register(name),
                    policy=(lambda request: None) if name == "silent" else eager(random.Random(name)))
            for name in BOTS]  # fmt: skip
    for bot in bots:
        bot.wait_for(bot.welcomed)
    spec = spec_from_dict({"name": "viewer", "bots": list(BOTS), "seats": 3})
    tournament_id = lifecycle.create_checked(client, prefix, spec)
    keys = Keys(prefix, tournament_id)
    request = control_pb2.PlayMatchRequest(match_id=keys.match_id(0), bots=list(BOTS), seed=SEED,
                                           rules=pb.RulesConfig(target_score=TARGET), max_strikes=3,
                                           decision_timeout_ms=300, disconnect_grace_ms=1500)  # fmt: skip
    progress = play_match(match_server.address, match_server.control_token, request)
    for bot in bots:
        bot.close()
    log = b"".join(p.log.SerializeToString() for p in progress if p.WhichOneof("kind") == "log")
    assert record(client, keys, 0, progress[-1].finished, log)
    found = load_match(client, prefix, keys.match_id(0))
    assert found is not None
    yield Recorded(client, prefix, found)


def wait(driver: Any, condition: Any, timeout: float = 20, what: str = "") -> Any:
    """Wait for `condition(driver)`; a page that is reloading (a live match became its replay) is waited on
    as not ready yet."""
    ignored = (StaleElementReferenceException, NoSuchElementException, JavascriptException)
    return WebDriverWait(driver, timeout, 0.05, ignored).until(lambda d: condition(d), what)


def table(driver: Any) -> dict[str, Any]:
    shown: dict[str, Any] = driver.execute_script(READ_TABLE)
    return shown


def at_step(driver: Any, step: int) -> dict[str, Any]:
    return wait(driver, lambda d: (t := table(d))["step"] == step and t, what=f"step {step}")  # type: ignore[no-any-return]


def card_name(card: pb.Card) -> str:
    """`red draw two`, `wild`: as the viewer names a card."""
    colour = pb.Colour.Name(card.colour).removeprefix("COLOUR_").lower() if card.colour else ""
    rank = pb.Rank.Name(card.rank).removeprefix("RANK_").lower().replace("_", " ")
    return f"{colour} {rank}".strip()


def press(driver: Any, key: str) -> None:
    driver.find_element(By.TAG_NAME, "body").send_keys(key)


def test_a_replay_is_stepped_through_and_its_forfeit_stands_out(forfeited: Recorded, browser: Any) -> None:
    match, events = forfeited.match, forfeited.match.events
    forfeit = next(f for f in match.finished.faults if f.forfeited)
    assert forfeit.seat == 1 and forfeit.HasField("event_index")
    with serving(create_app(forfeited.client, forfeited.prefix)) as url:
        browser.get(f"{url}/match/{match.match_id}")
        at_step(browser, 1)

        # the summary: bots linking to their pages, the winner, the real end reason, the seed, the rules
        for name in BOTS:
            assert browser.find_element(By.CSS_SELECTOR, f'#players a[href="/bot/{name}"]').text == name
        winners = [BOTS[w] for w in match.record.winners]
        assert browser.find_element(By.ID, "winner").text == ", ".join(winners)
        assert browser.find_element(By.ID, "end-reason").text == match.record.reason_name.replace("_", " ")
        assert browser.find_element(By.ID, "seed").text == str(match.record.seed)
        assert browser.find_element(By.ID, "rules").text == f"to {TARGET}; official rules"
        assert browser.find_element(By.ID, "tournament-link").text == match.record.tournament
        hands = len(match.record.hands)
        markers = browser.execute_script(
            "return Array.from(document.querySelectorAll('#score-chart g.series'))"
            ".map((g) => g.querySelectorAll('circle, path').length);"
        )
        assert markers == [hands] * 3  # one point per seat and hand

        # step by step with the right arrow: the top card and the hand sizes follow the events
        before = table(browser)
        tops, sizes_seen = set(), set()
        body = browser.find_element(By.TAG_NAME, "body")
        for step in range(2, 60):
            body.send_keys(Key.ARROW_RIGHT)
            now = at_step(browser, step)
            kind = events[step - 1].WhichOneof("kind")
            if kind == "played":
                played = events[step - 1].played
                assert now["top"] == card_name(played.card), step
                assert now["sizes"][played.seat] == played.cards_left, step
            elif kind == "drew":
                drew = events[step - 1].drew
                assert now["sizes"][drew.seat] == before["sizes"][drew.seat] + drew.count, step
                assert now["pile"] == before["pile"] - drew.count, step
            elif kind in ("kept", "skipped", "catch_passed", "accepted", "challenged", "hand_shown"):
                assert (now["top"], now["sizes"]) == (before["top"], before["sizes"]), step
            tops.add(now["top"])
            sizes_seen.add(tuple(now["sizes"]))
            before = now
        assert len(tops) > 5 and len(sizes_seen) > 10
        press(browser, Key.ARROW_LEFT)
        at_step(browser, 58)

        # hand by hand: down (and Page Down) to the next hand's start, up back
        starts = [i + 1 for i, e in enumerate(events) if e.WhichOneof("kind") == "hand_started"]
        if len(starts) > 1:
            press(browser, Key.ARROW_DOWN)
            assert at_step(browser, starts[1])["hand"] == "2"
            press(browser, Key.ARROW_UP)
            assert at_step(browser, starts[0])["hand"] == "1"
            press(browser, Key.PAGE_DOWN)
            at_step(browser, starts[1])
        browser.find_element(By.ID, "last").click()
        at_step(browser, len(events))
        browser.find_element(By.ID, "first").click()
        at_step(browser, 1)
        browser.find_element(By.ID, "next").click()
        at_step(browser, 2)

        # play, then pause
        browser.find_element(By.ID, "play").click()
        wait(browser, lambda d: table(d)["step"] >= 5, what="playing")
        press(browser, " ")
        stopped = table(browser)["step"]
        assert browser.find_element(By.ID, "play").text.endswith("play")

        # the scrubber
        browser.execute_script(
            "const s = document.getElementById('scrubber'); s.value = 40;s.dispatchEvent(new Event('input'));"
        )
        at_step(browser, 40)
        assert stopped != 40

        # the forfeit: its step is linked from the summary, marked in the list, the caption and the seat
        step = forfeit.event_index + 1
        browser.find_element(By.CSS_SELECTOR, f'#faults a[href="#step={step}"]').click()
        at_step(browser, step)
        item = browser.find_element(By.CSS_SELECTOR, f'#steps li[data-step="{step}"]')
        assert "mark-forfeit" in item.get_attribute("class") and "current" in item.get_attribute("class")
        assert "forfeit" in browser.find_element(By.ID, "now").text
        assert "timeout" in browser.find_element(By.ID, "now").text
        seat = browser.find_element(By.CSS_SELECTOR, '#table .seat[data-seat="1"]')
        assert "forfeited" in seat.find_element(By.CLASS_NAME, "badges").text
        earlier = [f.event_index + 1 for f in match.finished.faults if f.seat == 1 and not f.forfeited]
        assert len(earlier) == 2
        for fault_step in earlier:  # the two timeouts before it
            marked = browser.find_element(By.CSS_SELECTOR, f'#steps li[data-step="{fault_step}"]')
            assert "mark-fault" in marked.get_attribute("class") and "timeout" in marked.text
        assert len(browser.find_elements(By.CSS_SELECTOR, "#timeline .marker.fault")) == 3
        later = [i + 1 for i, e in enumerate(events) if i > forfeit.event_index
                 and e.WhichOneof("kind") == "kept" and e.kept.seat == 1]  # fmt: skip
        assert later, "the forfeited seat played on by default actions (draw, keep)"
        automatic = browser.find_element(By.CSS_SELECTOR, f'#steps li[data-step="{later[0]}"]')
        assert "mark-auto" in automatic.get_attribute("class") and "automatic" in automatic.text
        # exactly the events the text replay marks `[automatic]`: the replay JSON's automatic_events
        marked = browser.find_elements(By.CSS_SELECTOR, "#steps li.mark-auto")
        expected = {i + 1 for i in automatic_events(match, placed_faults(match)[0])}
        assert {int(item.get_attribute("data-step")) for item in marked} == expected and expected
        browser.set_window_size(1280, 1500)  # the whole viewer: summary, table, controls
        browser.execute_script("window.scrollTo(0, 0);")
        screenshot(browser, "match-replay")

        # a link to a step opens the viewer there
        browser.get("about:blank")
        browser.get(f"{url}/match/{match.match_id}#step={later[0]}")
        at_step(browser, later[0])
        assert "automatic" in browser.find_element(By.ID, "now").text


def test_the_table_at_every_step_is_the_rules_cores(forfeited: Recorded, browser: Any) -> None:
    """The viewer's reducer against the rules core: after every action of matches under each rule set,
    what it computes from the events is what the rules core's observation says (hand sizes, top card,
    named colour, direction, draw pile, scores, hand), and every hand it shows face up is whole."""
    cases: list[dict[str, Any]] = []
    rule_sets: list[tuple[int, dict[str, Any], int]] = [
        (3, {}, 3),
        (4, {"stacking": True, "jump_in": True, "seven_zero": True, "multi_play": True}, 5),
        (2, {"draw_until_playable": True, "first_wild_draw_four": "reshuffle"}, 9),
        (5, {"dealer": "rotate_left", "first_wild_chooser": "first_player", "scoring": "penalty_points"}, 11),
    ]
    for players, rules, seed in rule_sets:
        match = new_match(RulesConfig(players=players, target_score=200, **rules), random.Random(seed))
        policy = eager_random_policy(random.Random(seed))
        checks = []
        while match.result is None:
            play(match, policy(observe(match, match.hand.to_move)), match.hand.to_move)
            if match.result is None:
                seen = observe(match, 0)
                checks.append({"step": len(match.events), "sizes": list(seen.hand_sizes),
                               "top": seen.top.index if seen.top else None,
                               "colour": seen.colour.value if seen.colour else None,
                               "direction": seen.direction,
                               "pile": seen.draw_pile_size, "scores": list(seen.scores),
                               "hand": seen.hand_number})  # fmt: skip
        events = [MessageToDict(codec.event(e), preserving_proto_field_name=True) for e in match.events]
        cases.append({"players": players, "events": events, "checks": checks})
    with serving(create_app(forfeited.client, forfeited.prefix)) as url:
        browser.get(f"{url}/match/{forfeited.match.match_id}")
        at_step(browser, 1)
        mismatches = browser.execute_script(
            """
            const colours = {COLOUR_RED: "red", COLOUR_YELLOW: "yellow", COLOUR_GREEN: "green",
                             COLOUR_BLUE: "blue"};
            const wrong = [];
            for (const c of arguments[0]) {
              const states = window.UnoViewer.states(c.events, c.players);
              for (const k of c.checks) {
                const s = states[k.step - 1];
                const got = {step: k.step, sizes: s.sizes, top: s.top ? s.top.index || 0 : null,
                  colour: s.colour ? colours[s.colour] : null, direction: s.direction, pile: s.pile,
                  scores: s.scores, hand: s.hand};
                const same = Object.keys(k).every((key) =>
                  JSON.stringify(got[key]) === JSON.stringify(k[key]));
                if (!same) wrong.push([got, k]);
              }
              states.forEach((s) => s.hands.forEach((h, seat) => {
                if (h === null || h.length !== s.sizes[seat]) wrong.push(["hand", s.step, seat]);
              }));
              // no card shown twice, after every event (a swap or a pass too): the deck's 108 cards are
              // the hands', the draw pile's and the discards'
              states.forEach((s) => {
                const held = s.hands.reduce((total, h) => total + (h ? h.length : 0), 0);
                const deck = held + s.pile + s.discards;
                if (held && deck !== 108) wrong.push(["deck", s.step, held, s.pile, s.discards]);
              });
            }
            return wrong.slice(0, 5);
            """,
            cases,
        )
        assert mismatches == []
        assert sum(len(c["checks"]) for c in cases) > 1000


def test_every_seat_fits_from_400_px_up(forfeited: Recorded, narrow_browser: Any, browser: Any,
                                        tmp_path: Path) -> None:  # fmt: skip
    """Ten seats with long names at 1280 and 400 px wide, and the forfeit match at 400 px: nothing
    scrolls sideways, at the start, in the middle or at the end; the cards name their colour."""
    names = [f"a-bot-with-a-rather-long-name-{seat}" for seat in range(10)]
    match = new_match(RulesConfig(players=10, target_score=100), random.Random(1))
    policy = eager_random_policy(random.Random(1))
    while match.result is None:
        play(match, policy(observe(match, match.hand.to_move)), match.hand.to_move)
    finished = control_pb2.FinishedMatch(
        result=pb.MatchResult(match_id="ten-seats", reason=pb.MATCH_END_TARGET_REACHED, bots=names,
                              winners=list(match.result.winners), totals=list(match.result.totals),
                              hands=[codec.hand_ended(h) for h in match.result.hands]),
        seed=1, rules=pb.RulesConfig(target_score=100), event_count=len(match.events))  # fmt: skip
    write_replay_file(recorded_match(finished, [codec.event(e) for e in match.events]), tmp_path)
    app = create_app(forfeited.client, forfeited.prefix, replays=tmp_path)
    with serving(app) as url:
        for driver, match_id in ((browser, "ten-seats"), (narrow_browser, "ten-seats"),
                                 (narrow_browser, forfeited.match.match_id)):  # fmt: skip
            driver.get(f"{url}/match/{match_id}")
            at_step(driver, 1)
            total = int(driver.find_element(By.ID, "scrubber").get_attribute("max"))
            for step in (1, total // 2, total):
                driver.get("about:blank")
                driver.get(f"{url}/match/{match_id}#step={step}")
                at_step(driver, step)
                assert horizontal_overflow(driver) == 0, (match_id, step, driver.get_window_size())
            faces = driver.find_elements(By.CSS_SELECTOR, "#table .seat .card:not(.back)")
            assert faces and all(f.find_element(By.CLASS_NAME, "cname").text for f in faces[:20])
            assert driver.execute_script(READ_CARDS) == []
        marks = browser.execute_script(COLOUR_MARKS)
        assert len(marks) == 5 and len(set(marks.values())) == 5 and all(marks.values()), marks
        narrow_browser.get("about:blank")
        narrow_browser.get(f"{url}/match/{forfeited.match.match_id}#step=60")
        at_step(narrow_browser, 60)
        # the table at the top of the window: the step and the controls on screen with it, the list after
        where = narrow_browser.execute_script(NARROW_ORDER)
        assert where["order"] == sorted(where["order"]), where
        assert abs(where["tableTop"]) < 1, where
        (now_top, now_bottom), (buttons_top, buttons_bottom) = where["now"], where["buttons"]
        assert 0 < now_top < now_bottom <= buttons_top < buttons_bottom <= where["window"], where
        screenshot(narrow_browser, "match-narrow")


HOUSE_RULES_SEED = 3  # 355 events: the browser walks every step within its script timeout, even loaded


def house_rules_replay(folder: Path) -> tuple[RecordedMatch, set[int]]:
    """A 4-seat match of the rules core under every house rule, as a replay file in `folder`; and the
    steps whose UNO call counts: the player held one card once its play was whole (after the cards it
    also laid, its swaps and passes), as the rules core's hand says after that play's last action."""
    rules = RulesConfig(players=4, target_score=200, stacking=True, jump_in=True, seven_zero=True,
                        multi_play=True)  # fmt: skip
    match = new_match(rules, random.Random(HOUSE_RULES_SEED))
    policy = eager_random_policy(random.Random(HOUSE_RULES_SEED))
    boundaries: list[tuple[int, bool, list[int]]] = []  # after each action: events, play whole?, hand sizes
    while match.result is None:
        play(match, policy(observe(match, match.hand.to_move)), match.hand.to_move)
        whole = match.result is not None or match.hand.phase not in (Phase.LAY, Phase.SWAP)
        boundaries.append((len(match.events), whole, [len(cards) for cards in match.hand.cards]))
    events = [codec.event(e) for e in match.events]
    counted = set()
    for i, event in enumerate(events):
        if event.WhichOneof("kind") == "played" and event.played.uno:
            end, _, sizes = next(b for b in boundaries if b[0] > i and b[1])
            ended = any(e.HasField("hand_ended") for e in events[i:end])  # it went out
            if not ended and sizes[event.played.seat] == 1:
                counted.add(i + 1)
    names = ["ada", "bob", "carol", "dave"]
    result = codec.match_result("house-rules", codec.MATCH_ENDS[match.result.reason], match.result.winners,
                               match.result.totals, match.hand_results, names, [], [0] * 4)  # fmt: skip
    finished = control_pb2.FinishedMatch(result=result, event_count=len(events), seed=HOUSE_RULES_SEED,
                                         rules=codec.rules(match.config),
                                         actions=[a.id for a in match.actions])  # fmt: skip
    recorded = recorded_match(finished, events)
    write_replay_file(recorded, folder)
    return recorded, counted


# every step of the page: per seat its size and face-up cards; the draw pile; the discards; UNO marks
EVERY_STEP = """
const viewer = window.unoViewer, shown = [];
for (let step = 1; step <= viewer.events.length; step += 1) {
  viewer.go(step);
  const seats = Array.from(document.querySelectorAll("#table .seat"))
    .sort((a, b) => a.dataset.seat - b.dataset.seat);
  shown.push({
    sizes: seats.map((seat) => Number(seat.querySelector(".size").dataset.size)),
    faces: seats.map((seat) => seat.querySelectorAll(".card:not(.back)").length),
    pile: Number(document.getElementById("draw-pile").textContent),
    discards: Number(document.getElementById("discards").textContent),
    uno: (viewer.marks[step - 1] || []).some(([cls]) => cls === "uno"),
  });
}
return shown;
"""


def test_swaps_and_passes_exchange_hands_at_once_and_uno_marks_only_calls_that_count(
    redis_prefix: tuple[redis.Redis, str], browser: Any, tmp_path: Path
) -> None:
    """Seven-0 under multi_play: at every step the cards face up, the draw pile and the discards are the
    deck's 108 cards (a swap or a pass is one exchange, never a moment with a hand in two places); a swap
    exchanges the two seats' hands at its own step; a 0's pass moves every hand one seat; an UNO mark
    only where the call counts."""
    match, counted = house_rules_replay(tmp_path)
    events = match.events
    kinds = [e.WhichOneof("kind") for e in events]
    assert kinds.count("swapped") >= 3 and kinds.count("hands_passed") >= 1
    calls = sum(kind == "played" and e.played.uno for kind, e in zip(kinds, events, strict=True))
    assert counted and calls > len(counted)  # calls on a 7 or a 0 that did not leave one card
    client, prefix = redis_prefix
    with serving(create_app(client, prefix, replays=tmp_path)) as url:
        browser.get(f"{url}/match/house-rules")
        at_step(browser, 1)
        shown = browser.execute_script(EVERY_STEP)
    assert len(shown) == len(events)
    for step, now in enumerate(shown, 1):
        if sum(now["sizes"]):  # once dealt
            assert now["faces"] == now["sizes"], step
            assert sum(now["faces"]) + now["pile"] + now["discards"] == 108, (step, events[step - 1])
    for i, kind in enumerate(kinds):
        before, after = shown[i - 1]["sizes"], shown[i]["sizes"]
        if kind == "swapped":
            seat, other = events[i].swapped.seat, events[i].swapped.other
            assert (after[seat], after[other]) == (before[other], before[seat]), i + 1
            received = [events[i + 1].received, events[i + 2].received]
            assert {(r.seat, r.count) for r in received} == {(seat, after[seat]), (other, after[other])}
        if kind == "hands_passed":
            way = events[i].hands_passed.direction
            assert after == [before[(seat - way) % 4] for seat in range(4)], i + 1
    assert {step for step, now in enumerate(shown, 1) if now["uno"]} == counted


def test_a_match_the_server_ended_inside_a_hand_ends_with_its_result(
    redis_prefix: tuple[redis.Redis, str], browser: Any, tmp_path: Path
) -> None:
    """Two seats, one forfeits: the log has no match_ended, so the last step is the result's end; the
    summary says the hands as completed and the one it ended in, as the table does."""
    match = forfeited_match(players=2)
    write_replay_file(match, tmp_path)
    assert not any(e.HasField("match_ended") for e in match.events)
    started = sum(e.HasField("hand_started") for e in match.events)
    completed = len(match.record.hands)
    assert started == completed + 1
    client, prefix = redis_prefix
    with serving(create_app(client, prefix, replays=tmp_path)) as url:
        browser.get(f"{url}/match/{match.match_id}")
        at_step(browser, 1)
        browser.find_element(By.ID, "last").click()
        last = at_step(browser, len(match.events) + 1)
        totals = ", ".join(str(t) for t in match.record.totals)
        assert f"Match ends (forfeit): alice won; totals {totals}" in browser.find_element(By.ID, "now").text
        assert last["hand"] == str(started)
        hands = browser.find_element(By.ID, "hands").text
        assert hands == f"{completed} completed (ended during hand {started})"
        item = browser.find_element(By.CSS_SELECTOR, f'#steps li[data-step="{len(match.events) + 1}"]')
        assert "from-result" in item.get_attribute("class")


# at each of the steps given: the seats marked to move and just played, their tooltips, the "now" line's next
SEAT_MARKS = """
const viewer = window.unoViewer, shown = [];
const seats = () => Array.from(document.querySelectorAll("#table .seat"))
  .sort((a, b) => a.dataset.seat - b.dataset.seat);
const numbers = (found) => found.map((seat) => Number(seat.dataset.seat));
for (const step of arguments[0]) {
  viewer.go(step);
  const marked = seats().filter((seat) => seat.classList.contains("to-move"));
  const next = document.querySelector("#now .next");
  shown.push({
    to_move: numbers(marked),
    just_played: numbers(seats().filter((seat) => seat.classList.contains("just-played"))),
    titles: seats().map((seat) => seat.title),
    next: next ? next.textContent : null,
  });
}
viewer.go(viewer.toMove.findIndex((seat) => seat !== null) + 1);  // the ▶ itself, once
const head = document.querySelector("#table .seat.to-move .seat-head");
return [shown, getComputedStyle(head, "::before").content];
"""


def test_the_seat_to_move_is_marked_to_move_and_the_one_that_played_just_played(
    browser: Any, tmp_path: Path
) -> None:
    """The ▶ marks the seat whose decision comes next (the replay JSON's `to_move`, the rules core's),
    titled and explained "to move"; the seat the step is about is outlined "just played". Served from a
    replay file alone, without Redis."""
    match = played_match(players=3, seed=40)  # 104 events, walked step by step in the browser
    write_replay_file(match, tmp_path)
    seats = export(match)["to_move"]
    assert isinstance(seats, list)
    names = match.record.bots
    with serving(create_app(None, "", replays=tmp_path)) as url:
        browser.get(f"{url}/match/{match.match_id}")
        at_step(browser, 1)
        legend = browser.find_element(By.ID, "seat-legend").text
        assert "▶ to move: whose decision comes next" in legend and "just played" in legend
        steps = list(range(1, len(match.events) + 1))
        shown, arrow = browser.execute_script(SEAT_MARKS, steps)
    assert arrow == '"▶ "'
    assert len(shown) == len(steps)
    played = 0
    for step, now in zip(steps, shown, strict=True):
        seat, event = seats[step - 1], match.events[step - 1]
        if seat is None:
            assert now["to_move"] == [] and now["next"] is None, step
        else:
            assert now["to_move"] == [seat], step
            assert "to move" in now["titles"][seat] and now["next"] == f"▶ {names[seat]} to move", step
        if event.WhichOneof("kind") == "played":
            assert now["just_played"] == [event.played.seat], step
            assert "just played" in now["titles"][event.played.seat], step
            played += seat is not None and seat != event.played.seat  # the turn passed on
    assert played > 20


def public(event: pb.Event) -> pb.Event:
    """`event` as a spectator sees it: no seat's cards (what the server's Spectate stream sends)."""
    seen = pb.Event()
    seen.CopyFrom(event)
    kind = seen.WhichOneof("kind")
    if kind in ("dealt", "drew", "received", "hand_shown"):
        inner = getattr(seen, kind)
        del inner.cards[:]
        inner.hidden = True
    return seen


def test_a_live_match_shows_its_faults_and_forfeit_as_they_come(
    redis_prefix: tuple[redis.Redis, str], browser: Any
) -> None:
    """A live feed (as a worker writes it) with a seat's two timeouts, the second forfeiting: each is
    listed when it arrives and marked at its step once that step's event arrives; the seat is badged
    "forfeited" from then on."""
    client, prefix = redis_prefix
    match = forfeited_match(players=3)
    bots = list(match.record.bots)
    for name in bots:
        identity.register_bot(client, prefix, name)
    tournament_id = lifecycle.create_checked(client, prefix, spec_from_dict({"name": "faults", "bots": bots}))
    keys = Keys(prefix, tournament_id)
    events = [public(e) for e in match.events]
    first, second = match.finished.faults
    feed = live.LiveFeed(client, keys, 0, bots)
    feed.start()
    feed.write([events[: first.event_index], first])  # the fault's own event has not come yet
    with serving(create_app(client, prefix)) as url:
        browser.get(f"{url}/match/{keys.match_id(0)}")
        wait(browser, lambda d: table(d)["step"] == first.event_index, what="the events before the fault")
        listed = wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#fault-list li"), what="the fault")
        assert "carol timeout" in listed[0].text and browser.find_element(By.ID, "faults").is_displayed()
        assert not browser.find_elements(By.CSS_SELECTOR, "#steps li.mark-fault, #timeline .marker.fault")

        feed.write([events[first.event_index : second.event_index], second, events[second.event_index :]])
        wait(browser, lambda d: table(d)["step"] == len(events), what="every event")
        for fault in (first, second):
            item = browser.find_element(By.CSS_SELECTOR, f'#steps li[data-step="{fault.event_index + 1}"]')
            assert "mark-fault" in item.get_attribute("class") and "timeout" in item.text
        forfeit = browser.find_element(By.CSS_SELECTOR, f'#steps li[data-step="{second.event_index + 1}"]')
        assert "mark-forfeit" in forfeit.get_attribute("class")
        assert len(browser.find_elements(By.CSS_SELECTOR, "#timeline .marker.fault")) == 2
        assert len(browser.find_elements(By.CSS_SELECTOR, "#timeline .marker.forfeit")) == 1
        assert "forfeited" in browser.find_elements(By.CSS_SELECTOR, "#fault-list li")[1].text
        seat = browser.find_element(By.CSS_SELECTOR, '#table .seat[data-seat="2"] .badges')
        assert "forfeited" in seat.text
        feed.end(recorded=False, reason="aborted")


# every card face whose colour word is under 11 px or wider than the card
READ_CARDS = """
return Array.from(document.querySelectorAll("#table .card:not(.back)")).filter((card) => {
  const word = card.querySelector(".cname");
  return parseFloat(getComputedStyle(word).fontSize) < 11
    || word.getBoundingClientRect().width > card.getBoundingClientRect().width;
}).map((card) => card.dataset.card);
"""
# each colour's corner mark (a card of each drawn apart from the page)
COLOUR_MARKS = """
const marks = {};
for (const colour of ["red", "yellow", "green", "blue", "wild"]) {
  const card = document.createElement("span");
  card.className = `card c-${colour}`;
  document.body.append(card);
  marks[colour] = getComputedStyle(card, "::before").content.replace(/"/g, "");
  card.remove();
}
return marks;
"""
# at 400 px: the table, the step and the controls, the list of events, top to bottom (the list at the
# window's top, where nothing is stuck); then, with the table's top at the window's top, where the step
# and the buttons are in the window
NARROW_ORDER = """
const box = (selector) => document.querySelector(selector).getBoundingClientRect();
document.getElementById("steps").scrollIntoView();
const order = [box("#table").bottom, box(".dock").top, box(".dock").bottom, box("#steps").top];
window.scrollTo(0, box("#table").top + window.scrollY);
return {
  order, now: [box("#now").top, box("#now").bottom], buttons: [box("#controls .buttons").top,
  box("#controls .buttons").bottom], window: window.innerHeight, tableTop: box("#table").top,
};
"""


class GatedGreedyBot(GreedyBot):
    """Greedy, but before its `at`-th decision it waits for `gate`: the match stands still, live, while the
    test looks at it, and goes on when the test opens the gate."""

    def __init__(self, at: int) -> None:
        super().__init__()
        self.at, self.decisions = at, 0
        self.gate, self.waiting = threading.Event(), threading.Event()

    def decide(self, observation: Observation) -> Action:
        self.decisions += 1
        if self.decisions == self.at:
            self.waiting.set()
            assert self.gate.wait(60), "the test never opened the gate"
        return super().decide(observation)


def test_a_live_match_is_followed_to_its_end_and_becomes_its_replay(
    match_server: RunningServer, browser: Any, tmp_path: Path
) -> None:
    """A real tournament's match, played by a real worker, followed from the tournament's running list:
    the page shows it live (every hand face down), updates as its events arrive, and once it ends loads
    its replay at the last step."""
    client, prefix = match_server.redis, match_server.prefix
    first_gate, second_gate = GatedGreedyBot(at=8), GatedGreedyBot(at=30)
    players = {"live-a": first_gate, "live-b": second_gate}
    bots = [BackgroundBot(bot, match_server.address, name, match_server.register(name))
            for name, bot in players.items()]  # fmt: skip
    worker = WorkerProcess(prefix, match_server.control_token, tmp_path / "worker.log")
    try:
        for bot in bots:
            bot.wait_connected()
        patient = {"decision_ms": 90_000}  # a bot waiting at its gate must not time out
        spec = spec_from_dict({"name": "live", "bots": list(players), "target": 200, "seed": 4,
                               "server": match_server.address, "deadlines": patient})  # fmt: skip
        tournament_id = lifecycle.create_checked(client, prefix, spec)
        lifecycle.start(client, prefix, tournament_id)
        match_id = Keys(prefix, tournament_id).match_id(0)
        worker.start()
        with serving(create_app(client, prefix)) as url:
            assert first_gate.waiting.wait(60), "the match never started"
            listed = urllib.request.urlopen(f"{url}/api/tournament/{tournament_id}/running").read()
            assert match_id in [m["match_id"] for m in json.loads(listed)["running"]]
            browser.set_window_size(1280, 1500)  # the whole viewer in its screenshot
            browser.get(f"{url}/match/{match_id}")
            assert browser.find_element(By.ID, "mode").text == "live"
            paused = wait(browser, lambda d: (t := table(d))["step"] > 0 and t, 30, "the first events")
            # only public information: every hand face down, its size shown
            assert len(browser.find_elements(By.CSS_SELECTOR, "#table .seat .cards.down")) == 2
            assert not browser.find_elements(By.CSS_SELECTOR, "#table .seat .card:not(.back)")
            assert sum(paused["sizes"]) > 0 and paused["top"]
            assert "live" in browser.find_element(By.ID, "live-status").text

            first_gate.gate.set()  # the match goes on: the open page follows it
            assert second_gate.waiting.wait(60), "the match never went on"
            later = wait(browser, lambda d: (t := table(d))["step"] > paused["step"] and t, 30, "more events")
            assert later["sizes"] != paused["sizes"] or later["top"] != paused["top"]
            assert browser.find_element(By.ID, "mode").text == "live"
            screenshot(browser, "match-live")

            second_gate.gate.set()  # to its end, then its replay
            wait(browser, lambda d: d.execute_script("return document.getElementById('mode').textContent")
                 == "replay", 120, "the replay")  # fmt: skip
            recorded = load_match(client, prefix, match_id)
            assert recorded is not None
            last = at_step(browser, len(recorded.events))  # it shows the end, now with every hand face up
            assert last["sizes"][recorded.record.hands[-1].winner or 0] == 0  # who played out
            assert browser.find_elements(By.CSS_SELECTOR, "#table .seat .card:not(.back)")
    finally:
        for gated in players.values():
            gated.gate.set()
        worker.stop()
        for bot in bots:
            bot.stop()


def test_a_match_page_is_its_replay_its_live_view_or_a_404(redis_prefix: tuple[redis.Redis, str]) -> None:
    """Recorded: the replay; listed as running (its live feed started): the live view; else a 404."""
    client, prefix = redis_prefix
    for name in BOTS:
        identity.register_bot(client, prefix, name)
    spec = spec_from_dict({"name": "pages", "bots": list(BOTS)})
    tournament_id = lifecycle.create_checked(client, prefix, spec)
    keys = Keys(prefix, tournament_id)
    feed = live.LiveFeed(client, keys, 0, ("ada", "bea"))
    with serving(create_app(client, prefix)) as url:
        code, body = status_of(f"{url}/match/{keys.match_id(0)}")
        assert (code, b"no recorded or running match" in body) == (404, True)
        feed.start()
        page = urllib.request.urlopen(f"{url}/match/{keys.match_id(0)}").read().decode()
        script = page.split('id="viewer-settings" type="application/json">')[1].split("</script>")[0]
        settings = json.loads(script)
        assert settings["mode"] == "live" and settings["bots"] == ["ada", "bea"]
        assert settings["events_url"] == f"/match/{keys.match_id(0)}/events"
        assert f'href="/tournament/{tournament_id}"' in page and 'href="/bot/bea"' in page
        feed.end(recorded=False, reason="aborted")
        assert status_of(f"{url}/match/{keys.match_id(0)}")[0] == 404
