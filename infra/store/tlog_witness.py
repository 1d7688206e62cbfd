"""C2SP tlog-witness's `add-checkpoint` (https://c2sp.org/tlog-witness), both sides: the
request a log sends, and how a witness of one log answers it.

    POST <prefix>/add-checkpoint
    old <size>\\n                  the size the log thinks the witness co-signed last
    <base64 hash>\\n ...           RFC 9162 consistency proof from there (at most 63 lines)
    \\n
    <the checkpoint, a signed note>

A witness (`LogWitness`) answers:

| status | when                                                          | body            |
|--------|---------------------------------------------------------------|-----------------|
| 200    | co-signed (its state replaced first)                          | its cosignature |
| 400    | the request is malformed, or `old` is above the size          | why             |
| 403    | no signature of the log's key verifies                        | why             |
| 404    | the checkpoint's origin is not the log's                      | why             |
| 409    | `old` is not the size it co-signed, or the root at that size differs | that size |
| 422    | the consistency proof does not verify                         | why             |

(a 409's body is `text/x.tlog.size`.)

Its state is the one `sabot audit witness` keeps (`infra.store.witness`), without the frontier
(a proof gives roots, not frontiers); reading it, deciding and replacing it are one step under
a lock (a thread lock and `flock` on `STATE.lock`), as the specification asks.
"""

from __future__ import annotations

import fcntl
import os
import threading
import urllib.error
import urllib.request
from pathlib import Path
from typing import NamedTuple

from infra.store.checkpoint_notes import cosignature_line
from infra.store.notes import (
    Ed25519Verifier,
    MalformedNote,
    NoteRejected,
    b64,
    open_note,
    parse_note,
    unb64,
)
from infra.store.signing import Signer
from infra.store.tlog import parse_checkpoint_body
from infra.store.witness import (
    Conflict,
    WitnessRefusal,
    advanced,
    decide,
    read_state,
    write_state,
)

PATH = "/add-checkpoint"
SIZE_TYPE = "text/x.tlog.size"
MAX_PROOF_LINES = 63
MAX_BODY = 1 << 16
HASH_SIZE = 32


class AddCheckpoint(NamedTuple):
    """An add-checkpoint request."""

    old: int
    proof: list[bytes]
    note: str

    def encode(self) -> bytes:
        return (f"old {self.old}\n" + "".join(f"{b64(node)}\n" for node in self.proof)
                + "\n" + self.note).encode()


def parse_request(body: bytes) -> AddCheckpoint:
    """The request's parts (`MalformedNote` when it is not one)."""
    try:
        text = body.decode()
    except UnicodeDecodeError:
        raise MalformedNote("the request is UTF-8") from None
    head, blank, note = text.partition("\n\n")
    lines = head.split("\n")
    size = lines[0].removeprefix("old ")
    if not blank or size == lines[0] or not size.isdigit() or size != str(int(size)):
        raise MalformedNote("the request starts with `old <size>`, then proof lines, then a "
                            "blank line and the checkpoint")
    if len(lines) - 1 > MAX_PROOF_LINES:
        raise MalformedNote(f"at most {MAX_PROOF_LINES} consistency proof lines")
    proof = [unb64(line) for line in lines[1:]]
    if any(len(node) != HASH_SIZE for node in proof):
        raise MalformedNote("each proof line is a base64 SHA-256 hash")
    return AddCheckpoint(int(size), proof, note)


class Answer(NamedTuple):
    """A witness's answer: status, body, media type."""

    status: int
    body: str
    media_type: str = "text/plain"


class LogWitness:
    """A witness of one log: its key (and name), the log's verifier key (its name the log's
    origin), and its state file."""

    def __init__(self, signer: Signer, log: Ed25519Verifier, state: Path,
                 name: str | None = None) -> None:
        self.signer = signer
        self.log = log
        self.state = state
        self.name = name
        self._lock = threading.Lock()

    def add_checkpoint(self, body: bytes) -> Answer:
        try:
            request = parse_request(body)
            checkpoint = parse_checkpoint_body(parse_note(request.note).text)
        except MalformedNote as error:
            return Answer(400, f"{error}\n")
        if checkpoint.origin != self.log.name:
            return Answer(404, f"this witness does not witness {checkpoint.origin!r}\n")
        try:
            open_note(request.note, [self.log])
        except (MalformedNote, NoteRejected) as error:
            return Answer(403, f"not signed by the log's key: {error}\n")
        if request.old > checkpoint.size:
            return Answer(400, f"old {request.old} is above the checkpoint's size "
                               f"{checkpoint.size}\n")
        with self._lock, _FileLock(self.state.with_name(self.state.name + ".lock")):
            state = read_state(self.state)
            if state is not None and state.log_key != self.log.public_key.hex():
                return Answer(403, "this witness's state is another log's\n")
            try:
                decide(state, checkpoint.size, checkpoint.root.hex(), request.old,
                       request.proof)
            except Conflict as conflict:
                return Answer(409, f"{conflict.size}\n", SIZE_TYPE)
            except WitnessRefusal as refusal:
                return Answer(422, f"{refusal}\n")
            line = cosignature_line(request.note, self.signer, self.name)
            write_state(self.state, advanced(state, self.log.public_key.hex(), checkpoint.size,
                                             checkpoint.root.hex()))
        return Answer(200, f"{line}\n")


class _FileLock:
    """An exclusive `flock` on `path` (created), for processes sharing a state file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.fd = -1

    def __enter__(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(self.fd, fcntl.LOCK_EX)

    def __exit__(self, *_: object) -> None:
        os.close(self.fd)


def send(url: str, request: AddCheckpoint, timeout: float) -> Answer:
    """POST the request to the witness at `url` (its submission prefix); `OSError` when it
    cannot be reached."""
    posted = urllib.request.Request(url.rstrip("/") + PATH, data=request.encode(),
                                    method="POST", headers={"Content-Type": "text/plain"})
    try:
        with urllib.request.urlopen(posted, timeout=timeout) as response:
            return Answer(response.status, response.read(MAX_BODY).decode(errors="replace"),
                          response.headers.get_content_type())
    except urllib.error.HTTPError as error:
        with error:
            return Answer(error.code, error.read(MAX_BODY).decode(errors="replace"),
                          error.headers.get_content_type())
