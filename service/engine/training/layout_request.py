"""Validation of hardware.parallelism for a training request: the degrees, the schedule and the hybrid-sharding
group (request.build_plan calls parse_parallelism; the planner's search space applies the same rules over arrays)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ..architecture import ModelSpec
from ..i18n import _
from ..parallelism import PIPELINE_SCHEDULES, Parallelism


def default_zero_stage(data: int, context: int) -> int:
    """ZeRO stage of a layout that does not give one: the optimizer states sharded over the data (× context)
    ranks (ZeRO-1) wherever there is more than one, as large runs and their recipes do (Megatron-Bridge's
    DistributedDataParallelConfig use_distributed_optimizer=True in recipes/common.py; BLOOM-176B and DeepSeek-V3
    ZeRO-1; Llama 3 sharded optimizer states and gradients): the same traffic as an all-reduce (a reduce-scatter
    and an all-gather) for a twelfth of the Adam states per rank. Plain replication (0) must be asked for."""
    return 1 if data * context > 1 else 0


def parse_parallelism(
    hardware: Mapping[str, Any], count: int, model: ModelSpec | None, bad: Any
) -> Parallelism:
    spec: Mapping[str, Any] = hardware.get("parallelism") or {}
    path = "hardware.parallelism"
    t, p = int(spec.get("tensor", 1) or 1), int(spec.get("pipeline", 1) or 1)
    e = int(spec.get("expert", 1) or 1)
    c = int(spec.get("context", 1) or 1)
    d = spec.get("data")
    if d is None:
        d = count // (t * p * c) if count % (t * p * c) == 0 else 0
    d = int(d)
    z = default_zero_stage(d, c) if spec.get("zero_stage") is None else int(spec["zero_stage"])
    v = int(spec.get("virtual_pipeline", 1) or 1)
    shard = int(spec.get("data_shard", 0) or 0)
    schedule = str(spec.get("pipeline_schedule") or "1f1b")
    etp = int(spec.get("expert_tensor", 0) or 0)
    if "expert_tensor" not in spec and folded_expert_tensor(model, e, t, c, d):
        etp = 1
    # sequence parallelism goes with tensor parallelism unless the request says otherwise (Korthikanti et al.
    # 2022, arXiv 2205.05198; Megatron-Bridge's pretraining recipes set sequence_parallel = True wherever
    # tensor_model_parallel_size > 1: recipes/llama/h100/llama3.py 8B TP4, 70B TP4/TP8, 405B TP8)
    par = Parallelism(
        max(d, 1),
        t,
        p,
        e,
        z,
        t > 1 if spec.get("sequence_parallel") is None else bool(spec["sequence_parallel"]),
        max(v, 1),
        context=max(c, 1),
        data_shard=max(shard, 0),
        pipeline_schedule=schedule if schedule in PIPELINE_SCHEDULES else "1f1b",
        expert_overlap=bool(spec.get("expert_overlap", False)),
        expert_tensor=max(etp, 0),
    )
    _pipeline_schedule(schedule, p, path, bad)
    if v < 1 or (v > 1 and p == 1):
        bad(f"{path}.virtual_pipeline", _("Must be 1 without pipeline parallelism (and at least 1)."))
    if min(d, t, p, e, c) < 1 or d * t * p * c != count:
        bad(
            path,
            _(
                "data × tensor × pipeline × context ({d} × {t} × {p} × {c}) must equal hardware.count "
                "({count})."
            ).format(d=d, t=t, p=p, c=c, count=count),
        )
    elif shard:  # only once the degrees multiply to the count (data × context is then bounded by it)
        _data_shard(par, shard, path, bad)
    if not 0 <= z <= 3:
        bad(f"{path}.zero_stage", _("Must be 0, 1, 2 or 3."))
    shape = model.shape if model is not None else None
    if shape is not None:
        _fits_model(shape, t, p, v, count, path, bad)
    _expert_degrees(spec, par, etp, shape, (e, t, c, d), path, bad)
    return par


def _fits_model(shape: Any, t: int, p: int, v: int, count: int, path: str, bad: Any) -> None:
    """The tensor degree divides the attention heads; the pipeline (× virtual pipeline) chunks fit the layers."""
    heads = shape.attention_heads
    if t > 1 and heads % t:
        allowed = [k for k in range(1, min(heads, count) + 1) if heads % k == 0]
        bad(
            f"{path}.tensor",
            _("Must divide attention_heads ({heads}); allowed: {allowed}.").format(
                heads=heads, allowed=allowed
            ),
        )
    if p > shape.layers:
        bad(
            f"{path}.pipeline",
            _("Must not exceed the model's {layers} layers.").format(layers=shape.layers),
        )
    elif p * v > shape.layers + 2:
        # Megatron-Core may count the embedding and the loss as one layer each when it splits the model into
        # pipeline chunks (account_for_embedding_in_pipeline_split / account_for_loss_in_pipeline_split):
        # Llama 3.1 405B's 126 layers run as PP16 × VP8 = 128 chunks in NeMo's recipes
        bad(
            f"{path}.virtual_pipeline",
            _(
                "pipeline × virtual_pipeline must not exceed {layers} chunks: the {count} layers plus the "
                "embedding and the loss."
            ).format(layers=shape.layers + 2, count=shape.layers),
        )


def _expert_degrees(
    spec: Mapping[str, Any],
    par: Parallelism,
    etp: int,
    shape: Any,
    degrees: tuple[int, int, int, int],
    path: str,
    bad: Any,
) -> None:
    """The expert degree against the model's experts (`degrees`: expert, tensor, context and data as given), or
    the expert tensor degree `etp` when given or folded."""
    e, t, c, d = degrees
    if "expert_tensor" in spec or etp:
        _expert_tensor(par, etp, shape, path, bad)
    elif e > 1:
        if shape is None or not shape.is_moe:
            bad(f"{path}.expert", _("Expert parallelism needs a mixture-of-experts model; use 1."))
        elif shape.experts % e or (d * c) % e:
            allowed = [k for k in _divisors(max(t * c * d, 1), 1) if shape.experts % k == 0][:24]
            bad(
                f"{path}.expert",
                _(
                    "Must divide both experts ({experts}) and context × data ({ranks}), or tensor × context × "
                    "data with expert_tensor 1; allowed: {allowed}."
                ).format(experts=shape.experts, ranks=d * c, allowed=allowed),
            )


def folded_expert_tensor(model: ModelSpec | None, e: int, t: int, c: int, d: int) -> bool:
    """A request that names no expert_tensor, whose expert degree divides the experts but not context × data (where
    Megatron-Core draws the expert ranks when expert_tensor_parallel_size is the tensor degree, its default), while
    tensor × context × data holds it: the layout only runs with the experts' own tensor degree 1 (MoE parallel
    folding, Liu et al. 2025, arXiv 2504.14960), as NVIDIA's recipes set it (NeMo's H100 DeepSeek-V3 TP2 PP16 EP64:
    etp_size 1, scripts/performance/recommended_model_configs/model_configs_h100.csv @ae861a9), so it is taken so."""
    shape = model.shape if model is not None else None
    if e <= 1 or t <= 1 or shape is None or not shape.is_moe or shape.experts % e or min(c, d) < 1:
        return False
    return (d * c) % e != 0 and (t * c * d) % e == 0


def _expert_tensor(par: Parallelism, etp: int, shape: Any, path: str, bad: Any) -> None:
    """hardware.parallelism.expert_tensor (Megatron-Core expert_tensor_parallel_size): the expert layers' own tensor
    degree; expert × expert_tensor ranks are drawn from tensor × context × data (MoE parallel folding, Liu et al.
    2025; Megatron-Core parallel_state.initialize_model_parallel checks world % (etp × ep × pp) == 0)."""
    if shape is None or not shape.is_moe:
        bad(
            f"{path}.expert_tensor",
            _("Expert tensor parallelism needs a mixture-of-experts model; leave it out."),
        )
        return
    ranks = par.tensor * par.context * par.data
    if etp < 1 or ranks % etp:
        allowed = _divisors(ranks, 1)[:24]
        bad(
            f"{path}.expert_tensor",
            _("Must divide tensor × context × data ({ranks}); allowed: {allowed}.").format(
                ranks=ranks, allowed=allowed
            ),
        )
        return
    e = par.expert
    if shape.experts % e or (ranks // etp) % e:
        allowed = [k for k in _divisors(ranks // etp, 1) if shape.experts % k == 0][:24]
        bad(
            f"{path}.expert",
            _(
                "With expert_tensor {etp}: must divide both experts ({experts}) and tensor × context × data / "
                "expert_tensor ({ranks}); allowed: {allowed}."
            ).format(etp=etp, experts=shape.experts, ranks=ranks // etp, allowed=allowed),
        )


def _pipeline_schedule(schedule: str, p: int, path: str, bad: Any) -> None:
    """hardware.parallelism.pipeline_schedule: one of PIPELINE_SCHEDULES; zero_bubble only with a pipeline."""
    if schedule not in PIPELINE_SCHEDULES:
        bad(
            f"{path}.pipeline_schedule",
            _("Must be one of {PIPELINE_SCHEDULES}.").format(
                PIPELINE_SCHEDULES=", ".join(PIPELINE_SCHEDULES)
            ),
        )
    elif schedule == "zero_bubble" and p == 1:
        bad(f"{path}.pipeline_schedule", _("zero_bubble needs pipeline parallelism (pipeline > 1)."))


def check_expert_overlap(par: Parallelism, recompute: str, bad: Any) -> None:
    """hardware.parallelism.expert_overlap needs expert parallelism and no full recomputation: Megatron-Core refuses
    overlap_moe_expert_parallel_comm otherwise (megatron/core/transformer/transformer_config.py: expert model
    parallelism > 1, recompute_granularity != 'full'; a fully recomputed layer's backward is one opaque
    recompute-and-backward with nothing to interleave)."""
    if par.expert_overlap and (par.expert <= 1 or recompute == "full"):
        bad(
            "hardware.parallelism.expert_overlap",
            _("expert_overlap needs expert parallelism (expert > 1) and no full activation recomputation."),
        )


def _divisors(n: int, multiple_of: int) -> list[int]:
    """Divisors of n that are multiples of `multiple_of`, ascending (trial division up to √n)."""
    small = [k for k in range(1, math.isqrt(n) + 1) if n % k == 0]
    both = sorted(set(small) | {n // k for k in small})
    return [k for k in both if k % multiple_of == 0]


def _data_shard(par: Parallelism, shard: int, path: str, bad: Any) -> None:
    """hardware.parallelism.data_shard: a hybrid-sharding group that divides the data × context ranks, under ZeRO."""
    ranks = par.gradient_ranks
    if shard < 1 or ranks % shard or shard % par.context:
        allowed = _divisors(ranks, par.context)
        bad(
            f"{path}.data_shard",
            _(
                "Must divide data × context ({ranks}) and be a multiple of context; allowed: {allowed}."
            ).format(ranks=ranks, allowed=allowed[:24]),
        )
    elif par.zero_stage < 1:
        bad(
            f"{path}.data_shard",
            _("Hybrid sharding needs zero_stage 1, 2 or 3 (ZeRO shards within each group)."),
        )
    elif par.expert > 1 and not par.expert_tensor and shard % par.expert:
        bad(
            f"{path}.data_shard",
            _("Must be a multiple of expert ({expert}): experts are sharded inside each group.").format(
                expert=par.expert
            ),
        )
    elif par.expert > 1 and (shard * par.tensor) % (par.expert * par.expert_tensor_ranks):
        # with expert_tensor the expert ranks are drawn from tensor × data: a group's tensor × shard ranks must
        # hold whole expert × expert_tensor groups (Megatron-Core's expert-data-parallel group inside it)
        bad(
            f"{path}.data_shard",
            _(
                "data_shard × tensor ({ranks}) must be a multiple of expert × expert_tensor ({group}): experts "
                "are sharded inside each group."
            ).format(ranks=shard * par.tensor, group=par.expert * par.expert_tensor_ranks),
        )
