"""The Planner view in headless Chromium: a training plan from the form (best plan, frontier chart with its
chosen point, results), "Open as estimate" filling and running the Training view, nearest misses when nothing
qualifies, the serving form against the served POST /v1/plans/inference, Spanish and
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


def test_serving_planner_against_the_served_endpoint(page):
    """POST /v1/plans/inference is served: the form shows, and a plan from it renders the deployment and frontier
    (the request body is recorded on its way to the real endpoint)."""
    page.open("#planner")
    page.wait(lambda d: page.css("#planner-status").get_attribute("data-available") == "true")
    assert page.css("#plan-serving-form").is_displayed()
    page.js(
        """const real = window.fetch;
        window.fetch = (url, init) => {
          if (String(url).includes('v1/plans/inference') && init && init.method === 'POST')
            window.__servingBody = JSON.parse(init.body);
          return real(url, init);
        };"""
    )
    page.type("#serve-ttft", "1")
    page.type("#serve-tpot", "0.04")
    page.type("#serve-demand", "50")
    page.css("#plan-serving-form button[type=submit]").click()
    table = page.visible("#serving-plan-table")
    sent = page.js("return window.__servingBody")
    assert sent["slo"] == {"time_to_first_token_s": 1, "time_per_output_token_s": 0.04}
    assert sent["workload"]["requests_per_second"] == 50 and sent["model"] == {"preset": "llama-3-8b"}
    rows = table.find_elements("css selector", "tbody tr")
    assert len(rows) >= 1 and "$" in table.text
    assert any(engine in table.text for engine in ("vllm", "sglang", "tensorrt-llm", "llama.cpp", "tgi"))
    page.screenshot("planner-serving")
    json.dumps(sent)


def test_planner_in_spanish_and_at_360(page):
    page.open("?lang=es#planner")
    assert page.css("#tab-planner").text == "Planificador"
    assert page.css('label[for="plan-deadline"]').text == "Plazo"
    assert page.css('label[for="plan-budget"]').text == "Presupuesto (USD)"
    assert page.css("#plan-training-form button[type=submit]").text == "Buscar un plan"
    assert page.css('label[for="plan-training-training-tokens"]').text == "Tokens de entrenamiento"
    page.wait(lambda d: page.css("#planner-status").get_attribute("data-available") == "true")
    assert page.css('label[for="serve-ttft"]').text.startswith("Tiempo hasta el primer token")  # serving form
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
