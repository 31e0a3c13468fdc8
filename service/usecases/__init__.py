"""Use cases: one function per user intent, between HTTP (api) and engine + store.

Each takes a SQLAlchemy Session (and what else it needs) as arguments and returns plain data; none knows Flask.
"""
