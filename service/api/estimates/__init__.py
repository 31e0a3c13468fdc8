"""estimates."""
