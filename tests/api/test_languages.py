"""Languages: Accept-Language picks the language of every human string; field names, enum values and numbers in
base units never change; the catalogs hold a translation of every message in the code."""

from __future__ import annotations

import datetime as dt
import io
import re
from pathlib import Path

import pytest
from babel.messages.extract import extract_from_dir
from babel.messages.pofile import read_po

import service
from service import i18n
from service.engine import estimate_training, units
from service.engine.i18n import ENGLISH, day, using

from .test_estimates import FINE_TUNE, SERVE

ENUM_LIKE = re.compile(r"^[a-z0-9_.:/-]+$")
PACKAGE = Path(service.__file__).resolve().parent
LOCALES = ("es", "pt_BR", "fr")
OOM = {  # does not fit: a "does_not_fit" recommendation with its message
    "model": {"preset": "llama-2-70b"},
    "training": {"tokens": "10B", "global_batch_size": 64, "sequence_length": 4096},
    "hardware": {"accelerator": "nvidia-a100-sxm-80gb", "count": 8, "parallelism": {"data": 8}},
}


def _extracted() -> set[str]:
    """Every msgid in the package's code, as `make translations` extracts them (babel.cfg, keyword N_)."""
    method_map = [("**.py", "python")]
    keywords = {"_": None, "N_": None, "ngettext": (1, 2)}
    found = set()
    for _filename, _lineno, message, _comments, _context in extract_from_dir(
        str(PACKAGE), method_map, keywords=keywords
    ):
        found.add(message if isinstance(message, str) else message[0])
    return found


@pytest.mark.parametrize("locale", LOCALES)
def test_every_message_in_the_code_has_a_translation(locale):
    path = PACKAGE / "translations" / locale / "LC_MESSAGES" / "messages.po"
    catalog = read_po(io.BytesIO(path.read_bytes()), locale=locale)
    entries = {m.id: m for m in catalog if m.id}
    code = _extracted()
    missing = sorted(code - set(entries))
    empty = sorted(
        i
        for i, m in entries.items()
        if i in code and not (m.string if isinstance(m.string, str) else all(m.string))
    )
    fuzzy = sorted(i for i, m in entries.items() if m.fuzzy)
    assert len(code) > 200
    assert not missing, (
        f"{locale}: {len(missing)} messages not in the catalog (make translations): {missing[:5]}"
    )
    assert not empty, f"{locale}: {len(empty)} untranslated: {empty[:5]}"
    assert not fuzzy, f"{locale}: {len(fuzzy)} fuzzy entries: {fuzzy[:5]}"


@pytest.mark.parametrize("locale", LOCALES)
def test_translations_keep_every_placeholder(locale):
    path = PACKAGE / "translations" / locale / "LC_MESSAGES" / "messages.po"
    field = re.compile(r"\{[^{}]*\}")
    for message in read_po(io.BytesIO(path.read_bytes()), locale=locale):
        if message.id:
            assert set(field.findall(message.id)) == set(field.findall(message.string)), message.id


def test_numbers_money_and_units_follow_the_locale():
    spanish, brazilian, french = (i18n.language(t) for t in ("es", "pt-BR", "fr"))
    with using(spanish):
        assert units.human_duration(3.5 * 86400 * 100) == "350,0 días"
        assert units.human_usd(1234.5) == "1.234,50\xa0US$"
        assert units.human_bytes(15032385536) == "14,0 GiB"
        assert units.human_flops(3.14e23) == "314,0 ZFLOP"
        assert day(dt.date(2026, 12, 1)) == "1 dic 2026"
    with using(brazilian):
        assert units.human_usd(1234.5) == "US$\xa01.234,50"
        assert units.human_duration(7200) == "2,0 horas"
    with using(french):
        assert units.human_usd(1234.5) == "1\u202f234,50\xa0$US"
        assert units.human_duration(1234.5 * 3600) == "51,4 jours"
    with using(ENGLISH):
        assert units.human_usd(1234.5) == "$1,234.50" and units.human_duration(7200) == "2.0 hours"
        assert day(dt.date(2026, 12, 1)) == "2026-12-01"


def test_an_estimate_in_spanish_translates_human_strings_and_keeps_the_rest(app, client):
    english = client.post("/v1/estimates/training", json=OOM)
    spanish = client.post("/v1/estimates/training", json=OOM, headers={"Accept-Language": "es"})
    assert english.status_code == spanish.status_code == 200
    assert spanish.headers["Content-Language"] == "es" and english.headers["Content-Language"] == "en"
    assert "Accept-Language" in spanish.headers["Vary"]
    en, es = english.json, spanish.json
    assert en["time"]["human"].endswith(("days", "hours", "years")), en["time"]["human"]
    assert es["time"]["human"].endswith(("días", "horas", "años")) and "," in es["time"]["human"]
    assert es["cost"]["human"]["total"].endswith("US$")
    assert es["cost"]["human"]["accelerator_hours"].startswith(tuple("0123456789"))
    assert "horas de" in es["cost"]["human"]["accelerator_hours"]
    fit = next(r for r in es["recommendations"] if r["code"] == "does_not_fit")
    assert fit["message"].startswith("Necesita ") and fit["severity"] == "critical"
    assert fit["change"] == next(r for r in en["recommendations"] if r["code"] == "does_not_fit")["change"]
    assert any(n.startswith("Precisión mixta") for n in es["assumptions"]["notes"])
    _same_shape_and_numbers(en, es)


def _same_shape_and_numbers(en, other, path=""):
    """Same keys everywhere, the same numbers, booleans and enum-like values; only human text may differ."""
    if isinstance(en, dict):
        assert set(en) == set(other), path
        for key in en:
            _same_shape_and_numbers(en[key], other[key], f"{path}.{key}")
    elif isinstance(en, list):
        assert len(en) == len(other), path
        for i, (a, b) in enumerate(zip(en, other, strict=True)):
            _same_shape_and_numbers(a, b, f"{path}.{i}")
    elif not isinstance(en, str) or (".human" not in path and ENUM_LIKE.match(en)):
        assert en == other, path  # numbers, booleans, ids and enum values ("critical", "bf16", "given")


@pytest.mark.parametrize(
    ("header", "language", "days"),
    [
        ("pt-BR", "pt-BR", "dias"),
        ("pt", "pt-BR", "dias"),
        ("pt-PT", "pt-BR", "dias"),
        ("fr-CA,fr;q=0.9", "fr", "jours"),
        ("de-DE,de;q=0.9", "en", "days"),
        ("de, es;q=0.5, fr;q=0.8", "fr", "jours"),
        ("fr;q=0.2, es;q=0.9", "es", "días"),
        ("es;q=0, en", "en", "days"),
        ("*", "en", "days"),
    ],
)
def test_accept_language_quality_values_pick_the_language(client, header, language, days):
    body = {**FINE_TUNE, "training": {**FINE_TUNE["training"], "tokens": "20B"}}
    response = client.post("/v1/estimates/training", json=body, headers={"Accept-Language": header})
    assert response.status_code == 200
    assert response.headers["Content-Language"] == language
    assert response.json["time"]["human"].endswith(days), response.json["time"]["human"]


def test_inference_notes_and_suggestions_in_french(client):
    english = client.post("/v1/estimates/inference", json=SERVE).json
    french = client.post("/v1/estimates/inference", json=SERVE, headers={"Accept-Language": "fr"}).json
    assert french["memory"]["human"]["per_device"].replace("\u202f", "").split()[0].count(",") == 1
    _same_shape_and_numbers(english, french)


def test_a_422_explains_the_comma_and_each_field_in_the_callers_language(client):
    body = {**FINE_TUNE, "training": {**FINE_TUNE["training"], "tokens": "1,5B", "global_batch_size": 0}}
    for header, title, comma, batch in [
        (
            "es",
            "Entidad no procesable",
            "Una cantidad no lleva coma",
            "Debe ser mayor o igual que 1 y menor o igual que 100000000.",
        ),
        (
            "pt-BR",
            "Entidade não processável",
            "Uma contagem não leva vírgula",
            "Deve ser maior ou igual a 1 e menor ou igual a 100000000.",
        ),
        (
            "fr",
            "Entité non traitable",
            "Un nombre ne contient pas de virgule",
            "Doit être supérieur ou égal à 1 et inférieur ou égal à 100000000.",
        ),
    ]:
        response = client.post("/v1/estimates/training", json=body, headers={"Accept-Language": header})
        assert response.status_code == 422 and response.headers["Content-Language"] == header
        problem = response.json
        assert problem["type"] == "urn:scalecost:problem:invalid-field" and problem["title"] == title
        assert "training.tokens" in problem["detail"] and "training.global_batch_size" in problem["detail"]
        assert set(problem["errors"]) == {"training.tokens", "training.global_batch_size"}
        assert problem["errors"]["training.tokens"][0].startswith(comma)
        assert (
            "1.5B" in problem["errors"]["training.tokens"][0]
        )  # the canonical input format, never localised
        assert problem["errors"]["training.global_batch_size"] == [batch]  # marshmallow's Range, translated
    english = client.post("/v1/estimates/training", json=body).json
    assert english["errors"]["training.tokens"][0].startswith("A count has no comma")


def test_an_impossible_request_and_a_404_in_portuguese(client):
    body = {**FINE_TUNE, "hardware": {**FINE_TUNE["hardware"], "accelerator": "nvidia-a100-sxm-80gbb"}}
    problem = client.post("/v1/estimates/training", json=body, headers={"Accept-Language": "pt-BR"}).json
    assert problem["title"] == "Requisição impossível"
    assert problem["detail"].startswith("A requisição não pode ser estimada: hardware.accelerator")
    assert problem["errors"]["hardware.accelerator"][0].startswith(
        "Acelerador desconhecido 'nvidia-a100-sxm-80gbb'"
    )
    missing = client.get("/v1/nowhere", headers={"Accept-Language": "pt-BR"})
    assert missing.status_code == 404 and missing.json["title"] == "Não encontrado"
    assert missing.json["detail"].startswith("A URL solicitada não foi encontrada")


def test_english_is_the_default_and_the_engine_context_is_restored(app, client):
    client.post("/v1/estimates/training", json=OOM, headers={"Accept-Language": "fr"})
    from service.engine.i18n import active

    assert active() is ENGLISH  # the request's language does not leak into the caller's context
    response = client.post("/v1/estimates/training", json=FINE_TUNE)
    assert response.headers["Content-Language"] == "en"


def test_the_engine_alone_speaks_english_and_translates_in_a_context(app):
    from service.api.deps import db_session
    from service.api.training_schemas import TrainingRequestSchema
    from service.usecases.catalog import engine_catalog

    with app.app_context():
        catalog = engine_catalog(db_session())
        request = TrainingRequestSchema().load(OOM)
        english = estimate_training(request, catalog)
        with using(i18n.language("fr")):
            french = estimate_training(request, catalog)
    assert english["time"]["human"].endswith(("days", "hours"))
    assert french["recommendations"][0]["message"].startswith("Nécessite ")


def test_the_page_reads_lang_and_answers_in_it(client):
    response = client.get("/?lang=pt-BR")
    assert response.status_code == 200 and response.headers["Content-Language"] == "pt-BR"
    assert client.get("/?lang=xx").headers["Content-Language"] == "en"


def test_batch_items_answer_in_the_callers_language(client):
    bad = {**FINE_TUNE, "training": {**FINE_TUNE["training"], "tokens": "1,5B"}}
    response = client.post(
        "/v1/estimates/training/batch", json={"items": [FINE_TUNE, bad]}, headers={"Accept-Language": "fr"}
    )
    assert response.status_code == 200 and response.headers["Content-Language"] == "fr"
    good, problem = (r for r in response.json["results"])
    assert good["estimate"]["time"]["human"].endswith(("heures", "jours"))
    assert problem["problem"]["title"] == "Entité non traitable"
    assert problem["problem"]["detail"] == "L'élément a des champs invalides : training.tokens."
    assert problem["problem"]["errors"]["training.tokens"][0].startswith(
        "Un nombre ne contient pas de virgule"
    )


def test_planner_answers_and_nearest_misses_in_the_callers_language(client):
    from .test_plans_inference import BODY

    body = {**BODY, "slo": {"time_to_first_token_s": 0.001, "time_per_output_token_s": 0.03}}
    english = client.post("/v1/plans/inference", json=body).json
    spanish = client.post("/v1/plans/inference", json=body, headers={"Accept-Language": "es"}).json
    misses = {m["objective"]: m for m in spanish["nearest_misses"]}
    assert misses["time_to_first_token_s"]["message"].startswith("El TTFT más bajo alcanzable es")
    assert [m["objective"] for m in english["nearest_misses"]] == list(misses)
    french = client.post("/v1/plans/inference", json=BODY, headers={"Accept-Language": "fr"})
    assert french.status_code == 200 and french.headers["Content-Language"] == "fr"
    assert " ms par token, " in french.json["plan"]["latency"]["human"]
    assert (
        "," in french.json["plan"]["latency"]["human"]
    )  # "TTFT 120,3 ms, 12,5 ms par token, 3,3 s par requête"
