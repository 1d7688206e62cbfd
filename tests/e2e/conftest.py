"""The HTTP server fixtures of `test_api` (`api`, `game`), shared by the other e2e modules."""

from tests.e2e.test_api import api, game

__all__ = ["api", "game"]
