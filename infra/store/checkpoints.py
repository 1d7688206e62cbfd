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

Each checkpoint line also carries the same tree head as a C2SP tlog-checkpoint signed note
(`note`, `infra.store.checkpoint_notes`), which Go's and the transparency logs' tools check;
a checkpoint whose note does not hold is not validly signed. Lines written before have none.

A witness (another party, with its own Ed25519 key and its own memory: `infra.store.witness`)
co-signs a checkpoint after checking that it extends the last one it co-signed (an RFC 9162
consistency proof): `sabot audit witness`. A co-signature signs "sabot-witness-v1\\n" || the
same text, and co-signs the note as C2SP tlog-cosignature/v1 says (`note_signature`, a note's
signature line); it is kept in the checkpoint file beside the checkpoint.

The file is JSON lines, one checkpoint, co-signature or key hand-over a line, appended under
an exclusive `flock`. Where it is:

| store                        | checkpoint file                                           |
|------------------------------|-----------------------------------------------------------|
| `SABOT_CHECKPOINTS` is set   | that path                                                 |
| SQLite file `PATH`           | `PATH.checkpoints`                                        |
| PostgreSQL                   | `.sabot/checkpoints/DBNAME.SCHEMA.checkpoints`            |
| `sqlite:///:memory:`         | none                                                      |

When they are written, and by which process: `infra.store.checkpointer`. The fold before each
(`infra.store.ledger.advance_tree`) accepts only the signatures of the writer's trusted keys
(`WriterTrust`, which follows the file's hand-overs: `infra.store.hand_overs`), and the tree
it folded must extend the file's latest checkpoint by the store's events (a stored frontier
altered is refused); when it refuses (the store was altered), the checkpoint is not written
and the writer logs an error.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import NamedTuple

import msgspec

from infra.errors import ChainError, SettingsError
from infra.store.checkpoint_notes import (
    checkpoint_note,
    cosignature_holds,
    cosignature_line,
    log_origin,
    note_holds,
    note_origin,
)
from infra.store.database import Database, PostgresDatabase, SQLiteDatabase
from infra.store.hand_overs import HandOver, follow
from infra.store.ledger import PartitionHeads, advance_tree, select_events
from infra.store.merkle import (
    Frontier,
    event_leaf,
)
from infra.store.signing import HOME, Signer, key_id, signature_valid
from infra.store.trust import configured_keys

CHECKPOINT_PREFIX = b"sabot-checkpoint-v1\n"
WITNESS_PREFIX = b"sabot-witness-v1\n"
SUFFIX = ".checkpoints"
DEFAULT_SECONDS = 10.0
TAIL_BYTES = 1 << 16


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
    note: str = ""

    def text(self) -> bytes:
        """What is signed; a checkpoint of before partitions lists none."""
        return (f"{self.size}\n{self.root}\n{self.head}\n{self.chain}\n{self.time}\n"
                + "".join(f"partition {p.key} {p.size} {p.head} {p.chain}\n"
                          for p in self.partitions)).encode()

    def signed_by_its_key(self) -> bool:
        """Its signature verifies by its key, and so does its note, if it has one."""
        public = bytes.fromhex(self.public_key)
        signed = CHECKPOINT_PREFIX + self.text()
        return key_id(public) == self.key and signature_valid(
            public, signed, bytes.fromhex(self.signature)
        ) and (not self.note or note_holds(self.note, public, self.size,
                                           bytes.fromhex(self.root), signed))

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
    note_signature: str = ""

    def valid_for(self, checkpoint: Checkpoint) -> bool:
        """Its signature verifies by its key, and so does its co-signature of the
        checkpoint's note, if it has one. A witness reached over HTTP (C2SP tlog-witness:
        `infra.store.witness_push`) co-signs only the note (`signature` empty), whose
        extension line binds the checkpoint's text."""
        public = bytes.fromhex(self.public_key)
        if key_id(public) != self.witness or not (self.signature or self.note_signature):
            return False
        return (not self.signature or signature_valid(
            public, WITNESS_PREFIX + checkpoint.text(), bytes.fromhex(self.signature)
        )) and (not self.note_signature or cosignature_holds(checkpoint.note,
                                                             self.note_signature, public))


Line = Checkpoint | Cosignature | HandOver


def cosigners(lines: list[Line], checkpoint: Checkpoint) -> set[str]:
    """The public keys (hex) of the witnesses whose co-signature of `checkpoint` in `lines`
    is valid."""
    return {line.public_key for line in lines if isinstance(line, Cosignature)
            and (line.size, line.root, line.time) == (checkpoint.size, checkpoint.root,
                                                      checkpoint.time)
            and line.valid_for(checkpoint)}


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
        return _decoded(path, path.read_bytes())
    except FileNotFoundError:
        return []


def read_from(path: Path, start: int) -> tuple[list[Line], int]:
    """The whole lines of a checkpoint file from byte `start` on, and the byte they end at
    (a line being appended is left for the next read)."""
    try:
        with path.open("rb") as file:
            file.seek(start)
            data = file.read()
    except FileNotFoundError:
        return [], start
    whole = data[:data.rfind(b"\n") + 1]
    return _decoded(path, whole, after=start), start + len(whole)


def _decoded(path: Path, data: bytes, after: int = 0) -> list[Line]:
    lines: list[Line] = []
    for number, text in enumerate(data.splitlines(), start=1):
        if not text.strip():
            continue
        try:
            lines.append(_decoder.decode(text))
        except msgspec.DecodeError as error:
            where = f"line {number}" + (f" after byte {after}" if after else "")
            raise ValueError(f"{path}, {where}: not a checkpoint ({error})") from None
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


class WriterTrust:
    """The keys a writer's fold trusts (`infra.store.trust`): its own, those of
    `SABOT_TRUSTED_KEYS`, those its file's hand-overs signed by one of them hand over to
    (`infra.store.hand_overs`), and no other. A checkpoint of its file signed by any other
    key, or a hand-over signed by one, is a `ChainError` naming that key, never a new root:
    whoever can write the file and the database, but holds no trusted key, could otherwise
    slip in a checkpoint (or a hand-over) of their own, re-sign a forged tail with their key
    and have the operator's next checkpoint sign it. The file is read again from where it was
    last read at each checkpoint, so that a hand-over another process records is followed."""

    def __init__(self, signer: Signer, path: Path | None) -> None:
        self.signer = signer
        self.path = path
        self.roots = {**configured_keys(), signer.key_id: signer.public_key}
        self.keys = dict(self.roots)
        self._hand_overs: list[HandOver] = []
        self._read = 0  # the bytes of the file checked

    def refresh(self) -> dict[str, bytes]:
        """The keys trusted, once the lines appended to the file since are checked."""
        if self.path is None:
            return self.keys
        try:
            shrunk = self.path.stat().st_size < self._read
        except FileNotFoundError:
            shrunk = True
        start, known = (0, []) if shrunk else (self._read, self._hand_overs)  # replaced: again
        lines, end = read_from(self.path, start)
        hand_overs = [*known, *(h for h in lines if isinstance(h, HandOver))]
        keys, refused = follow(self.roots, hand_overs)
        roots = (f"its own key is {self.signer.key_id}; others are trusted only through "
                 "SABOT_TRUSTED_KEYS and the hand-overs they signed): run `sabot audit verify`")
        if refused:
            raise ChainError(f"no checkpoint: in {self.path}, {refused[0][1]} (this writer "
                             f"follows no other hand-over: {roots}")
        for checkpoint in checkpoints(lines):
            if checkpoint.key not in keys:
                raise ChainError(
                    f"no checkpoint: the checkpoint of size {checkpoint.size} at "
                    f"{checkpoint.time} in {self.path} is signed by key {checkpoint.key}, "
                    f"which this writer does not trust ({roots}")
        self.keys, self._hand_overs, self._read = keys, hand_overs, end
        return keys


def latest_trusted(path: Path, trusted: Mapping[str, bytes],
                   known: Checkpoint | None = None) -> Checkpoint | None:
    """The file's last checkpoint, or `known` if it is not older: what a writer's next
    checkpoint extends, so that it folds only the events since the last checkpoint any writer
    of the store wrote (not since its own). The checkpoint must be signed, validly, by a
    `trusted` key, or `ChainError` says whose it is: a line forged by whoever can write the
    file, but holds no trusted key, is never extended."""
    latest = last_checkpoint(path)
    if latest is None or latest == known or (known is not None and latest.size <= known.size):
        return known
    if trusted.get(latest.key) != bytes.fromhex(latest.public_key) or not (
            latest.signed_by_its_key()):
        raise ChainError(
            f"no checkpoint: the checkpoint of size {latest.size} at {latest.time} in {path} is"
            f" not validly signed by a key this writer trusts (it names key {latest.key}):"
            " run `sabot audit verify`")
    return latest


def sign_checkpoint(head: TreeHead, signer: Signer, at: datetime | None = None,
                    previous: Checkpoint | None = None) -> Checkpoint:
    """The checkpoint of `head`, and its note (under the origin of `previous`'s note, if
    `SABOT_LOG_ORIGIN` does not say another)."""
    when = (at or datetime.now(UTC)).astimezone(UTC).isoformat(timespec="milliseconds")
    unsigned = Checkpoint(
        size=head.tree.size, root=head.tree.root().hex(), head=head.head, chain=head.chain.hex(),
        time=when.replace("+00:00", "Z"), key=signer.key_id, public_key=signer.public_key.hex(),
        signature="", frontier=[node.hex() for node in head.tree.nodes],
        partitions=[PartitionHead(key, size, last, chain)
                    for key, (size, last, chain) in sorted(head.partitions.items())],
    )
    signed = CHECKPOINT_PREFIX + unsigned.text()
    origin = log_origin(signer, note_origin(previous.note) if previous is not None else None)
    return msgspec.structs.replace(
        unsigned, signature=signer.sign(signed).hex(),
        note=checkpoint_note(origin, head.tree.size, head.tree.root(), signed, signer))


def cosign(checkpoint: Checkpoint, witness: Signer) -> Cosignature:
    """A witness's co-signature of a checkpoint, and of its note if it has one."""
    return Cosignature(
        witness=witness.key_id, public_key=witness.public_key.hex(), size=checkpoint.size,
        root=checkpoint.root, time=checkpoint.time,
        signature=witness.sign(WITNESS_PREFIX + checkpoint.text()).hex(),
        signed_at=datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
        note_signature=cosignature_line(checkpoint.note, witness) if checkpoint.note else "",
    )


def leaves_after(database: Database, checkpoint_head: int, count: int) -> list[bytes]:
    """The Merkle leaves of the `count` events after notification `checkpoint_head`."""
    with database.transaction(write=False) as cursor:
        rows = select_events(database, cursor, checkpoint_head, count)
    return [event_leaf(row.notification_id, row.canonical()) for row in rows]
