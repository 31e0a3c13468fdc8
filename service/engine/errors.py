"""Errors the engine raises for physically impossible or unknown inputs (the API maps them to 422)."""

from __future__ import annotations


class InvalidRequest(ValueError):
    """One or more request fields are impossible. `errors` maps a dotted field path to messages."""

    def __init__(self, errors: dict[str, list[str]]):
        self.errors = errors
        super().__init__("; ".join(f"{k}: {' '.join(v)}" for k, v in errors.items()))

    @classmethod
    def single(cls, field: str, message: str) -> InvalidRequest:
        return cls({field: [message]})
