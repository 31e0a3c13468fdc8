"""A client generated from openapi.yaml (openapi-python-client) talks to a live server with typed models.

The contract is complete when a generated client gets typed attributes all the way down, not untyped dicts:
a training estimate, an inference estimate and a saved scenario round-trip through it, each attribute is
the type the contract promises, and each model gives back exactly the JSON the server sent (a property the
contract does not list would be lost on the way, and the comparison would show it)."""

from __future__ import annotations

import datetime as dt
import importlib
import json
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest

from tests.conftest import free_port
from tests.golden.record import app_on_fresh_database

from .strict_schema import ROOT, StrictContract

PACKAGE = "scalecost_generated_client"
TRAINING = {
    "model": {"preset": "llama-2-7b"},
    "training": {"tokens": "1B", "global_batch_size": 64, "sequence_length": 4096, "precision": "bf16"},
    "hardware": {
        "accelerator": "nvidia-a100-sxm-80gb",
        "count": 8,
        "parallelism": {"data": 8, "zero_stage": 3},
    },
    "cost": {"provider": "aws"},
    "output": {"details": True},
}
INFERENCE = {
    "model": {"preset": "llama-3-8b"},
    "weights": {"precision": "int4", "format": "awq"},
    "batch_size": 1,
    "prompt_tokens": 512,
    "output_tokens": 256,
    "hardware": {"accelerator": "nvidia-rtx-4090", "count": 1},
    "targets": {"output_tokens_per_second": 50},
}


def _generator() -> Path:
    pytest.importorskip("openapi_python_client", reason="openapi-python-client is not installed (dev extra)")
    script = Path(sys.executable).with_name("openapi-python-client")
    found = script if script.exists() else shutil.which("openapi-python-client")
    if not found:
        pytest.skip("openapi-python-client is installed but its command is not on this interpreter's path")
    return Path(found)


@pytest.fixture(scope="module")
def client_package(tmp_path_factory) -> Iterator[ModuleType]:
    """The client generated from the committed openapi.yaml, imported as a package."""
    generator = _generator()
    where = tmp_path_factory.mktemp("generated")
    config = where / "config.yaml"
    # no ruff pass over the generated code; no other configuration (a price file is sent as
    # application/octet-stream, which the contract offers beside text/csv for generated clients)
    config.write_text("post_hooks: []\n", encoding="utf-8")
    done = subprocess.run(
        [
            str(generator),
            "generate",
            "--path",
            str(ROOT / "openapi.yaml"),
            "--output-path",
            str(where / PACKAGE),
            "--meta",
            "none",
            "--config",
            str(config),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    # The generator says so when it drops an operation or a schema it could not read. The one warning allowed:
    # it reads no text/csv body (curl users send one); the same operation's application/octet-stream body is
    # what the client sends (test_a_price_file_imports_through_the_client).
    allowed = (
        "WARNING parsing POST /v1/price-imports within price_imports.\n\nUnsupported content type text/csv"
    )
    assert output.count("WARNING") == output.count(allowed), output
    assert "Unable to" not in output, output
    sys.path.insert(0, str(where))
    try:
        yield importlib.import_module(PACKAGE)
    finally:
        sys.path.remove(str(where))
        for name in [n for n in sys.modules if n == PACKAGE or n.startswith(PACKAGE + ".")]:
            del sys.modules[name]


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[SimpleNamespace]:
    """The app on a migrated, seeded SQLite database, served over HTTP on a free port; an editor key."""
    from scalecost.store import keys
    from werkzeug.serving import make_server

    app = app_on_fresh_database(str(tmp_path_factory.mktemp("db")))
    with app.extensions["scalecost.db"].transaction() as session:
        _key, secret = keys.create(session, "generated-client", "editor", actor="test")
        _key, admin = keys.create(session, "generated-client-admin", "admin", actor="test")
    port = free_port()
    http = make_server("127.0.0.1", port, app, threaded=True)
    thread = threading.Thread(target=http.serve_forever, daemon=True)
    thread.start()
    try:
        yield SimpleNamespace(url=f"http://127.0.0.1:{port}", key=secret, admin_key=admin)
    finally:
        http.shutdown()
        thread.join(timeout=10)
        app.extensions["scalecost.db"].dispose()


@pytest.fixture(scope="module")
def api(client_package, server) -> SimpleNamespace:
    """The generated client, logged in, with the modules the tests call."""

    def load(name: str) -> ModuleType:
        return importlib.import_module(f"{PACKAGE}.{name}")

    return SimpleNamespace(
        client=client_package.AuthenticatedClient(base_url=server.url, token=server.key, timeout=60.0),
        admin=client_package.AuthenticatedClient(base_url=server.url, token=server.admin_key, timeout=60.0),
        import_prices=load("api.price_imports.import_prices"),
        models=load("models"),
        types=load("types"),
        training=load("api.estimates.estimate_training"),
        inference=load("api.estimates.estimate_inference"),
        create_scenario=load("api.scenarios.create_scenario"),
        get_scenario=load("api.scenarios.get_scenario"),
        repriced=load("api.scenarios.reprice_scenario"),
        revisions=load("api.scenarios.list_scenario_revisions"),
        list_scenarios=load("api.scenarios.list_scenarios"),
        plan_training=load("api.training_plans.plan_training"),
        plan_inference=load("api.plans_inference.plan_inference"),
        training_batch=load("api.estimate_batches.estimate_training_batch"),
        get_model=load("api.models.get_model"),
        accelerator=load("api.accelerators.get_accelerator"),
    )


def _typed(value: Any, kind: type | tuple[type, ...]) -> Any:
    assert isinstance(value, kind), f"{value!r} is a {type(value).__name__}, not {kind}"
    return value


def _sent_back(model: Any, content: bytes) -> None:
    """The typed model gives back the JSON the server sent: nothing was lost on the way."""
    assert model.to_dict() == json.loads(content)


OPEN = {"change"}  # a recommendation's merge patch: an open object by design
# The generated classes left untyped (`additional_properties: dict[str, Any]`), each open by design:
OPEN_CLASSES = {
    "RecommendationChange": "an RFC 7386 merge patch of the request: any part of the body, null deleting",
    "SavedRecommendationChange": "the same patch in a saved answer",
    "HfConfig": "a Hugging Face config.json: the keys the estimate reads are typed, any other is kept",
    "AuditEventBeforeType0": "the audited row as it was: its shape is the action's (an accelerator, a price "
    "list, a key, a seeding correction), and an event keeps the shape of its day for ever",
    "AuditEventAfterType0": "the same, after the change",
    "ImportPricesJsonBodyType0": "a provider's own price file (AWS offer file, Azure retail page, GCP billing "
    "SKUs), read as published: its shape is the provider's, not ours",
    "CalibrationFile": "a team's benchmark file as its tool wrote it (vLLM or SGLang JSON, JSON lines or CSV text), "
    "with a partial estimate body that the file's lengths, concurrency or rate complete",
    "CalibrationFileRequest": "that partial estimate body: any subset of an inference request, completed by the file",
}


def _loose(value: Any, path: str) -> list[str]:
    """Where the parsed model holds a plain dict, or properties the contract did not list (a typed map, such as
    quotas by provider, holds its entries in additional_properties typed by the contract: those are walked)."""
    if isinstance(value, dict):
        return [path]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in _loose(v, f"{path}[{i}]")]
    out = []
    for attribute in getattr(type(value), "__attrs_attrs__", ()):
        inner = getattr(value, attribute.name)
        if attribute.name == "additional_properties" and attribute.type == "dict[str, Any]":
            out += [f"{path}.{key}" for key in inner]
        elif attribute.name == "additional_properties":
            out += [p for key, v in inner.items() for p in _loose(v, f"{path}[{key!r}]")]
        elif attribute.name not in OPEN:
            out += _loose(inner, f"{path}.{attribute.name}")
    return out


def test_the_only_untyped_classes_are_the_open_ones(client_package):
    """Issue 32: 19 generated classes were untyped, then 9; each class left is listed in OPEN_CLASSES with why."""
    models = importlib.import_module(f"{PACKAGE}.models")
    untyped = {
        name
        for name in models.__all__
        for attribute in getattr(getattr(models, name), "__attrs_attrs__", ())
        if attribute.type in ("dict[str, Any]", "Any", "dict")
    }
    assert untyped == set(OPEN_CLASSES)


def test_a_training_estimate_round_trips_with_typed_attributes(api):
    m = api.models
    response = api.training.sync_detailed(client=api.client, body=m.TrainingRequest.from_dict(TRAINING))
    assert response.status_code == 200, response.content
    result = _typed(response.parsed, m.TrainingEstimate)
    assert _loose(result, "training") == []

    _typed(result.model, m.TrainingResolvedModel)
    _typed(result.model.total_parameters, float)
    _typed(result.compute.total_flops, float)
    _typed(result.compute.human, m.TrainingComputeHuman)
    _typed(result.compute.human.total_flops, str)
    _typed(result.memory.breakdown.optimizer_states, float)
    _typed(result.memory.human.per_device, str)
    _typed(result.memory.fits, bool)
    _typed(result.time.breakdown.compute_s, float)
    _typed(result.time.phases.training_s, float)
    _typed(result.cost.total_usd, float)
    _typed(result.cost.human, m.TrainingCostHuman)
    _typed(result.cost.human.total, str)
    source = _typed(result.cost.price_source, m.TrainingCostPriceSourceType1)
    assert _typed(source.provider, str).lower() == "aws"
    _typed(result.range_, m.Range)
    _typed(result.range_.low, m.RangeEnd)
    _typed(result.scaling, m.Scaling)
    _typed(result.scaling.kaplan.alpha_parameters, float)
    assumptions = _typed(result.assumptions, m.TrainingAssumptions)
    _typed(assumptions.parallelism, m.ParallelismUsed)
    assert _typed(assumptions.parallelism.data, int) == 8 and assumptions.parallelism.zero_stage == 3
    _typed(assumptions.bytes_per_parameter.weights, float)
    _typed(assumptions.efficiency.best_gemm_efficiency, float)
    assert _typed(assumptions.global_batch_size, int) == 64
    assert result.details and all(isinstance(d.value, float | int) for d in result.details)
    for advice in result.recommendations:
        _typed(advice.expected, m.RecommendationExpected)
        _typed(advice.expected.value, bool | float | int)
        _typed(advice.change, m.RecommendationChange)  # a merge patch: open by design
    _sent_back(result, response.content)


def test_an_inference_estimate_round_trips_with_typed_attributes(api):
    m = api.models
    response = api.inference.sync_detailed(client=api.client, body=m.InferenceRequest.from_dict(INFERENCE))
    assert response.status_code == 200, response.content
    result = _typed(response.parsed, m.InferenceEstimate)
    assert _loose(result, "inference") == []

    hardware = _typed(result.hardware, m.InferenceResolvedHardware)
    assert _typed(hardware.count, int) == 1 and _typed(hardware.accelerator, str) == "nvidia-rtx-4090"
    _typed(hardware.engine, str)
    _typed(result.model.weights, m.InferenceWeightsUsed)
    _typed(result.model.weights.bits_per_weight, float | int)
    _typed(result.memory.breakdown.kv_cache, int)
    _typed(result.memory.human.kv_cache, str)
    _typed(result.latency.bound, m.LatencyBound)
    _typed(result.latency.bound.decode, str)
    _typed(result.latency.human.time_to_first_token, str)
    _typed(result.throughput.output_tokens_per_second, float)
    _typed(result.cost.usd_per_million_output_tokens, float)
    _typed(result.cost.price_source, m.InferenceCostPriceSourceType1)
    needed = _typed(result.devices_needed, m.DevicesNeeded)
    _typed(needed.to_fit, int)
    _typed(needed.targets_met, bool)
    _typed(result.assumptions.workload.prompt_tokens, int)
    _typed(result.assumptions.memory_bandwidth_efficiency.source, str)
    _typed(result.assumptions.compute_efficiency.max_, float)
    assert result.suggestions and all(isinstance(s.count, int) for s in result.suggestions)
    _sent_back(result, response.content)


def test_an_override_price_is_typed_as_the_override(api):
    m = api.models
    body = {**TRAINING, "cost": {"usd_per_accelerator_hour": 2.5}}
    response = api.training.sync_detailed(client=api.client, body=m.TrainingRequest.from_dict(body))
    assert response.status_code == 200, response.content
    source = response.parsed.cost.price_source
    assert source == m.TrainingCostPriceSourceType0.OVERRIDE and source == "override"


def test_a_scenario_round_trips_with_a_typed_estimate(api):
    m = api.models
    write = m.TrainingScenarioWrite.from_dict(
        {"name": "generated-client", "kind": "training", "tags": ["contract"], "request": TRAINING}
    )
    created = api.create_scenario.sync_detailed(client=api.client, body=write)
    assert created.status_code == 201, created.content
    scenario_id = _typed(created.parsed, m.Scenario).id

    response = api.get_scenario.sync_detailed(client=api.client, scenario_id=scenario_id)
    assert response.status_code == 200, response.content
    scenario = _typed(response.parsed, m.Scenario)
    assert _loose(scenario, "scenario") == []
    assert scenario.name == "generated-client" and scenario.kind == m.ScenarioKind.TRAINING
    _typed(scenario.created_at, dt.datetime)
    estimate = _typed(scenario.estimate, m.SavedTrainingEstimate)  # a model, not a dict
    _typed(estimate.cost.total_usd, float)
    _typed(estimate.cost.human.total, str)
    _typed(estimate.assumptions.parallelism.zero_stage, int)
    request = _typed(scenario.request, m.TrainingRequest)
    _typed(request.training, m.TrainingRun)
    prices = _typed(scenario.prices, m.PriceSnapshot)
    _typed(prices.taken_at, dt.datetime)
    _typed(prices.usd_per_accelerator_hour, float)
    _typed(prices.price_source, m.PriceSnapshotPriceSourceType1)
    _typed(scenario.summary.count, int)
    raw = json.loads(response.content)
    contract = StrictContract()
    assert contract.errors("Scenario", raw) == []
    again = scenario.to_dict()
    for moment in ("created_at", "updated_at"):  # datetimes come back in Python's isoformat
        assert dt.datetime.fromisoformat(again.pop(moment)) == dt.datetime.fromisoformat(raw.pop(moment))
    raw["prices"]["taken_at"] = dt.datetime.fromisoformat(raw["prices"]["taken_at"]).isoformat()
    assert again == raw

    repriced = api.repriced.sync_detailed(client=api.client, scenario_id=scenario_id)
    assert repriced.status_code == 200, repriced.content
    _typed(repriced.parsed.current, m.TrainingEstimate)
    _typed(repriced.parsed.saved, m.SavedTrainingEstimate)
    _typed(repriced.parsed.delta.percent, float)
    assert contract.errors("Repriced", json.loads(repriced.content)) == []

    revisions = api.revisions.sync_detailed(client=api.client, scenario_id=scenario_id)
    assert revisions.status_code == 200, revisions.content
    (revision,) = revisions.parsed
    _typed(revision.estimate, m.SavedTrainingEstimate)
    _typed(revision.prices, m.PriceSnapshot)
    assert contract.errors("Revision", json.loads(revisions.content)[0]) == []


def test_scenarios_page_by_cursor_through_the_client(api):
    """The client sends no `page` unless asked (the contract gives it no default), so `cursor` alone works."""
    m = api.models
    names = {f"cursor-walk-{i}" for i in range(5)}
    for name in sorted(names):
        write = m.TrainingScenarioWrite.from_dict({"name": name, "kind": "training", "request": TRAINING})
        created = api.create_scenario.sync_detailed(client=api.client, body=write)
        assert created.status_code == 201, created.content
    seen: list[str] = []
    cursor: Any = api.types.UNSET
    for _ in range(5):
        response = api.list_scenarios.sync_detailed(
            client=api.client, name="cursor-walk", page_size=2, cursor=cursor
        )
        assert response.status_code == 200, response.content  # a page beside the cursor would be a 422
        seen += [_typed(item, m.ScenarioListItem).name for item in response.parsed]
        pagination = json.loads(response.headers["X-Pagination"])
        if "next_cursor" not in pagination:
            break
        cursor = pagination["next_cursor"]
    assert sorted(seen) == sorted(names) and len(seen) == len(names)


def test_a_training_plan_is_typed_all_the_way_down(api):
    m = api.models
    body = {
        "model": {"preset": "llama-2-7b"},
        "training": {"tokens": "200B", "global_batch_size": 1024, "sequence_length": 4096},
        "search": {"accelerators": ["nvidia-h100-sxm-80gb"], "device_counts": [8, 16]},
        "constraints": {"deadline": "P60D", "max_accelerators_per_provider": {"aws": 16}},
        "objective": "cheapest",
    }
    response = api.plan_training.sync_detailed(client=api.client, body=m.TrainingPlanRequest.from_dict(body))
    assert response.status_code == 200, response.content
    plan = _typed(response.parsed, m.TrainingPlan)
    assert _loose(plan, "plan") == []
    best = _typed(plan.best, m.TrainingBestPlan)
    _typed(best.seconds, float)
    _typed(best.count, int)
    _typed(best.parallelism, m.ParallelismUsed)
    _typed(best.parallelism.tensor, int)
    _typed(best.intervals, m.TrainingIntervals)
    _typed(best.estimate, m.TrainingEstimate)
    _typed(best.estimate.cost.total_usd, float)
    assert plan.results and all(isinstance(p, m.TrainingPlanPoint) for p in plan.results + plan.frontier)
    _typed(plan.search.complete, bool)
    _typed(plan.excluded.does_not_fit, int)
    quotas = _typed(
        plan.constraints.max_accelerators_per_provider,
        m.TrainingPlanConstraintsUsedMaxAcceleratorsPerProvider,
    )
    assert quotas.additional_properties == {"aws": 16}
    _sent_back(plan, response.content)
    request = _typed(best.estimate_request, m.TrainingRequest)  # a body for estimate_training, typed
    again = api.training.sync_detailed(client=api.client, body=request)
    assert again.status_code == 200, again.content


def test_a_serving_plan_is_typed_all_the_way_down(api):
    m = api.models
    body = {
        "model": {"preset": "llama-3-8b"},
        "workload": {"requests_per_second": 20, "prompt_tokens": 512, "output_tokens": 256},
        "slo": {"time_to_first_token_s": 0.5, "time_per_output_token_s": 0.03},
        "search": {"accelerators": ["nvidia-l4", "nvidia-h100-sxm-80gb"], "engines": ["vllm"]},
    }
    response = api.plan_inference.sync_detailed(
        client=api.client, body=m.InferencePlanRequest.from_dict(body)
    )
    assert response.status_code == 200, response.content
    plan = _typed(response.parsed, m.ServingPlan)
    assert _loose(plan, "serving plan") == []
    assert _typed(plan.feasible, bool)
    deployment = _typed(plan.plan, m.Deployment)
    _typed(deployment.replicas, int)
    _typed(deployment.latency.time_to_first_token_s, float)
    _typed(deployment.cost.usd_per_million_output_tokens, float)
    _typed(deployment.cost.at_capacity, m.PlanAtCapacity)
    _typed(deployment.cost.price_source, m.PlanCostFiguresPriceSourceType1)
    _typed(deployment.estimate_request, m.InferenceRequest)
    _typed(plan.exclusions.misses_ttft, int)
    _typed(plan.search.batch_sizes.max_, int)
    _typed(plan.disaggregated_serving.offered, bool)
    _sent_back(plan, response.content)


def test_a_batch_answer_types_each_estimate_and_problem(api):
    m = api.models
    body = {"items": [TRAINING, {**TRAINING, "hardware": {**TRAINING["hardware"], "count": 0}}]}
    response = api.training_batch.sync_detailed(
        client=api.client, body=m.TrainingBatchRequest.from_dict(body)
    )
    assert response.status_code == 200, response.content
    batch = _typed(response.parsed, m.BatchResponse)
    assert _loose(batch, "batch") == []
    ok, bad = batch.results
    _typed(ok.estimate, m.TrainingEstimate)
    _typed(ok.estimate.cost.total_usd, float)
    problem = _typed(bad.problem, m.BatchProblem)
    assert "hardware.count" in _typed(problem.errors, m.BatchProblemErrors).additional_properties
    assert bad.estimate is None and ok.problem is None
    _sent_back(batch, response.content)


def test_a_preset_has_a_typed_shape(api):
    m = api.models
    response = api.get_model.sync_detailed("mixtral-8x7b", client=api.client)
    assert response.status_code == 200, response.content
    preset = _typed(response.parsed, m.Preset)
    assert _loose(preset, "preset") == []
    shape = _typed(preset.shape, m.PresetShape)
    assert _typed(shape.experts, int) == 8 and _typed(shape.head_dim, int) == 128
    _sent_back(preset, response.content)


def test_an_accelerator_has_typed_sources(api):
    m = api.models
    response = api.accelerator.sync_detailed(client=api.client, accelerator_id="nvidia-rtx-4090")
    assert response.status_code == 200, response.content
    accelerator = _typed(response.parsed, m.Accelerator)
    assert _loose(accelerator, "accelerator") == []
    _typed(accelerator.sources, m.AcceleratorSources)
    _typed(accelerator.sources.specs, str)
    _sent_back(accelerator, response.content)


def test_a_price_file_imports_through_the_client(api):
    """Issue 32: the CSV body needed a content_type_overrides entry. The contract offers
    application/octet-stream (the file's bytes, any source) beside text/csv, and the answer parses typed.

    Listed fallback: the generated import_prices function cannot be called at all. openapi-python-client
    0.29.1 writes `isinstance(body, ImportPricesJsonBodyType0 | list[Any])` for the JSON body (an object, or
    the bare array some exports save; the contract must say both, else schemathesis' negative cases fail),
    which raises TypeError before any request is made (a generator defect, also with anyOf and with
    `type: [object, array]`). So the bytes go through the generated client's own httpx session."""
    m = api.models
    csv = (
        b"accelerator_id,provider,instance_type,accelerators_per_instance,region,pricing_model,"
        b"usd_per_accelerator_hour,as_of,source,effective_from\n"
        b"nvidia-l4,generated-client,g2-standard-4,1,us-central1,on-demand,0.7100,2026-11,a test,2026-11-01\n"
    )
    http = api.admin.get_httpx_client()
    for dry_run, status in (("true", 200), ("false", 201)):
        response = http.post(
            "/v1/price-imports",
            params={"source": "csv", "dry_run": dry_run},
            content=csv,
            headers={"Content-Type": "application/octet-stream"},
        )
        assert response.status_code == status, response.content
        answer = _typed(m.ImportResult.from_dict(response.json()), m.ImportResult)
        assert answer.summary.added == 1 and answer.applied is (dry_run == "false")
