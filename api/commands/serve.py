"""`sabot serve`: the HTTP API (`api.app`) under uvicorn.

On the embedded default (no broker named), it also runs one `sabot worker` on the embedded
broker, whose director plays the tournaments of the store, so that one command on one
machine runs a whole tournament; `--no-worker` leaves that to `sabot worker` processes
started separately (production).

It logs JSON lines to standard error (`workers.logging`): uvicorn's own lines, and one
`http.request` line a request with its request id (`api.request_ids`) in place of uvicorn's
access log.

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
    add_database(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    import uvicorn

    from api.app import create_app
    from infra.store.reachability import check_broker
    from workers.logging import configure_logging

    configure_logging()
    broker = args.broker if args.broker is not None else os.environ.get("SABOT_BROKER_URL", "")
    check_broker(broker)
    listening = listen(args.host, args.port)
    app = create_app(args.database, broker_url=args.broker)
    record(app.state["service"].database, PUBLIC_URL,
           os.environ.get("SABOT_PUBLIC_URL") or base_url(args.host, args.port))
    print(addresses(args.host, args.port), flush=True)
    database = absolute_database_url(resolve_database_url(args.database))
    config = uvicorn.Config(app, log_level="info", proxy_headers=False, log_config=None,
                            access_log=False,  # api.request_ids logs each request
                            timeout_graceful_shutdown=5)  # live streams never end
    with running_worker("", database, HOME / "serve-worker.log") if args.worker and not broker \
            else nullcontext():
        uvicorn.Server(config).run(sockets=[listening])
    return 0


def addresses(host: str, number: int) -> str:
    """What to open: the lobby and big screens, and the organiser's console. On every
    interface (`0.0.0.0`, `::`), this machine's own address; other machines use its name."""
    base = base_url(host, number)
    note = (f" (on this machine; from another, http://{socket.gethostname()}:{number}/)"
            if host in EVERYWHERE else "")
    return (f"sabot serve: open {base}/{note}\n"
            f"sabot serve: the organiser console is {base}/organiser")


def base_url(host: str, number: int) -> str:
    """The address this machine opens `serve` at (on every interface: its loopback)."""
    shown = "127.0.0.1" if host in EVERYWHERE else f"[{host}]" if ":" in host else host
    return f"http://{shown}:{number}"


def listen(host: str, number: int) -> socket.socket:
    """A socket bound to `host:number`; a busy port or an unknown host is one line."""
    try:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        listening = socket.socket(family, socket.SOCK_STREAM)
        listening.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listening.bind((host, number))
    except OSError as error:
        raise OSError(f"cannot listen on {host}:{number}: {error.strerror or error}") from None
    return listening
