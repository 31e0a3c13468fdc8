"""The files teams already have, as calibration points: vLLM's and SGLang's benchmark-serving results and a CSV.

Each file comes with the estimate request it measured (model, engine, accelerator, count…); what the file says
of the load (lengths, concurrency or rate) fills the request, and its figures become `measured`:
- vllm-benchmark-serving: the `--save-result` JSON of vLLM's benchmarks/benchmark_serving.py (`vllm bench serve`):
  output_throughput (tok/s), median_ttft_ms / mean_ttft_ms, median_tpot_ms / mean_tpot_ms (else median_itl_ms /
  mean_itl_ms), max_concurrency, request_rate, completed, total_input_tokens, total_output_tokens.
- sglang-bench-serving: the JSONL of SGLang's python/sglang/bench_serving.py `--output-file` (one JSON record per
  run appended; same field names): one point per record.
- csv: a header row, one point per row; columns are measured figures and request fields (docs/guide/calibration.md).
Content is data only: it is parsed, never evaluated, and nothing of it is rendered as markup.
"""

from __future__ import annotations

import copy
import csv
import io
import json
import math
from collections.abc import Mapping
from typing import Any

from ..engine import CALIBRATION_MEASURED as MEASURED
from ..engine.i18n import _

FORMATS = ("vllm-benchmark-serving", "sglang-bench-serving", "csv")
# CSV columns that set request fields (dotted path in the estimate body), by kind
CSV_REQUEST_COLUMNS: dict[str, dict[str, tuple[str, ...]]] = {
    "inference": {
        "count": ("hardware", "count"),
        "batch_size": ("batch_size",),
        "prompt_tokens": ("prompt_tokens",),
        "output_tokens": ("output_tokens",),
        "requests_per_second": ("workload", "requests_per_second"),
    },
    "training": {
        "count": ("hardware", "count"),
        "global_batch_size": ("training", "global_batch_size"),
        "sequence_length": ("training", "sequence_length"),
        "micro_batch_size": ("training", "micro_batch_size"),
    },
}
INTEGER_FIELDS = frozenset({"count", "batch_size", "prompt_tokens", "output_tokens", "global_batch_size"})
INTEGER_FIELDS |= {"sequence_length", "micro_batch_size"}


class FileProblem(ValueError):
    """A file that cannot be read as its format: the message names what is wrong."""


def points_from_file(kind: str, file: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The points of one file: [{request, measured}]. Raises FileProblem."""
    fmt, request, content = file["format"], dict(file["request"]), file["content"]
    if fmt == "csv":
        return _csv_points(kind, request, content)
    if kind != "inference":
        raise FileProblem(
            _("{format} files hold serving measurements: use them in an inference profile.").format(
                format=fmt
            )
        )
    return [_benchmark_point(copy.deepcopy(request), record) for record in _records(content)]


def _records(content: Any) -> list[Mapping[str, Any]]:
    """The JSON records: an object, a list of objects, or the file's text (JSON or JSON lines; Infinity allowed)."""
    if isinstance(content, str):
        text = content.strip()
        try:
            parsed: Any = json.loads(text)
        except ValueError:
            try:
                parsed = [json.loads(line) for line in text.splitlines() if line.strip()]
            except ValueError as exc:
                raise FileProblem(
                    _("The content is not JSON or JSON lines: {error}.").format(error=exc)
                ) from None
        content = parsed
    records = content if isinstance(content, list) else [content]
    if not records or not all(isinstance(r, dict) for r in records):
        raise FileProblem(_("The content must hold benchmark result objects."))
    return records


def _finite(record: Mapping[str, Any], *names: str) -> float | None:
    for name in names:
        value = record.get(name)
        if (
            isinstance(value, int | float)
            and not isinstance(value, bool)
            and math.isfinite(value)
            and value > 0
        ):
            return float(value)
    return None


def _benchmark_point(request: dict[str, Any], record: Mapping[str, Any]) -> dict[str, Any]:
    """One benchmark-serving result → a point. Throughput is kept only at a fixed concurrency: under an arrival rate
    the benchmark divides by a window that includes the drain after the last arrival (tests/engine/data/README.md)."""
    completed = _finite(record, "completed")
    if completed:
        for field, total in (
            ("prompt_tokens", "total_input_tokens"),
            ("output_tokens", "total_output_tokens"),
        ):
            value = _finite(record, total)
            if field not in request and value:
                request[field] = max(1, round(value / completed))
    concurrency = _finite(record, "max_concurrency")
    rate = _finite(record, "request_rate")
    if "batch_size" not in request and "workload" not in request:
        if concurrency:
            request["batch_size"] = int(concurrency)
        elif rate:
            request["workload"] = {"requests_per_second": rate}
    measured: dict[str, Any] = {}
    ttft = _finite(record, "median_ttft_ms", "mean_ttft_ms")
    # SGLang's files of late 2024 carry the inter-token latency alone: its median is the TPOT a stream shows
    tpot = _finite(record, "median_tpot_ms", "mean_tpot_ms", "median_itl_ms", "mean_itl_ms")
    if ttft:
        measured["time_to_first_token_s"] = ttft / 1000.0
    if tpot:
        measured["time_per_output_token_s"] = tpot / 1000.0
    throughput = _finite(record, "output_throughput")
    if throughput and "workload" not in request:
        measured["output_tokens_per_second"] = throughput
    return {"request": request, "measured": measured}


def _csv_points(kind: str, request: dict[str, Any], content: Any) -> list[dict[str, Any]]:
    if not isinstance(content, str):
        raise FileProblem(_("A csv file's content is its text."))
    try:
        return _csv_rows(kind, request, csv.DictReader(io.StringIO(content)))
    except csv.Error as exc:
        raise FileProblem(_("The content is not CSV: {error}.").format(error=exc)) from None


def _csv_rows(kind: str, request: dict[str, Any], reader: csv.DictReader) -> list[dict[str, Any]]:
    known = set(MEASURED[kind]) | set(CSV_REQUEST_COLUMNS[kind])
    unknown = [c for c in reader.fieldnames or [] if c not in known]
    if not reader.fieldnames or unknown:
        raise FileProblem(
            _("Unknown csv columns {columns}; valid: {valid}.").format(
                columns=", ".join(unknown) or "-", valid=", ".join(sorted(known))
            )
        )
    points = []
    for line, row in enumerate(reader, start=2):
        body = copy.deepcopy(request)
        measured: dict[str, Any] = {}
        if None in row:  # more cells than the header names
            raise FileProblem(_("Line {line} has more cells than the header.").format(line=line))
        for column, cell in row.items():
            if cell is None or not cell.strip():
                continue
            value = _number(cell, column)
            if column in CSV_REQUEST_COLUMNS[kind]:
                *parents, leaf = CSV_REQUEST_COLUMNS[kind][column]
                target = body
                for key in parents:
                    target = target.setdefault(key, {})
                    if not isinstance(target, dict):
                        raise FileProblem(
                            _("Column {column}: request.{key} is not an object.").format(
                                column=column, key=key
                            )
                        )
                target[leaf] = int(value) if column in INTEGER_FIELDS and value.is_integer() else value
            elif math.isfinite(value) and value > 0:
                measured[column] = value
            else:
                raise FileProblem(
                    _(
                        "Line {line}, column {column}: a measured value must be a finite number above 0."
                    ).format(line=line, column=column)
                )
        points.append({"request": body, "measured": measured})
    return points


def _number(cell: str, column: str) -> float:
    try:
        return float(cell)
    except ValueError:
        raise FileProblem(
            _("Column {column}: {value} is not a number.").format(column=column, value=repr(cell[:40]))
        ) from None
