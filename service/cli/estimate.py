"""`scalecost estimate training|inference`: one estimate, on the local engine or a running service."""

from __future__ import annotations

from typing import Any

import click

from ..engine.i18n import _, money, num
from . import answers
from .answers import EXIT_CODES, common

TRAINING_DEFAULTS = 'Built from flags alone, the body takes global batch size 1024, sequence length 4096 and the parallel layout "auto".'


@click.group()
def estimate() -> None:
    """Estimate a training run or a deployment (POST /v1/estimates/…)."""


@estimate.command("training", epilog=f"{TRAINING_DEFAULTS} {EXIT_CODES}")
@click.option("--model", help="Model preset id (GET /v1/models), e.g. llama-2-70b")
@click.option("--tokens", help="Training tokens: 2T, 300B, 1e12")
@click.option("--accelerator", help="Catalog id, e.g. nvidia-h100-sxm-80gb")
@click.option("--count", help='Devices, or "auto"')
@click.option("--global-batch-size", type=int, help="Sequences per optimizer step")
@click.option("--sequence-length", type=int, help="Tokens per sequence")
@click.option("--provider", help="Price of this provider (aws, gcp, azure, lambda…)")
@common
def training(
    model, tokens, accelerator, count, global_batch_size, sequence_length, provider, **options
) -> None:
    """Estimate a training run: a body from --body FILE (- for stdin), the flags set on it."""
    flags = {
        "model.preset": model,
        "training.tokens": tokens,
        "hardware.accelerator": accelerator,
        "hardware.count": answers.count(count),
        "training.global_batch_size": global_batch_size,
        "training.sequence_length": sequence_length,
        "cost.provider": provider,
    }
    request = answers.body(options["body_file"], flags)
    if options["body_file"] is None:  # flags alone: the common run's other fields
        request.setdefault("training", {}).setdefault("global_batch_size", 1024)
        request["training"].setdefault("sequence_length", 4096)
        request.setdefault("hardware", {}).setdefault("parallelism", "auto")
    answers.show(answers.answer("training", request, options), options["as_json"], training_summary)


def training_summary(data: dict[str, Any]) -> list[str]:
    """Run in the user's language (answers.show): the labels translated, the answer's human strings as they are."""
    memory, cost = data["memory"], data["cost"]
    fits = _("fits") if memory["fits"] else _("does not fit")
    capacity = _("{used} of {capacity}").format(
        used=memory["human"]["per_device"], capacity=memory["human"]["device_capacity"]
    )
    pairs = [
        (_("time"), data["time"]["human"]),
        (_("cost"), cost["human"]["total"]),
        (_("accelerator-hours"), cost["human"]["accelerator_hours"]),
        (_("memory per device"), f"{capacity} ({fits})"),
    ]
    intervals = data.get("intervals")
    if intervals:  # p10/p90 from the measured errors of the request's class
        pairs.append((_("time p10 – p90"), intervals["human"]["time"]))
        if intervals["human"]["total"]:
            pairs.append((_("cost p10 – p90"), intervals["human"]["total"]))
    return [f"{data['model']['name']}", *answers.rows(pairs)]


@estimate.command("inference", epilog=EXIT_CODES)
@click.option("--model", help="Model preset id, e.g. llama-3-8b")
@click.option("--precision", help="Weights precision: bf16, fp8, int8, int4…")
@click.option("--format", "weights_format", help="Weights format: awq, gptq, gguf…")
@click.option("--accelerator", help="Catalog id, e.g. nvidia-rtx-4090")
@click.option("--count", help='Devices, or "auto"')
@common
def inference(model, precision, weights_format, accelerator, count, **options) -> None:
    """Estimate serving: a body from --body FILE (- for stdin), the flags set on it."""
    flags = {
        "model.preset": model,
        "weights.precision": precision,
        "weights.format": weights_format,
        "hardware.accelerator": accelerator,
        "hardware.count": answers.count(count),
    }
    request = answers.body(options["body_file"], flags)
    answers.show(answers.answer("inference", request, options), options["as_json"], inference_summary)


def inference_summary(data: dict[str, Any]) -> list[str]:
    """Run in the user's language (answers.show): labels translated, numbers in its locale."""
    latency, memory, cost = data["latency"]["human"], data["memory"], data["cost"]
    pairs = [(_("end to end"), latency["end_to_end"])]
    if "time_to_first_token" in latency:
        pairs.append((_("first token"), latency["time_to_first_token"]))
    if "time_per_output_token" in latency:
        pairs.append((_("per output token"), latency["time_per_output_token"]))
    tokens = data["throughput"].get("output_tokens_per_second")
    if tokens:
        pairs.append((_("output tokens/s"), num(tokens, 1, grouping=True)))
    if cost.get("usd_per_hour") is not None:
        pairs.append((_("cost per hour"), money(cost["usd_per_hour"])))
    human = memory.get("human") or {}
    if "per_device" in human:
        fits = _("fits") if memory["fits"] else _("does not fit")
        pairs.append((_("memory per device"), f"{human['per_device']} ({fits})"))
    return [f"{data['model']['name']}", *answers.rows(pairs)]
