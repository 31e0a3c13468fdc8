"""The page's selects offer what the service accepts: it reads GET /v1/options once at start-up and builds
every enumerated select from it, so each select offers exactly the engine's values (sglang, exllamav2, nvfp4…),
a chosen value reaches the request, and no select lists values of its own."""

from __future__ import annotations

from scalecost import engine

from .conftest import requested_urls
from .test_browser import api_estimate

SELECTS = {
    "#training-training-precision": engine.TRAINING_PRECISIONS,
    "#training-training-optimizer": engine.OPTIMIZERS,
    "#training-training-activation-recomputation": engine.RECOMPUTATION,
    "#training-training-framework": engine.FRAMEWORKS,
    "#training-hardware-parallelism-pipeline-schedule": engine.PIPELINE_SCHEDULES,
    "#training-model-architecture": engine.ARCHITECTURES,
    "#training-model-ffn-type": engine.FFN_TYPES,
    "#inference-weights-precision": engine.WEIGHT_PRECISIONS,
    "#inference-weights-format": engine.FORMATS,
    "#inference-kv-cache-precision": engine.KV_PRECISIONS,
    "#inference-engine": engine.ENGINES,
    "#inference-model-architecture": engine.ARCHITECTURES,
    "#price-pricing-model": engine.PRICING_MODELS,
    "#plan-training-training-precision": engine.TRAINING_PRECISIONS,
    "#plan-objective": engine.PLAN_OBJECTIVES,
}


def values(page, selector: str) -> list[str]:
    return page.js(
        "return [...document.querySelector(arguments[0]).options].map((o) => o.value).filter((v) => v)",
        selector,
    )


def test_every_select_offers_exactly_the_engines_values(page):
    page.open("#inference")
    assert any(u.endswith("/v1/options") for u in requested_urls(page.driver))
    page.tab("planner")  # the planner's forms are built when its view first opens
    for selector, expected in SELECTS.items():
        assert values(page, selector) == list(expected), selector
    assert {"sglang", "exllamav2"} <= set(values(page, "#inference-engine"))
    assert "nvfp4" in values(page, "#inference-weights-format")
    pricing = page.js(
        "return [...document.querySelectorAll('input[name=\"plan-pricing\"]')].map((c) => c.value)"
    )
    assert pricing == list(engine.PRICING_MODELS)
    # the defaults stay: "(automatic)" where the service chooses, the labelled planner choices
    chosen = (
        "const s = document.querySelector(arguments[0]); return [s.value, s.selectedOptions[0].textContent]"
    )
    assert page.js(chosen, "#inference-engine") == ["", "(automatic)"]
    assert page.js(chosen, "#inference-weights-format") == ["", "(none)"]
    assert page.js(chosen, "#plan-objective") == ["cheapest", "Cheapest"]


def test_an_engine_the_page_did_not_list_reaches_the_estimate(page, live):
    page.open("#inference")
    page.select("#inference-model-preset", "llama-3-8b")
    page.select("#inference-engine", "sglang")
    page.css("#inference-form button[type=submit]").click()
    page.visible("#inference-results .cards")
    expected = api_estimate(
        live,
        "inference",
        {
            "model": {"preset": "llama-3-8b"},
            "engine": "sglang",
            "batch_size": 1,
            "prompt_tokens": 512,
            "output_tokens": 256,
            "hardware": {"accelerator": "nvidia-l40s", "count": 1},
            "output": {"suggestions": True},
        },
    )
    cards = page.css("#inference-results .cards").text
    assert expected["latency"]["human"]["time_to_first_token"] in cards, cards
