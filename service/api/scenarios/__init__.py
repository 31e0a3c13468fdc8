"""scenarios."""
