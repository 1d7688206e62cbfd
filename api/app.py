"""The HTTP API: `create_app(database_url)` builds the litestar application on one store.

Routes: `/health` and `/ready` (`api.routes_health`), the tables resource
(`api.routes_tables`), the tournaments resource (`api.routes_tournaments`), live events
(`api.routes_live` on `api.live`'s channels), the reads from the projections
(`api.routes_views`: tables, rotation, recall, roads, and `/me`), the tableau's look-ahead
(`api.routes_tableau`), disputes, corrections and coup dossiers (`api.routes_disputes`), the
pages at `/` (`api.routes_page`), the printable results sheet at `/results`
(`api.routes_sheet`), the sign-in slips and links (`api.routes_sign_in`); the OpenAPI
document at `/schema/openapi.json`, rendered at `/schema` from files the app serves itself
(`api.openapi_page`). Bodies are msgspec structs (`api.schemas`), decoded bounded in size
and depth (`api.bodies`); every refusal is an RFC 9457 problem (`api.problems`); callers are
known by bearer tokens kept hashed in the same database (`api.tokens`, `api.auth`). The database:
`database_url`, else `$SABOT_DATABASE_URL`, else the default. Every request has an id,
answered in `X-Request-ID` and named in its log lines (`api.request_ids`).
"""

from __future__ import annotations

import os

from litestar import Litestar
from litestar.datastructures import State

from api.allow import allow_every_method
from api.attempts import Attempts
from api.bodies import BoundedRequest
from api.deadlines import DeadlineClock
from api.idempotency import Idempotency, replayed_header
from api.live import Heard, channels_plugin, wake_through
from api.live_limits import LiveLimits
from api.live_readers import LiveReaders
from api.metrics import Metrics, metrics
from api.openapi import add_body_schemas
from api.openapi_page import openapi_config
from api.problems import EXCEPTION_HANDLERS
from api.request_ids import RequestIds
from api.routes_audit import audit_checkpoints
from api.routes_disputes import Disputes, DisputesController, coup_dossier
from api.routes_health import health, ready
from api.routes_live import table_events
from api.routes_page import page, role_page, static_router
from api.routes_paper import payout_slips, seating_chart
from api.routes_receipts import RECEIPT_ROUTES
from api.routes_results import publish_tournament_results, tournament_disputes_list
from api.routes_sheet import results_sheet
from api.routes_sign_in import (
    croupier_slip,
    every_croupier_slip,
    every_slip,
    player_slip,
    sign_in_link,
    sign_in_pin,
    sign_out,
)
from api.routes_tableau import table_tableau
from api.routes_tables import TablesController
from api.routes_tournaments import TournamentsController
from api.routes_views import list_tables, table_recall, table_roads, table_rotation, who_am_i
from api.sign_in import SignInCodes
from api.tokens import GENERATION_FRESH_SECONDS, TOKENS, TokenStore
from api.view_reader import ViewReader, position_header
from infra.services.application import open_service
from infra.services.tables import TableService
from infra.services.tournaments import Tournaments
from infra.settings import pin_tries
from infra.store.notices import Listener
from infra.store.outbox import CLOCKS, Sweeper

MAX_BODY = 64 * 1024
"""A command is a few hundred bytes; anything near this is not one."""
MARKS = (64, 1.0)
"""The outbox's effects sent are marked 64 commands at a time, or a second after the first
was sent (`Dispatcher.batch_marks`), not in a transaction of their own for each command."""


def create_app(database_url: str | None = None, *, service: TableService | None = None,
               broker_url: str | None = None, deadlines: DeadlineClock | None = None) -> Litestar:
    """The application on `database_url` (or on `service`, already open, e.g. in tests); live
    channels through Redis when `broker_url` (else `$SABOT_BROKER_URL`) is a Redis URL, and
    decision deadlines sent through that broker (`deadlines` replaces the clock in tests)."""
    service = service or open_service(TableService, database_url)
    broker = broker_url if broker_url is not None else os.environ.get("SABOT_BROKER_URL", "")
    clock = deadlines or DeadlineClock(broker)
    for kind in CLOCKS:
        service.effects.on(kind, clock)
    service.effects.batch_marks(*MARKS)
    sweeper = Sweeper(service.effects)  # clocks another process armed and did not send
    channels = channels_plugin(broker)
    tokens = TokenStore(service.database, fresh_seconds=GENERATION_FRESH_SECONDS)
    revocations = Listener(service.database, TOKENS, tokens.forget)
    heard = Heard(channels, service)
    views = ViewReader(service)
    disputes = Disputes(service.database_url)
    metered = Metrics(views, clock.broker)
    live = LiveReaders(service, channels, metered.live_reads)
    app = Litestar(
        route_handlers=[health, ready, metrics, TablesController, table_events,
                        TournamentsController, table_rotation, table_recall, audit_checkpoints,
                        DisputesController, coup_dossier, *RECEIPT_ROUTES,
                        tournament_disputes_list, publish_tournament_results,
                        # the pages and what they read (api.routes_page, api.routes_views)
                        table_roads, table_tableau, list_tables, who_am_i, page, role_page,
                        results_sheet, seating_chart, payout_slips, static_router(),
                        # signing in by slip (api.routes_sign_in)
                        player_slip, every_slip, croupier_slip, every_croupier_slip,
                        sign_in_link, sign_in_pin, sign_out],
        plugins=[channels],
        state=State({"service": service, "tokens": tokens, "views": views,
                     "sign_in_codes": SignInCodes(service.database, tokens, service.secret_key,
                                                  pin_tries()),
                     "sign_in_tries": Attempts(limit=5, window=60.0),
                     "tournaments": Tournaments(service), "metrics": metered,
                     "live_readers": live,
                     "live_limits": LiveLimits(metered.subscribers, metered.live_refusals),
                     "disputes": disputes,
                     "idempotency": Idempotency(service.database), "broker_url": broker}),
        exception_handlers=EXCEPTION_HANDLERS,
        openapi_config=openapi_config(),
        on_startup=[add_body_schemas, wake_through(channels, service), revocations.start,
                    heard.start, sweeper.start],
        on_shutdown=[revocations.close, heard.close, views.close, live.close, sweeper.close,
                     service.effects.close, service.close, disputes.close],
        request_max_body_size=MAX_BODY,
        request_class=BoundedRequest,
        before_send=[allow_every_method, position_header],
        after_request=replayed_header,
        logging_config=None,  # the process's own (`sabot serve`: JSON); refusals log themselves
    )
    app.asgi_handler = RequestIds(app.asgi_handler)  # around routing: a 404 has its id too
    return app
