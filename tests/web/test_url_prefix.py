"""The web view under a URL prefix (`uno-arena web --url-prefix /uno`, or a trusted proxy's
X-Forwarded-Prefix): every page, file, JSON document and event stream is served under it, and every
URL a page, its JSON or its scripts' settings hold stays under it (crawled with Flask's test client over
a real Redis); the prefix is checked; every page's favicon resolves and /favicon.ico is no 404."""

from __future__ import annotations

import json
import urllib.parse
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Any

import pytest
import redis
from click.testing import CliRunner
from flask import Flask
from flask.testing import FlaskClient

from tests.web.test_web import recorded  # noqa: F401 (a fixture)
from uno_arena.cli.main import cli
from uno_arena.records import live
from uno_arena.records.spec import spec_from_dict
from uno_arena.records.tournament import Keys, MatchState, scheduled_match, set_state
from uno_arena.v1 import game_pb2 as pb
from uno_arena.web.app import create_app, normal_url_prefix, redis_client
from uno_arena.workers import lifecycle

URL_ATTRIBUTES = ("href", "src", "action", "data-poll", "formaction", "poster")


@dataclass(frozen=True)
class Site:
    """A finished tournament's recorded matches and a running tournament's live match."""

    client: redis.Redis
    prefix: str
    finished: str  # its tournament id
    feed: live.LiveFeed  # the running match's

    @property
    def live_match(self) -> str:
        return self.feed.match_id


@pytest.fixture
def site(recorded: tuple[redis.Redis, str, str]) -> Iterator[Site]:  # noqa: F811 (the fixture)
    client, prefix, finished = recorded
    tournament_id = lifecycle.create_checked(
        client, prefix, spec_from_dict({"name": "now", "bots": ["alpha", "beta"]})
    )
    keys = Keys(prefix, tournament_id)
    set_state(client, keys, 0, MatchState.RUNNING)
    feed = live.LiveFeed(client, keys, 0, scheduled_match(client, prefix, tournament_id, 0).bots)
    feed.start()
    feed.append([pb.Event(hand_started=pb.HandStarted(number=1))])
    yield Site(client, prefix, finished, feed)


class Links(HTMLParser):
    """Every URL an HTML document holds: its elements' URL attributes, and the URLs in the JSON of its
    `<script type="application/json">` (the viewer's settings)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.urls: list[str] = []
        self.icons: list[str] = []
        self._json: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        self.urls += [value for name, value in attrs if name in URL_ATTRIBUTES and value is not None]
        if tag == "link" and "icon" in (values.get("rel") or "").split():
            self.icons.append(values.get("href") or "")
        if tag == "script" and values.get("type") == "application/json":
            self._json = []

    def handle_data(self, data: str) -> None:
        if self._json is not None:
            self._json.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "script" and self._json is not None:
            self.urls += json_urls(json.loads("".join(self._json)))
            self._json = None


def html_links(html: str) -> Links:
    parser = Links()
    parser.feed(html)
    parser.close()
    return parser


def json_urls(value: Any, key: str = "") -> list[str]:
    """The URLs in a JSON document: strings under a key that ends in `url`, strings that look like a path,
    and every URL in the HTML of its page parts."""
    if isinstance(value, dict):
        found = [u for k, v in value.items() for u in json_urls(v, k)]
        if isinstance(value.get("html"), str):  # a page part
            found += html_links(value["html"]).urls
        return found
    if isinstance(value, list):
        return [u for v in value for u in json_urls(v, key)]
    if isinstance(value, str) and (key.endswith("url") or value.startswith(("/", "http:", "https:"))):
        return [value]
    return []


@dataclass
class Crawl:
    """What a crawl saw: each URL fetched with its status, and each page's favicon links."""

    statuses: dict[str, int] = field(default_factory=dict)
    icons: dict[str, list[str]] = field(default_factory=dict)
    urls: set[str] = field(default_factory=set)


def crawl(client: FlaskClient, under: str, request_path: Callable[[str], str] = lambda url: url,
          headers: dict[str, str] | None = None) -> Crawl:  # fmt: skip
    """Every page, file and JSON document reachable from the index at `under/`; fails at the first URL
    (in HTML, JSON or a redirect) that is not under `under/`. `request_path`: the path the app is asked
    for, given the URL a page shows (a proxy that strips the prefix)."""
    seen = Crawl()
    queue = deque([f"{under}/"])
    while queue:
        url = queue.popleft()
        if url in seen.statuses:
            continue
        response = client.get(request_path(url), headers=headers or {})
        try:
            seen.statuses[url] = response.status_code
            kind = response.mimetype
            found: list[str] = []
            if response.status_code in (301, 302, 303, 307, 308):
                found.append(response.headers["Location"])
            elif kind == "text/event-stream":  # only that it answers: the stream goes on while the match does
                continue
            elif kind == "text/html":
                links = html_links(response.get_data(as_text=True))
                found += links.urls
                seen.icons[url] = links.icons
            elif kind == "application/json":
                found += json_urls(response.get_json())
        finally:
            response.close()
        for link in found:
            if link.startswith("#"):  # a step of the same page
                continue
            assert link.startswith(f"{under}/"), f"{url} links {link!r}, outside {under}/"
            seen.urls.add(link)
            queue.append(urllib.parse.urldefrag(link).url)
    return seen


def check_crawl(seen: Crawl, under: str, site: Site) -> None:
    bad = {url: status for url, status in seen.statuses.items() if status != 200}
    assert bad == {f"{under}/match/{site.live_match}.json": 404}, bad  # its replay: once it is recorded
    for expected in (f"{under}/tournament/{site.finished}", f"{under}/bot/alpha",
                     f"{under}/match/{site.finished}-m00000", f"{under}/match/{site.finished}-m00000.json",
                     f"{under}/match/{site.live_match}", f"{under}/match/{site.live_match}/events",
                     f"{under}/static/viewer.js", f"{under}/static/favicon.svg"):  # fmt: skip
        assert expected in seen.statuses, (expected, sorted(seen.statuses))
    assert seen.icons and all(icons == [f"{under}/static/favicon.svg"] for icons in seen.icons.values())


def test_every_url_of_every_page_and_document_stays_under_the_prefix(site: Site) -> None:
    app = create_app(site.client, site.prefix, url_prefix="/uno/")  # the trailing slash: normalised away
    client = app.test_client()
    seen = crawl(client, "/uno")
    check_crawl(seen, "/uno", site)
    # the live page's poll and the tournament's JSON (polled while it runs) are crawled too
    assert any(url.startswith("/uno/api/tournament/") for url in seen.statuses), sorted(seen.statuses)

    # redirects and error pages stay under it too
    for path, target in ((f"/uno/tournament/{site.finished}/", f"/uno/tournament/{site.finished}"),
                         ("/uno//example.com/", "/uno/example.com"), ("/uno", "/uno/"),
                         ("/uno?page=1", "/uno/?page=1"), ("/uno/favicon.ico", "/uno/static/favicon.svg"),
                         ("/uno/api/tournaments/?page=1", "/uno/api/tournaments?page=1")):  # fmt: skip
        response = client.get(path)
        assert (response.status_code, response.headers.get("Location")) == (308, target), path
    error = client.get("/uno/tournament/nope")
    assert error.status_code == 404 and all(u.startswith("/uno/") for u in html_links(error.text).urls)
    assert client.get("/uno/api/tournament/nope").get_json() == {"error": "no tournament 'nope'"}
    for outside in ("/", "/tournament/" + site.finished, "/static/site.css", "/unox/", "/favicon.ico"):
        assert client.get(outside).status_code == 404, outside


def test_a_trusted_proxys_forwarded_prefix_is_the_prefix_of_every_url(site: Site) -> None:
    """A proxy at /p/ that strips it and says so in X-Forwarded-Prefix; with --url-prefix too, the
    app's own prefix follows the proxy's."""
    trusting = create_app(site.client, site.prefix, trust_proxy=True).test_client()
    forwarded = {"X-Forwarded-Prefix": "/p/"}
    seen = crawl(trusting, "/p", lambda url: url.removeprefix("/p"), forwarded)
    check_crawl(seen, "/p", site)
    redirect = trusting.get(f"/tournament/{site.finished}/", headers=forwarded)
    assert redirect.headers["Location"] == f"/p/tournament/{site.finished}"
    both = create_app(site.client, site.prefix, url_prefix="/uno", trust_proxy=True).test_client()
    check_crawl(crawl(both, "/p/uno", lambda url: url.removeprefix("/p"), forwarded), "/p/uno", site)
    # a header that is no plain path is refused, not made into links
    for bad in ("//evil.example", "/a/../b", "/a b", "https://evil.example/"):
        assert trusting.get("/", headers={"X-Forwarded-Prefix": bad}).status_code == 400, bad


def test_an_untrusted_forwarded_prefix_is_ignored(site: Site) -> None:
    client = create_app(site.client, site.prefix).test_client()
    page = client.get("/", headers={"X-Forwarded-Prefix": "/evil"})
    assert page.status_code == 200 and "/evil" not in page.text
    assert all(u.startswith("/") and not u.startswith("/evil") for u in html_links(page.text).urls)


def test_the_unavailable_page_links_under_the_prefix() -> None:
    """While Redis does not answer (here: nothing listens on its port) the 503 page's links stay too."""
    app: Flask = create_app(redis_client("redis://127.0.0.1:1/0"), "x:", url_prefix="/uno")
    page = app.test_client().get("/uno/")
    links = html_links(page.text)
    assert page.status_code == 503 and "not answering" in page.text
    assert links.urls and all(u.startswith("/uno/") for u in links.urls) and links.icons


@pytest.mark.parametrize(
    ("raw", "normal"),
    [("", ""), ("/", ""), ("/uno", "/uno"), ("/uno/", "/uno"), ("/a/b-c_d.e~f", "/a/b-c_d.e~f")],
)
def test_a_prefix_is_normalised(raw: str, normal: str) -> None:
    assert normal_url_prefix(raw) == normal


@pytest.mark.parametrize(
    ("raw", "said"),
    [
        ("uno", "starting with '/'"),
        ("http://x/uno", "starting with '/'"),
        ("//uno", "empty segment"),
        ("/a//b", "empty segment"),
        ("/uno//", "empty segment"),
        ("/a/../b", "'..'"),
        ("/a b", "'a b'"),
        ("/uno?x=1", "'uno?x=1'"),
        ("/%2e%2e", "'%2e%2e'"),
    ],
)
def test_a_bad_prefix_is_refused_saying_why(raw: str, said: str) -> None:
    with pytest.raises(ValueError) as raised:
        normal_url_prefix(raw)
    assert said in str(raised.value)
    result = CliRunner().invoke(cli, ["web", "--url-prefix", raw])
    assert result.exit_code == 2 and "--url-prefix" in result.output and said in result.output, result.output


def test_every_page_has_a_favicon_and_favicon_ico_is_no_404(site: Site) -> None:
    client = create_app(site.client, site.prefix).test_client()
    seen = crawl(client, "")
    check_crawl(seen, "", site)
    icon = client.get("/static/favicon.svg")
    assert icon.status_code == 200 and icon.mimetype == "image/svg+xml" and b"<svg" in icon.data
    response = client.get("/favicon.ico", follow_redirects=True)
    assert response.status_code == 200 and response.mimetype == "image/svg+xml"
    assert client.get("/tournament/nope").text.count('rel="icon"') == 1  # error pages too
