"""infra.store.opening."""
