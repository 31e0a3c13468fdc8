"""accelerators."""
