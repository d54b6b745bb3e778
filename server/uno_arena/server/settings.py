"""Match server settings: limits and deadlines, typed, with documented defaults."""

from __future__ import annotations

from dataclasses import dataclass

from uno_arena.records.pool import DEFAULT_POOL, ENTRY_TTL_MS, HEARTBEAT_MS
from uno_arena.records.spec import Deadlines

DEADLINES = Deadlines()  # the one place the per-match defaults live; a PlayMatch request may set its own


@dataclass(frozen=True, slots=True)
class ServerTLS:
    """The server's TLS: its certificate chain and key (PEM files, re-read when they change, so a renewed
    certificate is served to new connections without a restart), and optionally the CA whose client
    certificates it requires (workers and control clients; a bot may present one too)."""

    cert_file: str
    key_file: str
    client_ca_file: str | None = None  # set: every client must present a certificate this CA signed


@dataclass(frozen=True, slots=True)
class ServerSettings:
    """Everything the server enforces; a PlayMatch request may override the per-match ones.

    Every limit on what a client sends or makes the server hold is here, so no
    bot (or control caller) can grow the server's memory without bound.
    """

    tls: ServerTLS | None = None  # None: plaintext, which `create_server` allows on loopback only ...
    insecure: bool = False  # ... unless this is set (`uno-arena server --insecure`)

    decision_timeout_ms: int = DEADLINES.decision_ms  # time a bot has to answer one decision
    max_message_bytes: int = 4 * 1024 * 1024  # larger messages end the bot's stream
    max_matches_per_bot: int = 64  # cap on what a connection may announce
    max_strikes: int = DEADLINES.max_strikes  # faults in one match before the seat forfeits
    bot_errors_strike: bool = False  # a BOT_ERROR (the bot reports its own code failed) counts a strike
    disconnect_grace_ms: int = (
        DEADLINES.disconnect_grace_ms
    )  # a disconnected bot forfeits if not back by then
    wait_for_bots_ms: int = DEADLINES.wait_for_bots_ms  # PlayMatch waits this long for bots to be connected
    hello_timeout_ms: int = 10_000  # a new stream must say Hello within this
    # HTTP/2 pings to every bot this often, each unanswered this long closes its stream: a bot whose link
    # stops carrying bytes (a blackholed route, a frozen host) is disconnected within 2x this
    keepalive_ms: int = 2_000
    max_id_chars: int = 128  # bot names, tokens, match and request ids a client sends
    max_client_chars: int = 256  # Hello.client, free text for logs
    outbox_max_messages: int = 4096  # messages queued for one bot that does not read; more disconnects it
    outbox_max_bytes: int = 16 * 1024 * 1024  # bytes queued for one bot; more disconnects it
    stray_replies_per_s: float = 10.0  # replies to stray messages (late, duplicate, unknown) per connection
    stray_burst: int = 50  # strays answered at once before the rate above applies
    stray_flood: int = 1000  # strays dropped in one burst that disconnect the bot
    answered_kept: int = 1024  # recently answered request ids per connection: duplicates are ignored
    token_check_ms: int = 2_000  # connected bots' tokens are re-checked this often (replaced, revoked)
    finished_keep_ms: int = 3_600_000  # finished results (with logs) kept for retried PlayMatch calls
    finished_max_bytes: int = 256 * 1024 * 1024  # ... at most this many encoded bytes; oldest go first
    drain_timeout_ms: int = 300_000  # on shutdown, how long running matches may take to finish
    # Failed authentications (a refused Hello, a wrong control token) per peer address (IPv6: per /64):
    # a burst, then this many a second; past it the peer's calls are refused with RESOURCE_EXHAUSTED
    # before any token is checked. Keyed by address, never by bot name: guesses at a bot's name from
    # elsewhere never lock the bot out.
    auth_failure_burst: int = 20
    auth_failures_per_s: float = 1.0
    auth_failure_peers: int = 10_000  # peers remembered (the least recently failed are forgotten first)
    auth_refusal_hold_ms: int = 1_000  # such a refusal is held this long first: a client retrying at once
    auth_refusals_held: int = 1_000  # ... is slowed to one attempt a hold; at most this many held at once
    # Proxies (their addresses) whose `x-forwarded-for` metadata names the client the limits above count
    trusted_proxies: tuple[str, ...] = ()
    max_spectators_per_match: int = 16  # Spectate streams of one match at once; more are refused
    max_spectators: int = 512  # Spectate streams at once, all matches together
    spectator_backlog: int = 1000  # batches waiting for one Spectate stream; a stream further behind ends
    key_prefix: str = "uno-arena"  # Redis key namespace
    # The pool of servers this one registers in (`uno_arena.records.pool`, docs/scale.md): its name, the
    # address workers and bots reach this server at ("": the address it listens on), how often it writes
    # its entry and how long that entry outlives its last heartbeat.
    pool: str = DEFAULT_POOL
    advertise: str = ""
    heartbeat_ms: int = HEARTBEAT_MS
    pool_entry_ttl_ms: int = ENTRY_TTL_MS

    # A Unix socket the server also listens on, in plaintext (a socket is on this machine), mode 0666 like
    # a loopback port: hosted bots reach the server through it alone (`uno-arena runner`, docs/hosting.md)
    unix_socket: str | None = None

    @property
    def dead_link_s(self) -> float:
        """How long after a bot's link stopped carrying bytes the server has closed the bot's stream, at
        most: the next keepalive ping goes out within `keepalive_ms`, and is given `keepalive_ms` to be
        answered; a quarter more for timers and a busy event loop. A decision whose bot has said nothing
        since it was asked waits this long past its deadline for that verdict (`match_host`)."""
        return 2.5 * self.keepalive_ms / 1000
