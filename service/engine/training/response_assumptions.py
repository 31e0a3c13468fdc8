"""The training answer's `assumptions` section (bytes per parameter, overheads, efficiency, the layout, how each
default was set, goodput, notes) and its `details` table (each step of the calculation with its formula and
source): rendered from the plan and its Evaluation, as response.py renders the rest."""

from __future__ import annotations

from typing import Any

from ..i18n import N_, _, num, pct
from ..offers import eviction_rate_per_device_hour
from ..parallelism import pipeline_bubble_fraction
from ..pricing import describe
from ..units import human_duration
from .model.checkpoint import checkpoint_write_s
from .model.compute import best_gemm_efficiency
from .model.cost import billed_accelerator_hours, compute_usd
from .model.evaluate import Evaluation
from .model.framework import attention_kernel
from .model.memory import bytes_per_parameter, fragmentation_fraction, runtime_reserve_bytes
from .model.plan import TrainingPlan
from .model.stacks import stack_gemm_factor, training_stack

GOODPUT_SOURCE = N_(
    "modelled: interruptions at Llama 3's rate (466 in 54 days on 16,384 GPUs, Dubey et al. 2024 §3.3.4), each "
    "costing the restart and half a checkpoint interval; checkpoints at the Young/Daly interval unless given"
)


def assumptions(plan: TrainingPlan, ev: Evaluation) -> dict[str, Any]:
    acc, par = plan.accelerator, plan.par
    w_b, g_b, o_b = bytes_per_parameter(plan.precision, plan.optimizer, plan.optimizer_multiplier)
    return {
        "bytes_per_parameter": {"weights": w_b, "gradients": g_b, "optimizer_states": o_b},
        "overhead": {
            "cuda_context_bytes": runtime_reserve_bytes(plan.accelerator),
            "runtime_reserve_bytes": runtime_reserve_bytes(plan.accelerator),
            "fragmentation_fraction": fragmentation_fraction(plan.accelerator),
        },
        "efficiency": {
            "peak_flops_per_s": acc.peak(plan.precision),
            # the part's best GEMM × the stack's factor on it (model/stacks.py): what the step model runs at
            "best_gemm_efficiency": best_gemm_efficiency(acc, plan.precision)
            * stack_gemm_factor(plan.framework, acc),
            "pipeline_bubble_fraction": pipeline_bubble_fraction(
                par.pipeline, ev.micro_batches, par.virtual_pipeline, par.pipeline_schedule == "zero_bubble"
            ),
        },
        "parallelism": {
            "data": par.data,
            "tensor": par.tensor,
            "pipeline": par.pipeline,
            "expert": par.expert,
            "expert_tensor": par.expert_tensor_ranks,
            "zero_stage": par.zero_stage,
            "sequence_parallel": par.sequence_parallel,
            "virtual_pipeline": par.virtual_pipeline,
            "context": par.context,
            "data_shard": par.shard_ranks if par.zero_stage >= 1 else 1,
            "pipeline_schedule": par.pipeline_schedule,
            "expert_overlap": par.expert_overlap,
        },
        "precision": plan.precision,
        "optimizer": plan.optimizer,
        "activation_recomputation": plan.recompute,
        "activation_recomputation_source": _recompute_source(plan),
        "recompute_modules": list(plan.recompute_modules) if plan.recompute == "selective" else [],
        "flash_attention": plan.flash_attention,
        "framework": plan.framework,
        "training_stack": training_stack(plan.framework, acc),
        "framework_source": _framework_source(plan),
        "torch_compile": plan.torch_compile,
        "loss_chunks": plan.loss_chunks,
        "activation_offload_layers": plan.offload_layers,
        "activation_offload_source": _offload_source(plan),
        "attention_kernel": attention_kernel(plan.framework, plan.accelerator)
        if plan.flash_attention
        else "unfused",
        "sequence_length": plan.sequence_length if plan.unit == "token" else None,
        "global_batch_size": plan.global_batch,
        "micro_batch_size": ev.micro_batch,
        "micro_batch_source": _micro_batch_source(plan, ev),
        "gradient_accumulation_steps": ev.micro_batches,
        "goodput": _goodput_assumptions(plan, ev),
        "notes": list(plan.notes) + _notes(plan, ev),
    }


def _goodput_assumptions(plan: TrainingPlan, ev: Evaluation) -> dict[str, Any]:
    run = ev.run
    assert run is not None
    return {
        "fraction": run.fraction,
        "source": "given" if run.given else _(GOODPUT_SOURCE),
        "interruptions_per_device_hour": plan.interruptions_per_device_hour,
        "restart_s": plan.restart_s,
        "evictions_per_device_hour": eviction_rate_per_device_hour(plan.offer_terms),
        "eviction_restart_s": plan.offer_terms.startup_s,
        "straggler_share": run.straggler_share,
        "straggler_source": _straggler_source(plan),
        "checkpoint_interval_steps": run.checkpoint_interval if run.checkpoints else None,
        "checkpoint_interval_source": "given" if plan.checkpoint_interval else "Young/Daly optimum",
        "optimal_checkpoint_interval_steps": run.optimal_interval or None,
        "checkpoint_write_s": checkpoint_write_s(plan),
    }


def _framework_source(plan: TrainingPlan) -> str:
    if plan.framework_source == "zero_stage":
        return _(
            "inferred: zero_stage 3 names no stack, taken as a PyTorch FSDP stack (FlashAttention-2 on Hopper); "
            "give training.framework to say otherwise"
        )
    return plan.framework_source  # "default" or "given": enum-like, not translated


def _recompute_source(plan: TrainingPlan) -> str:
    if plan.recompute_source == "fit":
        return _(
            "chosen: the least a TPU stack recomputes that fits (MaxText remat_policy 'minimal' before 'full')"
        )
    return plan.recompute_source  # "default" or "given": enum-like, not translated


def _offload_source(plan: TrainingPlan) -> str:
    if plan.offload_source == "fit" and plan.accelerator.kind == "tpu":
        return _(
            "chosen: the fewest layers per pipeline stage whose saved activations, kept in the TPU host's memory, "
            "make the plan fit (Google's MaxText TPU recipes offload the layer inputs to fit); give "
            "training.activation_offload_layers to say otherwise"
        )
    if plan.offload_source == "fit":
        return _(
            "chosen: the fewest layers per pipeline stage whose activations, kept in the Grace CPU's memory over "
            "NVLink-C2C, make the plan fit (NVIDIA's GB200 and GB300 recipes offload to fit); give "
            "training.activation_offload_layers to say otherwise"
        )
    return plan.offload_source  # "default" or "given": enum-like, not translated


def _straggler_source(plan: TrainingPlan) -> str:
    if plan.straggler_share is not None:
        return "given"
    return _(
        "expected share of a GPU-hour in jobs of at least 128 GPUs, 10.4 percent (Lin et al., OSDI 2025), scaled by "
        "ln N / ln 128 below 128"
    )


def _micro_batch_source(plan: TrainingPlan, ev: Evaluation) -> str:
    if not ev.micro_batch_chosen:
        return "given"
    if plan.par.pipeline > 1:
        return _("chosen: the power of two that fits with the fastest step (pipeline bubble vs. GEMM size)")
    return _("chosen: largest power of two that fits")


def _notes(plan: TrainingPlan, ev: Evaluation) -> list[str]:
    notes = [
        _(
            "Mixed precision (bf16/fp16/fp8): 16-bit weights and gradients, fp32 master weights and "
            "optimizer states; fp8 runs the matmuls in FP8 only. fp32/tf32: 4-byte weights, gradients "
            "and states."
        ),
        _(
            "Utilization is model-FLOPs utilization while stepping; the pipeline bubble, checkpoint "
            "writes and validation are added on top."
        ),
    ]
    if plan.precision == "fp4":
        notes.append(
            _(
                "fp4: the NVFP4 recipe (NVIDIA, arXiv 2509.25149): the linear layers' matmuls at the FP4 peak, "
                "except about 16 percent of the linear layers and the LM head, kept in BF16 with attention and the "
                "element-wise work; the linear layers' inputs are kept for backward in NVFP4 (4.5 bits)."
            )
        )
    notes.extend(_run_notes(plan, ev))
    if plan.unit == "token" and plan.model.shape is None:
        notes.append(_("No transformer shape: 6·N FLOPs per token, no attention term."))
    return notes


def _run_notes(plan: TrainingPlan, ev: Evaluation) -> list[str]:
    """Notes on the run as its offer runs it: checkpoints, interruptions, spot evictions, a job too large for an offer
    without a scale-out network."""
    notes: list[str] = []
    run = ev.run
    if plan.checkpoint_interval is None and run is not None:
        if run.checkpoints:
            notes.append(
                _(
                    "No checkpoint_interval_steps given: a checkpoint every {steps} steps, the Young/Daly optimum "
                    "√(2 · write time · mean time between interruptions)."
                ).format(steps=run.checkpoint_interval)
            )
        else:
            notes.append(
                _("No checkpoint_interval_steps given: interruptions are rare enough that none is needed.")
            )
    if run is not None and not run.given and run.interruptions >= 0.5:
        notes.append(
            _(
                "About {count} interruptions expected over the run ({rate} per device-hour): restarts, lost work "
                "and checkpoint writes take {lost} of the wall time (goodput {goodput})."
            ).format(
                count=num(run.interruptions, 0, grouping=True),
                rate=f"{plan.interruptions_per_device_hour:.2g}",
                lost=pct(1 - run.fraction, 1),
                goodput=pct(run.fraction, 1),
            )
        )
    limit = plan.offer_terms.single_job_limit
    if limit is not None and plan.par.devices > limit:
        notes.append(
            _(
                "This offer sells no scale-out network (docs/formulas.md, Scale-out networks): {count} accelerators "
                "there are separate nodes of at most {limit}, not one job; plans keep a job within one node at such "
                "offers."
            ).format(count=plan.par.devices, limit=limit)
        )
    if run is not None and not run.given and run.evictions > 0.0:
        notes.append(
            _(
                "Spot capacity: about {count} evictions expected over the run ({rate} per instance-hour), each a "
                "restart on new capacity ({restart}) plus the work since the last checkpoint; they are in the time "
                "and the cost, so this plan is slower and dearer than its price alone suggests."
            ).format(
                count=num(run.evictions, 1, grouping=True),
                rate=f"{plan.offer_terms.interruptions_per_hour:.2g}",
                restart=human_duration(plan.offer_terms.startup_s),
            )
        )
    return notes


def details(plan: TrainingPlan, ev: Evaluation) -> list[dict[str, Any]]:
    acc, devices = plan.accelerator, plan.par.devices
    peak = acc.peak(plan.precision)
    rows = [
        ("parameters", "model total (all experts)", plan.model.total_parameters, "parameters", plan.model.source),
        ("active_parameters", "per-token active (MoE: k routed + shared)", plan.model.active_parameters,
         "parameters", plan.model.source),
        ("flops_per_" + plan.unit, "6·N_matmul + attention scores (or 3 × forward per sample)", ev.flops_per_unit,
         "FLOP", "Kaplan et al. 2020; Megatron num_floating_point_operations; PaLM App. B"),
        ("training_flops", f"FLOPs per {plan.unit} × {plan.unit}s", ev.training_flops, "FLOP", "Kaplan et al. 2020"),
        ("weights_per_device", "params/(t·p) × bytes ÷ dp if ZeRO-3", ev.memory.weights, "bytes", "Rajbhandari 2020"),
        ("optimizer_per_device", "params/(t·p) × bytes ÷ dp if ZeRO≥1", ev.memory.optimizer_states, "bytes",
         "Rajbhandari et al. 2020"),
        ("activations_per_device", "s·b·h·(8 + 24/t + 2as/(ht)) × layers × in-flight", ev.memory.activations,
         "bytes", "Korthikanti et al. 2022 Table 2 without dropout"),
        ("peak", f"dense {plan.precision} peak", peak, "FLOP/s", f"{acc.name} datasheet (catalog)"),
        ("utilization", "model FLOPs / (devices × peak × step time)", ev.utilization, "fraction",
         "given" if plan.utilization is not None else "engine utilization model"),
        ("goodput", "stepping / wall time: interruptions λ·N·T × (restart + τ/2), checkpoints every τ",
         ev.goodput, "fraction", "Dubey et al. 2024 (Llama 3) §3.3.4; Young 1974; Daly 2006"),
        ("time", "FLOPs/(devices·peak·u) + bubble + checkpoints + validation + interruptions", ev.seconds, "s",
         "Narayanan et al. 2021"),
        ("accelerator_hours", "devices × time / 3600", ev.accelerator_hours(devices), "hours", "definition"),
    ]  # fmt: skip
    if ev.usd_per_hour is not None:
        billed = billed_accelerator_hours(float(devices), ev.seconds, plan.offer_terms)
        rows.append(
            (
                "billed_accelerator_hours",
                "whole instances × (start-up + time, rounded up to the billing "
                "increment, at least the minimum) / 3600",
                billed,
                "hours",
                "the offer's terms (engine/offers.py)",
            )
        )
        rows.append(("compute_usd", "billed accelerator-hours × price", compute_usd(billed, ev.usd_per_hour),
                     "USD", describe(plan.price_source)))  # fmt: skip
    return [{"name": n, "formula": f, "value": v, "unit": u, "source": s} for n, f, v, u, s in rows]
