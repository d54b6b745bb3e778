"""Bot names are unique without regard to case and punctuation (`Greedy`, `greedy.` ... cannot be registered
beside `greedy`), registrations from before that check keep working, and a revoked name is free again."""

from __future__ import annotations

import asyncio

import pytest
import redis
from click.testing import CliRunner

from tests.conftest import REDIS_URL
from uno_arena.cli.main import cli
from uno_arena.records import identity
from uno_arena.server.app import redis_client

VARIANTS = ["Greedy", "GREEDY", "greedy.", "greedy-", "greedy_", "gree-dy", "G.r_e-e.d.y"]


def register(prefix: str, name: str, *flags: str) -> tuple[int, str]:
    options = ["--redis-url", REDIS_URL, "--key-prefix", prefix]
    result = CliRunner().invoke(cli, ["bot", "register", name, *flags, *options])
    return result.exit_code, result.output


def token_valid(prefix: str, name: str, token: str) -> bool:
    async def check() -> bool:
        client = redis_client(REDIS_URL)
        try:
            return await identity.bot_token_valid(client, prefix, name, token)
        finally:
            await client.aclose()

    return asyncio.run(check())


def test_a_name_that_differs_only_in_case_or_punctuation_is_refused_naming_the_bot(
    redis_prefix: tuple[redis.Redis, str],
) -> None:
    client, prefix = redis_prefix
    identity.register_bot(client, prefix, "greedy")
    for variant in VARIANTS:
        code, output = register(prefix, variant)
        assert code == 1, (variant, output)
        taken = f"bot name {variant!r} is taken: it differs from the registered bot 'greedy' only in case"
        assert taken in output
        with pytest.raises(identity.IdentityError, match="'greedy'"):
            identity.register_bot(client, prefix, variant, replace=True)  # not a way around it either
    assert [bot.name for bot in identity.registered_bots(client, prefix)] == ["greedy"]
    assert register(prefix, "greedy2")[0] == 0  # another name altogether
    assert "already registered" in register(prefix, "greedy")[1]  # the name itself, as before


def test_registrations_from_before_the_check_keep_working_and_block_their_variants(
    redis_prefix: tuple[redis.Redis, str],
) -> None:
    client, prefix = redis_prefix
    tokens = {}
    for name in ("Greedy", "greedy"):  # written as an older version did: no canonical claim
        tokens[name] = "token-of-" + name
        digest = identity.token_digest(tokens[name])
        client.hset(identity.bot_key(prefix, name), mapping={"token_sha256": digest, "created": "1"})
    assert all(token_valid(prefix, name, token) for name, token in tokens.items())
    code, output = register(prefix, "GREEDY")
    assert code == 1 and "differs from the registered bot 'Greedy' only in case" in output
    for name in tokens:  # each may still get a new token
        code, output = register(prefix, name, "--replace")
        assert code == 0, output
        assert token_valid(prefix, name, output.splitlines()[0])


def test_a_revoked_name_frees_its_canonical_form(redis_prefix: tuple[redis.Redis, str]) -> None:
    client, prefix = redis_prefix
    identity.register_bot(client, prefix, "Old_Bot")
    assert client.get(identity.bot_name_key(prefix, "oldbot")) == b"Old_Bot"
    with pytest.raises(identity.IdentityError):
        identity.register_bot(client, prefix, "oldbot")
    assert identity.revoke_bot(client, prefix, "Old_Bot")
    assert not client.exists(identity.bot_name_key(prefix, "oldbot"))
    token = identity.register_bot(client, prefix, "oldbot")
    assert token_valid(prefix, "oldbot", token)
    assert identity.canonical_name("Old_Bot.v-2") == "oldbotv2"
