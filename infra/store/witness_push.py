"""A writer pushes each checkpoint it writes to the witnesses configured (`SABOT_WITNESSES`:
their URL and verifier key), as C2SP tlog-witness's `add-checkpoint` (`infra.store.
tlog_witness`), and keeps their co-signatures beside the checkpoint, in the checkpoint file.

Pushing never holds up writing: a thread of the writer's sends the latest checkpoint to each
witness that has not co-signed it. A witness that cannot be reached, or refuses, is logged
and tried again `retry` seconds later (with the latest checkpoint then); a 409 says which
size the witness co-signed last, and the push is made again with the consistency proof from
there (a witness that co-signed a larger tree already, pushed by another writer, is left
alone). When the writer closes, a last push is tried, each witness given `timeout` seconds.

A co-signature is kept only if it verifies by the witness's configured key on the
checkpoint's note (`Cosignature.valid_for`).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import NamedTuple

from infra.errors import SettingsError
from infra.settings import witnesses
from infra.store.checkpoints import (
    Checkpoint,
    Cosignature,
    append_line,
    checkpoints,
    leaves_after,
    read_lines,
)
from infra.store.database import Database
from infra.store.merkle import Frontier, consistency_proof
from infra.store.notes import CosignatureVerifier, MalformedNote, parse_note, parse_vkey
from infra.store.signing import key_id
from infra.store.tlog_witness import SIZE_TYPE, AddCheckpoint, send

RETRY_SECONDS = 5.0
TIMEOUT_SECONDS = 5.0

log = logging.getLogger("sabot.witnesses")


class Witness(NamedTuple):
    """A witness a writer pushes to: its submission URL and its co-signing key."""

    url: str
    key: CosignatureVerifier


def configured(environ: Mapping[str, str] | None = None) -> list[Witness]:
    """The witnesses of `SABOT_WITNESSES` (`SettingsError` naming a key that is not a
    witness's co-signing key)."""
    found = []
    for url, vkey in witnesses(environ):
        try:
            key = parse_vkey(vkey)
        except MalformedNote as error:
            raise SettingsError(f"SABOT_WITNESSES: {error}") from None
        if not isinstance(key, CosignatureVerifier):
            raise SettingsError(f"SABOT_WITNESSES: {vkey[:60]!r} is not a witness's "
                                "co-signing key (type 0x04)")
        found.append(Witness(url, key))
    return found


def consistency(database: Database, path: Path, old: int, checkpoint: Checkpoint
                ) -> list[bytes]:
    """RFC 9162's consistency proof from size `old` to `checkpoint`, from the frontier of the
    file's checkpoint of size `old` (else the store's first `old` events) and the store's
    events after it."""
    if old in (0, checkpoint.size):
        return []
    earlier = next((c for c in reversed(checkpoints(read_lines(path)))
                    if c.size == old and c.frontier), None)
    if earlier is not None:
        return consistency_proof(earlier.tree(), leaves_after(database, earlier.head,
                                                              checkpoint.size - old))
    leaves = leaves_after(database, 0, checkpoint.size)
    tree = Frontier()
    for leaf in leaves[:old]:
        tree.append(leaf)
    return consistency_proof(tree, leaves[old:])


class Pusher:
    """Pushes one writer's checkpoints to its witnesses, from a thread of its own."""

    def __init__(self, database: Database, path: Path, to: list[Witness],
                 retry: float = RETRY_SECONDS, timeout: float = TIMEOUT_SECONDS) -> None:
        self.database = database
        self.path = path
        self.witnesses = to
        self.retry = retry
        self.timeout = timeout
        self._old = dict.fromkeys((w.url for w in to), 0)  # what each co-signed, as last said
        self._latest: Checkpoint | None = None
        self._changed = threading.Condition()
        self._closed = False
        self._thread: threading.Thread | None = None

    def checkpointed(self, checkpoint: Checkpoint) -> None:
        """A checkpoint was written: push it, soon, from the pusher's thread."""
        with self._changed:
            self._latest = checkpoint
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="sabot-witness-push",
                                                daemon=True)
                self._thread.start()
            self._changed.notify()

    def close(self) -> None:
        """Stop the thread, then one last push of the latest checkpoint."""
        with self._changed:
            self._closed = True
            self._changed.notify()
            thread = self._thread
        if thread is not None:
            thread.join()
        self.push()

    def _run(self) -> None:
        while True:
            with self._changed:
                if self._closed:
                    return
            if self.push():
                with self._changed:  # every witness co-signed it: wait for the next one
                    while not self._closed and self._done(self._latest):
                        self._changed.wait()
            else:
                with self._changed:
                    self._changed.wait(self.retry)

    def _done(self, checkpoint: Checkpoint | None) -> bool:
        return checkpoint is None or all(self._old[w.url] >= checkpoint.size
                                         for w in self.witnesses)

    def push(self) -> bool:
        """Push the latest checkpoint to each witness that has not co-signed it: whether all
        have now."""
        checkpoint = self._latest
        if checkpoint is None or not checkpoint.note:
            return True
        for witness in self.witnesses:
            if self._old[witness.url] >= checkpoint.size:
                continue
            try:
                self._push(witness, checkpoint)
            except Exception as error:  # said and tried again: never the writer's failure
                log.warning("checkpoint %d not co-signed by witness %s (%s): %s; tried again "
                            "in %.0f s", checkpoint.size, witness.key.name, witness.url,
                            error, self.retry)
        return self._done(checkpoint)

    def _push(self, witness: Witness, checkpoint: Checkpoint) -> None:
        for _ in range(2):  # a 409 says the witness's size: once more from there
            old = self._old[witness.url]
            proof = consistency(self.database, self.path, old, checkpoint)
            answer = send(witness.url, AddCheckpoint(old, proof, checkpoint.note),
                          self.timeout)
            if answer.status == 409 and answer.media_type == SIZE_TYPE:
                self._old[witness.url] = int(answer.body.strip())
                if self._old[witness.url] > checkpoint.size:
                    return  # it co-signed a larger tree already (another writer's push)
                continue
            break
        if answer.status != 200:
            raise ValueError(f"it answered {answer.status}: {answer.body.strip()[:200]}")
        public = witness.key.public_key
        lines = [line for line in answer.body.splitlines() if line.strip()]
        for line in lines:
            cosignature = Cosignature(
                witness=key_id(public), public_key=public.hex(), size=checkpoint.size,
                root=checkpoint.root, time=checkpoint.time, signature="",
                signed_at=datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
                note_signature=line)
            if _names(line, witness.key) and cosignature.valid_for(checkpoint):
                append_line(self.path, cosignature)
                self._old[witness.url] = checkpoint.size
                return
        raise ValueError("its answer holds no valid co-signature by its key")


def _names(line: str, key: CosignatureVerifier) -> bool:
    """Whether a signature line is by `key` (its name and key hash)."""
    try:
        (signature,) = parse_note(f"x\n\n{line}\n").signatures
    except (MalformedNote, ValueError):
        return False
    return (signature.name, signature.key_hash) == (key.name, key.key_hash)
