"""The record's proofs: `sabot audit verify` and its checks, events with their proofs, coup
dossiers, regulator exports and the offline checker that needs no Sabot.

It reads the store (`infra.store`) and the domain's aggregates; it never imports the
application services or the projections: the views it compares are rebuilt through a port
the caller passes in.
"""
