"""The training request's data: sequence length, training units (tokens or samples, epochs applied) and the
global and micro batch, with their defaults and checks (part of request.build_plan)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ..architecture import ModelSpec
from ..i18n import _, num
from ..parallelism import Parallelism

DEFAULT_SEQUENCE_LENGTH = (
    2048  # GPT-3 / Megatron default context when the model gives none (Brown et al. 2020)
)
DEFAULT_BATCH_TOKENS = 4 * 1024 * 1024  # ~4M tokens per batch (Llama 2 pre-training, Touvron et al. 2023)
DEFAULT_BATCH_SAMPLES = 256  # ResNet-50 reference batch (Goyal et al. 2017 "ImageNet in 1 Hour")
SAMPLE_ARCHITECTURES = ("cnn", "vit")

# The longest published context extension of a RoPE model: YaRN (Peng et al. 2023, arXiv 2309.00071) fine-tuned
# Llama 2 (4,096 tokens) to 128K, 32× its pretrained context; longer sequences are refused as likely typos.
CONTEXT_EXTENSION_LIMIT = 32


def parse_data(
    training: Mapping[str, Any], model: ModelSpec | None, bad: Any, notes: list[str]
) -> tuple[int, str, float]:
    """(sequence length, unit, training units with epochs applied)."""
    epochs = float(training.get("epochs", 1) or 1)
    if model is not None and model.architecture in SAMPLE_ARCHITECTURES:
        samples = training.get("samples")
        if not samples or float(samples) <= 0:
            bad(
                "training.samples",
                _("Required (> 0) for {architecture} models, which train on samples.").format(
                    architecture=model.architecture
                ),
            )
            samples = 0
        seq = int(model.default_sequence_length or 1)
        return seq, "sample", float(samples or 0) * epochs
    seq = _sequence_length(training, model, bad, notes)
    tokens = training.get("tokens")
    if tokens is None and training.get("samples"):
        tokens = float(training["samples"]) * seq
    if not tokens or float(tokens) <= 0:
        bad("training.tokens", _("Required (> 0): training tokens (or samples × sequence_length)."))
        tokens = 0
    return seq, "token", float(tokens) * epochs


def _sequence_length(training: Mapping[str, Any], model: ModelSpec | None, bad: Any, notes: list[str]) -> int:
    """training.sequence_length, or the model's default within its context. A sequence longer than the model's
    context is a context-extension run (Llama 3.1's 128K stage, torchtitan's 256K benchmarks): estimated, with a
    note, unless the model learns absolute positions (no embedding row past its context)."""
    given: int | None = training.get("sequence_length")
    max_ctx = model.shape.max_context_tokens if model is not None and model.shape is not None else None
    if given is None:
        given = (model.default_sequence_length if model is not None else None) or DEFAULT_SEQUENCE_LENGTH
        given = min(given, max_ctx) if max_ctx else given
    seq = int(given)
    if seq < 1:
        bad("training.sequence_length", _("Must be at least 1."))
        seq = 1
    elif (
        max_ctx
        and seq > max_ctx
        and model is not None
        and model.shape
        and model.shape.learned_position_embeddings
    ):
        bad(  # learned absolute positions (BERT, GPT-2/3) have no row past the context: no extension possible
            "training.sequence_length",
            _("Exceeds the model's maximum context of {max_ctx} tokens.").format(max_ctx=max_ctx),
        )
    elif max_ctx and seq > CONTEXT_EXTENSION_LIMIT * max_ctx:
        bad(
            "training.sequence_length",
            _(
                "Exceeds {limit} tokens, {factor} × the model's context of {max_ctx} tokens: the longest published "
                "context extension (YaRN, Peng et al. 2023: Llama 2 from 4K to 128K)."
            ).format(
                limit=CONTEXT_EXTENSION_LIMIT * max_ctx, factor=CONTEXT_EXTENSION_LIMIT, max_ctx=max_ctx
            ),
        )
    elif max_ctx and seq > max_ctx:
        notes.append(
            _(
                "training.sequence_length {seq} is beyond the model's context of {max_ctx} tokens: estimated as a "
                "context-extension run (positions past the pretrained range need RoPE scaling or similar)."
            ).format(seq=num(seq, 0), max_ctx=num(max_ctx, 0))
        )
    return seq


def parse_batch(
    training: Mapping[str, Any], par: Parallelism, seq: int, unit: str, bad: Any
) -> tuple[int, int | None]:
    dp = par.data
    gbs = training.get("global_batch_size")
    if gbs is None:
        target = DEFAULT_BATCH_SAMPLES if unit == "sample" else max(1, round(DEFAULT_BATCH_TOKENS / seq))
        gbs = max(dp, math.ceil(target / dp) * dp)
    gbs = int(gbs)
    micro = training.get("micro_batch_size")
    micro = int(micro) if micro is not None else None
    if gbs < 1:
        bad("training.global_batch_size", _("Must be at least 1."))
    elif micro is not None and micro < 1:
        bad("training.micro_batch_size", _("Must be at least 1."))
    elif gbs % (dp * (micro or 1)):
        bad(
            "training.global_batch_size",
            _("Must be divisible by micro_batch_size × data ({value} × {dp} = {value2}).").format(
                value=micro or 1, dp=dp, value2=dp * (micro or 1)
            ),
        )
    return max(gbs, 1), micro
