"""GET /v1/options: the page builds its selects from it, so it must hold every value the engine accepts, and
each list must be the one the contract validates that field with."""

from __future__ import annotations

import re
from pathlib import Path

from scalecost import engine, web

JS = Path(web.__file__).resolve().parent / "static" / "js"
MODEL = {"model.architecture": engine.ARCHITECTURES, "model.ffn_type": engine.FFN_TYPES}
# written out here, not imported from the resource: the test says what the answer must be
EXPECTED = {
    "training": {
        **MODEL,
        "training.precision": engine.TRAINING_PRECISIONS,
        "training.optimizer": engine.OPTIMIZERS,
        "training.activation_recomputation": engine.RECOMPUTATION,
        "training.framework": engine.FRAMEWORKS,
        "hardware.parallelism.pipeline_schedule": engine.PIPELINE_SCHEDULES,
    },
    "inference": {
        **MODEL,
        "weights.precision": engine.WEIGHT_PRECISIONS,
        "weights.format": engine.FORMATS,
        "kv_cache_precision": engine.KV_PRECISIONS,
        "engine": engine.ENGINES,
        "serving.scheduler": engine.SCHEDULERS,
        "serving.speculative.method": engine.SPECULATIVE_METHODS,
        "slo.percentile": engine.PERCENTILES,
    },
    "training_plan": {"objective": engine.PLAN_OBJECTIVES, "search.pricing_models": engine.PRICING_MODELS},
    "price": {"pricing_model": engine.PRICING_MODELS},
}
# the request each group of the answer describes
OPERATIONS = {
    "training": ("/v1/estimates/training", "post"),
    "inference": ("/v1/estimates/inference", "post"),
    "training_plan": ("/v1/plans/training", "post"),
    "price": ("/v1/accelerators/{accelerator_id}/prices/{provider}", "put"),
}
# every engine enum the page offers as a choice (KINDS and RECOMPUTE_MODULES have no select on the page)
OFFERED = (
    "ENGINES",
    "FORMATS",
    "KV_PRECISIONS",
    "WEIGHT_PRECISIONS",
    "TRAINING_PRECISIONS",
    "OPTIMIZERS",
    "RECOMPUTATION",
    "FRAMEWORKS",
    "PRICING_MODELS",
    "PIPELINE_SCHEDULES",
    "PLAN_OBJECTIVES",
    "ARCHITECTURES",
    "FFN_TYPES",
)


def test_options_are_exactly_the_engines_enums(client):
    response = client.get("/v1/options")
    assert response.status_code == 200
    expected = {request: {p: list(v) for p, v in fields.items()} for request, fields in EXPECTED.items()}
    assert response.json == expected


def test_every_engine_value_the_page_offers_is_in_the_answer(client):
    answer = client.get("/v1/options").json
    lists = [values for fields in answer.values() for values in fields.values()]
    for name in OFFERED:
        assert list(getattr(engine, name)) in lists, f"engine.{name} is missing from GET /v1/options"
    assert {"sglang", "exllamav2"} <= set(answer["inference"]["engine"])
    assert "nvfp4" in answer["inference"]["weights.format"]


def _resolve(spec: dict, schema: dict) -> dict:
    while "$ref" in schema:
        schema = spec["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
    return schema


def _enums_at(spec: dict, schema: dict, path: list[str]) -> list[list[str]]:
    """The enums the contract gives the field at `path` of `schema`, across its oneOf/anyOf/allOf branches."""
    schema = _resolve(spec, schema)
    found = []
    for key in ("oneOf", "anyOf", "allOf"):
        for branch in schema.get(key, []):
            found += _enums_at(spec, branch, path)
    if schema.get("type") == "array" and "items" in schema:
        return found + _enums_at(spec, schema["items"], path)
    if not path:
        return found + ([schema["enum"]] if "enum" in schema else [])
    child = schema.get("properties", {}).get(path[0])
    return found + (_enums_at(spec, child, path[1:]) if child else [])


def test_each_list_is_the_contracts_enum_of_that_request_field(client):
    spec = client.get("/openapi.json").json
    for request, fields in client.get("/v1/options").json.items():
        url, method = OPERATIONS[request]
        body = spec["paths"][url][method]["requestBody"]["content"]["application/json"]["schema"]
        for path, values in fields.items():
            enums = _enums_at(spec, body, path.split("."))
            assert enums, f"{request}: {path} is no enumerated field of {method.upper()} {url}"
            # model.architecture: each model form accepts its own architectures; together, all of them
            assert sorted({v for enum in enums for v in enum}) == sorted(values), (request, path)


def test_the_answer_is_revalidated_with_its_etag(client):
    first = client.get("/v1/options")
    assert first.headers["Cache-Control"] == "no-cache" and first.headers["ETag"]
    again = client.get("/v1/options", headers={"If-None-Match": first.headers["ETag"]})
    assert again.status_code == 304


def test_every_select_the_page_fills_from_the_options_finds_its_values(client):
    """fields.js's `choices: "<request>"` selects and planner.js's choicesOf("<request>", "<path>") calls name
    the lists the answer has, and every list is offered somewhere on the page."""
    answer = client.get("/v1/options").json
    forms = (JS / "fields.js").read_text(encoding="utf-8")
    wanted = set()
    for path, request in re.findall(r'path: "([^"]+)", type: "select", choices: (\w+|"\w+")', forms):
        requests = (
            ["training", "inference"] if request == "request" else [request.strip('"')]
        )  # model(preset, request)
        wanted |= {(r, path) for r in requests}
    scripts = "\n".join(p.read_text(encoding="utf-8") for p in JS.glob("*.js"))
    wanted |= set(re.findall(r'choicesOf\("([^"]+)", "([^"]+)"\)', scripts))
    offered = {(r, p) for r, fields in answer.items() for p in fields}
    assert not wanted - offered, (
        f"the page asks for choices GET /v1/options lacks: {sorted(wanted - offered)}"
    )
    assert not offered - wanted, f"choices no select of the page offers: {sorted(offered - wanted)}"
