"""domain.auction."""
