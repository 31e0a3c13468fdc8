"""`scalecost plan training|serving`: search for the best way to train or serve, locally or on a service."""

from __future__ import annotations

from typing import Any

import click

from ..engine.i18n import _, money
from . import answers
from .answers import EXIT_CODES, common


@click.group()
def plan() -> None:
    """Plan a training run or a deployment (POST /v1/plans/…)."""


@plan.command(
    "training",
    epilog="Built from flags alone, the body takes global batch size 1024 and sequence length 4096. "
    + EXIT_CODES,
)
@click.option("--model", help="Model preset id, e.g. llama-2-70b")
@click.option("--tokens", help="Training tokens: 2T, 300B, 1e12")
@click.option("--global-batch-size", type=int, help="Sequences per optimizer step")
@click.option("--sequence-length", type=int, help="Tokens per sequence")
@click.option("--deadline", help="Finish within: seconds or an ISO 8601 duration (P45D)")
@click.option("--budget", type=float, help="At most this many USD")
@click.option("--objective", help="cheapest, fastest…")
@click.option(
    "--accelerator", "accelerators", multiple=True, help="Search only these catalog ids (repeatable)"
)
@common
def training(
    model, tokens, global_batch_size, sequence_length, deadline, budget, objective, accelerators, **options
):
    """Plan a training run: a body from --body FILE (- for stdin), the flags set on it."""
    flags = {
        "model.preset": model,
        "training.tokens": tokens,
        "training.global_batch_size": global_batch_size,
        "training.sequence_length": sequence_length,
        "constraints.deadline": deadline,
        "constraints.budget_usd": budget,
        "objective": objective,
        "search.accelerators": list(accelerators) or None,
    }
    request = answers.body(options["body_file"], flags)
    if options["body_file"] is None:
        request.setdefault("training", {}).setdefault("global_batch_size", 1024)
        request["training"].setdefault("sequence_length", 4096)
    answers.show(answers.answer("training-plan", request, options), options["as_json"], training_summary)


def training_summary(data: dict[str, Any]) -> list[str]:
    """Run in the user's language (answers.show): the plans' human strings are the answer's."""
    best = data.get("best")
    if best is None:
        misses = [m["message"] for m in data.get("nearest_misses") or []]
        return [_("no plan qualifies")] + [f"  {line}" for line in misses + (data.get("notes") or [])]
    lines = []
    for point in data.get("results") or [best]:
        where = f" ({point['provider']})" if point.get("provider") else ""
        lines.append(f"{point['accelerator']} × {point['count']}{where}: {point['time']}, {point['cost']}")
    return lines


@plan.command("serving", epilog=EXIT_CODES)
@click.option("--model", help="Model preset id, e.g. llama-3-70b")
@click.option("--requests-per-second", type=float, help="Requests per second to serve")
@click.option("--prompt-tokens", type=int, help="Prompt tokens per request")
@click.option("--output-tokens", type=int, help="Output tokens per request")
@click.option("--ttft", type=float, help="Time to first token objective, seconds")
@click.option("--tpot", type=float, help="Time per output token objective, seconds")
@click.option(
    "--accelerator", "accelerators", multiple=True, help="Search only these catalog ids (repeatable)"
)
@common
def serving(model, requests_per_second, prompt_tokens, output_tokens, ttft, tpot, accelerators, **options):
    """Plan serving: a body from --body FILE (- for stdin), the flags set on it."""
    flags = {
        "model.preset": model,
        "workload.requests_per_second": requests_per_second,
        "workload.prompt_tokens": prompt_tokens,
        "workload.output_tokens": output_tokens,
        "slo.time_to_first_token_s": ttft,
        "slo.time_per_output_token_s": tpot,
        "search.accelerators": list(accelerators) or None,
    }
    request = answers.body(options["body_file"], flags)
    answers.show(answers.answer("serving-plan", request, options), options["as_json"], serving_summary)


def serving_summary(data: dict[str, Any]) -> list[str]:
    """Run in the user's language (answers.show): labels translated, money in its locale."""
    best = data.get("plan")
    if best is None:
        misses = [m["message"] for m in data.get("nearest_misses") or []]
        lines = misses + (data.get("notes") or [])
        return [_("no deployment meets the objectives")] + [f"  {line}" for line in lines]
    head = _("{accelerator} × {devices} × {replicas} replicas ({provider}, {engine}, batch {batch})").format(
        accelerator=best["accelerator"],
        devices=best["devices_per_replica"],
        replicas=best["replicas"],
        provider=best["provider"],
        engine=best["engine"],
        batch=best["batch_size"],
    )
    pairs = [
        (_("latency"), best["latency"]["human"]),
        (_("cost per hour"), money(best["cost"]["usd_per_hour"])),
        (_("per million output tokens"), money(best["cost"]["usd_per_million_output_tokens"])),
    ]
    return [head, *answers.rows(pairs)]
