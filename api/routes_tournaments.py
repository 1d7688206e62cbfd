"""The organiser's tournaments resource (`infra.services.tournaments.Tournaments` over HTTP).

    POST   /tournaments                              create from a preset or a format  (organiser)
    GET    /tournaments                              every tournament, with its status  (public)
    GET    /tournaments/presets                      the presets with their formats     (public)
    GET    /tournaments/{t}                          the big screen: `TournamentView`   (public)
    GET    /tournaments/{t}/format                   its format, every field             (public)
    POST   /tournaments/{t}/players                  register (organiser; a player themselves)
    DELETE /tournaments/{t}/players/{player}         unregister before the draw         (same)
    POST   /tournaments/{t}/start | pause | resume   (organiser)
    POST   /tournaments/{t}/interventions            a correction, with its reason       (organiser)
    POST   /tournaments/{t}/announcements            a line for the big screen's ticker  (organiser)
    POST   /tournaments/preview                      play a format with bots first       (organiser)
    POST   /tournaments/{t}/secret-bets [/reveal]    a player's own secret bet, its reveal (player)
    GET    /tournaments/{t}/standings                in play by chips, then out by place (public)
    GET    /tournaments/{t}/results                  positions and prizes, winner first  (public)

The standings and the results answer CSV to `Accept: text/csv` (`api.csv_files`).

`{t}` is a tournament's UUID or its name. An `Idempotency-Key` header, when present, is the
command id (scoped to the caller): a retry answers as before and records nothing. A body that
does not fit is a 422 problem naming the field; a refusal of the rules, its rule (409 out of
turn, 422 a broken rule, 404 unknown); nothing is recorded for a refused request.
"""

from __future__ import annotations

import uuid
from typing import Annotated, Any

import msgspec
from litestar import Controller, Request, Response, delete, get, post
from litestar.datastructures import State
from litestar.exceptions import ValidationException
from litestar.params import JSONBody, PathParameter, QueryParameter

from api import auth
from api.csv_files import RESULT_COLUMNS, STANDING_COLUMNS, VARY, csv_response, wants_csv
from api.idempotency import replayed_if
from api.openapi import CsvToo, ok, problems
from api.problems import ApiProblem, Problem, field_of, problem
from api.routes_tables import IdempotencyKey, blocking, grant_of
from api.schemas import FormatChoice, format_overrides
from api.tokens import Grant, Role
from api.view_reader import At, read
from domain.errors import NotFound, RuleViolation
from domain.limits import AnnouncementText
from domain.tournament.presets import PRESETS, preset
from domain.tournament.seating import smallest_field
from domain.tournament.settings import TournamentSettings
from infra.services.preview import PACE, Preview, preview
from infra.services.tables import Recorded
from infra.services.tournament_view import Results, TournamentView
from infra.services.tournaments import Tournaments, tournament_id_of
from projections.standings import Standing, tournament_standings

Everything = Annotated[bool, QueryParameter(
    description="the cancelled and archived tournaments too")]
TournamentRef = Annotated[str, PathParameter(description="the tournament's UUID or its name")]
PlayerRef = Annotated[str, PathParameter(description="the player's id")]
Action = Annotated[str, PathParameter(description="start, pause or resume")]


class CreateTournament(FormatChoice, kw_only=True, forbid_unknown_fields=True):
    """A tournament from a preset or a format. `seed` (hex) makes the draw and every shoe
    reproducible: demos and tests only; without it they come from the operating system's
    CSPRNG."""

    name: str
    seed: str | None = None


class PreviewFormat(FormatChoice, kw_only=True, forbid_unknown_fields=True):
    """A format to play `runs` times with `players` house bots, `pace` seconds a coup's
    dealing (and the format's bet clock, if any, at every turn)."""

    players: Annotated[int, msgspec.Meta(ge=2, le=200)]
    runs: Annotated[int, msgspec.Meta(ge=1, le=10)] = 3
    pace: Annotated[int, msgspec.Meta(ge=1, le=600)] = PACE


class Register(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """A player to register; `bot`: a house bot the workers play."""

    player: str
    bot: bool = False


class Intervene(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """An organiser's intervention: `kind` one of move (to `table`), break-table (`table`),
    disqualify, correct-chips and penalise (by `delta`), add-late-player; `reason` mandatory."""

    kind: str
    reason: str
    player: str = ""
    delta: int = 0
    table: str | None = None


class Announce(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """What the organiser tells the room: shown on the big screen's ticker."""

    text: AnnouncementText


class PlaceSecretBet(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """`commitment`: `domain.tournament.state.secret_commitment(spot, amount, nonce)`, in hex."""

    commitment: str


class RevealSecretBet(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    spot: str
    amount: int
    nonce: str


class Summary(msgspec.Struct, frozen=True, kw_only=True):
    id: str
    name: str
    status: str
    variant: str
    stage: str
    round: int
    entrants: int
    archived: bool = False


class Preset(msgspec.Struct, frozen=True):
    name: str
    format: TournamentSettings
    smallest_field: int  # the fewest players its draw takes


def settings_of(body: CreateTournament | PreviewFormat) -> TournamentSettings:
    """The format a body chooses: its preset or format with the fields given over it; a field
    whose value the rules refuse is named (the one without which the format is playable)."""
    if (body.preset is None) == (body.format is None):
        raise ApiProblem(422, "give a `preset` or a `format`, not both", rule="preset-or-format",
                         field="preset")
    base: TournamentSettings = body.format or preset(body.preset or "")
    given = format_overrides(body)
    try:
        return msgspec.structs.replace(base, **given).check()
    except RuleViolation as refused:
        raise ApiProblem(422, refused.message, rule=refused.rule,
                         field=_at_fault(base, given)) from None


def _at_fault(base: TournamentSettings, given: dict[str, Any]) -> str | None:
    """The field given without which the format is playable; else one refused alone."""
    def playable(fields: dict[str, Any]) -> bool:
        try:
            msgspec.structs.replace(base, **fields).check()
        except RuleViolation:
            return False
        return True

    for name in given:
        if playable({k: v for k, v in given.items() if k != name}):
            return name
    return next((name for name in given if not playable({name: given[name]})), None)


def seed_of(body: CreateTournament) -> bytes | None:
    if body.seed is None:
        return None
    try:
        return bytes.fromhex(body.seed)
    except ValueError:
        raise ApiProblem(422, "the seed is hexadecimal", rule="invalid-field",
                         field="seed") from None


def may_register(grant: Grant, player: str, bot: bool) -> None:
    """The organiser registers anyone; a player only themselves, and never a bot."""
    auth.require_writer(grant)
    if grant.role is Role.ORGANISER:
        return
    if grant.role is not Role.PLAYER or bot or grant.player != player:
        raise ApiProblem(403, f"{auth.actor_of(grant)} may not register {player}"
                         f"{' as a bot' if bot else ''}", rule="not-yourself", field="player")


def command_id_of(grant: Grant, key: str | None, action: str) -> str:
    """The command id: the `Idempotency-Key` given, else a fresh one; scoped to the caller."""
    return auth.scope_command_id(grant, key or f"{action}/{uuid.uuid4()}")


def own_player(grant: Grant) -> str:
    """A secret bet is a player's own: nobody, the organiser included, places or reveals it
    for them."""
    auth.require_writer(grant)
    if grant.role is not Role.PLAYER or grant.player is None:
        raise ApiProblem(403, "a secret bet is placed and revealed by its player only",
                         rule="player-only")
    return grant.player


def organiser(grant: Grant) -> None:
    auth.require_writer(grant)
    if grant.role is not Role.ORGANISER:
        raise ApiProblem(403, "only the organiser runs a tournament", rule="organiser-only")


def _invalid_body(_: Request[Any, Any, Any], error: ValidationException) -> Response[Problem]:
    """A body litestar could not decode (400) or fit to its type (422, saying what and where:
    "Object missing required field `reason`", field `reason`)."""
    first: dict[str, Any] = {}
    if isinstance(error.extra, list) and error.extra and isinstance(error.extra[0], dict):
        first = error.extra[0]
    key = first.get("key")
    if key == "body":
        return problem(400, str(error.detail), "invalid-field", key)
    message = str(first.get("message") or error.detail)
    return problem(422, message, "invalid-field", field_of(message) or key)


class TournamentsController(Controller):
    path = "/tournaments"
    tags = ["tournaments"]  # noqa: RUF012 (litestar's own attribute)
    exception_handlers = {ValidationException: _invalid_body}  # noqa: RUF012

    @post("/", status_code=201, summary="Create a tournament (organiser)",
          responses=problems(400, 401, 403, 404, 422))
    async def create(self, request: Request[Any, Any, State], data: JSONBody[CreateTournament],
                     idempotency_key: IdempotencyKey) -> Response[TournamentView]:
        grant = await grant_of(request)
        organiser(grant)
        settings, seed = settings_of(data), seed_of(data)
        command_id = command_id_of(grant, idempotency_key, "create")
        service = _service(request)

        def create() -> Response[TournamentView]:
            again = service.service.answered(command_id) is not None
            tournament_id = service.create(data.name, settings, seed=seed,
                                           actor=auth.actor_of(grant), command_id=command_id)
            return replayed_if(again, service.view(tournament_id), 201)

        return await blocking(create)

    @post("/preview", status_code=200, summary="Play a format with bots before announcing it",
          responses=problems(400, 401, 403, 404, 422))
    async def preview(self, request: Request[Any, Any, State],
                      data: JSONBody[PreviewFormat]) -> Preview:
        """Expected duration, the stacks at each round's end, how often a play-off was needed;
        each run is a whole tournament of bots in memory, nothing recorded."""
        organiser(await grant_of(request))
        settings = settings_of(data)
        return await blocking(lambda: preview(settings, data.players, data.runs,
                                              pace=data.pace))

    @get("/", summary="The tournaments of the lobby (`all=true`: the cancelled and archived "
                      "too), with their status", responses=problems(422))
    async def list_tournaments(self, request: Request[Any, Any, State],
                               all: Everything = False) -> list[Summary]:
        service = _service(request)

        def summaries() -> list[Summary]:
            rows = []
            for tournament_id, state in service.listed(all):
                rows.append(Summary(id=str(tournament_id), name=state.name,
                                    status=state.status.value,
                                    variant=state.settings.variant.value,
                                    stage=state.current.name, round=state.round,
                                    entrants=state.entries, archived=state.archived))
            return rows

        return await blocking(summaries)

    @get("/presets", summary="The preset formats")
    async def presets(self) -> list[Preset]:
        return [Preset(name, settings, smallest_field(settings))
                for name, settings in PRESETS.items()]

    @get("/{tournament:str}", summary="A tournament, as the big screen shows it",
         responses=problems(404))
    async def show(self, request: Request[Any, Any, State],
                   tournament: TournamentRef) -> TournamentView:
        return await blocking(_service(request).view, tournament_id_of(tournament))

    @get("/{tournament:str}/format", summary="A tournament's format, every field",
         responses=problems(404))
    async def format(self, request: Request[Any, Any, State],
                     tournament: TournamentRef) -> TournamentSettings:
        service = _service(request)
        return await blocking(lambda: service.state(tournament_id_of(tournament)).settings)

    @post("/{tournament:str}/players", status_code=201, summary="Register a player",
          responses=problems(401, 403, 404, 409, 422))
    async def register(self, request: Request[Any, Any, State], tournament: TournamentRef,
                       data: JSONBody[Register], idempotency_key: IdempotencyKey) -> Recorded:
        grant = await grant_of(request)
        may_register(grant, data.player, data.bot)
        command_id = command_id_of(grant, idempotency_key, "register")
        return await blocking(lambda: _service(request).register(
            tournament_id_of(tournament), data.player, bot=data.bot,
            actor=auth.actor_of(grant), command_id=command_id))

    @delete("/{tournament:str}/players/{player:str}", status_code=200,
            summary="Unregister a player before the draw",
            responses=problems(401, 403, 404, 409))
    async def unregister(self, request: Request[Any, Any, State], tournament: TournamentRef,
                         player: PlayerRef, idempotency_key: IdempotencyKey) -> Recorded:
        grant = await grant_of(request)
        may_register(grant, player, False)
        command_id = command_id_of(grant, idempotency_key, "unregister")
        return await blocking(lambda: _service(request).unregister(
            tournament_id_of(tournament), player, actor=auth.actor_of(grant),
            command_id=command_id))

    @post("/{tournament:str}/{action:str}", status_code=200,
          summary="Start (the seating draw), pause, resume, cancel (before the start) or "
                  "archive (after the finish) (organiser)",
          responses=problems(401, 403, 404, 409, 422))
    async def act(self, request: Request[Any, Any, State], tournament: TournamentRef,
                  action: Action, idempotency_key: IdempotencyKey) -> Response[TournamentView]:
        grant = await grant_of(request)
        organiser(grant)
        service = _service(request)
        commands = {"start": service.start, "pause": service.pause, "resume": service.resume,
                    "cancel": service.cancel, "archive": service.archive}
        if action not in commands:
            raise ApiProblem(404, f"no action {action!r} ({', '.join(commands)})",
                             rule="not-found")
        command_id = command_id_of(grant, idempotency_key, action)
        tournament_id = tournament_id_of(tournament)

        def run() -> Response[TournamentView]:
            recorded = commands[action](tournament_id, actor=auth.actor_of(grant),
                                        command_id=command_id)
            return replayed_if(recorded.aggregate is None, service.view(tournament_id), 200)

        return await blocking(run)

    @post("/{tournament:str}/interventions", status_code=201,
          summary="An organiser's intervention, with its reason",
          responses=problems(401, 403, 404, 409, 422))
    async def intervene(self, request: Request[Any, Any, State], tournament: TournamentRef,
                        data: JSONBody[Intervene], idempotency_key: IdempotencyKey) -> Recorded:
        grant = await grant_of(request)
        organiser(grant)
        if not data.reason.strip():
            raise RuleViolation("an intervention gives its reason", rule="reason-required")
        command_id = command_id_of(grant, idempotency_key, "intervene")
        return await blocking(lambda: _service(request).intervene(
            tournament_id_of(tournament), data.kind, data.player, data.reason,
            delta=data.delta, table=data.table, actor=auth.actor_of(grant),
            command_id=command_id))

    @post("/{tournament:str}/announcements", status_code=201,
          summary="An announcement to the room, shown on the big screen (organiser)",
          responses=problems(401, 403, 404, 409, 422))
    async def announce(self, request: Request[Any, Any, State], tournament: TournamentRef,
                       data: JSONBody[Announce], idempotency_key: IdempotencyKey) -> Recorded:
        grant = await grant_of(request)
        organiser(grant)
        command_id = command_id_of(grant, idempotency_key, "announce")
        return await blocking(lambda: _service(request).announce(
            tournament_id_of(tournament), data.text, actor=auth.actor_of(grant),
            command_id=command_id))

    @post("/{tournament:str}/secret-bets", status_code=201,
          summary="A player's secret bet on their next coup: its commitment only",
          responses=problems(401, 403, 404, 409, 422))
    async def place_secret_bet(self, request: Request[Any, Any, State],
                               tournament: TournamentRef, data: JSONBody[PlaceSecretBet],
                               idempotency_key: IdempotencyKey) -> Recorded:
        grant = await grant_of(request)
        player = own_player(grant)
        command_id = command_id_of(grant, idempotency_key, "secret-bet")
        return await blocking(lambda: _service(request).place_secret_bet(
            tournament_id_of(tournament), player, data.commitment, actor=player,
            command_id=command_id))

    @post("/{tournament:str}/secret-bets/reveal", status_code=200,
          summary="Reveal one's secret bet once its coup is dealt",
          responses=problems(401, 403, 404, 409, 422))
    async def reveal_secret_bet(self, request: Request[Any, Any, State],
                                tournament: TournamentRef, data: JSONBody[RevealSecretBet],
                                idempotency_key: IdempotencyKey) -> Recorded:
        grant = await grant_of(request)
        player = own_player(grant)
        command_id = command_id_of(grant, idempotency_key, "reveal")
        return await blocking(lambda: _service(request).reveal_secret_bet(
            tournament_id_of(tournament), player, data.spot, data.amount, data.nonce,
            actor=player, command_id=command_id))

    @get("/{tournament:str}/standings", summary="In play by chips, then out by position",
         operation_class=CsvToo, response_headers=VARY,
         responses={**ok(list[Standing], "the standings"), **problems(422, 503)})
    async def standings(self, request: Request[Any, Any, State],
                        tournament: TournamentRef, at: At = 0
                        ) -> list[Standing] | Response[str]:
        """An unknown tournament has no standings yet: an empty list (the page polls a
        tournament before it is created). `Accept: text/csv`: the same rows as CSV."""
        service = _service(request)
        try:
            state = await blocking(service.state, tournament_id_of(tournament))
        except NotFound:
            rows: list[Standing] = []
        else:
            rows = await read(request, "standings", lambda db: tournament_standings(db, state),
                              at)
        return csv_response(rows, STANDING_COLUMNS) if wants_csv(request) else rows

    @get("/{tournament:str}/results", summary="Finishing positions and prizes, winner first",
         operation_class=CsvToo, response_headers=VARY,
         responses={**ok(Results, "the results"), **problems(404)})
    async def results(self, request: Request[Any, Any, State],
                      tournament: TournamentRef) -> Results | Response[str]:
        """`Accept: text/csv`: the positions as CSV (position, tied, player, prize)."""
        results = await blocking(_service(request).results, tournament_id_of(tournament))
        return csv_response(results.positions, RESULT_COLUMNS) if wants_csv(request) \
            else results


def _service(request: Request[Any, Any, State]) -> Tournaments:
    tournaments: Tournaments = request.app.state.tournaments
    return tournaments
