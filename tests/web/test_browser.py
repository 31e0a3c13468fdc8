"""The page driven in headless Chromium: estimates from the forms, charts with data, a recommendation applied,
the suggestions table, scenarios with a key, an admin price change, Spanish, 360 px, and no request to any
host but the service (checked after every test by the `page` fixture). Screenshots: tests/web/artifacts/."""

from __future__ import annotations

import json
import re
import uuid

from .conftest import PHONE, requested_urls


def estimate_training(page) -> None:
    page.css("#training-form button[type=submit]").click()
    page.visible("#training-results .cards")


def api_estimate(live, kind: str, body: dict) -> dict:
    response = live.app.test_client().post(f"/v1/estimates/{kind}", json=body)
    assert response.status_code == 200, response.json
    return response.json


def test_training_estimate_from_the_form_with_charts(page, live):
    page.open("#training")
    page.select("#training-model-preset", "llama-2-7b")
    page.type("#training-training-tokens", "2B")
    page.type("#training-hardware-count", "16")
    page.select("#training-hardware-parallelism", "manual")  # the layout by hand (the default is "auto")
    page.select("#training-hardware-parallelism-zero-stage", "3")
    estimate_training(page)

    expected = api_estimate(
        live,
        "training",
        {
            "model": {"preset": "llama-2-7b"},
            "training": {"tokens": "2B", "global_batch_size": 64, "sequence_length": 4096},
            "hardware": {
                "accelerator": "nvidia-h100-sxm-80gb",
                "count": 16,
                "parallelism": {"zero_stage": 3},
            },
        },
    )
    cards = page.css("#training-results .cards").text
    for human in (
        f"${expected['cost']['total_usd']:,.2f}",  # under $1,000: cents kept
        expected["time"]["human"],
        expected["cost"]["human"]["accelerator_hours"],
        expected["compute"]["human"]["total_flops"],
        expected["memory"]["human"]["per_device"],
        expected["memory"]["human"]["device_capacity"],
    ):
        assert human in cards
    assert "fits" in cards

    # memory by part against capacity: one bar per non-zero part, wider than nothing, and the capacity line
    bars = page.all("#training-results figure.chart svg rect.bar")
    assert len(bars) >= 4 and all(float(b.get_attribute("width")) > 0 for b in bars)
    assert page.all("#training-results svg line.capacity")
    # cost and time against device count: one point per count estimated, around 16
    page.wait(lambda d: len(page.all("#training-sweep svg circle.point")) >= 12)
    ticks = [t.text for t in page.all("#training-sweep svg text")]
    assert "16" in ticks and "128" in ticks
    page.screenshot("training-desktop")


def test_recommendation_applied(page):
    page.open(
        "#training"
    )  # llama-2-7b on 8× H100 with ZeRO stage 0 asked for does not fit: the advice is stage 1
    page.select("#training-hardware-parallelism", "manual")
    page.select("#training-hardware-parallelism-zero-stage", "0")
    estimate_training(page)
    assert "does not fit" in page.css("#training-results .cards").text
    advice = page.css('#training-results .recs li[data-code="does_not_fit"]')
    advice.find_element("css selector", "button.apply").click()
    page.wait(lambda d: "does not fit" not in page.css("#training-results .cards").text)
    assert page.css("#training-hardware-parallelism-zero-stage").get_attribute("value") == "1"
    assert not page.all('#training-results .recs li[data-code="does_not_fit"]')
    assert "fits" in page.css("#training-results .cards").text


def test_inference_suggestions_table_sorts_by_keyboard(page):
    from selenium.webdriver.common.keys import Keys

    page.open("#inference")
    page.select("#inference-model-preset", "llama-3-70b")
    page.select("#inference-hardware-accelerator", "nvidia-l40s")
    page.css("#inference-form button[type=submit]").click()
    page.visible("#suggestions-table")
    rows = page.all("#suggestions-table tbody tr")
    assert len(rows) >= 5

    def column(index: int) -> list[str]:
        return [
            r.find_elements("css selector", "th, td")[index].text
            for r in page.all("#suggestions-table tbody tr")
        ]

    def money(text: str) -> float:
        return float(text.replace("$", "").replace(",", "")) if text.startswith("$") else float("inf")

    price = page.css('#suggestions-table button[data-sort="usd_per_million"]')
    price.send_keys(Keys.ENTER)  # a button: Enter and Space sort, no mouse needed
    page.wait(
        lambda d: (
            page.css('#suggestions-table button[data-sort="usd_per_million"]')
            .find_element("xpath", "..")
            .get_attribute("aria-sort")
            == "ascending"
        )
    )
    prices = [money(v) for v in column(6)]
    assert prices == sorted(prices)
    assert page.js("return document.activeElement.dataset.sort") == "usd_per_million"
    page.js("document.activeElement.blur()")

    speed = page.css('#suggestions-table button[data-sort="throughput"]')
    speed.send_keys(Keys.SPACE)
    page.wait(
        lambda d: (
            page.css('#suggestions-table button[data-sort="throughput"]')
            .find_element("xpath", "..")
            .get_attribute("aria-sort")
            == "descending"
        )
    )
    speeds = [float(v.replace(",", "")) for v in column(4) if v != "—"]
    assert speeds == sorted(speeds, reverse=True)

    charts = page.all("#inference-results figure.chart")
    assert len(charts) == 3  # memory, tokens/s, $ per million tokens
    assert len(charts[1].find_elements("css selector", "rect.bar")) >= 3
    assert len(charts[2].find_elements("css selector", "rect.bar")) >= 3
    page.screenshot("inference-desktop")


def test_scenario_saved_renamed_repriced_reopened_and_deleted(page, live):
    secret = live.key(f"web-editor-{uuid.uuid4().hex[:6]}", "editor")
    page.open("#scenarios")
    page.use_key(secret)
    # the key stays in this tab's session storage: not in the address, not in a cookie
    assert page.js("return sessionStorage.getItem('scalecost.apiKey')") == secret
    assert secret not in page.driver.current_url
    assert page.js("return document.cookie") == ""

    page.tab("training")
    page.type("#training-hardware-count", "32")
    estimate_training(page)
    name = f"web {uuid.uuid4().hex[:8]}"
    page.type("#training-save-name", name)
    page.css("#training-results button.save-new").click()
    page.toast(name)

    page.tab("scenarios")
    row = page.wait(
        lambda d: next((r for r in page.all("#scenarios-table tbody tr") if name in r.text), False)
    )
    row.find_element("css selector", "button.rename").click()
    renamed = f"{name} renamed"
    page.type(f"#rename-{row.get_attribute('data-id')}", renamed)
    page.css("button.rename-save").click()
    page.toast(renamed)
    row = page.wait(
        lambda d: next((r for r in page.all("#scenarios-table tbody tr") if renamed in r.text), False)
    )
    scenario_id = row.get_attribute("data-id")

    row.find_element("css selector", "button.reprice").click()
    delta = page.visible("#reprice").text
    assert "Total when saved" in delta and "Change" in delta
    page.screenshot("scenarios-desktop")

    # reopen: the form shows the saved request, the results the saved estimate
    page.js("document.querySelector('#training-hardware-count').value = '1'")
    row = page.css(f'#scenarios-table tr[data-id="{scenario_id}"]')
    row.find_element("css selector", "button.open").click()
    page.wait(lambda d: page.css("#view-training").is_displayed())
    assert page.css("#training-hardware-count").get_attribute("value") == "32"
    assert renamed in page.css("#training-results").text

    page.tab("scenarios")
    delete = page.css(f'#scenarios-table tr[data-id="{scenario_id}"] button.delete')
    delete.click()
    delete.click()  # the second press confirms
    page.wait(lambda d: not page.all(f'#scenarios-table tr[data-id="{scenario_id}"]'))
    assert (
        live.app.test_client()
        .get(f"/v1/scenarios/{scenario_id}", headers={"Authorization": f"Bearer {secret}"})
        .status_code
        == 404
    )


def test_admin_price_change_with_history_and_audit(page, live):
    secret = live.key(f"web-admin-{uuid.uuid4().hex[:6]}", "admin")
    page.open("#scenarios")
    page.use_key(secret)
    page.tab("admin")
    page.select("#admin-accelerator", "nvidia-l4")
    page.wait(lambda d: "runpod" in page.css("#admin-current").text)
    page.type("#price-provider", "lambda")
    page.type("#price-usd-per-hour", "0.51")
    page.css("#price-form button[type=submit]").click()
    page.toast("lambda")
    page.wait(lambda d: "$0.5100" in page.css("#admin-current").text)
    page.wait(lambda d: "price.set" in page.css("#admin-audit").text)
    assert "$0.5100" in page.css("#admin-history").text
    prices = live.app.test_client().get("/v1/accelerators/nvidia-l4").json["prices"]
    assert {(p["provider"], p["usd_per_hour"]) for p in prices} >= {("lambda", "0.510000")}
    page.screenshot("admin-desktop")


def test_page_in_spanish_sends_accept_language(page):
    page.open("?lang=es#training")
    assert page.js("return document.documentElement.lang") == "es"
    assert page.css("#tab-training").text == "Entrenamiento"
    assert page.css('label[for="training-training-tokens"]').text == "Tokens de entrenamiento"
    requested_urls(page.driver)
    estimate_training(page)
    cards = page.css("#training-results .cards").text
    assert "Coste total" in cards and "Memoria por dispositivo" in cards
    assert "US$" in cards  # money the page formats itself follows the locale: 2,99 US$/h
    # the server's own human strings come in Spanish with Spanish numbers: "3,2 horas", "1.234,56 US$"
    assert re.search(r"\d,\d (horas|días|min)\b", cards), cards
    headers = [
        json.loads(e["message"])["message"]["params"]["request"]["headers"]
        for e in page.driver.get_log("performance")
        if '"Network.requestWillBeSent"' in e["message"] and "/v1/estimates/training" in e["message"]
    ]
    assert headers and all(h.get("Accept-Language", "").startswith("es") for h in headers)
    page.visible("#training-sweep svg")
    page.screenshot("training-es")

    page.select("#lang", "fr")
    page.wait(lambda d: page.css("#tab-training").text == "Entraînement")
    assert "lang=fr" in page.driver.current_url
    # the estimate is asked again: the server's strings come back in French ("3,2 heures")
    page.wait(lambda d: re.search(r"\d,\d (heures|jours|min)\b", page.css("#training-results .cards").text))
    assert "Coût total" in page.css("#training-results .cards").text


def test_phone_width_360(page, live):
    page.open("#training", size=PHONE)
    estimate_training(page)
    page.visible("#training-sweep svg")
    width = page.js("return document.documentElement.clientWidth")
    assert page.js("return document.documentElement.scrollWidth") <= width + 1, (
        "horizontal scrolling at 360 px"
    )
    page.screenshot("training-360")
    page.tab("inference")
    page.css("#inference-form button[type=submit]").click()
    page.visible("#suggestions-table")
    assert page.js("return document.documentElement.scrollWidth") <= width + 1
    page.screenshot("inference-360")
    page.use_key(live.key(f"web-phone-{uuid.uuid4().hex[:6]}", "admin"))
    page.visible("#scenarios-list table, #scenarios-list p")
    page.screenshot("scenarios-360")
    page.tab("admin")
    page.visible("#admin-audit h3")
    page.visible("#admin-history h3")
    assert page.js("return document.documentElement.scrollWidth") <= width + 1
    page.screenshot("admin-360")


def test_field_errors_land_on_the_field(page):
    """A 422 names its fields: the page marks each one (aria-invalid, message, focus)."""
    page.open("#training")
    page.type("#training-training-tokens", "1,5B")  # a comma: the API says to write 1.5B
    page.css("#training-form button[type=submit]").click()
    page.wait(lambda d: page.css("#training-training-tokens").get_attribute("aria-invalid") == "true")
    message = page.css("#training-training-tokens-error")
    assert message.is_displayed() and "1.5B" in message.text
    assert page.js("return document.activeElement.id") == "training-training-tokens"
    assert page.css("#training-results .problem").is_displayed()


def test_planner_placeholder_and_only_the_service_is_asked(page, live):
    page.open("#planner")
    page.wait(lambda d: page.css("#planner-status").get_attribute("data-available") == "true")
    assert page.css("#plan-training-form").is_displayed() and page.css("#plan-serving-form").is_displayed()
    page.screenshot("planner-desktop")
    from selenium.webdriver.common.keys import Keys

    page.css("#tab-planner").send_keys(Keys.ARROW_RIGHT)  # tabs follow the arrow keys
    page.wait(lambda d: page.css("#view-scenarios").is_displayed())
    assert page.js("return document.activeElement.id") == "tab-scenarios"
    urls = requested_urls(page.driver)
    assert any(u.endswith("/assets/js/app.js") for u in urls)
    assert any("/v1/accelerators" in u for u in urls) and any("/v1/models" in u for u in urls)
    assert all(u.startswith(live.url) or u.startswith("data:") for u in urls), urls


def test_training_framework_from_the_form_reaches_the_estimate(page, live):
    """The framework select and the torch.compile box send training.framework / torch_compile: the answer's
    assumptions and its figures are those of the same request to the API."""
    page.open("#training")
    page.select("#training-model-preset", "llama-3-8b")
    page.select("#training-training-framework", "torchtitan")
    estimate_training(page)
    expected = api_estimate(
        live,
        "training",
        {
            "model": {"preset": "llama-3-8b"},
            "training": {
                "tokens": "1B",
                "global_batch_size": 64,
                "sequence_length": 4096,
                "framework": "torchtitan",
            },
            "hardware": {"accelerator": "nvidia-h100-sxm-80gb", "count": 8},
        },
    )
    assert expected["assumptions"]["attention_kernel"] == "flash2"
    assert expected["time"]["human"] in page.css("#training-results .cards").text
