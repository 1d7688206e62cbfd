"""Signed tree heads ("checkpoints"), kept outside the database in an append-only file.

A checkpoint says: the store held `size` events, the last at notification `head`, whose
partition's chain digest was `chain` and whose Merkle tree (`infra.store.merkle`) has root `root`,
at `time`, and each partition held `size` events up to notification `head` with chain digest
`chain` there; signed by the store's key (`infra.store.signing`) over

    "sabot-checkpoint-v1\\n" || size \\n root \\n head \\n chain \\n time \\n
        || for each partition, by key: "partition " key " " size " " head " " chain \\n

It also carries the tree's frontier (the roots of its perfect subtrees), so that a later
verify or witness can continue the tree from it (`--since`) without rereading the events
before; the frontier is checked against the signed root before use.

A witness (another party, with its own Ed25519 key) co-signs a checkpoint after checking
that it extends the last one it co-signed (an RFC 9162 consistency proof): `sabot audit
witness`. A co-signature signs "sabot-witness-v1\\n" || the same text.

The file is JSON lines, one checkpoint or co-signature a line, appended under an exclusive
`flock`. Where it is:

| store                        | checkpoint file                                           |
|------------------------------|-----------------------------------------------------------|
| `SABOT_CHECKPOINTS` is set   | that path                                                 |
| SQLite file `PATH`           | `PATH.checkpoints`                                        |
| PostgreSQL                   | `.sabot/checkpoints/DBNAME.SCHEMA.checkpoints`            |
| `sqlite:///:memory:`         | none                                                      |

When they are written: by every process that writes events, at most
`SABOT_CHECKPOINT_SECONDS` (default 10) after a write, when its store is closed explicitly
(and at exit; never by the garbage collector), and on demand: `write_checkpoint(app_or_store)`
(e.g. at the end of a round). A checkpoint waits for the writers in flight at most
`SABOT_WRITERS_WAIT_SECONDS` (`infra.store.ledger.committed_head`); past that it is skipped,
logged, and tried again `SABOT_CHECKPOINT_SECONDS` later. The fold before each
(`infra.store.ledger.advance_tree`) accepts only the signatures of the writer's trusted keys
(`writer_trust`), and the tree it folded must extend the file's latest checkpoint by the
store's events (a stored frontier altered is refused); when it refuses (the store was
altered), the checkpoint is not written and the writer logs an error.
"""

from __future__ import annotations

import atexit
import fcntl
import logging
import os
import threading
import weakref
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple, Protocol

import msgspec

from infra.errors import ChainError, SettingsError, WritersInFlight
from infra.store.database import Database, PostgresDatabase, SQLiteDatabase
from infra.store.ledger import PartitionHeads, advance_tree, select_events
from infra.store.merkle import (
    Frontier,
    consistency_proof,
    event_leaf,
    inclusion_proof,
    verify_consistency,
    verify_inclusion,
)
from infra.store.signing import HOME, Signer, key_id, signature_valid
from infra.store.trust import configured_keys

CHECKPOINT_PREFIX = b"sabot-checkpoint-v1\n"
WITNESS_PREFIX = b"sabot-witness-v1\n"
SUFFIX = ".checkpoints"
DEFAULT_SECONDS = 10.0
TAIL_BYTES = 1 << 16

log = logging.getLogger("sabot.checkpoints")


class PartitionHead(msgspec.Struct, frozen=True):
    """A partition (`infra.store.partitions`) at a checkpoint: its events, its last notification id
    and its chain digest there (hex)."""

    key: str
    size: int
    head: int
    chain: str


class Checkpoint(msgspec.Struct, frozen=True, kw_only=True, tag="checkpoint", tag_field="kind"):
    size: int
    root: str
    head: int
    chain: str
    time: str
    key: str
    public_key: str
    signature: str
    frontier: list[str] = msgspec.field(default_factory=list)
    partitions: list[PartitionHead] = msgspec.field(default_factory=list)

    def text(self) -> bytes:
        """What is signed; a checkpoint of before partitions lists none."""
        return (f"{self.size}\n{self.root}\n{self.head}\n{self.chain}\n{self.time}\n"
                + "".join(f"partition {p.key} {p.size} {p.head} {p.chain}\n"
                          for p in self.partitions)).encode()

    def signed_by_its_key(self) -> bool:
        public = bytes.fromhex(self.public_key)
        return key_id(public) == self.key and signature_valid(
            public, CHECKPOINT_PREFIX + self.text(), bytes.fromhex(self.signature)
        )

    def tree(self) -> Frontier:
        """The frontier it carries, if it folds to its root (`ValueError` otherwise)."""
        tree = Frontier(self.size, [bytes.fromhex(node) for node in self.frontier])
        if tree.root().hex() != self.root:
            raise ValueError(f"the frontier of checkpoint {self.size} does not fold to its root")
        return tree

    def fingerprint(self) -> str:
        """A short form for people to compare (the big screen): size and the root's start."""
        return f"#{self.size} {' '.join(self.root[i:i + 4] for i in range(0, 16, 4))}"


class Cosignature(msgspec.Struct, frozen=True, kw_only=True, tag="witness", tag_field="kind"):
    witness: str
    public_key: str
    size: int
    root: str
    time: str
    signature: str
    signed_at: str

    def valid_for(self, checkpoint: Checkpoint) -> bool:
        public = bytes.fromhex(self.public_key)
        return key_id(public) == self.witness and signature_valid(
            public, WITNESS_PREFIX + checkpoint.text(), bytes.fromhex(self.signature)
        )


Line = Checkpoint | Cosignature
_decoder = msgspec.json.Decoder(Line)


def checkpoint_path(database: Database, environ: Mapping[str, str] | None = None) -> Path | None:
    """The checkpoint file of the store behind `database` (None: an in-memory store)."""
    env = os.environ if environ is None else environ
    if env.get("SABOT_CHECKPOINTS"):
        return Path(env["SABOT_CHECKPOINTS"])
    if isinstance(database, SQLiteDatabase):
        name = str(database.datastore.pool.db_name)
        if name.startswith("file:") or name == ":memory:":
            return None
        return Path(name + SUFFIX)
    assert isinstance(database, PostgresDatabase)
    kwargs = database.datastore.pool.kwargs
    dbname = kwargs["dbname"] if isinstance(kwargs, dict) else "postgres"
    return HOME / "checkpoints" / f"{dbname}.{database.datastore.schema}{SUFFIX}"


def interval(environ: Mapping[str, str] | None = None) -> float:
    env = os.environ if environ is None else environ
    text = env.get("SABOT_CHECKPOINT_SECONDS", "")
    try:
        seconds = float(text) if text else DEFAULT_SECONDS
    except ValueError:
        raise SettingsError(f"SABOT_CHECKPOINT_SECONDS must be a number, not {text!r}") from None
    if seconds <= 0:
        raise SettingsError("SABOT_CHECKPOINT_SECONDS must be positive")
    return seconds


def read_lines(path: Path) -> list[Line]:
    """Every line of a checkpoint file, in file order ([] when there is no file)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return []
    lines: list[Line] = []
    for number, text in enumerate(data.splitlines(), start=1):
        if not text.strip():
            continue
        try:
            lines.append(_decoder.decode(text))
        except msgspec.DecodeError as error:
            raise ValueError(f"{path}, line {number}: not a checkpoint ({error})") from None
    return lines


def checkpoints(lines: list[Line]) -> list[Checkpoint]:
    return [line for line in lines if isinstance(line, Checkpoint)]


def append_line(path: Path, line: Line) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = msgspec.json.encode(line) + b"\n"
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)


def last_checkpoint(path: Path) -> Checkpoint | None:
    """The last checkpoint line of the file, reading only its end."""
    try:
        with path.open("rb") as file:
            file.seek(max(0, path.stat().st_size - TAIL_BYTES))
            tail = file.read()
    except FileNotFoundError:
        return None
    for text in reversed(tail.splitlines()[1:] if len(tail) == TAIL_BYTES else tail.splitlines()):
        try:
            line = _decoder.decode(text)
        except msgspec.DecodeError:
            continue
        if isinstance(line, Checkpoint):
            return line
    return None


class TreeHead(NamedTuple):
    """The store's Merkle tree, its last notification id and the chain's digest there, and
    each partition's head."""

    tree: Frontier
    head: int
    chain: bytes
    partitions: PartitionHeads


def tree_head(database: Database, trusted: Mapping[str, bytes]) -> TreeHead:
    """The store's Merkle tree and chain head now, the events committed since folded in (their
    signatures checked against the `trusted` keys, by key id)."""
    return TreeHead(*advance_tree(database, trusted))


def writer_trust(signer: Signer, path: Path | None) -> dict[str, bytes]:
    """The keys a writer's fold trusts (`infra.store.trust`): its own, those of
    `SABOT_TRUSTED_KEYS`, and the key of the latest validly signed checkpoint of its file."""
    trusted = {**configured_keys(), signer.key_id: signer.public_key}
    latest = last_checkpoint(path) if path is not None else None
    if latest is not None and latest.signed_by_its_key():
        trusted.setdefault(latest.key, bytes.fromhex(latest.public_key))
    return trusted


def sign_checkpoint(head: TreeHead, signer: Signer, at: datetime | None = None) -> Checkpoint:
    when = (at or datetime.now(UTC)).astimezone(UTC).isoformat(timespec="milliseconds")
    unsigned = Checkpoint(
        size=head.tree.size, root=head.tree.root().hex(), head=head.head, chain=head.chain.hex(),
        time=when.replace("+00:00", "Z"), key=signer.key_id, public_key=signer.public_key.hex(),
        signature="", frontier=[node.hex() for node in head.tree.nodes],
        partitions=[PartitionHead(key, size, last, chain)
                    for key, (size, last, chain) in sorted(head.partitions.items())],
    )
    signature = signer.sign(CHECKPOINT_PREFIX + unsigned.text())
    return msgspec.structs.replace(unsigned, signature=signature.hex())


def cosign(checkpoint: Checkpoint, witness: Signer) -> Cosignature:
    return Cosignature(
        witness=witness.key_id, public_key=witness.public_key.hex(), size=checkpoint.size,
        root=checkpoint.root, time=checkpoint.time,
        signature=witness.sign(WITNESS_PREFIX + checkpoint.text()).hex(),
        signed_at=datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
    )


def leaves_after(database: Database, checkpoint_head: int, count: int) -> list[bytes]:
    """The Merkle leaves of the `count` events after notification `checkpoint_head`."""
    with database.transaction(write=False) as cursor:
        rows = select_events(database, cursor, checkpoint_head, count)
    return [event_leaf(row.notification_id, row.canonical()) for row in rows]


class Inclusion(NamedTuple):
    """An event's place in a checkpoint's tree: RFC 9162's inclusion proof."""

    notification_id: int
    position: int
    leaf: bytes
    proof: list[bytes]
    checkpoint: Checkpoint

    def holds(self) -> bool:
        return verify_inclusion(self.leaf, self.position, self.checkpoint.size,
                                bytes.fromhex(self.checkpoint.root), self.proof)


def inclusion(database: Database, checkpoint: Checkpoint, notification_id: int) -> Inclusion:
    """The inclusion proof of the event at `notification_id` in `checkpoint`'s tree, from the
    store's events (`ValueError` if the checkpoint does not hold that event)."""
    leaves = leaves_after(database, 0, checkpoint.size)
    with database.transaction(write=False) as cursor:
        ids = [row["n"] for row in database.execute(
            cursor, "SELECT {nid} AS n FROM {stored_events} ORDER BY {nid} LIMIT ?",
            (checkpoint.size,)).fetchall()]
    if notification_id not in ids:
        raise ValueError(f"the checkpoint of size {checkpoint.size} does not hold notification "
                         f"{notification_id}")
    index = ids.index(notification_id)
    return Inclusion(notification_id, index, leaves[index], inclusion_proof(leaves, index),
                     checkpoint)


class WitnessRefusal(ValueError):
    """A witness will not co-sign: the checkpoint does not hold, or does not extend the last
    one it co-signed."""


def witness(database: Database, lines: list[Line], signer: Signer,
            trusted: bytes | None = None) -> Cosignature:
    """Co-sign the latest checkpoint of `lines`, after checking that it is signed (by the
    `trusted` operator key, if given), that it extends the last checkpoint this witness
    co-signed (an RFC 9162 consistency proof from that checkpoint's frontier and the store's
    leaves in between), and that the store's leaves give its root."""
    signed = checkpoints(lines)
    if not signed:
        raise WitnessRefusal("there is no checkpoint to co-sign")
    latest = max(signed, key=lambda c: (c.size, c.time))
    if not latest.signed_by_its_key():
        raise WitnessRefusal(f"the checkpoint of size {latest.size} is not validly signed")
    if trusted is not None and key_id(trusted) != latest.key:
        raise WitnessRefusal(f"the checkpoint is signed by key {latest.key}, not the operator's")
    mine = [line for line in lines if isinstance(line, Cosignature)
            and line.witness == signer.key_id]
    earlier = Checkpoint(size=0, root=Frontier().root().hex(), head=0, chain="", time="",
                         key="", public_key="", signature="")
    if mine:
        last = max(mine, key=lambda c: c.size)
        earlier = next((c for c in signed if (c.size, c.root, c.time) ==
                        (last.size, last.root, last.time)), earlier)
        if earlier.size != last.size:
            raise WitnessRefusal(f"the checkpoint of size {last.size} this witness co-signed "
                                 "is no longer in the file")
    if latest.size < earlier.size:
        raise WitnessRefusal(f"the latest checkpoint ({latest.size} events) is smaller than "
                             f"the one this witness co-signed ({earlier.size})")
    tree = earlier.tree()
    leaves = leaves_after(database, earlier.head, latest.size - earlier.size)
    proof = consistency_proof(tree, leaves)
    extended = tree.copy()
    for leaf in leaves:
        extended.append(leaf)
    if extended.root().hex() != latest.root or not verify_consistency(
        earlier.size, latest.size, bytes.fromhex(earlier.root), bytes.fromhex(latest.root),
        proof,
    ):
        raise WitnessRefusal(f"the checkpoint of size {latest.size} does not extend the one of "
                             f"size {earlier.size} this witness co-signed, by the store's events")
    return cosign(latest, signer)


class Checkpointer:
    """Writes the checkpoints of one writer: after its writes, at close, at exit."""

    def __init__(self, database: Database, path: Path, signer: Signer, seconds: float) -> None:
        self.database = database
        self.path = path
        self.signer = signer
        self.seconds = seconds
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None
        self._dirty = False
        self._closed = False
        self._last: Checkpoint | None = None  # the latest in the file, read at the first write
        self._trusted: dict[str, bytes] | None = None
        self._writing = threading.RLock()
        self._writer: int | None = None  # the thread in `write`
        self._then: Callable[[], None] | None = None  # what `close` left for `write` to do
        _LIVE.add(self)

    def noted(self) -> None:
        """A transaction of this writer committed: checkpoint within `seconds`."""
        with self._lock:
            self._dirty = True
            if self._timer is None:
                self._timer = threading.Timer(self.seconds, self._tick)
                self._timer.daemon = True
                self._timer.start()

    def _tick(self) -> None:
        with self._lock:
            self._timer = None
        self.flush()

    def flush(self) -> Checkpoint | None:
        """Write a checkpoint if this writer wrote since the last one."""
        if not self._dirty:
            return None
        try:
            return self.write()
        except Exception as error:  # say so loudly (the events stay unanchored), do not crash
            reason = (str(error).strip().splitlines() or [type(error).__name__])[0]
            log.error("no checkpoint written to %s: %s", self.path, reason)
            if isinstance(error, WritersInFlight) and not self._closed:
                self.noted()  # a writer stuck in flight: try again later
            return None

    def write(self, *, force: bool = False) -> Checkpoint | None:
        """Sign the store's tree head and append it, unless the file already has that size
        (or `force`). One write at a time; a `close` asked during it (the application
        collected by the garbage collector in this very thread) closes the store after it."""
        with self._writing:
            self._writer = threading.get_ident()
            try:
                return self._write(force)
            finally:
                self._writer = None
                then, self._then = self._then, None
                if then is not None:
                    then()

    def _write(self, force: bool) -> Checkpoint | None:
        self._dirty = False
        if self._trusted is None:
            self._trusted = writer_trust(self.signer, self.path)
            self._last = last_checkpoint(self.path)
        head = tree_head(self.database, self._trusted)
        last = self._last
        if last is not None and last.key in self._trusted and head.tree.size >= last.size:
            _require_extends(self.database, last, head)
        if last is not None and head.tree.size == last.size and not force:
            return None
        checkpoint = sign_checkpoint(head, self.signer)
        append_line(self.path, checkpoint)
        self._last = checkpoint
        return checkpoint

    def close(self, then: Callable[[], None] = lambda: None) -> None:
        """Write the last checkpoint, then do `then` (close the store): after the write in
        flight, if any."""
        with self._lock:
            self._closed = True
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
        _LIVE.discard(self)
        if self._writer == threading.get_ident():
            self._then = then  # closing from inside `write`: after it
            return
        with self._writing:
            self.flush()
        then()


def _require_extends(database: Database, last: Checkpoint, head: TreeHead) -> None:
    """`ChainError` unless the stored tree, just folded, is the tree of `last` (a checkpoint
    by a trusted key) extended by the store's events since: a stored frontier altered (e.g.
    randomised) is never signed into a checkpoint."""
    try:
        tree = last.tree()
    except ValueError as error:
        raise ChainError(f"no checkpoint: {error}") from None
    for leaf in leaves_after(database, last.head, head.tree.size - last.size):
        tree.append(leaf)
    if tree.root() != head.tree.root():
        raise ChainError(f"no checkpoint: the stored Merkle tree (merkle_tree) of "
                         f"{head.tree.size} events does not extend the checkpoint of "
                         f"{last.size} by the store's events: the stored tree was altered; "
                         "run `sabot audit verify`")


_LIVE: weakref.WeakSet[Checkpointer] = weakref.WeakSet()


@atexit.register
def _close_all() -> None:
    for checkpointer in list(_LIVE):
        checkpointer.close()


class _Writer(Protocol):
    @property
    def recorder(self) -> Any: ...


def write_checkpoint(writer: _Writer) -> Checkpoint | None:
    """Write a checkpoint now for a `SabotApplication` or an `infra.store.opening.Store` (e.g. at
    the end of a round); None for an in-memory store, or when the file already holds this size."""
    written: Checkpoint | None = writer.recorder.write_checkpoint()
    return written
