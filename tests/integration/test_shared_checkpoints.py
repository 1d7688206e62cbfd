"""Writers of one store share their checkpoint file: each checkpoint extends the last one any
of them wrote, so a writer folds the events since that one, not since its own (the work of
checkpointing is done once, issue 36), and a checkpoint already written is not written twice.
What a writer extends must be signed by a key it trusts: a line forged into the file without
the key stops the checkpoint, naming the line."""

from __future__ import annotations

from collections.abc import Iterator

import msgspec
import pytest

from api.cli import main
from domain.game.settings import Variant
from infra.errors import ChainError
from infra.services.tables import TableService
from infra.store import checkpointer as module
from infra.store.checkpointer import write_checkpoint
from infra.store.checkpoints import append_line, checkpoint_path, checkpoints, read_lines
from tests.integration.test_table_service import SMALL_SHOE, a_service, open_table, play


def two_writers(database_url: str, monkeypatch: pytest.MonkeyPatch, seconds: float
                ) -> Iterator[tuple[TableService, TableService]]:
    """Two writers of one store, in this process, checkpointing every `seconds`."""
    monkeypatch.setenv("SABOT_CHECKPOINT_SECONDS", str(seconds))
    first, second = a_service(database_url), a_service(database_url)
    yield first, second
    first.close()
    second.close()


@pytest.fixture
def writers(database_url: str, monkeypatch: pytest.MonkeyPatch
            ) -> Iterator[tuple[TableService, TableService]]:
    yield from two_writers(database_url, monkeypatch, 3600)  # only the checkpoints asked for


def folded(monkeypatch: pytest.MonkeyPatch, writers: tuple[TableService, ...]) -> list[int]:
    """The events each checkpoint of `writers` re-reads from the store to check the stored
    tree (not another test's writer, left in this process, folding its own store)."""
    counts: list[int] = []
    read = module.leaves_after
    databases = [writer.recorder.database for writer in writers]

    def counted(database: object, head: int, count: int) -> list[bytes]:
        if any(database is mine for mine in databases):
            counts.append(count)
        return read(database, head, count)  # type: ignore[arg-type]

    monkeypatch.setattr(module, "leaves_after", counted)
    return counts


def test_a_writer_extends_the_last_checkpoint_another_wrote(
        writers: tuple[TableService, TableService], monkeypatch: pytest.MonkeyPatch) -> None:
    first, second = writers
    play(second, open_table(second, "second", Variant.PUNTO_BANCO, players=2,
                            **SMALL_SHOE), 2, prefix="second")
    own = write_checkpoint(second)
    assert own is not None
    play(first, open_table(first, "first", Variant.PUNTO_BANCO, players=2,
                           **SMALL_SHOE), 3, prefix="first")
    by_first = write_checkpoint(first)
    assert by_first is not None and by_first.size > own.size
    counts = folded(monkeypatch, writers)

    assert write_checkpoint(second) is None  # the first's checkpoint covers it all already
    path = checkpoint_path(second.recorder.database)
    assert path is not None
    sizes = [c.size for c in checkpoints(read_lines(path))]
    assert len(sizes) == len(set(sizes)), sizes  # no size checkpointed twice

    play(second, open_table(second, "later", Variant.PUNTO_BANCO, players=2,
                            **SMALL_SHOE), 1, prefix="later")
    latest = write_checkpoint(second)
    assert latest is not None
    # folded from the first's checkpoint on, not from the second's own (older) one
    assert counts == [0, latest.size - by_first.size], (counts, own.size, by_first.size)


def test_a_checkpoint_forged_into_the_file_is_never_extended(
        writers: tuple[TableService, TableService], database_url: str) -> None:
    first, second = writers
    play(first, open_table(first, "first", Variant.PUNTO_BANCO, players=2,
                           **SMALL_SHOE), 2, prefix="first")
    real = write_checkpoint(first)
    assert real is not None
    path = checkpoint_path(first.recorder.database)
    assert path is not None
    # the insider has the file and the operator's public key, not the private one: a bigger
    # tree under the operator's key id, its signature bytes made up
    forged = msgspec.structs.replace(real, size=real.size + 5, signature="00" * 64)
    append_line(path, forged)
    play(second, open_table(second, "second", Variant.PUNTO_BANCO, players=2,
                            **SMALL_SHOE), 1, prefix="second")
    with pytest.raises(ChainError, match=f"size {forged.size} .* not validly signed"):
        second.recorder.write_checkpoint()
    assert main(["audit", "checkpoint", "--database", database_url]) == 1
