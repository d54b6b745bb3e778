"""What TLS costs: decisions through the match server in plaintext, over its own TLS, and through nginx
terminating TLS in front of it (the configuration docs/deployment.md shows), side by side.

Run: `python bench/tls.py [--seconds S] [--rounds R] [--redis-url URL] [--bots N]`
(needs a Redis, keys under a fresh prefix deleted afterwards, and trustme, from the dev extra, for the
private CA made for the run; nginx is measured when installed).

Each side is a real `uno-arena server` process on loopback, reached by the minimal bots of
bench/protocol.py (they answer at once), every channel built by `uno_arena.v1.channels` with the
client's TLS settings: (p) plaintext, (t) the server's own TLS (`--tls-cert/--tls-key`), (n) nginx with
TLS and `grpc_pass` to a plaintext server. In R rounds, one after the other, each side plays 1 match
at a time (the latency of a decision, answer to next request) and 64 at once (decisions per second);
then the time to connect and say Hello for N bots (a TLS handshake each). The ratios are taken within
a round, against plaintext, and the medians reported:

RESULT tls_latency_ratio=... tls_throughput_ratio=... tls_connect_ratio=... nginx_latency_ratio=...
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import redis

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.protocol import free_port, idle_bots, ours, percentile  # noqa: E402
from uno_arena.records import identity  # noqa: E402
from uno_arena.v1.channels import ClientTLS, channel  # noqa: E402
from uno_arena.workers.queue import delete_prefix  # noqa: E402

NGINX = shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else None)


def wait_ready(address: str, tls: ClientTLS, timeout: float = 20) -> None:
    import grpc

    with channel(address, tls) as ready:
        grpc.channel_ready_future(ready).result(timeout=timeout)


def documented_nginx(port: int, cert: Path, key: Path, upstream: int) -> str:
    """docs/deployment.md's nginx block, with the port, the files and the upstream replaced."""
    text = (ROOT / "docs" / "deployment.md").read_text()
    block = text[text.index("```nginx\n") + len("```nginx\n") :].split("```", 1)[0]
    for documented, ours_ in [("listen 443 ssl http2;", f"listen 127.0.0.1:{port} ssl http2;"),
                              ("/etc/uno-arena/tls/server.pem", str(cert)),
                              ("/etc/uno-arena/tls/server.key", str(key)),
                              ("127.0.0.1:50051;", f"127.0.0.1:{upstream};")]:  # fmt: skip
        block = block.replace(documented, ours_)
    return block


def start_nginx(folder: Path, http: str) -> subprocess.Popen[bytes]:
    assert NGINX is not None
    temp = " ".join(f"{kind}_temp_path {folder}/{kind};" for kind in ("client_body", "proxy", "fastcgi",
                                                                       "uwsgi", "scgi"))  # fmt: skip
    conf = folder / "nginx.conf"
    conf.write_text(f"daemon off;\nmaster_process off;\npid {folder}/nginx.pid;\n"
                    f"error_log {folder}/error.log;\nevents {{ worker_connections 1024; }}\n"
                    f"http {{\n access_log off;\n {temp}\n{http}\n}}\n")  # fmt: skip
    command = [NGINX, "-p", str(folder), "-c", str(conf), "-e", str(folder / "error.log")]
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=3.0, help="time per phase and round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/15")
    parser.add_argument(
        "--bots", type=int, default=200, help="bots connected at once, per side, for the connect time"
    )
    args = parser.parse_args()
    try:
        import trustme
    except ImportError:
        raise SystemExit("bench/tls.py needs trustme (pip install -e '.[dev]')") from None

    folder = Path(tempfile.mkdtemp(prefix="uno-arena-bench-tls-"))
    ca = trustme.CA()
    ca_file, cert, key = folder / "ca.pem", folder / "server.pem", folder / "server.key"
    ca.cert_pem.write_to_path(str(ca_file))
    leaf = ca.issue_cert("127.0.0.1", "localhost")
    cert.write_bytes(b"".join(pem.bytes() for pem in leaf.cert_chain_pems))
    leaf.private_key_pem.write_to_path(str(key))
    trusted = ClientTLS(ca_file=str(ca_file))

    client = redis.Redis.from_url(args.redis_url)
    prefix = f"uno-arena-bench-{uuid.uuid4().hex[:8]}"
    names = [f"m{m}-{i}-{side}" for m in (1, 64) for i in range(m) for side in ("a", "b")]
    idle_names = [f"idle-{i}" for i in range(args.bots)]
    tokens = {n: identity.register_bot(client, prefix, n) for n in names + idle_names}
    control_token = identity.create_control_token(client, prefix)

    processes: list[subprocess.Popen[bytes]] = []
    # side name -> (address clients dial, their TLS, the server process whose CPU counts)
    sides: dict[str, tuple[str, ClientTLS, subprocess.Popen[bytes]]] = {}
    try:
        for side, tls_options in (
            ("plaintext", []),
            ("tls", ["--tls-cert", str(cert), "--tls-key", str(key)]),
        ):
            port = free_port()
            command = [sys.executable, "-m", "uno_arena.cli", "server", "--listen", f"127.0.0.1:{port}",
                       "--redis-url", args.redis_url, "--key-prefix", prefix, *tls_options]  # fmt: skip
            env = {**os.environ, "PYTHONPATH": str(ROOT)}
            process = subprocess.Popen(command, env=env, stderr=subprocess.DEVNULL)
            processes.append(process)
            tls = trusted if tls_options else ClientTLS()
            wait_ready(f"127.0.0.1:{port}", tls)
            sides[side] = (f"127.0.0.1:{port}", tls, process)
        if NGINX is not None:
            port = free_port()
            upstream = int(sides["plaintext"][0].rpartition(":")[2])
            nginx = start_nginx(folder, documented_nginx(port, cert, key, upstream))
            processes.append(nginx)
            wait_ready(f"127.0.0.1:{port}", trusted)
            sides["nginx"] = (f"127.0.0.1:{port}", trusted, sides["plaintext"][2])
        else:
            print("nginx is not installed: measured without it")
        rounds = []
        for number in range(1, args.rounds + 1):
            figures: dict[str, float] = {}
            for side, (address, tls, process) in sides.items():
                latencies, _, _ = asyncio.run(
                    ours(address, control_token, tokens, 1, args.seconds, process.pid, tls)
                )
                _, decisions, _ = asyncio.run(
                    ours(address, control_token, tokens, 64, args.seconds, process.pid, tls)
                )
                figures[f"{side}_p50_us"] = percentile(latencies, 0.5) * 1e6
                figures[f"{side}_per_s_64"] = decisions / args.seconds
                figures[f"{side}_connect_ms"] = (
                    asyncio.run(connect_time(address, tls, tokens, idle_names)) * 1e3
                )
            for side in sides:
                if side != "plaintext":
                    figures[f"{side}_latency_ratio"] = figures[f"{side}_p50_us"] / figures["plaintext_p50_us"]
                    figures[f"{side}_throughput_ratio"] = (
                        figures[f"{side}_per_s_64"] / figures["plaintext_per_s_64"]
                    )
                    figures[f"{side}_connect_ratio"] = (
                        figures[f"{side}_connect_ms"] / figures["plaintext_connect_ms"]
                    )
            print(f"round {number}: " + ", ".join(f"{k} {v:.3g}" for k, v in figures.items()), flush=True)
            rounds.append(figures)
    finally:
        for process in processes:
            process.terminate()
            process.wait()
        delete_prefix(client, prefix)
        shutil.rmtree(folder, ignore_errors=True)
    median = {k: statistics.median(r[k] for r in rounds) for k in rounds[0]}
    shown = [f"{k}={v:.3g}" for k, v in median.items() if k.endswith("_ratio")]
    shown += [f"{k}={v:.0f}" for k, v in median.items() if not k.endswith("_ratio")]
    print(f"RESULT rounds={len(rounds)} bots={args.bots} " + " ".join(shown))


async def connect_time(address: str, tls: ClientTLS, tokens: dict[str, str], names: list[str]) -> float:
    """Seconds for `names` to connect (a channel each: a TCP connection and, with TLS, a handshake) and
    be welcomed."""
    started = time.perf_counter()
    opened, _ = await idle_bots(address, tokens, names, tls)
    took = time.perf_counter() - started
    for each in opened:
        await each.close()  # type: ignore[attr-defined]
    return took


if __name__ == "__main__":
    main()
