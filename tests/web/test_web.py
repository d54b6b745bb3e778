"""The web view in headless chromium (Debian's) over a real Redis; the screenshot is read back by OCR.
Unknown and malformed ids are 404s; a tournament id an older version stored never takes the page down."""

from __future__ import annotations

import http.client
import json
import shutil
import struct
import subprocess
import urllib.error
import urllib.parse
import urllib.request
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from tests.endpoints import status_of
from tests.provision import BROWSER_PACKAGES, missing
from tests.records.test_tournament_ids import create_as_an_older_version
from tests.web.browser import serving
from uno_arena.leaderboard import board
from uno_arena.records import identity
from uno_arena.records.match import record
from uno_arena.records.spec import spec_from_dict
from uno_arena.records.tournament import RESERVED_IDS, Keys, TournamentStatus, scheduled_match, set_status
from uno_arena.v1 import control_pb2
from uno_arena.v1 import game_pb2 as pb
from uno_arena.web.app import create_app
from uno_arena.web.pages import PAGE_SIZE
from uno_arena.workers import lifecycle

BOTS = ["alpha", "beta", "gamma"]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
TESSERACT = shutil.which("tesseract")  # reads the screenshot back


def finished_match(match_id: str, bots: tuple[str, ...]) -> control_pb2.FinishedMatch:
    """The earlier name in the alphabet wins 500 to 120, in two hands."""
    winner = bots.index(min(bots))
    totals = [500 if seat == winner else 120 for seat in range(len(bots))]
    hands = [pb.HandEnded(reason=pb.HAND_END_PLAYED_OUT, winner=winner, points=[t // 2 for t in totals])] * 2
    result = pb.MatchResult(match_id=match_id, reason=pb.MATCH_END_TARGET_REACHED, winners=[winner],
                            totals=totals, hands=hands, bots=list(bots), faults=[0] * len(bots))  # fmt: skip
    return control_pb2.FinishedMatch(result=result, event_count=2, seed=7)


@pytest.fixture
def recorded(redis_prefix: tuple[redis.Redis, str]) -> tuple[redis.Redis, str, str]:
    client, prefix = redis_prefix
    for bot in BOTS:
        identity.register_bot(client, prefix, bot)
    spec = spec_from_dict({"name": "web", "bots": BOTS, "cycles": 2})
    tournament_id = lifecycle.create_checked(client, prefix, spec)
    lifecycle.start(client, prefix, tournament_id)
    keys = Keys(prefix, tournament_id)
    log = control_pb2.EventLogChunk(events=[pb.Event(hand_started=pb.HandStarted(number=1)),
                                            pb.Event(hand_ended=pb.HandEnded(points=[1, 0]))])  # fmt: skip
    for index in range(6):
        match = scheduled_match(client, prefix, tournament_id, index)
        finished = finished_match(keys.match_id(index), match.bots)
        assert record(client, keys, index, finished, log.SerializeToString())
    return client, prefix, tournament_id


@pytest.fixture
def web_server(recorded: tuple[redis.Redis, str, str]) -> Iterator[str]:
    client, prefix, _ = recorded
    with serving(create_app(client, prefix, refresh=3)) as url:
        yield url


def chromium(*args: str) -> subprocess.CompletedProcess[bytes]:
    if CHROMIUM is None:
        missing(f"chromium is not installed ({BROWSER_PACKAGES})")
    command = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", *args]
    return subprocess.run(command, capture_output=True, timeout=120, check=True)


def png_size_and_ink(path: Path) -> tuple[int, int, float]:
    """Width, height and the share of non-white bytes in the decoded image data."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    chunks, offset = [], 8
    while offset < len(data):
        length, kind = struct.unpack(">I4s", data[offset : offset + 8])
        if kind == b"IDAT":
            chunks.append(data[offset + 8 : offset + 8 + length])
        offset += 12 + length
    pixels = zlib.decompress(b"".join(chunks))
    return width, height, sum(1 for b in pixels[::7] if b < 200) / len(pixels[::7])


def test_the_page_in_a_browser(
    web_server: str, recorded: tuple[redis.Redis, str, str], tmp_path: Path
) -> None:
    _, _, tournament_id = recorded
    dom = chromium("--dump-dom", f"{web_server}/").stdout.decode()
    standings = dom[dom.index('id="standings"') : dom.index("</table>", dom.index('id="standings"'))]
    assert standings.index("alpha") < standings.index("beta") < standings.index("gamma")  # ranked by results
    assert '<a class="bot" href="/bot/alpha">alpha</a>' in standings  # every bot name links to its page
    assert 'id="tournaments"' in dom and "6 / 6" in dom and "finished" in dom and "official rules" in dom
    assert "data-poll" not in dom and "pages.js" not in dom  # nothing on it can change: no polling
    assert 'http-equiv="refresh"' not in dom  # never reloads itself
    page = chromium("--dump-dom", f"{web_server}/tournament/{tournament_id}").stdout.decode()
    assert 'id="head-to-head"' in page and 'id="recent"' in page and 'id="spec"' in page
    assert f"/match/{tournament_id}-m00000" in page
    nav = page[page.index('<header class="site">') : page.index("</header>")]
    assert "/tournament/" not in nav  # the nav lists no tournament

    screenshot = tmp_path / "leaderboard.png"
    chromium(
        f"--screenshot={screenshot}", "--window-size=1200,1600", f"{web_server}/tournament/{tournament_id}"
    )
    width, height, ink = png_size_and_ink(screenshot)
    assert (width, height) == (1200, 1600)
    assert ink > 0.01  # the tables were drawn, not a blank page
    if TESSERACT is None:
        missing("tesseract is not installed (apt-get install tesseract-ocr)")
    command = [TESSERACT, str(screenshot), "stdout"]
    seen = subprocess.run(command, capture_output=True, timeout=120, check=True)
    text = seen.stdout.decode()
    assert "Standings" in text and "Head to head" in text
    lines = [line.split() for line in text.splitlines()]
    ranked = [w[1] for w in lines if len(w) > 1 and w[0].strip(").|") in ("1", "2", "3") and w[1] in BOTS]
    assert ranked[:3] == BOTS, text  # the table as drawn: alpha, beta, gamma


def test_replay_pages_and_json(web_server: str, recorded: tuple[redis.Redis, str, str]) -> None:
    _, _, tournament_id = recorded
    match_id = f"{tournament_id}-m00000"
    page = urllib.request.urlopen(f"{web_server}/match/{match_id}").read().decode()
    assert "hand 1" in page and "target_reached" in page
    exported = json.loads(urllib.request.urlopen(f"{web_server}/match/{match_id}.json").read())
    assert exported["summary"]["match_id"] == match_id and len(exported["events"]) == 2
    table = json.loads(urllib.request.urlopen(f"{web_server}/api/leaderboard/{tournament_id}").read())
    assert [row["bot"] for row in table["standings"]] == BOTS
    with pytest.raises(urllib.error.HTTPError, match="404"):
        urllib.request.urlopen(f"{web_server}/match/nope")


def test_a_tournaments_rules_show_on_its_page_in_the_list_and_in_its_json(
    recorded: tuple[redis.Redis, str, str],
) -> None:
    client, prefix, official = recorded
    rules = {"stacking": True, "jump_in": True, "seven_zero": True, "multi_play": True, "hand_size": 5}
    spec = spec_from_dict({"name": "house", "bots": BOTS, "seats": 3, "rules": rules})
    house = lifecycle.create_checked(client, prefix, spec)
    said = "house rules: stacking, jump_in, seven_zero, multi_play; options: hand_size=5"
    with serving(create_app(client, prefix)) as url:
        page = urllib.request.urlopen(f"{url}/tournament/{house}").read().decode()
        assert f'<dd id="rules">{said}</dd>' in page
        other = urllib.request.urlopen(f"{url}/tournament/{official}").read().decode()
        assert '<dd id="rules">official rules</dd>' in other
        overview = urllib.request.urlopen(f"{url}/").read().decode()
        assert 'id="rules"' not in overview  # every tournament: no one set of rules
        listed = overview[overview.index('id="tournaments"') :]
        row = listed[listed.index(f'<a href="/tournament/{house}">') :].split("</tr>")[0]
        assert f'<td class="name text rules">{said}</td>' in row  # a cell that wraps
        table = json.loads(urllib.request.urlopen(f"{url}/api/leaderboard/{house}").read())
        assert table["rules"] == {"house_rules": ["stacking", "jump_in", "seven_zero", "multi_play"],
                                  "options": {"hand_size": 5}, "summary": said}  # fmt: skip
        assert table["matches"] == 0 and table["standings"] == []
        everything = json.loads(urllib.request.urlopen(f"{url}/api/leaderboard/{board.ALL}").read())
        assert "rules" not in everything


def test_a_tournament_page_shows_its_spec_and_its_json_is_data_with_every_match_paged(
    web_server: str, recorded: tuple[redis.Redis, str, str]
) -> None:
    _, _, tournament_id = recorded
    page = urllib.request.urlopen(f"{web_server}/tournament/{tournament_id}").read().decode()
    spec = page[page.index('id="spec-facts"') : page.index("</dl>", page.index('id="spec-facts"'))]
    facts = (
        "<dd>2 per table</dd>",
        "<dd>500 points</dd>",
        "<dd>2 (6 matches)</dd>",
        "<dd>1000 ms, forfeit after 3 strikes</dd>",
        '<a class="bot" href="/bot/gamma">gamma</a>',
    )
    for fact in facts:
        assert fact in spec, fact
    assert '<dd id="status">finished</dd>' in page and "None running now." in page
    api = f"/api/tournament/{tournament_id}"
    assert f'<link rel="alternate" type="application/json" href="{api}">' in page
    values = json.loads(urllib.request.urlopen(f"{web_server}{api}").read())
    assert values["live"] is False and values["status"] == "finished" and values["running"] == []
    assert values["progress"]["done"] == values["progress"]["matches"] == 6
    assert values["progress"]["states"]["done"] == 6 and values["spec"]["cycles"] == 2
    assert values["rules"] == "official rules" and values["leaderboard"]["matches"] == 6
    assert [r["bot"] for r in values["leaderboard"]["standings"]] == ["alpha", "beta", "gamma"]
    assert len(values["recent"]) == 6 and all(r["finished_at"] > 0 for r in values["recent"])
    assert "<" not in json.dumps(values)  # data only: no HTML anywhere in it
    first = values["matches"]
    assert (first["offset"], first["limit"], first["total"], first["state"]) == (0, 100, 6, None)
    assert [m["index"] for m in first["items"]] == list(range(6)) and first["next"] is None
    assert first["items"][0]["match_id"] == f"{tournament_id}-m00000" and first["items"][0]["state"] == "done"
    assert first["items"][0]["winners"] == [min(first["items"][0]["bots"])]

    paged, url = [], f"{api}?limit=4"  # every match, a page at a time, by following `next`
    while url is not None:
        page_values = json.loads(urllib.request.urlopen(f"{web_server}{url}").read())["matches"]
        paged += page_values["items"]
        url = page_values["next"]
    assert paged == first["items"]
    done = json.loads(urllib.request.urlopen(f"{web_server}{api}?state=done&offset=5").read())["matches"]
    assert [m["index"] for m in done["items"]] == [5] and done["total"] == 6 and done["state"] == "done"
    bad_pages = (("offset=-1", "offset: expected"), ("limit=0", "limit: expected"),
                 ("limit=1001", "limit: expected"), ("state=over", "state: expected one of"))  # fmt: skip
    for bad, says in bad_pages:
        code, body = status_of(f"{web_server}{api}?{bad}")
        assert code == 400 and json.loads(body)["error"].startswith(says), bad


def test_the_index_pages_tournaments_newest_first(redis_prefix: tuple[redis.Redis, str]) -> None:
    client, prefix = redis_prefix
    for bot in BOTS:
        identity.register_bot(client, prefix, bot)
    made = [lifecycle.create_checked(client, prefix, spec_from_dict({"name": f"cup{i}", "bots": BOTS}))
            for i in range(PAGE_SIZE + 3)]  # fmt: skip
    with serving(create_app(client, prefix)) as url:
        first = urllib.request.urlopen(f"{url}/").read().decode()
        assert first.count('<a href="/tournament/') == PAGE_SIZE
        assert first.index(f'"/tournament/{made[-1]}"') < first.index(f'"/tournament/{made[-2]}"')
        assert f'"/tournament/{made[0]}"' not in first and 'href="/?page=2"' in first
        assert "data-poll" in first  # created tournaments may start: the page keeps up
        second = urllib.request.urlopen(f"{url}/?page=2").read().decode()
        assert second.count('<a href="/tournament/') == 3 and f'"/tournament/{made[0]}"' in second
        assert "page 2 of 2 (23 tournaments, newest first)" in second
        values = json.loads(urllib.request.urlopen(f"{url}/api/tournaments?page=2").read())
        assert [t["id"] for t in values["tournaments"]] == made[2::-1] and values["pages"] == 2
        assert status_of(f"{url}/?page=3")[0] == 404
        for bad in ("0", "-1", "x", "1" * 40):
            code, body = status_of(f"{url}/?page={bad}")
            assert code == 400 and b"page: expected a page number from 1" in body, bad
        code, body = status_of(f"{url}/api/tournaments?page=x")
        assert code == 400 and json.loads(body)["error"].startswith("page: expected")


def test_bot_pages_exist_for_bots_that_played_or_are_registered(
    web_server: str, recorded: tuple[redis.Redis, str, str]
) -> None:
    client, prefix, _ = recorded
    page = urllib.request.urlopen(f"{web_server}/bot/alpha").read().decode()
    assert page.count('class="point"') >= 4  # a dot per match on the chart (the legend has one more)
    values = json.loads(urllib.request.urlopen(f"{web_server}/api/bot/alpha").read())
    assert len(values["rating"]) == 4 and [o["opponent"] for o in values["opponents"]] == ["beta", "gamma"]
    assert values["opponents"][0] == {"opponent": "beta", "tables": 2, "score": 1.0,
                                      "low": values["opponents"][0]["low"], "high": 1.0}  # fmt: skip
    assert values["faults"] == {"timeout": 0, "illegal": 0, "invalid": 0, "disconnected": 0, "bot_error": 0,
                                "forfeits": 0}  # fmt: skip
    identity.register_bot(client, prefix, "newcomer")
    fresh = urllib.request.urlopen(f"{web_server}/bot/newcomer").read().decode()
    assert "none recorded yet" in fresh and "<svg" not in fresh
    for name in ("nobody", "bad:name", "x" * 64, "%2e%2e"):
        code, body = status_of(f"{web_server}/bot/{name}")
        assert code == 404 and b"no bot" in body, name
    code, body = status_of(f"{web_server}/api/bot/nobody")
    assert (code, json.loads(body)) == (404, {"error": "no bot 'nobody'"})


def test_a_bots_recent_matches_are_its_last_20_by_finish_time(redis_prefix: tuple[redis.Redis, str]) -> None:
    """Match ids sort by tournament id: a tournament named `aaa` played after one named `zzz` must still
    list first, and fill the 20 before any of `zzz`'s."""
    client, prefix = redis_prefix
    for bot in BOTS:
        identity.register_bot(client, prefix, bot)
    chunk = control_pb2.EventLogChunk(events=[pb.Event(hand_started=pb.HandStarted(number=1))])
    log = chunk.SerializeToString()
    finished_order = []
    for name in ("zzz", "aaa"):  # zzz finishes first
        spec = spec_from_dict({"name": name, "bots": BOTS, "cycles": 8})
        tournament_id = lifecycle.create_checked(client, prefix, spec, tournament_id=name)
        lifecycle.start(client, prefix, tournament_id)
        keys = Keys(prefix, tournament_id)
        for index in range(24):
            match = scheduled_match(client, prefix, tournament_id, index)
            assert record(client, keys, index, finished_match(keys.match_id(index), match.bots), log)
            if "alpha" in match.bots:
                finished_order.append(keys.match_id(index))
    newest = finished_order[::-1][:20]  # aaa's 16, newest first, then zzz's last 4
    assert newest[0].startswith("aaa-") and newest[-1].startswith("zzz-")
    with serving(create_app(client, prefix)) as url:
        values = json.loads(urllib.request.urlopen(f"{url}/api/bot/alpha").read())
        assert [m["match_id"] for m in values["recent"]] == newest
        page = urllib.request.urlopen(f"{url}/bot/alpha").read().decode()
        listed = page[page.index('id="bot-matches"') :]
        assert [listed.index(f">{match_id}</a>") for match_id in newest] == sorted(
            listed.index(f">{match_id}</a>") for match_id in newest
        )
        assert f">{finished_order[0]}</a>" not in listed  # the oldest is left out
        tournament = json.loads(urllib.request.urlopen(f"{url}/api/tournament/aaa").read())
        assert tournament["recent"][0]["match_id"] == "aaa-m00023"


def test_unknown_and_malformed_ids_are_404s(web_server: str, recorded: tuple[redis.Redis, str, str]) -> None:
    _, _, tournament_id = recorded
    assert status_of(f"{web_server}/api/leaderboard/{tournament_id}")[0] == 200
    assert status_of(f"{web_server}/api/leaderboard/{board.ALL}")[0] == 200
    for scope in ("nope", "web:state", f"{tournament_id}:state"):
        code, body = status_of(f"{web_server}/api/leaderboard/{scope}")
        assert (code, json.loads(body)) == (404, {"error": f"no tournament {scope!r}"})
    for path in ("/tournament/nope", f"/tournament/{tournament_id}:state", "/tournament/all",
                 "/match/nope", "/match/nope.json", f"/match/{tournament_id}-m99999",
                 f"/match/{tournament_id}:state-m00000"):  # fmt: skip
        code, body = status_of(f"{web_server}{path}")
        assert code == 404 and b"no " in body, path
    code, body = status_of(f"{web_server}/match/nope.json")  # a .json document's error is JSON too
    assert (code, json.loads(body)) == (404, {"error": "no recorded match 'nope'"})


def test_the_all_scope_is_no_tournament_id() -> None:
    """`{prefix}:leaderboard:all` holds the overall table: a tournament called `all` would overwrite it."""
    assert board.ALL in RESERVED_IDS


def test_an_id_stored_by_an_older_version_does_not_take_the_page_down(
    redis_prefix: tuple[redis.Redis, str],
) -> None:
    client, prefix = redis_prefix
    create_as_an_older_version(client, prefix, "base")
    create_as_an_older_version(client, prefix, "base:state")  # writes into base's state hash
    client.zadd(f"{prefix}:tournaments", {"gone": 0, "broken": 1})  # listed, without or with a bad record
    client.hset(f"{prefix}:tournament:broken", mapping={"spec": "{", "status": "created"})
    with serving(create_app(client, prefix)) as url:
        code, body = status_of(f"{url}/")
        page = body.decode()
        assert code == 200, page
        assert '<a href="/tournament/base">base</a>' in page and "0 / 3" in page
        assert "base:state" not in page and "gone" not in page
        assert "broken" in page and "unreadable" in page
        assert status_of(f"{url}/tournament/base")[0] == 200
        assert status_of(f"{url}/tournament/base:state")[0] == 404


def test_the_index_polls_while_any_tournament_can_change_its_standings(
    redis_prefix: tuple[redis.Redis, str],
) -> None:
    """Page 2 lists none of the running tournaments, but its overall standings change with them."""
    client, prefix = redis_prefix
    for bot in BOTS:
        identity.register_bot(client, prefix, bot)
    made = [lifecycle.create_checked(client, prefix, spec_from_dict({"name": f"page{i:02}", "bots": BOTS}))
            for i in range(PAGE_SIZE + 1)]  # fmt: skip
    for tournament_id in made:
        set_status(client, Keys(prefix, tournament_id), TournamentStatus.FINISHED)
    newest = Keys(prefix, made[-1])  # on page 1; page 2 lists only the oldest, made[0]
    set_status(client, newest, TournamentStatus.RUNNING)
    with serving(create_app(client, prefix)) as url:
        second = urllib.request.urlopen(f"{url}/?page=2").read().decode()
        assert f'"/tournament/{made[0]}"' in second and f'"/tournament/{made[-1]}"' not in second
        assert 'data-poll="/?page=2"' in second and "Final" not in second  # the page polls itself
        assert json.loads(urllib.request.urlopen(f"{url}/api/tournaments?page=2").read())["live"] is True

        set_status(client, newest, TournamentStatus.CANCELLED)
        client.hset(newest.state, "0", "running")  # cancelled, its match still being played out
        assert json.loads(urllib.request.urlopen(f"{url}/api/tournaments?page=2").read())["live"] is True
        client.hset(newest.state, "0", "done")
        assert json.loads(urllib.request.urlopen(f"{url}/api/tournaments?page=2").read())["live"] is False
        final = urllib.request.urlopen(f"{url}/?page=2").read().decode()
        assert "data-poll" not in final and "Final: nothing here changes any more." in final


def raw_get(url: str) -> tuple[int, str | None, bytes]:
    """(status, Location, body) of `GET url`, redirects not followed."""
    parts = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=10)
    try:
        connection.request("GET", parts.path + (f"?{parts.query}" if parts.query else ""))
        response = connection.getresponse()
        return response.status, response.getheader("Location"), response.read()
    finally:
        connection.close()


def test_errors_are_pages_of_the_site_and_trailing_slashes_are_redirected(
    web_server: str, recorded: tuple[redis.Redis, str, str]
) -> None:
    _, _, tournament_id = recorded
    for path, message in (("/tournament/nope", "no tournament &#39;nope&#39;"), ("/bot/nobody", "no bot"),
                          ("/match/nope", "no "), ("/?page=x", "page: expected a page number from 1"),
                          ("/no/such/page", "The requested URL was not found")):  # fmt: skip
        code, _, body = raw_get(f"{web_server}{path}")
        page = body.decode()
        assert code in (400, 404) and message in page, (path, page)
        assert '<header class="site">' in page and '<a href="/" id="back">' in page, path  # the site's bar
        assert '<link rel="stylesheet" href="/static/site.css">' in page
    code, _, body = raw_get(f"{web_server}/api/tournament/nope")  # the JSON API's errors stay JSON
    assert (code, json.loads(body)) == (404, {"error": "no tournament 'nope'"})

    for path, target in ((f"/tournament/{tournament_id}/", f"/tournament/{tournament_id}"),
                         ("/bot/alpha//", "/bot/alpha"),
                         ("/api/tournaments/?page=1", "/api/tournaments?page=1"),
                         ("//example.com/", "/example.com")):  # fmt: skip  # never off the site
        code, location, _ = raw_get(f"{web_server}{path}")
        assert (code, location) == (308, target), path
    page = urllib.request.urlopen(f"{web_server}/tournament/{tournament_id}/").read().decode()  # followed
    assert f"<h1>Tournament {tournament_id}</h1>" in page
    assert raw_get(f"{web_server}/tournament/nope/")[0] == 308  # then the 404 page, like any unknown id
