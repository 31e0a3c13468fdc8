"""Locust users for `bench/load.py`, one class per endpoint so that each run measures one endpoint alone.

    locust -f bench/locustfile.py --headless -u 8 -r 8 -t 15s --host http://127.0.0.1:8000 Healthz

Classes: Healthz, TrainingEstimate, ReadmeTrainingEstimate, InferenceEstimate, ScenarioList, ScenarioPut. They send requests
back to back (no think time), so requests/s is what the server sustains for that many concurrent clients.
bench/load.py passes the set-up through the environment:

    BENCH_API_KEY        editor key (Bearer) for the scenario endpoints
    BENCH_LIST_PAGES     highest page of GET /v1/scenarios?page_size=20 (pages are drawn uniformly)
    BENCH_PUT_IDS        comma-separated ids of the scenarios ScenarioPut rewrites
    BENCH_USERS          number of users (ScenarioPut gives each user its own slice of BENCH_PUT_IDS)
"""

from __future__ import annotations

import itertools
import os
import random

from locust import FastHttpUser, constant, task

API_KEY = os.environ.get("BENCH_API_KEY", "")
AUTH = {"Authorization": f"Bearer {API_KEY}"} if API_KEY else {}
LIST_PAGE_SIZE = 20
LIST_PAGES = max(1, int(os.environ.get("BENCH_LIST_PAGES", "1")))
PUT_IDS = [int(i) for i in os.environ.get("BENCH_PUT_IDS", "").split(",") if i.strip()]
USERS = max(1, int(os.environ.get("BENCH_USERS", "8")))

TRAINING = {
    "model": {"preset": "llama-2-7b"},
    "training": {"tokens": "1B", "global_batch_size": 64, "sequence_length": 4096},
    "hardware": {"accelerator": "nvidia-a100-sxm-80gb", "count": 8},
}
TRAINING_README = {  # README.md "Example": Llama 2 70B as Meta trained it (Touvron et al. 2023, Table 2)
    "model": {"preset": "llama-2-70b"},
    "training": {"tokens": "2T", "global_batch_size": 1024, "sequence_length": 4096},
    "hardware": {
        "accelerator": "nvidia-a100-sxm-80gb",
        "count": 2048,
        "parallelism": {"data": 64, "tensor": 8, "pipeline": 4, "zero_stage": 1, "sequence_parallel": True},
    },
    "cost": {"provider": "aws"},
}
INFERENCE = {  # output.suggestions defaults to true: the catalog ranking runs on every request
    "model": {"preset": "llama-3-70b"},
    "weights": {"precision": "fp16"},
    "batch_size": 8,
    "hardware": {"accelerator": "nvidia-h100-sxm-80gb", "count": "auto"},
}

# Request names: bench/load.py looks these up in the _stats.csv.
HEALTHZ = "GET /healthz"
TRAINING_NAME = "POST /v1/estimates/training"
README_TRAINING_NAME = "POST /v1/estimates/training (README 70B)"
INFERENCE_NAME = "POST /v1/estimates/inference"
LIST_NAME = "GET /v1/scenarios?page=…&page_size=20"
PUT_NAME = "PUT /v1/scenarios/{id}"
PUT_GET_NAME = "GET /v1/scenarios/{id} (ETag for the PUT)"


class _Bench(FastHttpUser):
    abstract = True
    wait_time = constant(0)


class Healthz(_Bench):
    @task
    def healthz(self) -> None:
        self.client.get("/healthz", name=HEALTHZ)


class TrainingEstimate(_Bench):
    @task
    def training(self) -> None:
        self.client.post("/v1/estimates/training", json=TRAINING, name=TRAINING_NAME)


class ReadmeTrainingEstimate(_Bench):
    @task
    def training(self) -> None:
        self.client.post("/v1/estimates/training", json=TRAINING_README, name=README_TRAINING_NAME)


class InferenceEstimate(_Bench):
    @task
    def inference(self) -> None:
        self.client.post("/v1/estimates/inference", json=INFERENCE, name=INFERENCE_NAME)


class ScenarioList(_Bench):
    @task
    def listing(self) -> None:
        page = random.randint(1, LIST_PAGES)
        self.client.get(f"/v1/scenarios?page={page}&page_size={LIST_PAGE_SIZE}", headers=AUTH, name=LIST_NAME)


class ScenarioPut(_Bench):
    """GET a scenario for its ETag, then PUT a changed body with If-Match.

    Each user rewrites only its own slice of the scenarios, so users never race for one ETag (no 412s
    from the bench itself); only the PUT is the measured figure, the GET is reported under its own name.
    """

    _numbers = itertools.count()

    def on_start(self) -> None:
        n = next(self._numbers)
        self.ids = PUT_IDS[n % USERS :: USERS] or PUT_IDS
        self.round = 0

    @task
    def put(self) -> None:
        if not self.ids:
            raise RuntimeError("BENCH_PUT_IDS is empty")
        scenario_id = random.choice(self.ids)
        with self.client.get(
            f"/v1/scenarios/{scenario_id}", headers=AUTH, name=PUT_GET_NAME, catch_response=True
        ) as got:
            if got.status_code != 200:
                got.failure(f"GET {got.status_code}")
                return
            etag = got.headers.get("ETag")
            name = got.json()["name"]
            got.success()
        self.round += 1
        tokens = f"{1 + self.round % 20}B"
        body = {
            "name": name,
            "kind": "training",
            "description": f"bench rewrite {self.round}",
            "tags": ["bench", f"round-{self.round % 10}"],
            "request": {**TRAINING, "training": {**TRAINING["training"], "tokens": tokens}},
        }
        self.client.put(
            f"/v1/scenarios/{scenario_id}",
            json=body,
            headers={**AUTH, "If-Match": etag or ""},
            name=PUT_NAME,
        )
