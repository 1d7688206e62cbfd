"""infra.audit.verify."""
