"""What a checkpoint's fold verifies of the signatures (`infra.store.ledger._Fold`): each
partition's last signature, which signs the partition's digest and so vouches for every event
chained before it; the other signatures' keys must be trusted, and their Ed25519 verification
is `sabot audit verify`'s (issue 39: the fold verified 31 signatures a coup, the most of a
checkpoint's CPU). A last signature that does not hold stops the checkpoint, naming its event.
On SQLite and PostgreSQL."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from domain.game.settings import Variant
from infra.errors import ChainError
from infra.services.tables import TableService
from infra.store import ledger
from infra.store.checkpointer import write_checkpoint
from tests.integration.test_shared_checkpoints import two_writers
from tests.integration.test_table_service import SMALL_SHOE, open_table, play


@pytest.fixture
def writer(database_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[TableService]:
    writers = two_writers(database_url, monkeypatch, 3600)  # checkpoints when asked only
    first, _ = next(writers)
    yield first
    next(writers, None)  # both closed


def signed_heads(service: TableService) -> list[int]:
    database = service.database
    with database.transaction(write=False) as cursor:
        return [row["notification_id"] for row in database.execute(
            cursor, "SELECT notification_id FROM {chain_signatures} ORDER BY notification_id"
        ).fetchall()]


def test_the_fold_verifies_each_partition_s_last_signature_only(
        writer: TableService, monkeypatch: pytest.MonkeyPatch) -> None:
    play(writer, open_table(writer, "folded", Variant.PUNTO_BANCO, players=2, **SMALL_SHOE), 3,
         prefix="folded")
    verified: list[bytes] = []
    check = ledger.signature_valid

    def counted(public: bytes, message: bytes, signature: bytes) -> bool:
        verified.append(message)
        return check(public, message, signature)

    monkeypatch.setattr(ledger, "signature_valid", counted)
    heads = signed_heads(writer)
    assert write_checkpoint(writer) is not None
    assert len(heads) > 10  # many transactions, each signed
    assert len(verified) == 1  # one partition: its last signature


def test_a_last_signature_that_does_not_hold_stops_the_checkpoint(writer: TableService) -> None:
    play(writer, open_table(writer, "forged", Variant.PUNTO_BANCO, players=2, **SMALL_SHOE), 1,
         prefix="forged")
    last = signed_heads(writer)[-1]
    database = writer.database
    with database.transaction(write=True) as cursor:
        database.execute(cursor, "UPDATE {chain_signatures} SET signature = ?"
                         " WHERE notification_id = ?", (os.urandom(64), last))
    with pytest.raises(ChainError, match=f"notification {last} .*does not hold"):
        write_checkpoint(writer)
