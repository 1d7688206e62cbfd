"""The rules of baccara and the aggregates that decide, without I/O.

By concept: the card game (`game`: cards, hands, the coup, drawing tables, payouts and
commission, the shoe, the variants and their rule objects, odds, banker strategies), one table
(`table`), a tournament (`tournament`), the bank auction (`auction`), the dispute
(`dispute`) and the house bots (`bots`), over a few shared words (`errors`, `limits`,
`actors`, the base `commands`, the record's `topics`). The domain imports nothing of
`infra`, `projections`, `workers` or `api`; inside it, each concept imports only those below
it (tests/unit/test_layering.py keeps the order).
"""
