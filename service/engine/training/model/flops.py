"""FLOPs of one training unit (a token, or a sample for CNN/ViT), forward + backward, and what activation
recomputation adds: the model FLOPs the utilization is measured on, and the hardware FLOPs the step runs."""

from __future__ import annotations

from typing import NamedTuple

from ...architecture import attention_score_flops_per_token, matmul_parameters_per_token
from ...hardware import Accelerator
from .activations import op_sac_recomputed_share
from .plan import TrainingPlan
from .recompute import recomputed_matmul_share


class UnitFlops(NamedTuple):
    """Model FLOPs per token (or per sample for CNN/ViT), forward + backward."""

    gemm: float
    attention: float

    @property
    def total(self) -> float:
        return self.gemm + self.attention


def flops_per_unit(plan: TrainingPlan) -> UnitFlops:
    """Matmul and attention-score FLOPs per token — or per sample for CNN/ViT — forward + backward."""
    model, seq = plan.model, plan.sequence_length
    shape = model.shape
    if model.flops_per_sample:  # training = forward + 2× forward for backward (Kaplan et al. 2020 §2.1)
        total = 3.0 * model.flops_per_sample
        attention = attention_score_flops_per_token(shape, seq) * seq if shape is not None else 0.0
        attention = min(attention, 0.5 * total)
        return UnitFlops(total - attention, attention)
    if shape is None:  # LSTM / MLP: 6·N per token (Kaplan et al. 2020)
        return UnitFlops(6.0 * model.active_parameters, 0.0)
    attention = attention_score_flops_per_token(shape, seq)
    if model.shape_inferred:
        return UnitFlops(6.0 * model.active_parameters, attention)
    return UnitFlops(6.0 * matmul_parameters_per_token(shape), attention)


def recompute_gemm_factor(plan: TrainingPlan) -> float:
    """Hardware over model GEMM FLOPs from activation recomputation: full recompute runs the forward again (4/3;
    bigscience math README), op-level selective checkpointing the forward of the matmuls it does not keep
    (1 + share/3, activations.op_sac_recomputed_share), selective the matmuls of the modules it names (1 + share/3,
    recompute_modules.recomputed_matmul_share; none with the default core attention), none no GEMM again."""
    if plan.recompute == "full":
        return 4.0 / 3.0
    if plan.recompute == "selective_op":
        return 1.0 + op_sac_recomputed_share(plan.model.shape) / 3.0
    if plan.recompute == "selective":
        return 1.0 + recomputed_matmul_share(plan.model.shape, plan.recompute_modules) / 3.0
    return 1.0


def recompute_collectives(recompute: str, sequence_parallel: bool) -> int:
    """Tensor-parallel all-reduce equivalents per layer beyond the 2 forward + 2 backward (Shoeybi et al. 2019
    Fig. 4): full recompute re-runs the forward's 2; "dots" re-gathers only the inputs of the column-parallel
    matmuls it rebuilds for their weight gradients (the all-gather halves of the 2: 1 all-reduce's volume);
    op-level selective checkpointing keeps the reduce-scatter outputs (torchtitan's save list) and re-runs the
    all-gathers only — half of each all-reduce under sequence parallelism — or the whole all-reduces without it."""
    if recompute == "full":
        return 2
    if recompute == "dots":
        return 1
    if recompute == "selective_op":
        return 1 if sequence_parallel else 2
    return 0


def model_flops_utilization(
    model_flops_per_step: float, acc: Accelerator, precision: str, devices: int, seconds: float
) -> float:
    """MFU = model FLOPs / (devices × dense peak × time) — Chowdhery et al. 2022 (PaLM) App. B."""
    peak = acc.peak(precision) or 0.0
    return model_flops_per_step / (devices * peak * seconds) if seconds > 0 and peak > 0 else 0.0
