"""The tableau's look-ahead, for the croupier entering a physical shoe's cards:

    POST /tables/{table}/tableau   {"known": {"punter": ["4h", "Tc"]}, "card": "5d"}

What the drawing table requires of the coup being played, with the caller's own cards in the
place of the cards it may not see (a croupier dealt them, so knows them), and `card` dealt
next when given: which hand that card goes to, the naturals it would show, each hand's point
and the next legal steps (a forced draw or stand says so; past the naturals, which are shown
as a matter of course). Every other fact it reads (how many
cards each hand holds, the third cards, the decisions taken, the naturals shown) is public,
so the answer tells the caller nothing the caller did not give: anyone may ask. Nothing is
recorded. A hand whose cards are neither visible nor given has no point, and its decision
stays one `decide`. The body is a `LookAhead` (`api.schemas`, declared in the OpenAPI
document by `api.openapi`).
"""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import Request, post
from litestar.datastructures import State

from api.openapi import BEARER_OR_ANONYMOUS, LookAheadOperation, problems
from api.problems import ApiProblem, invalid
from api.routes_tables import TableRef, blocking, grant_of
from api.schemas import ActionView, LookAhead
from api.tokens import Grant
from api.visibility import actions_view, sees_face_down
from domain.game.cards import Card, card, point
from domain.game.coup import Side
from domain.table.state import TableState
from infra.services.references import table_id_of
from infra.services.tables import TableService


class Tableau(msgspec.Struct, frozen=True, kw_only=True):
    """The coup as it would stand: `side` receives `card`; `points` None for a hand unknown."""

    side: Side | None
    points: dict[Side, int | None]
    naturals: list[Side]
    next: list[ActionView]


def look_ahead(state: TableState, grant: Grant, ask: LookAhead) -> Tableau:
    coup = state.coup
    if coup is None or coup.is_settled:
        raise ApiProblem(409, "no coup is being dealt", rule="out-of-turn")
    given = {side: [card(c) for c in cards] for side, cards in ask.known.items()}
    hands: dict[Side, list[Card]] = {}
    unknown: set[Side] = set()
    for side, cards in coup.hands.items():
        seen = sees_face_down(state, grant, state.coup_number, side)
        mine = given.get(side, [])
        hand = [c if seen or i >= 2 else (mine[i] if i < len(mine) else None)
                for i, c in enumerate(cards)]
        if None in hand:
            unknown.add(side)
        hands[side] = [c for c in hand if c is not None]
    points: dict[Side, int | None] = {
        s: None if s in unknown else point(h) for s, h in hands.items()}
    if unknown:
        deal = [s.side for s in coup.legal_steps() if s.step.value == "deal"]
        receives = deal[0] if ask.card is not None and deal else None
        return Tableau(side=receives, points=points, naturals=[], next=actions_view(state, grant))
    ahead = msgspec.structs.replace(coup, hands=hands, decided=dict(coup.decided),
                                    early=dict(coup.early), naturals=list(coup.naturals))
    receives = ahead.deal(card(ask.card)) if ask.card is not None else None
    naturals: list[Side] = []
    if ahead.cards_dealt >= 2 * len(ahead.deal_order):
        if not ahead.naturals_shown:
            ahead.show_naturals()  # forced and mechanical: the decision after it is the news
        naturals = ahead.naturals
    return Tableau(side=receives, naturals=naturals,
                   points={s: point(h) for s, h in ahead.hands.items()},
                   next=[ActionView(s.step.value, None, s.side, s.forced)
                         for s in ahead.legal_steps()])


@post("/tables/{table:str}/tableau", status_code=200, tags=["tables"],
      summary="What the drawing table requires, with the caller's own cards",
      operation_class=LookAheadOperation, security=BEARER_OR_ANONYMOUS,
      responses=problems(400, 401, 404, 409, 413, 422))
async def table_tableau(request: Request[Any, Any, State], table: TableRef) -> Tableau:
    grant = await grant_of(request)
    try:
        ask = msgspec.convert(await request.json(), LookAhead)
    except msgspec.ValidationError as error:
        raise invalid(error) from None
    service: TableService = request.app.state.service
    found = await blocking(service.table, table_id_of(table))
    return look_ahead(found.state, grant, ask)
