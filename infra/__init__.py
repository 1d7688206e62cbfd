"""Everything the domain does not do: the store, the record's proofs, the application
services.

By layer, lowest first: errors and process settings; the store (`store`: recorders, chain,
ledger, mapper, databases and migrations, homes and routing, outbox, leases, signing,
Merkle tree and checkpoints written with the events, the seed vault); the record's proofs
(`audit`: verify and its checks, proofs, dossiers, exports, the offline checker); the
application services (`services`). infra imports the domain, never `projections`, `workers`
or `api` (the audit rebuilds views through a port the caller passes in).
"""
