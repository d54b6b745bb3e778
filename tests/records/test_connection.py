"""Redis URLs (`uno_arena.records.connection`): checked before connecting, shown without their password,
a password from a file put in, and failures explained. Pure logic: nothing here connects (a TLS and ACL
Redis is tests/test_redis_secured.py's)."""

from __future__ import annotations

from pathlib import Path

import pytest
import redis
from click.testing import CliRunner

from uno_arena.cli.main import cli
from uno_arena.records import connection
from uno_arena.records.connection import RedisUrlError

SECRET = "s3cr:t@/%x"  # characters a URL must percent-encode
ENCODED = "s3cr%3At%40%2F%25x"


def test_redact_hides_the_password_and_a_key_passphrase_and_keeps_the_rest() -> None:
    assert connection.redact(
        f"rediss://uno-worker:{ENCODED}@redis.example:6380/2?ssl_ca_certs=/etc/ca.pem"
    ) == ("rediss://uno-worker:***@redis.example:6380/2?ssl_ca_certs=/etc/ca.pem")
    assert connection.redact(f"redis://:{ENCODED}@h/0") == "redis://:***@h/0"  # requirepass, no user
    assert connection.redact("redis://127.0.0.1:6379/0") == "redis://127.0.0.1:6379/0"
    assert connection.redact("rediss://u@h/0") == "rediss://u@h/0"
    shown = connection.redact(f"rediss://u:p@h/0?ssl_keyfile=/k.pem&ssl_password={ENCODED}")
    assert shown == "rediss://u:***@h/0?ssl_keyfile=/k.pem&ssl_password=***" and "s3cr" not in shown
    assert connection.redact(f"redis://u:{ENCODED}@h:port/0") == "redis://u:***@h:port/0"  # a bad port too
    assert connection.redact(f"redis://u:{ENCODED}@[h/0") == "redis://***"  # unparsable: nothing shown


def test_with_password_puts_a_password_in_whatever_it_holds() -> None:
    for url in (
        "rediss://uno-web@h:6380/1?ssl_cert_reqs=required",
        "rediss://uno-web:old@h:6380/1?ssl_cert_reqs=required",
    ):
        made = connection.with_password(url, SECRET)
        assert made == f"rediss://uno-web:{ENCODED}@h:6380/1?ssl_cert_reqs=required"
        read = connection.options(made)
        assert read["password"] == SECRET and read["username"] == "uno-web"
    assert connection.options(connection.with_password("redis://h/0", SECRET))["password"] == SECRET


def test_options_refuses_a_url_that_cannot_work_saying_why_without_its_password(tmp_path: Path) -> None:
    ca = tmp_path / "ca.pem"
    ca.write_text("not read here")
    assert connection.options(f"rediss://u:{ENCODED}@h:6380/0?ssl_ca_certs={ca}")["ssl_ca_certs"] == str(ca)
    refused = {
        f"http://u:{ENCODED}@h/0": "Redis URL must specify one of the following schemes",
        f"rediss://u:{ENCODED}@h/0?ssl_ca_cert={ca}": "unknown option ssl_ca_cert (the TLS options are",
        f"redis://u:{ENCODED}@h/0?ssl_ca_certs={ca}": "ssl_ca_certs need TLS: the URL must start with rediss://",
        f"rediss://u:{ENCODED}@h/0?ssl_ca_certs={tmp_path}/none.pem": "ssl_ca_certs: no readable file /",
        f"rediss://u:{ENCODED}@h/0?ssl_certfile={tmp_path}": "ssl_certfile: no readable file",
        f"rediss://u:{ENCODED}@h/0?ssl_ca_path={ca}": "ssl_ca_path: no readable folder",
        f"rediss://u:{ENCODED}@h/0?ssl_cert_reqs=always": "ssl_cert_reqs must be one of none, optional,",
    }
    for url, said in refused.items():
        with pytest.raises(RedisUrlError) as error:
            connection.client(url)
        assert said in str(error.value) and "s3cr" not in str(error.value), str(error.value)
        assert "u:***@h" in str(error.value)


def test_address_names_the_scheme_and_the_user_never_the_password(tmp_path: Path) -> None:
    ca = tmp_path / "ca.pem"
    ca.write_text("not read: nothing connects")
    assert connection.address(
        connection.client(f"rediss://uno-web:{ENCODED}@h:6380/3?ssl_ca_certs={ca}")
    ) == ("rediss://uno-web@h:6380/3")
    assert connection.address(connection.client("redis://127.0.0.1:6379/0")) == "redis://127.0.0.1:6379/0"
    assert connection.address(connection.async_client(f"redis://:{ENCODED}@h/1", 2, 1)) == "redis://h:6379/1"


def test_explain_says_what_to_check() -> None:
    cases = {
        redis.AuthenticationError("invalid username-password pair or user is disabled."):
            "Redis refused the user and password: invalid username-password pair",
        redis.AuthenticationError("HELLO must be called with the client already authenticated, ..."):
            "Redis asks who connects: give a user and its password",
        redis.AuthenticationError("Authentication required."): "Redis asks who connects",
        redis.exceptions.NoPermissionError("this user has no permissions to run the 'set' command"):
            "the Redis user may not do this: this user has no permissions to run the 'set' command",
        redis.ConnectionError("Error 1 connecting to h:6380. [SSL: CERTIFICATE_VERIFY_FAILED] certificate "
                              "verify failed: self-signed certificate in certificate chain (_ssl.c:1006)."):
            "Redis's TLS certificate is not trusted",
        redis.ConnectionError("Error 1 connecting to h:6379. [SSL: WRONG_VERSION_NUMBER] wrong version"
                              " number"):
            "TLS to a Redis port that speaks plaintext",
        redis.ConnectionError("Error 8 while writing to socket. EOF occurred in violation of protocol"):
            "does it require a client certificate?",
    }  # fmt: skip
    for error, said in cases.items():
        assert said in connection.explain(error, "rediss://u:p@h/0"), error
    reset = redis.ConnectionError("Error while reading from h:6380 : (104, 'Connection reset by peer')")
    assert "the URL must start with rediss://" in connection.explain(reset, "redis://u:p@h:6380/0")
    assert connection.explain(reset, "rediss://u:p@h:6380/0") == str(reset)  # TLS already: nothing to add
    silent = redis.TimeoutError("Timeout connecting to server")  # TLS to a plaintext port: no answer
    assert "the URL must start with redis://" in connection.explain(silent, "rediss://u:p@h:6379/0")


def test_an_empty_password_file_is_refused_before_connecting(tmp_path: Path) -> None:
    empty = tmp_path / "password"
    empty.write_text("\n")
    result = CliRunner().invoke(cli, ["tournament", "list", "--redis-url", "redis://uno-web@127.0.0.1:1/0",
                                      "--redis-password-file", str(empty)])  # fmt: skip
    assert result.exit_code == 2 and "is empty: its first line must be the password" in result.output
