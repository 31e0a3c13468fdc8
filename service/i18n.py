"""Languages of the service: the gettext catalogs under service/translations, loaded once, and Babel's locale
data for numbers and money, handed to the engine as a `service.engine.i18n.Language`.

English is the source language (msgids are the English text) and the fallback. `make run` / `make test` compile
the catalogs (`pybabel compile`); a catalog without its .mo (a fresh checkout) is compiled in memory from its
.po, so the service always answers in the language asked for.
"""

from __future__ import annotations

import datetime as dt
import functools
import io
import re
from collections.abc import Iterable
from pathlib import Path

from babel import Locale
from babel.dates import format_date
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from babel.numbers import format_currency, format_decimal, format_percent
from babel.support import Translations

from .engine.i18n import ENGLISH, Language

TRANSLATIONS = Path(__file__).resolve().parent / "translations"
DOMAIN = "messages"
# Language tags as the API speaks them (BCP 47) → the catalog's locale directory (POSIX).
LANGUAGES = {"en": "en", "es": "es", "pt-BR": "pt_BR", "fr": "fr"}
DEFAULT = "en"


class BabelLanguage:
    """A translated language: gettext from the catalog, numbers and money by Babel's CLDR data."""

    def __init__(self, code: str, translations: Translations, locale: Locale) -> None:
        self.code = code
        self.translations = translations
        self.locale = locale
        self._currency = locale.currency_formats["standard"].pattern
        self._percent = locale.percent_formats[None].pattern

    def gettext(self, message: str) -> str:
        return self.translations.gettext(message)

    def ngettext(self, singular: str, plural: str, n: int) -> str:
        return self.translations.ngettext(singular, plural, n)

    def number(self, value: float, places: int, grouping: bool = False) -> str:
        return format_decimal(value, format=_places("#,##0.00", places), locale=self.locale)

    def percent(self, fraction: float, places: int) -> str:
        return format_percent(fraction, format=_places(self._percent, places), locale=self.locale)

    def day(self, value: dt.date) -> str:
        return format_date(value, format="medium", locale=self.locale)

    def money(self, value: float, places: int) -> str:
        pattern = _places(self._currency, places)
        return format_currency(value, "USD", format=pattern, locale=self.locale, currency_digits=False)


def _places(pattern: str, places: int) -> str:
    """A CLDR number pattern ("#,##0.00 ¤", "#,##0 %") with exactly `places` decimals."""
    number = re.search(r"[#0,]*0(?:\.0+)?", pattern)
    assert number is not None, pattern
    integer = number.group(0).split(".")[0]
    return (
        pattern[: number.start()] + integer + ("." + "0" * places if places else "") + pattern[number.end() :]
    )


def negotiate(accept: Iterable[tuple[str, float]], asked: str | None = None) -> str:
    """The language tag to answer in: `asked` (the page's ?lang=) if supported, else the first of Accept-Language's
    ranges (highest quality first, q=0 refused) that names a supported tag or its language (`pt-PT` and `pt` get
    `pt-BR`, `fr-CA` gets `fr`), else English."""
    if asked and (tag := _supported(asked, exact=True)):
        return tag
    for value, quality in sorted(
        accept, key=lambda item: -item[1]
    ):  # sorted() is stable: header order on ties
        if quality > 0 and value != "*":
            tag = _supported(value, exact=True) or _supported(value, exact=False)
            if tag:
                return tag
    return DEFAULT


def _supported(value: str, *, exact: bool) -> str | None:
    wanted = value.strip().lower().replace("_", "-")
    for tag in LANGUAGES:
        if wanted == tag.lower() or (not exact and wanted.split("-")[0] == tag.lower().split("-")[0]):
            return tag
    return None


@functools.cache
def language(tag: str) -> Language:
    """The Language for a supported tag (English for anything else), its catalog loaded once per process."""
    directory = LANGUAGES.get(tag)
    if directory is None or tag == DEFAULT:
        return ENGLISH
    return BabelLanguage(tag, load_translations(directory), Locale.parse(directory))


def load_translations(directory: str) -> Translations:
    """The compiled catalog (.mo) when it is current, else the .po compiled in memory."""
    folder = TRANSLATIONS / directory / "LC_MESSAGES"
    po, mo = folder / f"{DOMAIN}.po", folder / f"{DOMAIN}.mo"
    if mo.exists() and (not po.exists() or mo.stat().st_mtime >= po.stat().st_mtime):
        with mo.open("rb") as handle:
            return Translations(handle, domain=DOMAIN)
    with po.open("rb") as handle:
        catalog = read_po(handle, locale=directory)
    buffer = io.BytesIO()
    write_mo(buffer, catalog)
    buffer.seek(0)
    return Translations(buffer, domain=DOMAIN)


# A str.format field, its conversion and spec dropped when the values are read back as text: {min:g} → {min}
_FIELD = r"\{(\w+)(?:![rsa])?(?::[^{}]*)?\}"
_FIELD_SPLIT = r"\{\w+(?:![rsa])?(?::[^{}]*)?\}"


@functools.cache
def _templates() -> tuple[tuple[re.Pattern[str], str, tuple[str, ...]], ...]:
    """Each msgid with {placeholders}, as a regex that reads the English message back into its values."""
    out = []
    for tag in LANGUAGES:
        lang = language(tag)
        if isinstance(lang, BabelLanguage):
            catalog = lang.translations._catalog  # msgid → msgstr
            for msgid in catalog:
                # at least a few words of text: "{value} hours" alone would read any message ending in "hours"
                if isinstance(msgid, str) and "{" in msgid and len(re.sub(_FIELD_SPLIT, "", msgid)) >= 12:
                    names = tuple(re.findall(_FIELD, msgid))
                    parts = re.split(_FIELD_SPLIT, msgid)
                    regex = "(.+?)".join(re.escape(p) for p in parts)
                    out.append((re.compile(f"^{regex}$", re.S), msgid, names))
            break
    # the most literal text first: "Must be greater than or equal to {min}." before "Must be greater than {min}."
    out.sort(key=lambda t: -len(re.sub(_FIELD_SPLIT, "", t[1])))
    return tuple(out)


def translate_message(message: str, lang: Language) -> str:
    """An English message in `lang`: its own translation, or a {placeholder} template's with the values read
    back (marshmallow's "Must be greater than or equal to 1." is `Must be greater than or equal to {min}.`)."""
    if lang is ENGLISH or not isinstance(message, str):
        return message
    direct = lang.gettext(message)
    if direct != message:
        return direct
    for regex, msgid, names in _templates():
        match = regex.match(message)
        if match:
            # a value that is a phrase of its own ('Give "auto" or {what}.') is translated too
            values = {
                name: translate_message(value, lang) if " " in value and value != message else value
                for name, value in zip(names, match.groups(), strict=False)
            }
            return re.sub(_FIELD, r"{\1}", lang.gettext(msgid)).format(**values)
    return message
