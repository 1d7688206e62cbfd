"""The fold before a checkpoint holds the stored tree to the latest trusted checkpoint: a store
cut back below it (its last transactions deleted, `merkle_tree` reset to fold them again, by
raw SQL) is never signed into a smaller checkpoint; the writer refuses, naming both sizes.
(A randomised frontier is `test_trust_roots`'s; an altered event, `test_tamper`'s.)"""

from __future__ import annotations

import pytest

from api.cli import main
from infra.store.checkpoints import checkpoint_path, last_checkpoint
from infra.store.opening import open_store
from tests.integration.test_audit import nid_column, sql
from tests.integration.test_tamper import Played, played  # noqa: F401 (a fixture)


def test_a_store_cut_below_its_checkpoint_is_never_checkpointed(
        played: Played, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    with open_store(played.url, create=False) as store:
        path = checkpoint_path(store.database)
    assert path is not None
    covered = last_checkpoint(path)
    assert covered is not None and covered.size == played.count
    heads = [row[0] for row in sql(played.url, "SELECT notification_id FROM chain_signatures"
                                   " ORDER BY notification_id DESC LIMIT 2")]
    cut = heads[1]  # the last transaction goes, every signature before it stays
    nid = nid_column(played.url)
    for table, column in (("stored_events", nid), ("event_chain", "notification_id"),
                          ("chain_signatures", "notification_id")):
        sql(played.url, f"DELETE FROM {table} WHERE {column} > ?", (cut,))
    sql(played.url, "UPDATE merkle_tree SET size = 0, head = 0, frontier = ?, partitions = ''",
        (b"",))
    assert main(["audit", "checkpoint", "--database", played.url]) == 1
    err = capsys.readouterr().err
    assert f"fewer than the checkpoint of {covered.size}" in err, err
    assert last_checkpoint(path) == covered  # nothing smaller signed
