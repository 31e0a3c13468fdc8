"""price_imports."""
