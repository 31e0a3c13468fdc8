"""extensions."""
