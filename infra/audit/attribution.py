"""The attribution check of `sabot audit verify`: the record says a person did only what that
person's own token sent.

A person is a tournament's entrant who is not a house bot (at that tournament's tables and in
its own stream), or, elsewhere (free tables, auctions, disputes), any such entrant or any
player a player token was issued to. An event whose `actor` is a person must carry the id of
a command the command log records as sent by that person (`player:<name>`,
`infra.store.senders`); officials (`@...`: the house, the clock, the croupier, the organiser)
and bots are not people, and whoever sent their commands is fine.

Each command log row written since schema 5 names its sender and is sealed by the store's
signing key (`infra.store.signing.command_message`); the seal is checked with the keys verify
trusts. What is named (check `attribution`):

| problem                  | what was found                                                  |
|--------------------------|-----------------------------------------------------------------|
| `not sent by the actor`  | a person's event came from a command someone else sent          |
| `command reused`         | a person's event carries a command id the log gives other versions |
| `command seal invalid`   | a command log row's sender or range is not what the key sealed  |
| `sender erased`          | a command without a sender after one with a sender (schema 5 on) |

Commands recorded before schema 5 have no sender: their people's events are counted in one
notice, `unattributed`, which is not a discrepancy (an old store still verifies).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple

import msgspec
from eventsourcing.utils import get_topic

from domain.actors import is_official
from domain.table.aggregate import Table
from domain.tournament.aggregate import Tournament
from infra.audit.report import Finding, Problem, read_rows, stored_event_rows
from infra.audit.verify import trust_of
from infra.store.checkpoints import checkpoint_path, read_lines
from infra.store.database import Database
from infra.store.opening import Store
from infra.store.senders import player_sender
from infra.store.signing import command_message, signature_valid

MAX_FINDINGS = 20
_REGISTERED = get_topic(Tournament.PlayerRegistered)
_CREATED = get_topic(Tournament.TournamentCreated)
_OPENED = get_topic(Table.Opened)


class _Who(msgspec.Struct):
    """What an event says of who acted (its other fields are skipped unread)."""

    actor: Any = None
    command_id: Any = None
    player: Any = None
    bot: Any = False
    tournament: Any = None


class _Logged(NamedTuple):
    originator_id: uuid.UUID
    first: int
    last: int
    sender: str | None


class People:
    """Who is a person, by the stream an event is in."""

    def __init__(self, humans: Mapping[uuid.UUID, set[str]], tables: Mapping[uuid.UUID,
                 uuid.UUID], with_tokens: set[str]) -> None:
        self.humans = humans  # by tournament
        self.tables = tables  # a tournament's table -> its tournament
        self.anywhere = with_tokens.union(*humans.values())

    def is_person(self, actor: str, stream: uuid.UUID) -> bool:
        if is_official(actor):
            return False
        tournament = self.tables.get(stream, stream)
        if tournament in self.humans:
            return actor in self.humans[tournament]
        return actor in self.anywhere


def commands_attributed(store: Store) -> Iterator[Finding]:
    """The findings (and the `unattributed` notice) of the store's main database. The seals
    are checked with the keys verify trusts (`infra.audit.verify.trust_of`)."""
    database = store.database
    people = _people(database)
    path = checkpoint_path(database)
    lines = read_lines(path) if path is not None else []
    log, findings = _checked_log(database, trust_of(database, None, lines).keys)
    yield from findings
    decode = msgspec.msgpack.Decoder(_Who).decode
    ids: dict[Any, uuid.UUID] = {}
    seen_sender = False
    erased: set[str] = set()
    unattributed = 0
    count = len(findings)
    for row in stored_event_rows(database):
        try:
            who = decode(row["state"])
        except (msgspec.DecodeError, msgspec.ValidationError):
            continue  # not a mapping: no actor
        logged = log.get(who.command_id) if isinstance(who.command_id, str) else None
        if logged is None:
            continue  # no command, or not logged: the `commands` check names the latter
        raw = row["originator_id"]
        oid = ids.get(raw) or ids.setdefault(raw, database.from_db_id(raw))
        version = row["originator_version"]
        where = {"originator_id": oid, "originator_version": version,
                 "notification_id": row["n"], "check": "attribution"}
        if logged.sender is not None:
            seen_sender = True
        elif seen_sender and who.command_id not in erased:
            erased.add(who.command_id)
            if count < MAX_FINDINGS:
                count += 1
                yield Finding(problem=Problem.SENDER_ERASED, detail=f"command "
                              f"{who.command_id!r} has no sender, yet commands before it "
                              "have one: its sender and seal were removed", **where)
        if not isinstance(who.actor, str) or not people.is_person(who.actor, oid):
            continue
        if logged.sender is None:
            unattributed += 1
            continue
        problem, detail = _misattributed(who.actor, who.command_id, logged, oid, version)
        if problem is not None and count < MAX_FINDINGS:
            count += 1
            yield Finding(problem=problem, detail=detail, **where)
    if unattributed:
        yield Finding(problem=Problem.UNATTRIBUTED, detail=f"{unattributed} event(s) of people "
                      "come from commands recorded before the command log named their sender "
                      "(schema 5): who sent them cannot be checked", check="attribution")


commands_attributed.name = "attribution"  # type: ignore[attr-defined]


def _misattributed(actor: str, command_id: str, logged: _Logged, oid: uuid.UUID,
                   version: int) -> tuple[str | None, str]:
    if logged.sender != player_sender(actor):
        return Problem.MISATTRIBUTED, (f"the event says {actor} acted, but command "
                                       f"{command_id!r} was sent by {logged.sender}")
    if logged.originator_id == oid and not logged.first <= version <= logged.last:
        return Problem.COMMAND_REUSED, (f"the event carries {actor}'s command {command_id!r}, "
                                        f"which produced versions {logged.first}.."
                                        f"{logged.last} of this stream, not {version}")
    return None, ""


def _checked_log(database: Database,
                 keys: Mapping[str, bytes]) -> tuple[dict[str, _Logged], list[Finding]]:
    """The command log by command id, and a finding for each row whose seal does not hold."""
    log: dict[str, _Logged] = {}
    findings: list[Finding] = []
    rows = read_rows(database, "SELECT command_id, originator_id, first_version, last_version,"
                 " sender, seal, seal_key FROM {command_log}")
    for row in rows:
        oid = database.from_db_id(row["originator_id"])
        command, sender = str(row["command_id"]), row["sender"]
        log[command] = _Logged(oid, row["first_version"], row["last_version"], sender)
        if sender is None:
            continue
        key, seal = keys.get(row["seal_key"] or ""), row["seal"]
        message = command_message(command, oid, row["first_version"], row["last_version"],
                                  sender)
        sealed = key is not None and seal is not None and signature_valid(key, message,
                                                                          bytes(seal))
        if not sealed and len(findings) < MAX_FINDINGS:
            findings.append(Finding(
                problem=Problem.SEAL_INVALID, originator_id=oid,
                originator_version=row["first_version"], check="attribution",
                detail=f"command {command!r} (sent by {sender}) is not sealed by a trusted "
                f"key ({row['seal_key'] or 'none'}): its row was altered"))
    return log, findings


def _people(database: Database) -> People:
    decode = msgspec.msgpack.Decoder(_Who).decode
    humans: dict[uuid.UUID, set[str]] = {}
    for row in read_rows(database, "SELECT originator_id FROM {stored_events} WHERE topic = ?",
                     (_CREATED,)):
        humans[database.from_db_id(row["originator_id"])] = set()
    for row in read_rows(database, "SELECT originator_id, state FROM {stored_events}"
                     " WHERE topic = ?", (_REGISTERED,)):
        who = decode(row["state"])
        if not who.bot and isinstance(who.player, str):
            humans.setdefault(database.from_db_id(row["originator_id"]), set()).add(who.player)
    tables: dict[uuid.UUID, uuid.UUID] = {}
    for row in read_rows(database, "SELECT originator_id, state FROM {stored_events}"
                     " WHERE topic = ?", (_OPENED,)):
        name = decode(row["state"]).tournament
        if isinstance(name, str):
            tables[database.from_db_id(row["originator_id"])] = Tournament.create_id(name)
    with_tokens = {str(row["player"]) for row in read_rows(
        database, "SELECT player FROM {api_tokens} WHERE player IS NOT NULL")}
    return People(humans, tables, with_tokens)
