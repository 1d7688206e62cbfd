"""Key rotation: the signed hand-over from one signing key to the next, recorded in the
checkpoint file (`infra.store.checkpoints`), and the rule every reader of the file follows.

A hand-over line says: the key `key` (its public key `public_key`) hands the log over to the
key `new_key` (`new_public_key`) at the checkpoint of `size` events and root `root`, at
`time`; signed by the old key (Ed25519) over

    "sabot-hand-over-v1\\n" || key \\n public_key \\n new_key \\n new_public_key \\n
        || size \\n root \\n time \\n

`follow` is the rule of the writers' fold, `sabot audit verify` and the witness: starting from
their roots of trust only (`infra.store.trust`), a hand-over signed validly by a key already
trusted adds the new key (and, through it, the hand-overs that key signed); any other
hand-over adds nothing and is named (`refused`): a key of the insider's own "handing over" to
another is never adopted. The old key stays trusted: its signatures and checkpoints of before
still hold.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import NamedTuple

import msgspec

from infra.store.signing import Signer, key_id, signature_valid

HAND_OVER_PREFIX = b"sabot-hand-over-v1\n"


class HandOver(msgspec.Struct, frozen=True, kw_only=True, tag="hand-over", tag_field="kind"):
    key: str
    public_key: str
    new_key: str
    new_public_key: str
    size: int
    root: str
    time: str
    signature: str

    def text(self) -> bytes:
        return (f"{self.key}\n{self.public_key}\n{self.new_key}\n{self.new_public_key}\n"
                f"{self.size}\n{self.root}\n{self.time}\n").encode()

    def signed_by(self, public: bytes) -> bool:
        """Whether `public` is its old key and signed it, naming the new key by its id."""
        try:
            new_public = bytes.fromhex(self.new_public_key)
            signature = bytes.fromhex(self.signature)
        except ValueError:
            return False
        return (public.hex() == self.public_key and key_id(public) == self.key
                and key_id(new_public) == self.new_key
                and signature_valid(public, HAND_OVER_PREFIX + self.text(), signature))


def hand_over(old: Signer, new_public: bytes, size: int, root: str,
              at: datetime | None = None) -> HandOver:
    """The hand-over from `old` to the key `new_public`, at the checkpoint of `size` events
    and `root`, signed by `old`."""
    when = (at or datetime.now(UTC)).astimezone(UTC).isoformat(timespec="milliseconds")
    unsigned = HandOver(key=old.key_id, public_key=old.public_key.hex(),
                        new_key=key_id(new_public), new_public_key=new_public.hex(), size=size,
                        root=root, time=when.replace("+00:00", "Z"), signature="")
    return msgspec.structs.replace(
        unsigned, signature=old.sign(HAND_OVER_PREFIX + unsigned.text()).hex())


class Followed(NamedTuple):
    """The keys trusted once the hand-overs are followed, and each hand-over not followed
    with why (naming the key that signed it)."""

    keys: dict[str, bytes]
    refused: list[tuple[HandOver, str]]


def follow(roots: Mapping[str, bytes], lines: Iterable[object]) -> Followed:
    """The `roots` and every key a hand-over among `lines` hands over to from a key trusted
    (a root, or a key handed over to before), whatever their order in the file."""
    keys = dict(roots)
    pending = [line for line in lines if isinstance(line, HandOver)]
    adopted = True
    while adopted:
        adopted = False
        for line in list(pending):
            if line.key in keys and line.signed_by(keys[line.key]):
                keys.setdefault(line.new_key, bytes.fromhex(line.new_public_key))
                pending.remove(line)
                adopted = True
    return Followed(keys, [(line, _why(line, keys)) for line in pending])


def _why(line: HandOver, keys: Mapping[str, bytes]) -> str:
    said = (f"the hand-over at size {line.size} ({line.time}) from key {line.key} to key "
            f"{line.new_key}")
    if line.key not in keys:
        return f"{said} is signed by key {line.key}, which is not trusted"
    return f"{said} is not validly signed by the trusted key {line.key}"
