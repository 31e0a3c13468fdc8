"""The Planner view in headless Chromium: a training plan from the form (best plan, frontier chart with its
chosen point, results), "Open as estimate" filling and running the Training view, nearest misses when nothing
qualifies, the serving form (unavailable here, and against a canned /v1/plans/inference answer), Spanish and
360 px. Screenshots: tests/web/artifacts/planner-*.png."""

from __future__ import annotations

import json

from .conftest import PHONE
from .harness import ARTIFACTS


def plan_training(
    page, *, preset="llama-2-7b", tokens="1B", deadline="2", budget="", max_devices="", done="section"
) -> None:
    page.select("#plan-training-model-preset", preset)
    page.type("#plan-training-training-tokens", tokens)
    page.type("#plan-deadline", deadline)
    page.type("#plan-budget", budget)
    page.type("#plan-max-devices", max_devices)
    page.css("#plan-training-form button[type=submit]").click()
    page.wait(
        lambda d: (
            not page.all("#plan-training-results[aria-busy]") and page.all(f"#plan-training-results {done}")
        ),
        60,
    )


def api_plan(live, body: dict) -> dict:
    response = live.app.test_client().post("/v1/plans/training", json=body)
    assert response.status_code == 200, response.json
    return response.json


BODY = {
    "model": {"preset": "llama-2-7b"},
    "training": {"tokens": "1B", "global_batch_size": 64, "sequence_length": 4096},
    "constraints": {"deadline": 2 * 86400},
    "objective": "cheapest",
    "results": 10,
}


def test_training_plan_with_frontier_and_open_as_estimate(page, live):
    page.open("#planner")
    plan_training(page)
    expected = api_plan(live, BODY)
    best = expected["best"]
    box = page.visible("#plan-best").text
    assert best["time"] in box and best["cost"] in box and best["memory_per_device"] in box
    assert page.css("#plan-best").text.count(best["provider"]) >= 1
    points = page.all("#plan-training-results figure.frontier svg circle.point")
    assert len(points) >= min(3, len(expected["frontier"])) and len(points) >= 2
    chosen = page.all("#plan-training-results figure.frontier svg circle.chosen")
    assert (
        len(chosen) == 1 and float(chosen[0].get_attribute("r")) > float(points[-1].get_attribute("r")) - 0.1
    )
    assert "Chosen plan" in chosen[0].find_element("css selector", "title").get_attribute("textContent")
    assert page.css("#plan-training-results figure.frontier svg title").get_attribute("textContent")
    assert page.css("#plan-training-results figure.frontier svg desc").get_attribute("textContent")
    assert page.all("#plan-training-results figure.frontier svg line.deadline")
    rows = page.all("#plan-results-table tbody tr")
    assert len(rows) == len(expected["results"]) and "current" in rows[0].get_attribute("class")
    assert "misses the deadline" not in page.css("#plan-training-results").text
    assert "miss the deadline" in page.css("#plan-training-results").text  # the exclusion counts
    assert "Configurations considered" in page.css("#plan-training-results").text
    page.screenshot("planner-training-desktop")

    page.css("#plan-open-estimate").click()
    page.wait(lambda d: page.css("#view-training").is_displayed())
    page.visible("#training-results .cards")
    assert page.css("#training-hardware-accelerator").get_attribute("value") == best["accelerator"]
    assert page.css("#training-hardware-count").get_attribute("value") == str(best["count"])
    page.wait(
        lambda d: best["estimate"]["cost"]["human"]["total"] in page.css("#training-results .cards").text
    )
    assert best["estimate"]["time"]["human"] in page.css("#training-results .cards").text
    page.screenshot("planner-open-as-estimate")


def test_nothing_qualifies_shows_the_nearest_misses(page, live):
    page.open("#planner")
    plan_training(page, preset="llama-2-70b", tokens="2T", deadline="2", budget="1000", max_devices="64")
    misses = page.visible("#plan-misses")
    assert "Nothing meets the constraints" in misses.text
    items = page.all("#plan-misses li")
    assert items and "fastest plan takes" in misses.text
    assert not page.all("#plan-best")
    page.screenshot("planner-nearest-misses")


def test_bad_deadline_lands_on_its_field(page):
    page.open("#planner")
    plan_training(page, deadline="P0D", done=".problem")
    page.wait(lambda d: page.css("#plan-deadline").get_attribute("aria-invalid") == "true")
    assert (
        page.css("#plan-deadline-error").is_displayed()
        and "100 years" in page.css("#plan-deadline-error").text
    )
    assert page.js("return document.activeElement.id") == "plan-deadline"
    page.screenshot("planner-error")


def test_serving_planner_unavailable_and_against_its_contract(page):
    page.open("#planner")
    status = page.wait(
        lambda d: (
            page.css("#planner-status").get_attribute("data-available") == "false"
            and page.css("#planner-status")
        )
    )
    assert "not available" in status.text and status.is_displayed()
    assert not page.css("#plan-serving-form").is_displayed()
    # the contract of POST /v1/plans/inference (branch infplan), answered by a stand-in in the page
    deployment = {
        "accelerator": "nvidia-h100-sxm-80gb",
        "name": "H100 SXM 80GB",
        "provider": "lambda",
        "engine": "vllm",
        "weights": {"precision": "fp8", "format": "fp8"},
        "kv_cache_precision": "fp8",
        "devices_per_replica": 2,
        "tensor_parallel": 2,
        "layout": "tensor",
        "replicas": 5,
        "total_devices": 10,
        "batch_size": 48,
        "concurrency": 240,
        "latency": {"time_to_first_token_s": 0.61, "time_per_output_token_s": 0.031},
        "cost": {
            "usd_per_hour": 29.9,
            "usd_per_million_input_tokens": 0.0412,
            "usd_per_million_output_tokens": 0.5931,
        },
    }
    answer = {
        "feasible": True,
        "plan": deployment,
        "frontier": [dict(deployment, replicas=4, batch_size=64)],
        "nearest_misses": [],
        "exclusions": {"does_not_fit": 12, "misses_ttft": 40},
        "search": {},
        "notes": [],
    }
    page.js(
        """const answer = arguments[0]; const real = window.fetch;
        window.fetch = (url, init) => String(url).includes('v1/plans/inference') && init && init.method === 'POST'
          ? (window.__servingBody = JSON.parse(init.body), Promise.resolve(new Response(JSON.stringify(answer),
              {status: 200, headers: {'Content-Type': 'application/json'}})))
          : real(url, init);
        document.querySelector('#plan-serving-form').hidden = false;""",
        answer,
    )
    page.type("#serve-ttft", "1")
    page.type("#serve-tpot", "0.04")
    page.type("#serve-demand", "50")
    page.css("#plan-serving-form button[type=submit]").click()
    table = page.visible("#serving-plan-table")
    sent = page.js("return window.__servingBody")
    assert sent["slo"] == {"time_to_first_token_s": 1, "time_per_output_token_s": 0.04}
    assert sent["workload"]["requests_per_second"] == 50 and sent["model"] == {"preset": "llama-3-8b"}
    assert len(table.find_elements("css selector", "tbody tr")) == 2
    assert "$29.90" in table.text and "vllm" in table.text
    assert "miss the time to first token" in page.css("#plan-serving-results").text
    page.screenshot("planner-serving-contract")
    json.dumps(sent)


def test_planner_in_spanish_and_at_360(page):
    page.open("?lang=es#planner")
    assert page.css("#tab-planner").text == "Planificador"
    assert page.css('label[for="plan-deadline"]').text == "Plazo"
    assert page.css('label[for="plan-budget"]').text == "Presupuesto (USD)"
    assert page.css("#plan-training-form button[type=submit]").text == "Buscar un plan"
    assert page.css('label[for="plan-training-training-tokens"]').text == "Tokens de entrenamiento"
    page.wait(lambda d: "no está disponible" in page.css("#planner-status").text)
    plan_training(page)
    assert "Mejor plan" in page.visible("#plan-best").text
    assert "Abrir como estimación" in page.css("#plan-open-estimate").text
    assert (
        page.css("#plan-training-results figure.frontier figcaption").text
        == "Tiempo frente a coste: la frontera"
    )
    page.screenshot("planner-es")
    page.select("#lang", "fr")
    page.wait(lambda d: page.css('label[for="plan-deadline"]').text == "Échéance")
    assert "Meilleur plan" in page.css("#plan-best").text

    page.open("#planner", size=PHONE)
    plan_training(page)
    page.visible("#plan-training-results figure.frontier svg circle.chosen")
    width = page.js("return document.documentElement.clientWidth")
    assert page.js("return document.documentElement.scrollWidth") <= width + 1, (
        "horizontal scrolling at 360 px"
    )
    page.screenshot("planner-360")
    for selector, name in (
        ("#plan-best", "best"),
        ("#plan-training-results figure.frontier", "frontier"),
    ):  # readable crops
        element = page.css(selector)
        page.js("arguments[0].scrollIntoView()", element)
        element.screenshot(str(ARTIFACTS / f"planner-360-{name}.png"))
