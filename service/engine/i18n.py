"""The engine's gettext shim: human strings in the caller's language, numbers in the caller's locale.

The engine marks its messages with `_()` (and `ngettext()`), formats the numbers inside them with `num()` /
`pct()` / `money()`, and fills placeholders with `str.format`. Which language is active is a `ContextVar`
holding a `Language`; the service sets it per request (service/i18n.py loads the gettext catalogs and builds
a Babel-backed Language). The engine itself imports no catalog, no Babel and no I/O: with nothing set, the
active language is English, whose formatting is exactly the engine's historical output (byte for byte).
"""

from __future__ import annotations

import contextlib
import datetime as dt
from collections.abc import Iterator
from contextvars import ContextVar, Token
from typing import Protocol


class Language(Protocol):
    """What the engine needs of a language: translations and locale number formatting."""

    code: str

    def gettext(self, message: str) -> str: ...

    def ngettext(self, singular: str, plural: str, n: int) -> str: ...

    def number(self, value: float, places: int, grouping: bool = False) -> str: ...

    def percent(self, fraction: float, places: int) -> str: ...

    def money(self, value: float, places: int) -> str: ...

    def day(self, value: dt.date) -> str: ...


class English:
    """The source language: messages are their own msgids, numbers as Python's format specs write them."""

    code = "en"

    def gettext(self, message: str) -> str:
        return message

    def ngettext(self, singular: str, plural: str, n: int) -> str:
        return singular if n == 1 else plural

    def number(self, value: float, places: int, grouping: bool = False) -> str:
        return format(value, f",.{places}f" if grouping else f".{places}f")

    def percent(self, fraction: float, places: int) -> str:
        return format(fraction, f".{places}%")

    def money(self, value: float, places: int) -> str:
        """US dollars: "$1,234.56", "-$0.50"."""
        sign = "-" if value < 0 else ""
        return f"{sign}${abs(value):,.{places}f}"

    def day(self, value: dt.date) -> str:
        return value.isoformat()


ENGLISH = English()
_active: ContextVar[Language] = ContextVar("scalecost_language", default=ENGLISH)


def active() -> Language:
    return _active.get()


@contextlib.contextmanager
def using(language: Language) -> Iterator[Language]:
    """Run a block in `language` (tests, the CLI); the service sets it per request with activate()."""
    token = _active.set(language)
    try:
        yield language
    finally:
        _active.reset(token)


def activate(language: Language) -> Token[Language]:
    """Make `language` active in this context (a request); deactivate(token) restores the one before."""
    return _active.set(language)


def deactivate(token: Token[Language]) -> None:
    _active.reset(token)


def _(message: str) -> str:
    """The translation of `message` in the active language (the message itself in English)."""
    return _active.get().gettext(message)


def ngettext(singular: str, plural: str, n: int) -> str:
    return _active.get().ngettext(singular, plural, n)


def N_(message: str) -> str:
    """Marks a message for extraction without translating it now (translated later where it is shown)."""
    return message


def num(value: float, places: int = 1, grouping: bool = False) -> str:
    """A number with `places` decimals in the active locale ("1234.5" / es "1.234,5"). `grouping` is English's
    thousands separators; other locales always group as their convention says."""
    return _active.get().number(float(value), places, grouping)


def pct(fraction: float, places: int = 0) -> str:
    """A fraction as a percentage: 0.45 -> "45%" (es "45 %", fr "45 %")."""
    return _active.get().percent(float(fraction), places)


def money(value: float, places: int = 2) -> str:
    """US dollars in the active locale: "$1,234.56" / es "1.234,56 US$" / pt-BR "US$ 1.234,56"."""
    return _active.get().money(float(value), places)


def day(value: dt.date) -> str:
    """A calendar day: "2026-12-01" in English (ISO 8601, as the fields carry it), es "1 dic 2026", fr "1 déc. 2026"."""
    return _active.get().day(value)
