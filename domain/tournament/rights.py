"""Who may ask a tournament for what: players register, re-enter and bet secretly only for
themselves; every other step is an official's (the organiser's or the director's), and a
director's step carries its lease's fencing epoch, refused once a newer director holds the
lease (`stale-epoch`).
"""

from __future__ import annotations

from domain.actors import require_actor
from domain.tournament import commands as tc
from domain.tournament.state import TournamentState


def require_right(actor: str, command: tc.TournamentCommand, state: TournamentState) -> None:
    """Refuse `command` from `actor` unless it is theirs to send (and, from a director, of
    the director holding the lease)."""
    match command:
        case tc.RegisterPlayer(player=p):
            require_actor(actor, p, f"register {p}", rule="not-yourself")
        case tc.UnregisterPlayer(player=p):
            require_actor(actor, p, f"unregister {p}", rule="not-yourself")
        case tc.ReenterPlayer(player=p):
            require_actor(actor, p, f"re-enter {p}", rule="not-yourself")
        case tc.DrawSeating():
            require_actor(actor, None, "draw the seats", rule="official-step")
        case tc.AppointDirector():
            require_actor(actor, None, "appoint a director", rule="official-step")
        case tc.PauseTournament():
            require_actor(actor, None, "pause", rule="official-step")
        case tc.ResumeTournament():
            require_actor(actor, None, "resume", rule="official-step")
        case tc.StartRound(epoch=epoch):
            require_actor(actor, None, "start a round", rule="official-step")
            state.check_epoch(epoch)
        case tc.StartBreak(epoch=epoch):
            require_actor(actor, None, "start a break", rule="official-step")
            state.check_epoch(epoch)
        case tc.StartStep(epoch=epoch):
            require_actor(actor, None, "start a step", rule="official-step")
            state.check_epoch(epoch)
        case tc.EndStep(epoch=epoch):
            require_actor(actor, None, "end a step", rule="official-step")
            state.check_epoch(epoch)
        case tc.EndRound(epoch=epoch):
            require_actor(actor, None, "end a round", rule="official-step")
            state.check_epoch(epoch)
        case tc.SettlePlayOff(epoch=epoch):
            require_actor(actor, None, "settle a play-off", rule="official-step")
            state.check_epoch(epoch)
        case tc.RecordBustOuts(epoch=epoch):
            require_actor(actor, None, "record bust-outs", rule="official-step")
            state.check_epoch(epoch)
        case tc.BalanceTables(epoch=epoch):
            require_actor(actor, None, "balance the tables", rule="official-step")
            state.check_epoch(epoch)
        case tc.PlaceSecretBet(player=p):
            require_actor(actor, p, f"place {p}'s secret bet", rule="not-yourself")
        case tc.RevealSecretBet(player=p):
            require_actor(actor, p, f"reveal {p}'s secret bet", rule="not-yourself")
        case tc.Intervene():
            require_actor(actor, None, "intervene", rule="official-step")
        case tc.FinishTournament(epoch=epoch):
            require_actor(actor, None, "finish the tournament", rule="official-step")
            state.check_epoch(epoch)
        case tc.PublishResults():
            require_actor(actor, None, "publish the results", rule="official-step")
        case tc.CancelTournament():
            require_actor(actor, None, "cancel the tournament", rule="official-step")
        case tc.ArchiveTournament():
            require_actor(actor, None, "archive the tournament", rule="official-step")
        case tc.MakeAnnouncement():
            require_actor(actor, None, "make an announcement", rule="official-step")
