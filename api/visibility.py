"""What a caller may see of a table and of its events.

A hand's first two cards are dealt face down; they are turned over for a natural or at
settlement (`Coup.face_up`), and a third card is dealt face up. Until then a face-down card
is seen by the player who holds that hand, and by the roles that see everything (organiser,
auditor); anyone else sees `null` in its place, in the table and in the `CardDealt` events.
Burned cards stay face down (a burn by first card turns the first one over). Whether a hand
must draw, must stand or may choose follows from its point, so for a hand the caller may not
see, the legal actions say only that it is to `decide`. A shoe's seed
is never shown: it lives in the vault until its `ShoeSeedRevealed` event ends the taille.
"""

from __future__ import annotations

import threading
import time
import weakref
from collections import OrderedDict
from typing import Any

from api.auth import FULL_VIEW
from api.schemas import (
    ActionView,
    CoupView,
    HandView,
    SeatView,
    ShoeView,
    TableView,
)
from api.tokens import Grant
from domain.game.cards import Card, point
from domain.game.coup import Side
from domain.game.settings import Burn
from domain.table.aggregate import Table
from domain.table.room import FREE_ROOM, Room, round_over, round_play
from domain.table.state import Action, TableState
from infra.store.outbox import CLOCKS, follow_ups


def sees_face_down(state: TableState, grant: Grant, coup: int, side: Side) -> bool:
    """Whether `grant` sees the face-down cards of `side` in coup number `coup` now."""
    if grant.role in FULL_VIEW:
        return True
    current = state.coup
    if current is None or coup != state.coup_number:
        return True  # a coup over is a coup settled: every hand was turned over
    if current.face_up(side):
        return True
    return grant.player is not None and state.hand_holder(side) == grant.player


def hand_view(state: TableState, grant: Grant, side: Side, cards: list[Card]) -> HandView:
    shown = sees_face_down(state, grant, state.coup_number, side)
    visible: list[str | None] = [c if shown or i >= 2 else None for i, c in enumerate(cards)]
    return HandView(side=side, cards=visible,
                    point=point(cards) if shown else None,
                    holder=state.hand_holder(side))


def table_view(table: Table, grant: Grant, room: Room = FREE_ROOM) -> TableView:
    """The table as `grant` sees it, in its `room` (its tournament's): once it has played its
    round's last coup, `round_over` and no action that the round's end refuses."""
    s = table.state
    over = round_over(s, room)
    legal = [a for a in legal_actions_of(table) if not (over and round_play(a.step))]
    coup = None
    if s.coup is not None:
        coup = CoupView(number=s.coup_number,
                        hands=[hand_view(s, grant, side, cards)
                               for side, cards in s.coup.hands.items()],
                        naturals=list(s.coup.naturals) if s.coup.naturals_shown else [],
                        outcomes=s.coup.outcomes)
    shoe = None
    if s.shoe is not None:
        shoe = ShoeView(decks=s.shoe.decks, physical=s.shoe.physical,
                        algorithm=s.shoe.algorithm, commitment=s.shoe.commitment,
                        contributions=list(s.shoe.contributions), cut=s.shoe.cut,
                        cards_out=s.shoe.position, remaining=s.shoe.remaining,
                        last_coup=s.shoe.last_coup)
    return TableView(
        table_id=table.id, name=table.name, version=table.version, viewer=grant.role.value,
        settings=s.settings, phase=s.phase.value, taille=s.taille, coup_number=s.coup_number,
        banker=s.banker, bank=s.bank, bank_offered_to=s.bank_offered_to,
        bank_required=s.bank_required,
        seats=[SeatView(x.player, x.chips, x.side, x.standing) for x in s.seats],
        bets=list(s.bets), stakes=list(s.stakes),
        banco_calls=list(s.banco_calls), shoe=shoe, coup=coup,
        legal_actions=actions_view(s, grant, legal), round_over=over,
        clock_ms=clock_ms(table, time.time()),
    )


def clock_ms(table: Table, now: float) -> int | None:
    """The milliseconds left at `now` on the clock `table` runs (the deadline its last command
    armed, `follow_ups`: it starts with the table's last event), None: no clock runs."""
    clocks = [e for e in follow_ups(table) if isinstance(e, CLOCKS)]
    if not clocks:
        return None
    gone = now - table.modified_on.timestamp()
    return max(0, round((clocks[0].seconds - gone) * 1000))


KEPT_ACTIONS = 1024
_kept_actions: OrderedDict[int, tuple[weakref.ref[Table], int, list[Action]]] = OrderedDict()
_kept_lock = threading.Lock()


def legal_actions_of(table: Table) -> list[Action]:
    """The table's legal actions, computed once a version of one aggregate object and asked
    by every viewer of it (a page, each SSE subscriber): a service's kept aggregate is never
    changed, a command changes a copy. Kept by the object's identity, checked alive."""
    with _kept_lock:
        kept = _kept_actions.get(id(table))
        if kept is not None and kept[0]() is table and kept[1] == table.version:
            _kept_actions.move_to_end(id(table))
            return kept[2]
    actions = table.state.legal_actions()
    with _kept_lock:
        _kept_actions[id(table)] = (weakref.ref(table), table.version, actions)
        while len(_kept_actions) > KEPT_ACTIONS:
            _kept_actions.popitem(last=False)
    return actions


def actions_view(state: TableState, grant: Grant, legal: list[Action] | None = None
                 ) -> list[ActionView]:
    """The legal actions (`legal`, else the state's); for a hand the caller may not see,
    `draw`/`stand` (and whether the drawing table forces one) would tell its point, so they
    are one unforced `decide`."""
    shown: list[ActionView] = []
    for a in state.legal_actions() if legal is None else legal:
        action = ActionView(a.step, a.actor, a.side, a.forced)
        if a.step in ("draw", "stand") and a.side is not None and not sees_face_down(
            state, grant, state.coup_number, a.side
        ):
            action = ActionView("decide", a.actor, a.side, False)
        if action not in shown:
            shown.append(action)
    return shown


def visible_event(state: TableState, grant: Grant, event: dict[str, Any]) -> dict[str, Any]:
    """An event as `grant` may see it, given the table's state now."""
    match event.get("type"):
        case "CardDealt" if not sees_face_down(state, grant, event["coup"], Side(event["side"])):
            return {**event, "card": None}
        case "CardBurned" if grant.role not in FULL_VIEW and not (
            state.settings.burn is Burn.BY_FIRST_CARD and event.get("position") == 0
        ):
            return {**event, "card": None}
    return event


View = tuple[bool, str | None]


def view_of(grant: Grant) -> View:
    """What of a grant decides how it sees events (`visible_event`): its full view, else its
    player. Grants of one view see every event alike."""
    full = grant.role in FULL_VIEW
    return full, None if full else grant.player


def visible_events(state: TableState, grant: Grant,
                   events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [visible_event(state, grant, e) for e in events]

