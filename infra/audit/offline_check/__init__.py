"""Check a Sabot coup dossier or regulator export offline, without Sabot or its database.

    python3 sabot-check.pyz DOSSIER.json [--public-key KEY] [--witness KEY]
    python3 sabot-check.pyz EXPORT_DIR   [--public-key HEX]

One file to hand over, the Python standard library and `cryptography` (`pip install
cryptography`): `sabot audit checker --out sabot-check.pyz` writes this package as a zipapp
(`infra.audit.checker_app`); copy it anywhere. In the project, `python -m
infra.audit.offline_check PATH` runs the same. Exit 0 when everything checks, 1 when anything
does not (each failure named), 2 when the file cannot be read. `sabot audit check-dossier`
runs the same code.

What it checks (the formats are in Sabot's docs/audit.md, "Coup dossiers" and "Regulator
exports"):

1. the checkpoint's Ed25519 signature, by the public key the file carries (and, with
   `--public-key`, that this is the key the operator published), and its C2SP checkpoint
   note; a dossier's C2SP tlog-proofs and the witnesses' co-signatures in them (with
   `--witness KEY`, that this witness co-signed);
2. each event's Merkle leaf, SHA-256(0x00 || u64 notification || canonical bytes), and its
   RFC 9162 inclusion proof against the checkpoint's signed root;
3. each event's `fields` against its signed MessagePack bytes (`state`), so the readable form
   cannot differ from what was signed;
4. every card dealt, drawn or burned against the shoe recomputed from the revealed seed
   (sabot-shoe-v1: the seed's SHA-256 is the shoe's commitment; the entropy contributions
   and the cut are the recorded ones), and each settled point against the cards;
5. a dossier: the table's id follows from its name, the coup's events are complete (their
   versions run without a gap from the event before the coup to its close), and its shoe
   summary is what the events say; an export: the manifest's signature and every file's
   SHA-256, and the game recall's cards and payouts against the events.

The modules, by concept: `msgpack` (the MessagePack reader and `readable`), `record`
(canonical bytes, Merkle leaves, inclusion proofs, signatures, checkpoint text, canonical
JSON, hex), `note` (C2SP signed notes, checkpoints and tlog-proofs, read apart from Sabot's
own writer of them), `shoe` (sabot-shoe-v1, a copy of `domain/game/shoe.py`: a test holds
them equal), `checks` (the report and the checks of a dossier or an export), `receipts` (a
player's receipt, `sabot audit check-receipts`), `cli` (`main`). They import each other
relatively and nothing of Sabot, so the package runs from the zipapp alone.
"""

from __future__ import annotations

from .checks import (
    DOSSIER_FORMAT,
    EXPORT_FORMAT,
    Report,
    Unreadable,
    check_bundle,
    check_dossier,
    check_path,
)
from .cli import main
from .msgpack import readable, unpack
from .record import MANIFEST_PREFIX, canonical, canonical_json, leaf_hash, verify_inclusion
from .shoe import RANKS, SUITS, shoe_v1

__all__ = [
    "DOSSIER_FORMAT",
    "EXPORT_FORMAT",
    "MANIFEST_PREFIX",
    "RANKS",
    "SUITS",
    "Report",
    "Unreadable",
    "canonical",
    "canonical_json",
    "check_bundle",
    "check_dossier",
    "check_path",
    "leaf_hash",
    "main",
    "readable",
    "shoe_v1",
    "unpack",
    "verify_inclusion",
]
