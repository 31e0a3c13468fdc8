"""Languages: Accept-Language picks the language of every human string; field names, enum values and numbers in
base units never change; the catalogs hold a translation of every message in the code."""

from __future__ import annotations

import datetime as dt
import io
import re
from pathlib import Path

import pytest
import scalecost
from babel.messages.extract import extract_from_dir
from babel.messages.pofile import read_po
from scalecost import i18n
from scalecost.engine import estimate_training, units
from scalecost.engine.i18n import ENGLISH, day, using

from .test_estimates import FINE_TUNE, SERVE

ENUM_LIKE = re.compile(r"^[a-z0-9_.:/-]+$")
PACKAGE = Path(scalecost.__file__).resolve().parent
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
    from scalecost.engine.i18n import active

    assert active() is ENGLISH  # the request's language does not leak into the caller's context
    response = client.post("/v1/estimates/training", json=FINE_TUNE)
    assert response.headers["Content-Language"] == "en"


def test_the_engine_alone_speaks_english_and_translates_in_a_context(app):
    from scalecost.api.estimates.training import TrainingRequestSchema
    from scalecost.api.extensions.db import db_session
    from scalecost.usecases.catalog import engine_catalog

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


LLAMA3_405B = {  # Llama 3's own run: goodput notes, and a checkpoint interval far from the Young/Daly optimum
    "model": {"preset": "llama-3.1-405b"},
    "training": {"tokens": 15e12, "sequence_length": 8192, "global_batch_size": 2048,
                 "activation_recomputation": "full", "checkpoint_interval_steps": 2000},
    "hardware": {"accelerator": "nvidia-h100-sxm-80gb", "count": 16384,
                 "parallelism": {"data": 128, "tensor": 8, "pipeline": 16, "virtual_pipeline": 7,
                                 "zero_stage": 1, "sequence_parallel": True}},
    "cost": {"usd_per_accelerator_hour": 2.0},
}  # fmt: skip


def test_goodput_notes_source_and_checkpoint_advice_in_spanish(client):
    english = client.post("/v1/estimates/training", json=LLAMA3_405B).json
    spanish = client.post("/v1/estimates/training", json=LLAMA3_405B, headers={"Accept-Language": "es"}).json
    assert english["assumptions"]["goodput"]["source"].startswith("modelled: interruptions at Llama 3's rate")
    assert spanish["assumptions"]["goodput"]["source"].startswith(
        "modelado: interrupciones al ritmo de Llama 3"
    )
    assert any(n.startswith("About ") and "(goodput " in n for n in english["assumptions"]["notes"])
    assert any(n.startswith("Se esperan unas ") for n in spanish["assumptions"]["notes"])
    rec = {r["code"]: r for r in spanish["recommendations"]}["checkpoint_interval"]
    assert rec["message"].startswith("Un checkpoint cada 2000 pasos está lejos del óptimo de Young/Daly")
    assert {r["code"]: r for r in english["recommendations"]}["checkpoint_interval"]["message"].startswith(
        "A checkpoint every 2000 steps is far from the Young/Daly optimum"
    )
    _same_shape_and_numbers(english, spanish)


def test_goodput_field_messages_of_the_engine_in_spanish(app):
    """The engine's own checks (the API's schema bounds these fields first; the CLI and direct callers reach them)."""
    from scalecost.api.extensions.db import db_session
    from scalecost.engine.errors import InvalidRequest
    from scalecost.usecases.catalog import engine_catalog

    training = {**LLAMA3_405B["training"], "goodput": 1.5, "restart_seconds": -1.0, "straggler_share": 0.7}
    bad = {**LLAMA3_405B, "training": training, "output": {"recommendations": False}}
    with app.app_context():
        catalog = engine_catalog(db_session())
        with pytest.raises(InvalidRequest) as english:
            estimate_training(bad, catalog)
        with using(i18n.language("es")), pytest.raises(InvalidRequest) as spanish:
            estimate_training(bad, catalog)
    assert english.value.errors["training.goodput"] == [
        "Must be in (0, 1]: a fraction (0.9 means 90 % of the wall time steps)."
    ]
    assert spanish.value.errors["training.goodput"] == [
        "Debe estar en (0, 1]: una fracción (0.9 significa que el 90 % del tiempo total se dedica a ejecutar pasos)."
    ]
    assert spanish.value.errors["training.restart_seconds"] == ["Debe ser ≥ 0."]
    assert english.value.errors["training.straggler_share"] == [
        "Must be in [0, 0.5]: a fraction of the stepping time."
    ]
    assert spanish.value.errors["training.straggler_share"] == [
        "Debe estar en [0, 0.5]: una fracción del tiempo de los pasos."
    ]


def test_count_auto_422s_and_the_planner_note_in_spanish(client):
    from .test_plans_training import AUTO_BASE

    spanish = {"Accept-Language": "es"}
    body = {**AUTO_BASE, "hardware": {**AUTO_BASE["hardware"], "count": "auto"}}
    missing = client.post("/v1/estimates/training", json=body, headers=spanish)
    assert missing.status_code == 422 and missing.headers["Content-Language"] == "es"
    assert missing.json["errors"]["constraints.deadline"] == [
        'Obligatorio con hardware.count "auto": plazo para terminar.'
    ]
    impossible = {
        **body,
        "hardware": {**body["hardware"], "parallelism": "auto"},
        "constraints": {"deadline": "PT1M", "max_devices": 64},
    }
    problem = client.post("/v1/estimates/training", json=impossible, headers=spanish)
    assert problem.status_code == 422
    assert problem.json["errors"]["hardware.count"][0].startswith(
        "Ningún número de dispositivos hasta 64 cumple el plazo de "
    )
    wrong = {**AUTO_BASE, "hardware": {**AUTO_BASE["hardware"], "count": "many"}}
    (message,) = client.post("/v1/estimates/training", json=wrong, headers=spanish).json["errors"][
        "hardware.count"
    ]
    assert message.startswith('Indique "auto" o un número de dispositivos de 1 a ')  # AutoOr's phrase too
    chosen = {**impossible, "constraints": {"deadline": "P10D"}}
    english = client.post("/v1/estimates/training", json=chosen).json
    answer = client.post("/v1/estimates/training", json=chosen, headers=spanish).json
    assert answer["assumptions"]["auto"] == english["assumptions"]["auto"]  # objective stays English
    assert answer["assumptions"]["auto"]["objective"] == "fewest devices meeting the deadline"
    (note,) = (n for n in answer["assumptions"]["notes"] if n.startswith("Elegido por el planificador"))
    assert note.startswith("Elegido por el planificador (menos dispositivos que cumplen el plazo, ")
    assert any(
        n.startswith("Chosen by the planner (fewest devices meeting the deadline, ")
        for n in english["assumptions"]["notes"]
    )


def test_training_planner_nearest_misses_in_spanish(client):
    from .test_plans_training import LLAMA_7B, SMALL_SEARCH

    body = {**LLAMA_7B, "search": SMALL_SEARCH, "constraints": {"deadline": "PT1H", "budget_usd": 10}}
    english = client.post("/v1/plans/training", json=body).json
    response = client.post("/v1/plans/training", json=body, headers={"Accept-Language": "es"})
    assert response.status_code == 200 and response.headers["Content-Language"] == "es"
    spanish = response.json
    assert [m["reason"] for m in spanish["nearest_misses"]] == [
        m["reason"] for m in english["nearest_misses"]
    ]
    fastest = next(m for m in spanish["nearest_misses"] if m["reason"] == "misses_deadline")
    assert (
        fastest["message"].startswith("El plan más rápido tarda ") and "; el plazo es " in fastest["message"]
    )
    plan = next(m["plan"] for m in english["nearest_misses"] if m["reason"] == "misses_deadline")
    assert {k: fastest["plan"][k] for k in ("seconds", "total_usd", "accelerator")} == {
        k: plan[k] for k in ("seconds", "total_usd", "accelerator")
    }
    assert fastest["plan"]["time"].endswith("días") and plan["time"].endswith("days")


def test_serving_plan_basis_and_preset_notes_are_translated(client):
    from .test_plans_inference import BODY

    french = client.post("/v1/plans/inference", json=BODY, headers={"Accept-Language": "fr"}).json
    english = client.post("/v1/plans/inference", json=BODY).json
    assert english["slo"]["basis"].startswith(
        "steady state at each batch size taken as a replica's concurrency"
    )
    assert french["slo"]["basis"].startswith("régime permanent à chaque taille de batch")
    assert french["disaggregated_serving"]["offered"] is False
    assert french["disaggregated_serving"]["reason"].startswith(
        "Non cherché : mettez search.disaggregation à true"
    )
    gpt3 = client.get("/v1/models/gpt-3-175b", headers={"Accept-Language": "pt-BR"}).json
    assert gpt3["notes"] == [
        "O GPT-3 alterna atenção densa e atenção esparsa em bandas locais; aqui ela é contada como densa."
    ]
    assert client.get("/v1/models/gpt-3-175b").json["notes"][0].startswith("GPT-3 alternates dense")


def test_a_dense_drafts_weight_format_is_explained_in_the_callers_language(client):
    """gpt-oss's mxfp4 quantizes only MoE experts, so a dense draft is held in bf16 and the answer says why; the
    note was a string the catalogs did not hold (the Spanish answer carried an English clause)."""
    body = {
        "model": {"preset": "gpt-oss-120b"},
        "weights": {"format": "mxfp4"},
        "engine": "vllm",
        "prompt_tokens": 1000,
        "output_tokens": 200,
        "batch_size": 8,
        "hardware": {"accelerator": "nvidia-h100-sxm-80gb", "count": 1},
        "serving": {
            "speculative": {
                "method": "draft_model",
                "acceptance_rate": 0.7,
                "draft_model": {"preset": "llama-3.2-1b"},
            }
        },
    }
    english = client.post("/v1/estimates/inference", json=body).json["assumptions"]["speculative_draft"]
    spanish = client.post("/v1/estimates/inference", json=body, headers={"Accept-Language": "es"}).json
    draft = spanish["assumptions"]["speculative_draft"]
    assert english["weights_format"] == draft["weights_format"] == "bf16"
    assert "the target's format quantizes only MoE experts" in english["description"]
    assert "porque el formato del objetivo solo cuantiza los expertos MoE" in draft["description"]
