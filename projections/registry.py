"""The projections of the store, by name, in the order `sabot projections` runs them."""

from __future__ import annotations

from projections.auctions import AuctionsView
from projections.recall import RecallView
from projections.roads import RoadsView
from projections.rotation import RotationView
from projections.standings import StandingsView
from projections.view import View

VIEWS: tuple[type[View], ...] = (RecallView, RotationView, StandingsView, AuctionsView,
                                   RoadsView)
NAMES: tuple[str, ...] = tuple(view.name for view in VIEWS)
