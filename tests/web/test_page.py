"""The page without a browser: how it is served, that it needs nothing from another host, and that its
four dictionaries say every word the page uses."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from scalecost import web

WEB = Path(web.__file__).resolve().parent
STATIC = WEB / "static"
INDEX = WEB / "templates" / "index.html"
DICTIONARIES = {code: STATIC / "i18n" / f"{code}.json" for code in web.LANGUAGES}
SHIPPED = [
    INDEX,
    *sorted(p for p in STATIC.rglob("*") if p.is_file() and p.suffix in {".js", ".css", ".json", ".html"}),
]


def load(code: str) -> dict[str, str]:
    return json.loads(DICTIONARIES[code].read_text(encoding="utf-8"))


# --- serving -----------------------------------------------------------------------------------------------


def test_page_is_served_at_root_with_security_headers(offline_app):
    client = offline_app.test_client()
    response = client.get("/?lang=es")  # ?lang= is the page's, not refused like an unknown API parameter
    assert response.status_code == 200
    assert response.mimetype == "text/html"
    assert "connect-src 'self'" in response.headers["Content-Security-Policy"]
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["Referrer-Policy"] == "no-referrer"
    assert b'<script type="module" src="assets/js/app.js">' in response.data


@pytest.mark.parametrize(
    ("path", "mimetype"),
    [
        ("/assets/js/app.js", "text/javascript"),
        ("/assets/css/app.css", "text/css"),
        ("/assets/i18n/pt-BR.json", "application/json"),
    ],
)
def test_assets_are_served_with_their_types(offline_app, path, mimetype):
    response = offline_app.test_client().get(path)
    assert response.status_code == 200
    assert response.mimetype == mimetype
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["Referrer-Policy"] == "no-referrer"
    # the document's policy, not repeated on every file it loads
    assert "Content-Security-Policy" not in response.headers and "X-Frame-Options" not in response.headers


@pytest.mark.parametrize("path", ["/", "/assets/js/app.js", "/assets/css/app.css", "/assets/i18n/fr.json"])
def test_the_page_and_its_assets_are_gzipped_and_revalidated(offline_app, path):
    import gzip

    client = offline_app.test_client()
    plain = client.get(path)
    packed = client.get(path, headers={"Accept-Encoding": "gzip, deflate, br"})
    assert plain.headers.get("Content-Encoding") is None
    assert packed.headers["Content-Encoding"] == "gzip"
    assert gzip.decompress(packed.data) == plain.data
    assert len(packed.data) < 0.45 * len(plain.data)
    for response in (plain, packed):
        assert "Accept-Encoding" in response.headers["Vary"]
        assert {"public", "no-cache"} <= {d.strip() for d in response.headers["Cache-Control"].split(",")}
    # the gzip variant's ETag is weak (same file, other encoding); revalidating it is a 304 without a body
    assert packed.headers["ETag"].startswith('W/"')
    again = client.get(path, headers={"Accept-Encoding": "gzip", "If-None-Match": packed.headers["ETag"]})
    assert again.status_code == 304 and again.data == b""


def test_small_files_are_sent_as_they_are(offline_app):
    response = offline_app.test_client().get("/assets/js/package.json", headers={"Accept-Encoding": "gzip"})
    assert response.status_code == 200 and response.headers.get("Content-Encoding") is None


def test_json_endpoints_keep_their_headers(offline_app):
    """The page's headers are the page's: API answers are unchanged."""
    response = offline_app.test_client().get("/openapi.json")
    assert response.mimetype == "application/json"
    assert "Content-Security-Policy" not in response.headers
    assert "/" not in response.json["paths"]  # the page is not part of the API contract


def test_every_asset_the_page_names_exists():
    html = INDEX.read_text(encoding="utf-8")
    for ref in re.findall(r'(?:src|href)="(assets/[^"]+)"', html):
        assert (STATIC / ref.removeprefix("assets/")).is_file(), ref
    for js in STATIC.glob("js/*.js"):
        for module in re.findall(r'from "\./([^"]+)"', js.read_text(encoding="utf-8")):
            assert (js.parent / module).is_file(), (js.name, module)


def test_nothing_is_loaded_from_another_host():
    """Offline: no absolute URL, protocol-relative URL or @import anywhere in what the page ships."""
    allowed = {"http://www.w3.org/2000/svg"}  # the SVG namespace: a name, never fetched
    for path in SHIPPED:
        text = path.read_text(encoding="utf-8")
        urls = set(re.findall(r"(?:https?:)?//[A-Za-z0-9.-]+\.[a-z]{2,}[^\s\"'`)]*", text)) - allowed
        assert not urls, (path.name, urls)
        assert "@import" not in text and "url(" not in text.replace('url("data:', ""), path.name
        assert 'fetch("/' not in text and "fetch('/" not in text, f"{path.name}: API calls use relative URLs"


# --- languages ---------------------------------------------------------------------------------------------


def used_keys() -> set[str]:
    """Every key the page can ask for: data-i18n attributes, t("…") calls, and the keys built from the
    form declarations (labels, hints, groups, model forms) and from the API's enums (severities, parts)."""
    html = INDEX.read_text(encoding="utf-8")
    scripts = "\n".join(p.read_text(encoding="utf-8") for p in STATIC.glob("js/*.js"))
    keys = set(re.findall(r'data-i18n(?:-aria-label|-placeholder)?="([^"]+)"', html))
    keys |= set(re.findall(r'\bt\(\s*"([a-z0-9_.]+)"', scripts))
    keys |= set(re.findall(r'\?\s*"([a-z]+\.[a-z0-9_.]+)"\s*:\s*"[a-z]+\.[a-z0-9_.]+"', scripts))
    keys |= set(re.findall(r'\?\s*"[a-z]+\.[a-z0-9_.]+"\s*:\s*"([a-z]+\.[a-z0-9_.]+)"', scripts))
    keys |= set(re.findall(r'"((?:r|s|admin|scenarios|chart|opt)\.[a-z0-9_]+)"', scripts))
    forms = (STATIC / "js" / "fields.js").read_text(encoding="utf-8")
    for line in forms.splitlines():
        path = re.search(r'path: "([^"]+)"', line)
        if path and 'type: "const"' not in line:
            keys.add(f"f.{path.group(1)}")
            if "hint: true" in line:
                keys.add(f"h.{path.group(1)}")
            named = re.search(r'hint: "([a-z_.]+)"', line)
            if named:
                keys.add(named.group(1))
    keys |= {f"group.{g}" for g in re.findall(r'\bid: "([a-z_]+)"', forms)}
    modes = re.search(r"MODEL_MODES = \[([^\]]+)\]", forms).group(1)
    keys |= {f"mode.{m}" for m in re.findall(r'"([a-z]+)"', modes)}
    keys |= {f"sev.{s}" for s in ("info", "warning", "critical")}
    keys |= {
        f"part.{p}"
        for p in ("weights", "gradients", "optimizer_states", "activations", "overhead", "kv_cache", "draft")
    }
    keys |= {f"unit.{u}" for u in ("days", "hours", "minutes", "seconds")}
    return keys


def test_english_has_every_key_the_page_uses():
    missing = sorted(used_keys() - set(load("en")))
    assert not missing, f"keys used by the page but missing from en.json: {missing}"


def test_no_unused_keys():
    unused = sorted(set(load("en")) - used_keys())
    assert not unused, f"keys in en.json that the page never uses: {unused}"


@pytest.mark.parametrize("code", [c for c in web.LANGUAGES if c != "en"])
def test_every_language_says_every_key(code):
    english, other = load("en"), load(code)
    assert sorted(set(english) - set(other)) == [], f"{code}.json lacks keys"
    assert sorted(set(other) - set(english)) == [], f"{code}.json has keys English lacks"
    for key, text in other.items():
        assert text.strip(), (code, key)
        assert set(re.findall(r"\{(\w+)\}", text)) == set(re.findall(r"\{(\w+)\}", english[key])), (code, key)


def test_translations_are_translated():
    """Most strings differ from English (names such as config.json, Hardware or {n} s may stay)."""
    english = load("en")
    for code in web.LANGUAGES:
        if code == "en":
            continue
        same = [k for k, v in load(code).items() if v == english[k]]
        assert len(same) < 0.12 * len(english), (code, same)


def test_selector_offers_exactly_the_languages():
    html = INDEX.read_text(encoding="utf-8")
    assert re.findall(r'<option value="([^"]+)" lang=', html) == list(web.LANGUAGES)
    assert set(DICTIONARIES) == {p.stem for p in (STATIC / "i18n").glob("*.json")}


# --- choices -----------------------------------------------------------------------------------------------

ENGINE_ENUMS = (
    "ENGINES",
    "FORMATS",
    "KV_PRECISIONS",
    "WEIGHT_PRECISIONS",
    "TRAINING_PRECISIONS",
    "PRECISIONS",
    "OPTIMIZERS",
    "RECOMPUTATION",
    "RECOMPUTE_MODULES",
    "FRAMEWORKS",
    "PRICING_MODELS",
    "PIPELINE_SCHEDULES",
    "PLAN_OBJECTIVES",
    "KINDS",
    "ARCHITECTURES",
    "FFN_TYPES",
)


def test_the_scripts_hard_code_no_engine_enum():
    """The selects' values come from GET /v1/options: no array literal in the page's scripts names two or more
    values of one engine enum (the drifted lists were such arrays: ENGINES without sglang, …)."""
    from scalecost import engine

    enums = {name: set(getattr(engine, name)) for name in ENGINE_ENUMS}
    for js in sorted(STATIC.glob("js/*.js")):
        text = js.read_text(encoding="utf-8")
        for array in re.findall(r"\[([^\[\]]*)\]", text):
            strings = set(re.findall(r'"([^"]*)"', array))
            for name, values in enums.items():
                shared = strings & values
                assert len(shared) < 2, f"{js.name} lists values of engine.{name}: [{array.strip()}]"
