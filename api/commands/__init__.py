"""Subcommands of the `sabot` command line, one a module, and the one-line summary of each.

The summaries live here, not in the modules, so that `sabot --help` lists every command
without importing any of them (`api.cli` builds in full only the command it runs).
"""

SUMMARIES: dict[str, str] = {
    "auctions": "every bank held and how it ended",
    "audit": "check the integrity of the event store",
    "db": "the store's schema: its version, and upgrading it",
    "demo": "a whole bot tournament, start to finish",
    "dispute": "contest a coup; its replay gives a verdict",
    "keys": "create signing keys",
    "odds": "exact odds and house edges by full enumeration of the shoe",
    "play": "bots play a table through the store",
    "projections": "run, rebuild and inspect the read views",
    "recall": "a table's last coups, step by step",
    "rotation": "who holds the shoe and where it goes next",
    "serve": "run the HTTP API",
    "standings": "a tournament's (or a table's) standings",
    "token": "API bearer tokens",
    "tournament": "create, fill, start and follow tournaments (the organiser's commands)",
    "worker": "run a worker: decision deadlines, audits",
}
