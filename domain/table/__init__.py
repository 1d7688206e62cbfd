"""domain.table.state."""
