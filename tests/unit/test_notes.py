"""Signed notes, verifier keys and co-signatures (`infra.store.notes`) and the C2SP text forms
of checkpoints and proofs (`infra.store.tlog`), against the published examples: Go's
golang.org/x/mod/sumdb/note tests (note_test.go), transparency-dev/formats' co-signature tests
(note/note_cosigv1_test.go) and the C2SP specifications' own examples."""

from __future__ import annotations

import base64

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hypothesis import given
from hypothesis import strategies as st

from infra.store.notes import (
    COSIGNATURE_V1,
    ED25519,
    CosignatureVerifier,
    Cosigner,
    Ed25519Verifier,
    MalformedNote,
    NoteRejected,
    NoteSigner,
    add_signatures,
    cosignature_time,
    key_hash,
    open_note,
    parse_note,
    parse_vkey,
    sign_note,
)
from infra.store.tlog import (
    CheckpointBody,
    TlogProof,
    parse_checkpoint_body,
    parse_tlog_proof,
)

# golang.org/x/mod/sumdb/note, note_test.go
PETER_VKEY = "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW"
PETER_SKEY = "PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz"
ENOCH_VKEY = "EnochRoot+af0cfe78+ATtqJ7zOtqQtYqOo0CpvDXNlMhV3HeJDpjrASKGLWdop"
TEXT = ("If you think cryptography is the answer to your problem,\n"
        "then you don't know what your problem is.\n")
PETER_SIG = ("— PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfq"
             "dngotpRZb6KE6RyyBwJnAM=\n")
ENOCH_SIG = ("— EnochRoot rwz+eBzmZa0SO3NbfRGzPCpDckykFXSdeX+MNtCOXm2/5n2tiOHp+vAF1aGrQ5ovTG01oOTGw"
             "nWLox33WWd1RvMc+QQ=\n")

# c2sp.org/tlog-cosignature's example: a checkpoint with a log signature and a co-signature
SOFA = ("example.com/behind-the-sofa\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n\n"
        "— example.com/behind-the-sofa Az3grlgtzPICa5OS8npVmf1Myq/5IZniMp+ZJurmRDeOoRDe4URYN7u5/Z"
        "hcyv2q1gGzGku9nTo+zyWE+xeMcTOAYQ8=\n"
        "— witness.example.com/w1 jWbPPwAAAABkGFDLEZMHwSRaJNiIDoe9DYn/zXcrtPHeolMI5OWXEhZCB9dlrD"
        "JsX3b2oyin1nPZqhf5nNo0xUe+mbIUBkBIfZ+qnA==\n")


def peter_signer() -> NoteSigner:
    """Go's example signer key, read as its PRIVATE+KEY+name+hash+base64(0x01 || seed) says."""
    seed = base64.b64decode(PETER_SKEY.split("+", 4)[4])[1:]
    private = Ed25519PrivateKey.from_private_bytes(seed)
    public = parse_vkey(PETER_VKEY)
    assert isinstance(public, Ed25519Verifier)
    return NoteSigner("PeterNeumann", public.public_key, private.sign)


def test_our_signature_of_gos_example_is_gos_byte_for_byte() -> None:
    signer = peter_signer()
    assert f"{signer.key_hash:08x}" == "c74f20a3"
    assert sign_note(TEXT, signer) == (TEXT + "\n" + PETER_SIG).encode()


def test_gos_example_note_opens_with_its_keys_and_only_those() -> None:
    peter, enoch = parse_vkey(PETER_VKEY), parse_vkey(ENOCH_VKEY)
    note = TEXT + "\n" + PETER_SIG + ENOCH_SIG
    opened = open_note(note, [peter])
    assert opened.text == TEXT
    assert [s.name for s in opened.verified] == ["PeterNeumann"]
    assert [(s.name, s.key_hash) for s in opened.unverified] == [("EnochRoot", 0xAF0CFE78)]
    both = open_note(note, [peter, enoch])
    assert [s.name for s in both.verified] == ["PeterNeumann", "EnochRoot"]
    assert both.unverified == ()
    with pytest.raises(NoteRejected, match="no signature by a known key"):
        open_note(note, [])


def test_a_known_keys_bad_signature_rejects_the_note() -> None:
    mangled = TEXT + "\n" + PETER_SIG[:60] + "ABCD" + PETER_SIG[60:]
    with pytest.raises(NoteRejected, match="invalid signature for key PeterNeumann"):
        open_note(mangled, [parse_vkey(PETER_VKEY)])
    with pytest.raises(NoteRejected):
        open_note(TEXT.replace("problem", "solution", 1) + "\n" + PETER_SIG,
                  [parse_vkey(PETER_VKEY)])


def test_a_key_listed_twice_with_different_material_is_ambiguous() -> None:
    enoch = parse_vkey(ENOCH_VKEY)
    impostor = type("Impostor", (), {"name": "EnochRoot", "key_hash": enoch.key_hash,
                                     "verify": lambda self, t, s: True})()
    with pytest.raises(NoteRejected, match="ambiguous key EnochRoot\\+af0cfe78"):
        open_note(TEXT + "\n" + ENOCH_SIG, [enoch, impostor])
    assert open_note(TEXT + "\n" + ENOCH_SIG, [enoch, enoch]).verified[0].name == "EnochRoot"


@pytest.mark.parametrize("message", [
    TEXT,
    TEXT + "\n",
    TEXT + "\n" + PETER_SIG[:-1],
    "\x01" + TEXT + "\n" + PETER_SIG,
    TEXT + "\n" + "— Bad Name x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqf"
    "qdngotpRZb6KE6RyyBwJnAM=",
    TEXT + "\n" + PETER_SIG + "Unexpected line.\n",
    TEXT + "\n" + PETER_SIG * 101,
])
def test_gos_malformed_notes_are_malformed(message: str) -> None:
    with pytest.raises(MalformedNote):
        open_note(message, [parse_vkey(PETER_VKEY)])
    with pytest.raises(MalformedNote):
        parse_note(b"\xff" + message.encode())


def test_gos_verifier_key_and_every_mangling_of_it() -> None:
    verifier = parse_vkey(PETER_VKEY)
    assert isinstance(verifier, Ed25519Verifier)
    assert verifier.vkey() == PETER_VKEY
    data = PETER_VKEY.encode()
    mangled = {data[i:j] for i in range(len(data) + 1) for j in range(i + 1, len(data) + 1)
               if (i, j) != (0, len(data))}
    mangled |= {data[:i] + bytes([data[i] + 1]) + data[i + 1:] for i in range(len(data))}
    for bad in mangled:
        with pytest.raises(MalformedNote):
            parse_vkey(bad.decode())
    for bad_key in ("PeterNeumann+cc469956+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TWBADKEY==",
                    "PeterNeumann+173116ae+ZRpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW"):
        with pytest.raises(MalformedNote):
            parse_vkey(bad_key)


def test_the_witness_verifier_keys_of_transparency_dev_formats() -> None:
    native = parse_vkey("remora.n621.de+da77ade7+BOvN63jn/bLvkieywe8R6UYAtVtNbZpXh34x7onlmtw2")
    assert isinstance(native, CosignatureVerifier)
    assert native.kind == COSIGNATURE_V1 and native.key_hash == 0xDA77ADE7
    plain = parse_vkey("TEST+7997405c+AQcC+FTVKf0jlTdHDY3rbevmnKxxPjigCXlVtGe6RIr6")
    assert isinstance(plain, Ed25519Verifier) and plain.kind == ED25519
    as_witness = CosignatureVerifier(plain.name, plain.public_key)
    assert as_witness.key_hash == key_hash("TEST", 0x04, plain.public_key) != plain.key_hash
    assert parse_vkey(as_witness.vkey()) == as_witness
    for bad in ("bananas.sigstore.dev+12344556", "rekor.sigstore.dev+12345678+THIS_IS_NOT_BASE64!",
                "rekor.sigstore.dev+12345678+AwEB"):
        with pytest.raises(MalformedNote):
            parse_vkey(bad)


def test_cosignature_timestamps_of_the_published_examples() -> None:
    sofa = parse_note(SOFA)
    assert [s.name for s in sofa.signatures] == ["example.com/behind-the-sofa",
                                                 "witness.example.com/w1"]
    assert cosignature_time(sofa.signatures[1]) == 1679315147  # the spec's "time 1679315147"
    formats = base64.b64decode("ZGhGuQAAAABm/qTPeyKXD+R2rzyQsxPiP8mXum7qq/iF0u4vanlqJyocWODBt97"
                               "w9uL+8qT7S5gxEHWWOworDcFiEBYJXORmnFBOBA==")
    assert cosignature_time(parse_note(f"x\n\n— w {base64.b64encode(formats).decode()}\n")
                            .signatures[0]) == 1727964367
    with pytest.raises(MalformedNote):
        cosignature_time(sofa.signatures[0])  # a plain Ed25519 signature has no time
    body = parse_checkpoint_body(sofa.text)
    assert (body.origin, body.size, body.extensions) == ("example.com/behind-the-sofa",
                                                         20852163, ())
    assert body.text() == sofa.text


def test_a_cosignature_signs_header_time_and_the_whole_body() -> None:
    log_key, witness_key = Ed25519PrivateKey.generate(), Ed25519PrivateKey.generate()
    log = NoteSigner("example.com/log", log_key.public_key().public_bytes_raw(), log_key.sign)
    witness = Cosigner("witness.example/w1", witness_key.public_key().public_bytes_raw(),
                       witness_key.sign, clock=lambda: 1679315147.9)
    text = CheckpointBody("example.com/log", 5, bytes(range(32)), ("ext",)).text()
    note = add_signatures(sign_note(text, log), witness)
    opened = open_note(note, [witness.verifier])
    assert [s.name for s in opened.verified] == ["witness.example/w1"]
    signature = opened.verified[0].signature
    assert cosignature_time(opened.verified[0]) == 1679315147
    witness_key.public_key().verify(
        signature[8:], b"cosignature/v1\ntime 1679315147\n" + text.encode())
    assert not Ed25519Verifier(witness.name, witness.verifier.public_key).verify(
        text.encode(), signature[8:])  # type 0x04 is not type 0x01
    assert open_note(note, [log.verifier, witness.verifier]).unverified == ()
    twice = add_signatures(note, witness)
    assert [s.name for s in parse_note(twice).signatures] == ["example.com/log",
                                                              "witness.example/w1"]
    with pytest.raises(NoteRejected):
        open_note(note.replace(b"ext\n", b"ex2\n"), [witness.verifier])


@given(st.text(alphabet=st.characters(min_codepoint=0x20, blacklist_categories=("Cs",)),
               min_size=1).map(lambda s: s.replace("\n\n", "\n") + "\n"),
       st.lists(st.binary(min_size=1, max_size=80), min_size=1, max_size=5))
def test_a_note_reads_back_as_written(text: str, signatures: list[bytes]) -> None:
    note = parse_note(TEXT + "\n" + PETER_SIG)
    lines = tuple(note.signatures[0]._replace(key_hash=i, signature=s)
                  for i, s in enumerate(signatures, start=1))
    written = note._replace(text=text, signatures=lines).encode()
    assert parse_note(written) == (text, lines)


def test_the_c2sp_checkpoint_body_is_strict() -> None:
    root = base64.b64encode(bytes(32)).decode()
    assert parse_checkpoint_body(f"o\n0\n{root}\n").size == 0
    for bad in (f"o\n01\n{root}\n", f"o\n-1\n{root}\n", "o\n1\nAAAA\n", f"o\n1\n{root}",
                f"o\n1\n{root}\n\n", f"\n1\n{root}\n", "o\n1\n"):
        with pytest.raises(MalformedNote):
            parse_checkpoint_body(bad)


def test_the_tlog_proof_reads_back_and_holds_its_checkpoint_verbatim() -> None:
    proof = TlogProof(73894, (bytes(32), bytes(range(32))), SOFA, extra=b"age-v1.2.1")
    text = proof.text()
    assert text.startswith("c2sp.org/tlog-proof@v1\nextra YWdlLXYxLjIuMQ==\nindex 73894\n")
    assert text.endswith("\n\n" + SOFA)
    assert parse_tlog_proof(text) == proof
    bare = TlogProof(0, (), SOFA)
    assert parse_tlog_proof(bare.text()) == bare
    for bad in ("c2sp.org/tlog-proof@v2\nindex 1\n\n" + SOFA, "c2sp.org/tlog-proof@v1\n\n" + SOFA,
                "c2sp.org/tlog-proof@v1\nindex 01\n\n" + SOFA):
        with pytest.raises(MalformedNote):
            parse_tlog_proof(bad)


@given(st.data())
def test_any_change_to_a_signed_text_is_rejected(data: st.DataObject) -> None:
    note = TEXT + "\n" + PETER_SIG
    at = data.draw(st.integers(0, len(TEXT) - 2))
    other = data.draw(st.characters(min_codepoint=0x20, max_codepoint=0x7E)
                      .filter(lambda c: c != note[at]))
    with pytest.raises((NoteRejected, MalformedNote)):
        open_note(note[:at] + other + note[at + 1:], [parse_vkey(PETER_VKEY)])
