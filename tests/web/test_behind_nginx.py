"""The web view behind a real nginx reverse proxy at /uno/ (Debian's nginx, run as a subprocess on a free
port): Debian's headless chromium follows the site's links from the index to a tournament, a bot, a match
and back, watches a live match's events arrive through the proxy, and every request it made stays under
/uno/ and is answered (no 404, the favicon neither); a proxy that strips its prefix and says so in
X-Forwarded-Prefix gets links under it from an app that trusts it."""

from __future__ import annotations

import contextlib
import re
import shutil
import socket
import subprocess
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from tests.endpoints import status_of
from tests.provision import missing
from tests.web.browser import new_browser, requests_made, serving
from tests.web.test_url_prefix import Site, html_links, site
from tests.web.test_web import recorded
from tests.workers.harness import wait_until
from uno_arena.v1 import game_pb2 as pb
from uno_arena.web.app import create_app

__all__ = ["recorded", "site"]  # fixtures, used by name

NGINX = shutil.which("nginx") or next((p for p in ("/usr/sbin/nginx",) if Path(p).exists()), None)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextlib.contextmanager
def nginx(tmp_path: Path, locations: dict[str, str]) -> Iterator[str]:
    """nginx on a free port, in the foreground, one process, with `locations` (path: its directives);
    its base URL. Skips the test when nginx is not installed."""
    if NGINX is None:
        missing("nginx is not installed (apt-get install nginx)")
    port = free_port()
    served = "\n".join(f"    location {path} {{ {rules} }}" for path, rules in locations.items())
    temp = " ".join(f"{kind}_temp_path {tmp_path}/{kind};" for kind in ("client_body", "proxy", "fastcgi",
                                                                         "uwsgi", "scgi"))  # fmt: skip
    conf = tmp_path / "nginx.conf"
    conf.write_text(f"""daemon off;
master_process off;
pid {tmp_path}/nginx.pid;
error_log {tmp_path}/error.log info;
events {{ worker_connections 64; }}
http {{
  access_log {tmp_path}/access.log;
  {temp}
  server {{
    listen 127.0.0.1:{port};
{served}
    location / {{ return 404; }}
  }}
}}
""")
    command = [NGINX, "-p", str(tmp_path), "-c", str(conf), "-e", str(tmp_path / "error.log")]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_until(lambda: listening(process, port, tmp_path), 10, "nginx to listen")
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(10)


def listening(process: subprocess.Popen[bytes], port: int, folder: Path) -> bool:
    assert process.poll() is None, (folder / "error.log").read_text()  # it exited: why
    with contextlib.suppress(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True
    return False


def proxied(upstream: str, *extra: str) -> str:
    """A location's directives: to the app, unbuffered (event streams), over HTTP/1.1."""
    host = urllib.parse.urlsplit(upstream).netloc
    return " ".join((f"proxy_pass http://{host}{urllib.parse.urlsplit(upstream).path};",
                     "proxy_http_version 1.1;", "proxy_buffering off;", "proxy_set_header Host $http_host;",
                     *extra))  # fmt: skip


def wait_for(driver: Any, condition: Any, what: str, timeout: float = 20) -> Any:
    return WebDriverWait(driver, timeout, 0.05).until(condition, what)


def click_to(driver: Any, css: str, path: str) -> None:
    """Click the first link `css` matches; it must lead to `path`."""
    link = driver.find_element(By.CSS_SELECTOR, css)
    assert urllib.parse.urlsplit(link.get_attribute("href")).path == path, link.get_attribute("href")
    link.click()
    wait_for(driver, lambda d: d.execute_script("return location.pathname") == path, f"the page {path}")
    wait_for(driver, lambda d: d.execute_script("return document.readyState") == "complete", "its load")


def test_a_browser_behind_nginx_stays_under_its_prefix(site: Site, tmp_path: Path) -> None:
    client, prefix = site.client, site.prefix
    live_tournament = site.live_match.rpartition("-m")[0]
    with serving(create_app(client, prefix, url_prefix="/uno")) as app, \
            nginx(tmp_path, {"/uno/": proxied(app)}) as proxy:  # fmt: skip
        driver = new_browser(network_log=True)
        try:
            driver.get(f"{proxy}/uno/")
            assert driver.find_element(By.TAG_NAME, "h1").text == "All tournaments"
            click_to(driver, f'#tournaments a[href$="/{site.finished}"]', f"/uno/tournament/{site.finished}")
            click_to(driver, "#standings a.bot", "/uno/bot/alpha")
            match = driver.find_element(By.CSS_SELECTOR, "#bot-matches a").text
            click_to(driver, "#bot-matches a", f"/uno/match/{match}")
            step = driver.find_element(By.ID, "step-label")
            wait_for(driver, lambda d: re.search(r"step \d", step.text), "the replay")
            for link in driver.find_elements(By.CSS_SELECTOR, "#players a"):  # they escaped before
                assert urllib.parse.urlsplit(link.get_attribute("href")).path == f"/uno/bot/{link.text}"
            click_to(driver, "#tournament-link", f"/uno/tournament/{site.finished}")  # it escaped before
            click_to(driver, "header.site a.home", "/uno/")

            click_to(
                driver, f'#tournaments a[href$="/{live_tournament}"]', f"/uno/tournament/{live_tournament}"
            )
            click_to(driver, "#running-matches a.match", f"/uno/match/{site.live_match}")
            status = driver.find_element(By.ID, "live-status")
            wait_for(driver, lambda d: "1 events" in status.text, "the live events through the proxy")
            site.feed.append(
                [pb.Event(hand_started=pb.HandStarted(number=2))]
            )  # pushed, not buffered by nginx
            wait_for(driver, lambda d: "2 events" in status.text, "an event pushed through the proxy")
            site.feed.end(recorded=False, reason="stopped by the test")
            wait_for(driver, lambda d: "without a result" in status.text, "the end of the stream")

            made = requests_made(driver)
        finally:
            driver.quit()
    paths = [(kind, urllib.parse.urlsplit(url).path, status) for kind, url, status in made
             if not url.startswith(("data:", "about:", "chrome"))]  # fmt: skip
    assert paths and all(path.startswith("/uno/") for _, path, _ in paths), paths
    assert all(status is not None and status < 400 for _, _, status in paths), paths
    kinds = {kind for kind, _, _ in paths}
    assert {"Document", "Stylesheet", "Script", "Fetch", "EventSource"} <= kinds, kinds
    asked = [path for _, path, _ in paths]
    assert f"/uno/match/{site.live_match}/events" in asked and "/uno/static/favicon.svg" in asked


def test_a_proxy_that_strips_its_prefix_says_it_and_a_trusting_app_links_under_it(
    site: Site, tmp_path: Path
) -> None:
    with serving(create_app(site.client, site.prefix, trust_proxy=True)) as trusting, \
            serving(create_app(site.client, site.prefix)) as untrusting, \
            nginx(tmp_path, {"/p/": proxied(trusting + "/", "proxy_set_header X-Forwarded-Prefix /p;"),
                             "/q/": proxied(untrusting + "/", "proxy_set_header X-Forwarded-Prefix /q;")}) \
            as proxy:  # fmt: skip
        code, body = status_of(f"{proxy}/p/tournament/{site.finished}")
        links = html_links(body.decode())
        assert code == 200 and links.urls and all(url.startswith("/p/") for url in links.urls), links.urls
        for url in links.urls:  # each resolves through the proxy
            assert status_of(f"{proxy}{url}")[0] == 200, url
        request = urllib.request.Request(f"{proxy}/p/bot/alpha/", method="GET")
        opener = urllib.request.build_opener(NoRedirect())
        with pytest.raises(urllib.error.HTTPError) as redirected:
            opener.open(request, timeout=10)
        assert (redirected.value.code, redirected.value.headers["Location"]) == (308, "/p/bot/alpha")
        # not trusted: the header is ignored, so its links are the app's own (and miss the proxy's /q/)
        code, body = status_of(f"{proxy}/q/")
        assert code == 200 and all(not url.startswith("/q/") for url in html_links(body.decode()).urls)


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None
