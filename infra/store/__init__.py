"""The event store: where events go and how they are kept, each write one transaction.

The recorders (SQLite and PostgreSQL) and the ledger written in the same transaction (the hash
chain, the command log, the signatures, the Merkle tree and its checkpoints), the msgspec
mapper, databases, URLs and migrations, the homes a partition lives in and the routing to
them, the outbox, the directors' leases, live push, and the shoe-seed vault. It imports the
domain (for the aggregates' classes and partitions) and infra's errors and settings, never
the application services, the audit or anything above infra.
"""
