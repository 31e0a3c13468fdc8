"""axe-core over every view of the page, in two languages, with answers on screen: no serious or moderate finding.

axe-core comes from the npm registry (`make axe`: node_modules under .cache/axe, or AXE_CORE_JS naming axe.min.js);
without it the test is skipped, saying how to get it. It is injected through WebDriver (not subject to the page's
CSP) and run with its default rules (WCAG 2.x A/AA and best practices)."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest

from .test_budget_browser import WIDE, estimate
from .test_share_browser import plan_training, save_many

ROOT = Path(__file__).resolve().parents[2]


def axe_source() -> str | None:
    candidates = [os.environ.get("AXE_CORE_JS", ""), ROOT / ".cache/axe/node_modules/axe-core/axe.min.js"]
    for path in candidates:
        if path and Path(path).is_file():
            return Path(path).read_text(encoding="utf-8")
    return None


def findings(page) -> list[dict]:
    source = axe_source()
    page.js(source)
    result = page.driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "axe.run(document, { resultTypes: ['violations'] }).then(r => done(r.violations.map(v => ("
        "{ id: v.id, impact: v.impact, nodes: v.nodes.map(n => n.target.join(' ')).slice(0, 5) }))))"
    )
    return [f for f in result if f["impact"] in ("serious", "critical", "moderate")]


@pytest.mark.skipif(
    axe_source() is None, reason="axe-core not found: `make axe` (npm) or AXE_CORE_JS=…/axe.min.js"
)
@pytest.mark.parametrize("language", ["en", "fr"])
def test_no_serious_or_moderate_axe_findings_on_any_view(page, live, language):
    secret = live.key(f"axe-{uuid.uuid4().hex[:6]}", "editor")
    save_many(live, secret, f"axe{uuid.uuid4().hex[:4]}", 3)
    page.open(f"?lang={language}#training", WIDE)
    estimate(page)
    page.wait(lambda d: page.all("#training-sweep circle.point"), 60)
    page.css("#faq summary").click()
    page.wait(lambda d: page.all("#faq-quant tbody tr"), 30)
    found = {"training": findings(page)}
    page.tab("inference")
    estimate(page, "inference")
    found["inference"] = findings(page)
    page.tab("planner")
    plan_training(page)
    found["planner"] = findings(page)
    page.use_key(secret)
    page.wait(lambda d: len(page.all("#scenarios-table tbody tr")) >= 3)
    for row in page.all("#scenarios-table tbody tr")[:2]:
        row.find_element("css selector", "td.pick input").click()
    page.css("#scenarios-compare").click()
    page.visible("#compare-table")
    found["scenarios"] = findings(page)
    page.tab("admin")
    page.select("#admin-accelerator", "nvidia-h100-sxm-80gb")
    page.wait(lambda d: "aws" in page.css("#admin-current").text)
    found["admin"] = findings(page)
    print({view: [(f["id"], f["impact"], len(f["nodes"])) for f in fs] for view, fs in found.items()})
    assert not any(found.values()), found
