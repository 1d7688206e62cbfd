"""domain.game."""
