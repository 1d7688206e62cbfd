"""domain.tournament.state."""
