"""The tournament index, a tournament's page and a bot's page in Debian's headless chromium: over a real
small tournament (a real match server, a real `uno-arena worker` process, SDK bots, one of them faulty),
and over a tournament whose matches the test records itself, to watch a page update part by part and
stop. Each page's screenshot is saved for docs/web.md."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import redis
from flask import Flask, request
from selenium.common.exceptions import StaleElementReferenceException, TimeoutException
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys as KeyPress
from selenium.webdriver.support.ui import WebDriverWait

from tests.conftest import REDIS_DB, REDIS_HOST, REDIS_PORT, start_server, stop_server
from tests.sdk.runner import BackgroundBot
from tests.server.test_bot_errors import Flaky
from tests.web.browser import browser, horizontal_overflow, narrow_browser, screenshot, serving
from tests.web.test_web import finished_match
from tests.workers.harness import WorkerProcess, wait_until
from uno_arena.leaderboard import board
from uno_arena.records import identity
from uno_arena.records.live import LiveFeed
from uno_arena.records.match import match_records, record
from uno_arena.records.spec import spec_from_dict
from uno_arena.records.tournament import Keys, MatchState, TournamentStatus, load, scheduled_match, set_state
from uno_arena.sdk.examples.greedy_bot import GreedyBot
from uno_arena.sdk.examples.strong_bot import StrongBot
from uno_arena.v1 import control_pb2
from uno_arena.v1 import game_pb2 as pb
from uno_arena.web.app import create_app
from uno_arena.workers import lifecycle
from uno_arena.workers.queue import delete_prefix

__all__ = ["browser", "narrow_browser"]  # fixtures, used by name
BOTS = ("greedy", "strong", "flaky")
WAIT_S = 20


@dataclass(frozen=True, slots=True)
class Played:
    client: redis.Redis
    prefix: str
    tournament_id: str
    bot_errors: int  # flaky's, over the tournament


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Played]:
    """A finished tournament of 6 two-seat matches to 100, played for real; flaky fails every 5th decision."""
    client = redis.Redis(host=REDIS_HOST, port=REDIS_PORT, db=REDIS_DB)
    prefix = f"uno-arena-test-{uuid.uuid4().hex[:12]}"
    server, thread = start_server(client, prefix, keepalive_ms=1000)
    worker = WorkerProcess(prefix, server.control_token, tmp_path_factory.mktemp("pages") / "worker.log")
    flaky = Flaky(every=5)
    bots = {"greedy": GreedyBot(), "strong": StrongBot(), "flaky": flaky}
    running: list[BackgroundBot] = []
    try:
        for name, bot in bots.items():
            running.append(BackgroundBot(bot, server.address, name, server.register(name), max_matches=4))
        for background in running:
            background.wait_connected()
        values = {"name": "cup", "bots": list(BOTS), "cycles": 2, "target": 100, "seed": 5}
        spec = spec_from_dict({**values, "server": server.address, "deadlines": {"wait_for_bots_ms": 5000}})
        tournament_id = lifecycle.create_checked(client, prefix, spec)
        assert lifecycle.start(client, prefix, tournament_id) == 6
        worker.start()
        wait_until(lambda: load(client, prefix, tournament_id).status is TournamentStatus.FINISHED, 120,
                   "the tournament to finish")  # fmt: skip
        stored = lambda: board.load(client, prefix, tournament_id)  # noqa: E731
        wait_until(lambda: (table := stored()) is not None and table.matches == 6, 30, "the stored table")
        yield Played(client, prefix, tournament_id, flaky.failed)
    finally:
        worker.stop()
        for background in running:
            background.stop()
        stop_server(server, thread)
        delete_prefix(client, prefix)
        client.close()


@pytest.fixture(scope="module")
def site(played: Played) -> Iterator[str]:
    with serving(create_app(played.client, played.prefix, refresh=1)) as url:
        yield url


def wait(driver: Any, condition: Any, message: str) -> Any:
    """Until `condition` holds; a part the page replaced between finding and reading it is read again."""
    waiting = WebDriverWait(driver, WAIT_S, ignored_exceptions=(StaleElementReferenceException,))
    return waiting.until(lambda d: condition(d), message)


def rows(driver: Any, table_id: str) -> list[Any]:
    return list(driver.find_elements(By.CSS_SELECTOR, f"#{table_id} tbody tr"))


def whole_page(driver: Any, name: str) -> Path:
    """The screenshot of the whole page: the window made as tall as the page first (same width)."""
    width = driver.get_window_size()["width"]
    height = driver.execute_script("return document.documentElement.scrollHeight")
    driver.set_window_size(width, min(4000, height + 140))  # + the window's own frame
    return screenshot(driver, name)


def one_line(driver: Any, element: Any) -> bool:
    """Whether the element's text is drawn on one line: its content box is lower than two lines."""
    height, line = driver.execute_script(
        "const s = getComputedStyle(arguments[0]);"
        "return [arguments[0].getBoundingClientRect().height - parseFloat(s.paddingTop)"
        " - parseFloat(s.paddingBottom), parseFloat(s.lineHeight)];",
        element,
    )
    return bool(0 < height < 1.5 * line)


def test_the_index_leads_to_a_tournament_page_with_its_spec_standings_and_matches(
    played: Played, site: str, browser: Any
) -> None:
    browser.get(f"{site}/")
    listed = rows(browser, "tournaments")
    assert len(listed) == 1 and "finished" in listed[0].text and "6 / 6" in listed[0].text
    nav = [a.text for a in browser.find_elements(By.CSS_SELECTOR, "header.site nav a")]
    assert nav == ["uno-arena", "tournaments"]  # no link per tournament
    assert {r.find_element(By.CSS_SELECTOR, "a.bot").text for r in rows(browser, "standings")} == set(BOTS)
    assert browser.execute_script("return document.body.dataset.poll") is None  # finished: no polling
    whole_page(browser, "index")

    browser.find_element(By.LINK_TEXT, played.tournament_id).click()
    wait(browser, lambda d: d.find_elements(By.ID, "spec-facts"), "the tournament page")
    spec = browser.find_element(By.ID, "spec-facts").text
    for fact in (
        "2 per table",
        "100 points",
        "2 (6 matches)",
        "official rules",
        "ms, forfeit after 3 strikes",
    ):
        assert fact in spec, spec
    assert browser.find_element(By.ID, "status").text == "finished"
    assert len(rows(browser, "standings")) == 3 and len(rows(browser, "recent")) == 6
    assert len(rows(browser, "head-to-head")) == 3
    records = match_records(played.client, played.prefix, played.tournament_id)
    assert {a.text for a in browser.find_elements(By.CSS_SELECTOR, "#recent tbody td:first-child a")} == {
        r.match_id for r in records}  # fmt: skip
    win_rates = browser.find_elements(By.CSS_SELECTOR, "#standings td.win-rate")
    assert len(win_rates) == 3 and all(one_line(browser, cell) for cell in win_rates)
    assert all("[" in cell.text and "]" in cell.text for cell in win_rates)
    whole_page(browser, "tournament")
    assert browser.execute_script("return typeof window.unoArenaPoll") == "undefined"  # no script at all

    # every bot name is a link to its page
    browser.find_element(By.CSS_SELECTOR, "#head-to-head tbody a.bot[href='/bot/flaky']").click()
    wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "svg.rating-chart"), "flaky's page")
    assert browser.find_element(By.TAG_NAME, "h1").text == "Bot flaky"


def test_a_bot_page_charts_its_rating_and_lists_opponents_faults_and_matches(
    played: Played, site: str, browser: Any
) -> None:
    browser.get(f"{site}/bot/flaky")
    records = [r for r in match_records(played.client, played.prefix, None) if "flaky" in r.bots]
    assert len(records) == 4
    dots = browser.find_elements(By.CSS_SELECTOR, "svg.rating-chart circle.point[data-match]")
    assert sorted(d.get_attribute("data-match") for d in dots) == sorted(r.match_id for r in records)
    tops = [d.rect["y"] for d in dots]
    assert len(set(tops)) > 1  # the rating moved from match to match
    chart = browser.find_element(By.CSS_SELECTOR, "svg.rating-chart").text
    for label in ("rating", "matches played", "mu ± sigma", "ordinal: mu - 3 sigma"):
        assert label in chart, chart

    opponents = {r.find_element(By.CSS_SELECTOR, "a.bot").text: r.text for r in rows(browser, "opponents")}
    assert set(opponents) == {"greedy", "strong"}
    for text in opponents.values():
        assert text.split()[1] == "2" and "[" in text  # two tables each, with the interval
    faults = {r.find_elements(By.TAG_NAME, "td")[0].text: r.find_elements(By.TAG_NAME, "td")[1].text
              for r in rows(browser, "faults")}  # fmt: skip
    assert faults["bot error"] == str(played.bot_errors) and played.bot_errors > 0
    assert faults["timeout"] == "0" and faults["forfeits"] == "0"
    assert len(rows(browser, "bot-matches")) == 4
    win_rate = browser.find_element(By.CSS_SELECTOR, "#bot-facts .win-rate")
    assert one_line(browser, win_rate)
    whole_page(browser, "bot")

    greedy = browser.find_element(By.CSS_SELECTOR, "#opponents a.bot[href='/bot/greedy']")
    greedy.send_keys(KeyPress.ENTER)  # by keyboard, too
    wait(browser, lambda d: d.find_element(By.TAG_NAME, "h1").text == "Bot greedy", "greedy's page")


def test_the_pages_fit_400_px(played: Played, site: str, narrow_browser: Any) -> None:
    for path, name in (("/", "index-narrow"), (f"/tournament/{played.tournament_id}", "tournament-narrow"),
                       ("/bot/strong", "bot-narrow")):  # fmt: skip
        narrow_browser.get(f"{site}{path}")
        wait(narrow_browser, lambda d: d.find_elements(By.TAG_NAME, "h1"), path)
        assert horizontal_overflow(narrow_browser) == 0, path
        nav = narrow_browser.find_element(By.CSS_SELECTOR, "header.site nav")
        assert one_line(narrow_browser, nav), path  # the nav does not wrap
        for cell in narrow_browser.find_elements(By.CSS_SELECTOR, "td.win-rate"):
            assert one_line(narrow_browser, cell), path
        for tick in narrow_browser.find_elements(By.CSS_SELECTOR, "svg.rating-chart text"):
            assert rendered_font_px(narrow_browser, tick) >= 10, tick.text  # readable, not shrunk
        whole_page(narrow_browser, name)


def rendered_font_px(driver: Any, text: Any) -> float:
    """The font size an SVG text is drawn at: its CSS size scaled as its SVG is (viewBox to the page)."""
    size: float = driver.execute_script(
        "const svg = arguments[0].ownerSVGElement;"
        "const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;"
        "return parseFloat(getComputedStyle(arguments[0]).fontSize) * scale;",
        text,
    )
    return size


def test_the_index_fits_1280_px_with_every_house_rule(
    redis_prefix: tuple[redis.Redis, str], browser: Any
) -> None:
    client, prefix = redis_prefix
    bots = [f"house-bot-{n}" for n in range(6)]
    for bot in bots:
        identity.register_bot(client, prefix, bot)
    rules = {"stacking": True, "jump_in": True, "seven_zero": True, "multi_play": True, "hand_size": 5,
             "draw_until_playable": True}  # fmt: skip
    values = {"name": "every-house-rule-and-then-some", "bots": bots, "seats": 4, "rules": rules}
    spec = spec_from_dict(values)
    tournament_id = lifecycle.create_checked(client, prefix, spec)
    with serving(create_app(client, prefix)) as url:
        browser.get(f"{url}/")
        box = browser.find_element(By.CSS_SELECTOR, "div.scroll:has(> table#tournaments)")
        assert browser.execute_script("return arguments[0].scrollWidth - arguments[0].clientWidth;", box) == 0
        assert horizontal_overflow(browser) == 0
        row = next(r for r in rows(browser, "tournaments") if tournament_id in r.text)
        cell = row.find_element(By.CSS_SELECTOR, "td.rules")
        assert cell.text.replace("\n", " ") == (  # all of it, wrapped onto lines of its own cell
            "house rules: stacking, jump_in, seven_zero, multi_play; "
            "options: hand_size=5, draw_until_playable=true"
        )
        assert not one_line(browser, cell)
        screenshot(browser, "index-house-rules")


# --- a page that follows its tournament, part by part, and stops -----------------------------------


class Requests:
    """Counts the app's requests by path (server-side), to tell whether a page still polls."""

    def __init__(self, app: Flask) -> None:
        self.paths: list[str] = []
        app.before_request(lambda: self.paths.append(request.path) and None)

    def to(self, path: str) -> int:
        return self.paths.count(path)


def record_match(client: redis.Redis, prefix: str, tournament_id: str, index: int) -> None:
    keys = Keys(prefix, tournament_id)
    match = scheduled_match(client, prefix, tournament_id, index)
    log = control_pb2.EventLogChunk(events=[pb.Event(hand_started=pb.HandStarted(number=1))])
    assert record(
        client, keys, index, finished_match(keys.match_id(index), match.bots), log.SerializeToString()
    )


def test_a_running_tournaments_page_updates_only_what_changed_and_stops_once_finished(
    redis_prefix: tuple[redis.Redis, str], browser: Any
) -> None:
    client, prefix = redis_prefix
    for bot in ("alpha", "beta", "gamma"):
        identity.register_bot(client, prefix, bot)
    spec = spec_from_dict({"name": "live", "bots": ["alpha", "beta", "gamma"]})
    tournament_id = lifecycle.create_checked(client, prefix, spec)
    assert lifecycle.start(client, prefix, tournament_id) == 3  # queued; no worker: the test plays
    keys = Keys(prefix, tournament_id)
    set_state(client, keys, 0, MatchState.RUNNING)  # what a worker does when it takes the match
    LiveFeed(client, keys, 0, scheduled_match(client, prefix, tournament_id, 0).bots).start()
    app = create_app(client, prefix, refresh=1)
    seen = Requests(app)
    poll = f"/tournament/{tournament_id}"  # the page polls itself: the JSON API holds no HTML
    with serving(app) as url:
        browser.get(f"{url}/tournament/{tournament_id}")
        assert browser.execute_script("return document.body.dataset.poll") == poll
        link = browser.find_element(By.CSS_SELECTOR, "#running a.match")
        assert link.text == keys.match_id(0) and link.get_attribute("href").endswith(
            f"/match/{keys.match_id(0)}"
        )
        wait(browser, lambda d: d.execute_script("return window.unoArenaPoll.polls") >= 1, "a first poll")
        assert browser.execute_script("return window.unoArenaPoll.replaced") == 0  # nothing changed yet
        for part in ("spec", "progress", "standings"):  # marks each part's content, to see what is replaced
            browser.execute_script(
                f"document.getElementById('{part}').firstElementChild.dataset.mark = 'old';"
            )

        record_match(client, prefix, tournament_id, 0)
        wait(
            browser,
            lambda d: "None running now." in d.find_element(By.ID, "running").text,
            "running to empty",
        )
        wait(browser, lambda d: "1 / 3" in d.find_element(By.ID, "progress").text, "the progress")
        wait(browser, lambda d: len(rows(d, "recent")) == 1, "the recent match")
        kept = "return document.getElementById(arguments[0]).firstElementChild.dataset.mark === 'old';"
        assert browser.execute_script(kept, "spec")  # unchanged: left alone
        assert not browser.execute_script(kept, "progress") and not browser.execute_script(kept, "standings")
        assert not browser.execute_script("return window.unoArenaPoll.stopped")

        record_match(client, prefix, tournament_id, 1)
        record_match(client, prefix, tournament_id, 2)
        wait(browser, lambda d: d.find_element(By.ID, "status").text == "finished", "the finished status")
        wait(browser, lambda d: d.execute_script("return window.unoArenaPoll.stopped"), "the polling to stop")
        assert browser.execute_script("return window.unoArenaPoll.timer") is None
        assert browser.find_element(By.ID, "updated").text == "Final: nothing here changes any more."
        assert len(rows(browser, "standings")) == 3
        polled = seen.to(poll)
        with pytest.raises(TimeoutException):  # an observation window of 3 refresh periods, not a sync
            WebDriverWait(browser, 3).until(lambda d: seen.to(poll) > polled)

        browser.get(f"{url}/tournament/{tournament_id}")  # a finished tournament's page never polls
        assert browser.execute_script("return document.body.dataset.poll") is None
        before = seen.to(poll)
        with pytest.raises(TimeoutException):
            WebDriverWait(browser, 3).until(lambda d: seen.to(poll) > before)
    assert before == polled + 1  # the page loaded again, and nothing more
