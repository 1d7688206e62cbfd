"""`sabot serve`: the HTTP API (`api.app`) under uvicorn."""

from __future__ import annotations

import argparse

from api.commands._common import add_database


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("serve", help="run the HTTP API")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on")
    parser.add_argument("--port", type=int, default=8000, help="port to listen on")
    parser.add_argument("--broker", metavar="URL",
                        help="Redis URL for live channels shared by several API processes "
                             "(default: $SABOT_BROKER_URL; in memory when none)")
    add_database(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    import uvicorn

    from api.app import create_app

    app = create_app(args.database, broker_url=args.broker)
    uvicorn.run(app, host=args.host, port=args.port, log_level="info",
                proxy_headers=False, timeout_graceful_shutdown=5)  # live streams never end
    return 0
