"""A witness with a memory of its own: what it co-signed, kept in its own file.

A witness (another party, with its own Ed25519 key) co-signs a checkpoint of the operator's
(signed by the log's key, or by a key the log's key handed over to: `infra.store.hand_overs`)
only if it extends the last one it co-signed. What it last co-signed is its `WitnessState`:
the log's public key (pinned at the first co-signature, or given), the tree's size, root and
frontier, the notification id of its last leaf and when. It lives in the witness's own file
(default: beside its key, `KEY.state`), written atomically (a temporary file, fsync, rename),
and never in the operator's checkpoint file: that file gives at most the candidate to
co-sign, never what the witness remembers.

`decide` is the rule every witness follows, with or without the store at hand (the HTTP
witness has only the proof it is sent: `infra.store.tlog_witness`): the checkpoint, signed by
the log's key, extends the state by a valid RFC 9162 consistency proof (at an unchanged size,
the root is the same). `witness` (`sabot audit witness`) also recomputes from the store the
leaves it co-signs: the store's first `size` events must give the checkpoint's root, and the
consistency proof is built from the state's frontier and the store's events after it.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import msgspec

from infra.store.checkpoints import Checkpoint, Cosignature, cosign, leaves_after
from infra.store.database import Database
from infra.store.hand_overs import follow
from infra.store.merkle import EMPTY_ROOT, Frontier, consistency_proof, verify_consistency
from infra.store.signing import Signer, key_id

STATE_SUFFIX = ".state"


class WitnessRefusal(ValueError):
    """A witness will not co-sign: the checkpoint is not the log's, or does not extend what
    this witness co-signed last."""


class Conflict(WitnessRefusal):
    """The caller's idea of what the witness co-signed last (`old`) is not the witness's:
    it says its own size (C2SP tlog-witness's 409)."""

    def __init__(self, size: int, detail: str) -> None:
        super().__init__(detail)
        self.size = size


class WitnessState(msgspec.Struct, frozen=True, kw_only=True):
    """What a witness co-signed last, for one log."""

    log_key: str  # the operator's public key (hex): no other key's checkpoints are co-signed
    size: int = 0
    root: str = EMPTY_ROOT.hex()
    frontier: list[str] = msgspec.field(default_factory=list)  # [] when only a proof was seen
    head: int = 0  # the notification id of the last leaf (0: unknown or empty)
    time: str = ""  # the co-signed checkpoint's time
    cosigned_at: str = ""

    def tree(self) -> Frontier | None:
        """The frontier, if kept and folding to the root (`WitnessRefusal` if it does not)."""
        if not self.frontier and self.size:
            return None
        tree = Frontier(self.size, [bytes.fromhex(node) for node in self.frontier])
        if tree.root().hex() != self.root:
            raise WitnessRefusal("the witness's state is damaged: its frontier does not fold "
                                 "to its root")
        return tree


def state_path(key: Path) -> Path:
    """Where a witness keeps its state by default: beside its key."""
    return key.with_name(key.name + STATE_SUFFIX)


def read_state(path: Path) -> WitnessState | None:
    """The state in `path`, None before the first co-signature."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    try:
        return msgspec.json.decode(data, type=WitnessState)
    except msgspec.DecodeError as error:
        raise WitnessRefusal(f"the witness's state {path} is unreadable ({error})") from None


def write_state(path: Path, state: WitnessState) -> None:
    """Replace the state atomically: a crash leaves the old state or the new, never half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, msgspec.json.encode(state) + b"\n")
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(temporary, path)
    directory = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)


def require_log_key(state: WitnessState | None, checkpoint: Checkpoint,
                    log_key: bytes | None = None, lines: Sequence[object] = ()) -> None:
    """`WitnessRefusal` unless `checkpoint` is validly signed by the log's key: the one the
    state pinned and `log_key` if given (at first sight without either: its own), or a key
    each of them handed over to by a hand-over among `lines` (`infra.store.hand_overs`)."""
    if not checkpoint.signed_by_its_key():
        raise WitnessRefusal(f"the checkpoint of size {checkpoint.size} is not validly signed")
    pinned = [bytes.fromhex(state.log_key)] if state is not None else []
    for public in [*pinned, *([log_key] if log_key else [])]:
        followed = follow({key_id(public): public}, lines).keys
        if followed.get(checkpoint.key) != bytes.fromhex(checkpoint.public_key):
            raise WitnessRefusal(f"the checkpoint is signed by key {checkpoint.key}, not the "
                                 f"operator's ({key_id(public)}) nor a key it handed over to")


def decide(state: WitnessState | None, size: int, root: str, old: int,
           proof: list[bytes]) -> None:
    """`WitnessRefusal` unless the tree of `size` leaves and `root` (hex) extends the state by
    `proof` from size `old`: `Conflict` when `old` is not the state's size, or at that size
    the root is another (its signature is checked before: `require_log_key`)."""
    known, known_root = (state.size, state.root) if state is not None else (0, EMPTY_ROOT.hex())
    if old != known:
        raise Conflict(known, f"this witness co-signed a tree of {known} events, not {old}")
    if size < known:
        raise WitnessRefusal(f"the checkpoint ({size} events) is smaller than the one this "
                             f"witness co-signed ({known})")
    if size == known and root != known_root:
        raise Conflict(known, f"the checkpoint of {known} events does not extend the one this "
                       "witness co-signed: another root at the same size")
    if not verify_consistency(known, size, bytes.fromhex(known_root), bytes.fromhex(root),
                              proof):
        raise WitnessRefusal(f"the checkpoint of size {size} does not extend the one of size "
                             f"{known} this witness co-signed (consistency proof)")


def advanced(state: WitnessState | None, log_key: str, size: int, root: str,
             frontier: Frontier | None = None, head: int = 0, time: str = "") -> WitnessState:
    """The state after co-signing the tree of `size` leaves and `root` (its frontier kept
    when known)."""
    return WitnessState(
        log_key=state.log_key if state is not None else log_key, size=size, root=root,
        frontier=[node.hex() for node in frontier.nodes] if frontier is not None else [],
        head=head, time=time,
        cosigned_at=datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"))


def witness(database: Database, checkpoint: Checkpoint, signer: Signer, path: Path,
            log_key: bytes | None = None, lines: Sequence[object] = ()) -> Cosignature:
    """Co-sign `checkpoint` (its key the log's, or one the log's handed over to by a
    hand-over among `lines`, the checkpoint file's) after recomputing its leaves from the
    store (all of them: a rewrite behind the witness's frontier is seen, also at an unchanged
    size) and checking that it extends the state in `path` by the consistency proof from the
    state's frontier to them; then remember it."""
    state = read_state(path)
    require_log_key(state, checkpoint, log_key, lines)
    leaves = leaves_after(database, 0, checkpoint.size)
    held = Frontier()
    for leaf in leaves:
        held.append(leaf)
    if held.size != checkpoint.size or held.root().hex() != checkpoint.root:
        at = f" (this witness co-signed {state.size})" if state is not None else ""
        raise WitnessRefusal(f"the store's first {checkpoint.size} events do not give the root "
                             f"of the checkpoint{at}: the store does not hold what it says")
    size = state.size if state is not None else 0
    proof: list[bytes] = []
    if size <= checkpoint.size:
        remembered = state.tree() if state is not None else Frontier()
        if remembered is None:  # a state without its frontier (an HTTP witness's)
            remembered = Frontier()
            for leaf in leaves[:size]:
                remembered.append(leaf)
        proof = consistency_proof(remembered, leaves[size:])
    decide(state, checkpoint.size, checkpoint.root, size, proof)
    cosignature = cosign(checkpoint, signer)
    write_state(path, advanced(state, checkpoint.public_key, checkpoint.size, checkpoint.root,
                               held, checkpoint.head, checkpoint.time))
    return cosignature
