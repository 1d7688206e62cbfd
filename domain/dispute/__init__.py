"""domain.dispute."""
