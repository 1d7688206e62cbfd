"""infra.services."""
