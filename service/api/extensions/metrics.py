"""Prometheus metrics (prometheus_client), served as text at GET /metrics.

- scalecost_http_requests_total{method, route, status}: requests answered. `route` is the URL rule
  (`/v1/scenarios/<int:scenario_id>`), never the raw path, so the series stay few; `<unmatched>` for a path no
  rule matches (404) or a method none takes.
- scalecost_http_request_duration_seconds{method, route, status}: the same requests' server time, a histogram.
- scalecost_heavy_work_slots / scalecost_heavy_work_slots_in_use: heavy-work slots (HEAVY_WORK_CONCURRENCY per
  process, api/extensions/work.py) that exist and that requests hold now, summed over live worker processes.
- scalecost_heavy_work_refused_total{route}: requests refused a slot within their budget (503).
- scalecost_rate_limited_total{route}: requests refused by a rate limit (429, api/extensions/limits.py).

gunicorn runs several worker processes: with PROMETHEUS_MULTIPROC_DIR set (service/gunicorn_conf.py sets it
before any worker starts) every process writes its values to files there and /metrics adds up all of them,
whichever worker answers the scrape. Without it (tests, `flask run`) the values are this process's.

/metrics is a plain Flask route, outside the API contract (openapi.yaml), like the page at `/`.
"""

from __future__ import annotations

import os
import time

from flask import Flask, Response, g, request
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    disable_created_metrics,
    generate_latest,
    multiprocess,
)

LABELS = ("method", "route", "status")
UNMATCHED = "<unmatched>"
disable_created_metrics()  # no *_created series: the multiprocess mode has none either, one shape for both
# Seconds: an estimate takes milliseconds, a planner up to REQUEST_BUDGET_SECONDS (10 s by default).
BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)

REQUESTS = Counter(
    "scalecost_http_requests", "HTTP requests answered, by method, URL rule and status.", LABELS
)
DURATION = Histogram(
    "scalecost_http_request_duration_seconds",
    "Server time of each HTTP request (from the first before_request), by method, URL rule and status.",
    LABELS,
    buckets=BUCKETS,
)
HEAVY_SLOTS = Gauge(
    "scalecost_heavy_work_slots",
    "Heavy-work slots (planners, batches): HEAVY_WORK_CONCURRENCY per worker process, summed over the live ones.",
    multiprocess_mode="livesum",
)
HEAVY_IN_USE = Gauge(
    "scalecost_heavy_work_slots_in_use",
    "Heavy-work slots held by a request now, summed over the live worker processes.",
    multiprocess_mode="livesum",
)
HEAVY_REFUSED = Counter(
    "scalecost_heavy_work_refused",
    "Requests refused a heavy-work slot within their time budget (503 with Retry-After), by URL rule.",
    ["route"],
)
RATE_LIMITED = Counter(
    "scalecost_rate_limited", "Requests refused by a rate limit (429), by URL rule.", ["route"]
)


def route() -> str:
    rule = request.url_rule
    return rule.rule if rule is not None else UNMATCHED


def registry() -> CollectorRegistry:
    """Every worker's values when PROMETHEUS_MULTIPROC_DIR is set, else this process's."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        collected = CollectorRegistry()
        multiprocess.MultiProcessCollector(collected)
        return collected
    return REGISTRY


def scrape() -> Response:
    """GET /metrics: the Prometheus text format."""
    response = Response(generate_latest(registry()))
    response.headers["Content-Type"] = CONTENT_TYPE_LATEST
    response.headers["Cache-Control"] = "no-store"
    return response


def init_app(app: Flask) -> None:
    HEAVY_SLOTS.set(int(app.config["HEAVY_WORK_CONCURRENCY"]))
    app.add_url_rule("/metrics", "metrics", scrape, methods=["GET"])

    @app.after_request
    def _count(response: Response) -> Response:
        started = g.get("started")
        labels = (request.method, route(), str(response.status_code))
        REQUESTS.labels(*labels).inc()
        if started is not None:
            DURATION.labels(*labels).observe(time.perf_counter() - started)
        if g.get("work_refused"):
            HEAVY_REFUSED.labels(labels[1]).inc()
        if response.status_code == 429:
            RATE_LIMITED.labels(labels[1]).inc()
        return response
