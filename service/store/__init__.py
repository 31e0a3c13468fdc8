"""Persistence: SQLAlchemy models, sessions and repositories. The only package that touches the database."""
