"""`sabot serve`: the HTTP API (`api.app`) under uvicorn.

On the embedded default (no broker named), it also runs one `sabot worker` on the embedded
broker, whose director plays the tournaments of the store, so that one command on one
machine runs a whole tournament; `--no-worker` leaves that to `sabot worker` processes
started separately (production).

It logs JSON lines to standard error (`workers.logging`): uvicorn's own lines, and one
`http.request` line a request with its request id (`api.request_ids`) in place of uvicorn's
access log.

Behind a reverse proxy, `--forwarded-allow-ips` (else `$SABOT_FORWARDED_ALLOW_IPS`: the
proxy's addresses, comma-separated, `*` for any) has uvicorn take the client's address from
the proxy's `X-Forwarded-For` and the scheme from `X-Forwarded-Proto`, so that the PIN tries and
the live-stream bounds count each client, and the session cookie is `Secure` when the client
came over TLS; with none, those headers are ignored (a client could name any address).
`--ssl-certfile` and `--ssl-keyfile` serve TLS directly, without a proxy.

Before anything starts, the store and the broker must answer and the address must be free:
otherwise one line names what is wrong, and the exit code is 2. Once the address is taken, it
prints (on standard output) the address to open in a browser and the organiser console's.
"""

from __future__ import annotations

import argparse
import os
import socket
from contextlib import nullcontext

from api.commands import SUMMARIES
from api.commands._common import add_database, port
from api.commands.worker import running_worker
from infra.errors import SettingsError
from infra.settings import HOME, absolute_database_url, resolve_database_url
from infra.store.installation import PUBLIC_URL, record

EVERYWHERE = {"0.0.0.0", "::", ""}
"""The hosts that mean every interface."""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("serve", help=SUMMARIES["serve"])
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on")
    parser.add_argument("--port", type=port, default=8000, help="port to listen on (1-65535)")
    parser.add_argument("--broker", metavar="URL",
                        help="Redis URL for live channels shared by several API processes "
                             "(default: $SABOT_BROKER_URL; in memory when none)")
    parser.add_argument("--no-worker", dest="worker", action="store_false",
                        help="do not start the embedded worker and director")
    parser.add_argument("--forwarded-allow-ips", metavar="IPS",
                        default=os.environ.get("SABOT_FORWARDED_ALLOW_IPS", ""),
                        help="the reverse proxy's addresses, comma-separated, whose "
                             "X-Forwarded-For/-Proto are believed (default: "
                             "$SABOT_FORWARDED_ALLOW_IPS; none)")
    parser.add_argument("--ssl-certfile", metavar="PEM", help="serve TLS with this certificate")
    parser.add_argument("--ssl-keyfile", metavar="PEM", help="the certificate's private key")
    add_database(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    import uvicorn

    from api.app import create_app
    from infra.store.reachability import check_broker
    from workers.logging import configure_logging

    configure_logging()
    tls = tls_files(args.ssl_certfile, args.ssl_keyfile)
    broker = args.broker if args.broker is not None else os.environ.get("SABOT_BROKER_URL", "")
    check_broker(broker)
    listening = listen(args.host, args.port)
    app = create_app(args.database, broker_url=args.broker)
    scheme = "https" if tls else "http"
    record(app.state["service"].database, PUBLIC_URL,
           os.environ.get("SABOT_PUBLIC_URL") or base_url(args.host, args.port, scheme))
    print(addresses(args.host, args.port, scheme), flush=True)
    database = absolute_database_url(resolve_database_url(args.database))
    proxies = args.forwarded_allow_ips.strip()
    config = uvicorn.Config(app, log_level="info", proxy_headers=bool(proxies),
                            forwarded_allow_ips=proxies or None, log_config=None,
                            ssl_certfile=tls[0] if tls else None,
                            ssl_keyfile=tls[1] if tls else None,
                            access_log=False,  # api.request_ids logs each request
                            timeout_graceful_shutdown=5)  # live streams never end
    with running_worker("", database, HOME / "serve-worker.log") if args.worker and not broker \
            else nullcontext():
        uvicorn.Server(config).run(sockets=[listening])
    return 0


def tls_files(certfile: str | None, keyfile: str | None) -> tuple[str, str] | None:
    """Both TLS files, readable, or neither; else one line naming what is wrong."""
    if certfile is None and keyfile is None:
        return None
    if certfile is None or keyfile is None:
        raise SettingsError("--ssl-certfile and --ssl-keyfile go together: give both")
    for name, path in (("--ssl-certfile", certfile), ("--ssl-keyfile", keyfile)):
        if not os.access(path, os.R_OK):
            raise SettingsError(f"{name} {path}: no such readable file")
    return certfile, keyfile


def addresses(host: str, number: int, scheme: str = "http") -> str:
    """What to open: the lobby and big screens, and the organiser's console. On every
    interface (`0.0.0.0`, `::`), this machine's own address; other machines use its name."""
    base = base_url(host, number, scheme)
    note = (f" (on this machine; from another, {scheme}://{socket.gethostname()}:{number}/)"
            if host in EVERYWHERE else "")
    return (f"sabot serve: open {base}/{note}\n"
            f"sabot serve: the organiser console is {base}/organiser")


def base_url(host: str, number: int, scheme: str = "http") -> str:
    """The address this machine opens `serve` at (on every interface: its loopback)."""
    shown = "127.0.0.1" if host in EVERYWHERE else f"[{host}]" if ":" in host else host
    return f"{scheme}://{shown}:{number}"


def listen(host: str, number: int) -> socket.socket:
    """A socket bound to `host:number`; a busy port or an unknown host is one line.

    Its protocol named (TCP), not left 0: asyncio turns Nagle's algorithm off only on a
    connection whose socket says TCP, and with it on, an answer's body waited for the ACK
    of its headers, which the client delays up to 40 ms."""
    try:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        listening = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        listening.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listening.bind((host, number))
    except OSError as error:
        raise OSError(f"cannot listen on {host}:{number}: {error.strerror or error}") from None
    return listening
