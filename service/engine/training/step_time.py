"""Predicted step time and model-FLOPs utilization (MFU) for a training configuration.

A small roofline-style model, not a constant: matmul time at the accelerator's best-GEMM efficiency scaled
by GEMM shape, attention kernels, memory-bound element-wise work at HBM bandwidth, the optimizer step,
tensor/pipeline/data/expert communication over the interconnect, and the pipeline bubble. The free
constants below were fitted by hand to Megatron-LM's weak-scaling table (Narayanan et al. 2021, Table 1)
and NVIDIA NeMo 24.09's published H100 pre-training throughput; tests/engine/test_calibration.py prints
the error on every point.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..architecture import attention_score_flops_per_token, matmul_parameters_per_token
from ..hardware import Accelerator
from ..parallelism import all_reduce_seconds, group_bandwidth, pipeline_bubble_fraction
from .memory import MemoryBreakdown, bytes_per_parameter, parameters_per_device
from .plan import TrainingPlan

# Best single BF16 GEMM as a fraction of dense peak — ml-engineering "Maximum Achievable Matmul FLOPS" (MAMF).
BEST_GEMM_EFFICIENCY = (
    ("gb200", 0.78),
    ("b200", 0.78),
    ("h100", 0.80),
    ("h200", 0.80),
    ("a100", 0.87),
    ("mi300x", 0.51),
    ("mi325x", 0.60),  # ml-engineering: MI325X MAMF ~785 of 1307 TFLOPS
    ("gaudi2", 0.97),
)
DEFAULT_GEMM_EFFICIENCY = 0.70  # assumption for accelerators without a published MAMF measurement
# Constants marked (fitted) were set by a grid search minimising the error on the calibration points
# (Megatron-LM 2021 Table 1, NeMo 24.09 DGX-H100 FP8); see tests/engine/test_calibration.py.
GEMM_IN_MODEL = 0.85  # GEMMs inside a training step reach ~85 % of the best isolated GEMM (fitted)
FP8_GEMM_RATIO = 0.90  # FP8 GEMMs reach a slightly lower share of their 2× peak than BF16 (fitted)
# f_shape = 1/(1 + W0/(h/t) + T0/(b·s)): narrow per-device GEMMs and short micro-batches underfill tensor cores
GEMM_WIDTH_KNEE = 256.0  # W0 (fitted)
GEMM_TOKENS_KNEE = 64.0  # T0 (assumption)
FLASH_ATTENTION_EFFICIENCY = 0.70  # FlashAttention-2 fwd+bwd reaches 50–73 % of A100 peak (Dao 2023, Fig. 6)
# unfused softmax(QKᵀ)V is several times slower than FlashAttention (Dao et al. 2022, Fig. 1) (fitted)
UNFUSED_ATTENTION_EFFICIENCY = 0.20
# Memory-bound element-wise work (norms, residuals, activations, dropout, casts) in bytes per token per layer
# per unit of h, forward + backward: Korthikanti et al. 2022 store 34·h B/token/layer, each touched ~12× (fitted)
ELEMENTWISE_BYTES_PER_HIDDEN = 450.0
# unfused attention: scores written/read ~8× at 2 B (Korthikanti et al. 2022 §4.2)
SOFTMAX_BYTES_PER_SCORE = 16.0
# gradient all-reduce overlaps the backward pass; ≥10 % stays exposed (Li et al. 2020, PyTorch DDP)
DP_MIN_EXPOSED = 0.1
TP_EXPOSED = 0.6  # share of tensor-parallel collectives not hidden behind GEMMs (fitted)
MOE_DISPATCH_EXPOSED = 1.0  # expert all-to-all sits on the critical path (Megatron-Core MoE docs)
SHAPELESS_KERNEL_EFFICIENCY = {
    # ResNet-50 AMP reaches ~21-25 % of tensor peak (NVIDIA DeepLearningExamples RN50 v1.5: ~2,600 img/s on A100,
    # ~1,300 on V100 at 3 × 8.2 GFLOPs per image): convolutions, BN and ReLU are far less GEMM-efficient.
    "cnn": 0.28,
    "vit": 0.85,
    # cuDNN LSTMs are sequential over time steps: small GEMMs (assumption, no public MFU figure found).
    "lstm": 0.35,
    "mlp": 0.9,
}
OPTIMIZER_PASSES = 2.0  # the optimizer step reads and writes every state byte once
CP_MIN_EXPOSED = 0.1  # share of the ring K/V exchange never hidden (as DP_MIN_EXPOSED; assumption)


@dataclass(frozen=True)
class StepTime:
    """Seconds per optimizer step on every device, by cause."""

    gemm_s: float
    attention_s: float
    memory_bound_s: float
    optimizer_s: float
    tensor_comm_s: float
    pipeline_comm_s: float
    data_comm_s: float
    expert_comm_s: float
    bubble_s: float
    context_comm_s: float = 0.0  # exposed ring-attention K/V exchange (context parallel)

    @property
    def compute_s(self) -> float:
        return self.gemm_s + self.attention_s + self.memory_bound_s + self.optimizer_s

    @property
    def communication_s(self) -> float:
        return (
            self.tensor_comm_s
            + self.pipeline_comm_s
            + self.data_comm_s
            + self.expert_comm_s
            + self.context_comm_s
        )

    @property
    def busy_s(self) -> float:
        return self.compute_s + self.communication_s

    @property
    def total_s(self) -> float:
        return self.busy_s + self.bubble_s

    def scaled(self, factor: float) -> StepTime:
        return StepTime(*(value * factor for value in self.__dict__.values()))


def best_gemm_efficiency(acc: Accelerator, precision: str) -> float:
    key = acc.id.lower()
    base = next((value for prefix, value in BEST_GEMM_EFFICIENCY if prefix in key), DEFAULT_GEMM_EFFICIENCY)
    return base * FP8_GEMM_RATIO if precision == "fp8" else base


@dataclass(frozen=True)
class UnitFlops:
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


def predict_step(plan: TrainingPlan, micro_batch: int, memory: MemoryBreakdown, flops: UnitFlops) -> StepTime:
    """Step time at the predicted efficiency for `plan` run with `micro_batch` (its `memory` and `flops`)."""
    micro_batches = plan.per_replica_batch // micro_batch
    gemm_s, attention_s, memory_bound_s = _compute_times(plan, micro_batch, flops)
    compute_s = gemm_s + attention_s + memory_bound_s
    bandwidth = plan.accelerator.memory_bandwidth_bytes_per_s
    optimizer_s = OPTIMIZER_PASSES * (memory.weights + memory.gradients + memory.optimizer_states) / bandwidth
    tensor_s, pipeline_s, expert_s = _model_parallel_comm(plan, micro_batch, micro_batches)
    data_s = _data_parallel_comm(plan, micro_batches, compute_s)
    context_s = _context_parallel_comm(plan, micro_batch, micro_batches, attention_s)
    par = plan.par
    stage_work = compute_s + tensor_s + pipeline_s + expert_s + context_s
    bubble = pipeline_bubble_fraction(par.pipeline, micro_batches, par.virtual_pipeline)
    bubble_s = stage_work * bubble / (1.0 - bubble) if bubble else 0.0
    return StepTime(
        gemm_s,
        attention_s,
        memory_bound_s,
        optimizer_s,
        tensor_s,
        pipeline_s,
        data_s,
        expert_s,
        bubble_s,
        context_s,
    )


def _context_parallel_comm(
    plan: TrainingPlan, micro_batch: int, micro_batches: int, attention_s: float
) -> float:
    """Exposed K/V ring exchange of context parallelism, seconds per step.

    Each rank passes its K/V block around the ring cp − 1 times in the forward pass; the backward pass sends
    K/V again and their gradients back (3 transfers in all). Each transfer overlaps the attention block being
    computed (Liu et al. 2023 "Ring Attention" §3; Megatron-Core context parallel P2P with overlap): only what
    exceeds the attention time is exposed, and never less than CP_MIN_EXPOSED of it (launch and sync gaps)."""
    par, shape = plan.par, plan.model.shape
    if par.context <= 1 or shape is None:
        return 0.0
    local_tokens = micro_batch * plan.sequence_length / par.context
    kv_bytes = (
        2.0 * local_tokens * shape.kv_heads * shape.head_dim * plan.activation_bytes_per_value / par.tensor
    )
    layers_per_stage = -(-shape.layers // par.pipeline)
    bandwidth = group_bandwidth(plan.accelerator, par.context, par.tensor)
    total = 3.0 * (par.context - 1) * kv_bytes / bandwidth * layers_per_stage * micro_batches
    return max(CP_MIN_EXPOSED * total, total - attention_s)


def _compute_times(plan: TrainingPlan, micro_batch: int, flops: UnitFlops) -> tuple[float, float, float]:
    """(GEMM, attention, memory-bound element-wise) seconds per step."""
    model, acc, par, precision = plan.model, plan.accelerator, plan.par, plan.precision
    devices, units = par.devices, plan.units_per_step
    peak = acc.peak(precision) or 0.0
    peak16 = acc.peak("bf16") or acc.peak("fp16") or peak  # attention kernels run in 16-bit even under FP8
    e_gemm = best_gemm_efficiency(acc, precision) * GEMM_IN_MODEL
    shape = model.shape
    hidden = shape.hidden_size if shape else 4096
    tokens_mb = micro_batch * plan.sequence_length / par.context if shape else 4096.0
    f_shape = 1.0 / (1.0 + GEMM_WIDTH_KNEE * par.tensor / hidden + GEMM_TOKENS_KNEE / max(tokens_mb, 1.0))
    if shape is None:
        f_shape *= SHAPELESS_KERNEL_EFFICIENCY.get(model.architecture, 1.0)
    # Hardware FLOPs: full recompute repeats the forward (+1/3), selective/FlashAttention re-run attention scores.
    gemm_hw = flops.gemm * (4.0 / 3.0 if plan.recompute == "full" else 1.0)
    attn_extra = 1.0 / 3.0 if plan.recompute != "none" or plan.flash_attention else 0.0
    attn_hw = flops.attention * (1.0 + attn_extra)
    gemm_s = units * gemm_hw / (devices * peak * e_gemm * f_shape)
    attn_eff = best_gemm_efficiency(acc, "bf16") * (
        FLASH_ATTENTION_EFFICIENCY if plan.flash_attention else UNFUSED_ATTENTION_EFFICIENCY
    )
    attention_s = units * attn_hw / (devices * peak16 * attn_eff) if attn_hw else 0.0
    memory_bound_s = 0.0
    if shape is not None:
        per_token = ELEMENTWISE_BYTES_PER_HIDDEN * hidden * plan.activation_bytes_per_value / 2.0
        if not plan.flash_attention:
            per_token += SOFTMAX_BYTES_PER_SCORE * shape.attention_heads * plan.sequence_length * 0.5
        repeat = 4.0 / 3.0 if plan.recompute == "full" else 1.0
        memory_bound_s = (
            units * shape.layers * per_token * repeat / (devices * acc.memory_bandwidth_bytes_per_s)
        )
    return gemm_s, attention_s, memory_bound_s


def _model_parallel_comm(
    plan: TrainingPlan, micro_batch: int, micro_batches: int
) -> tuple[float, float, float]:
    """(tensor, pipeline, expert) communication seconds per step on the critical path."""
    shape, acc, par = plan.model.shape, plan.accelerator, plan.par
    if shape is None:
        return 0.0, 0.0, 0.0
    hidden, act_bytes = shape.hidden_size, plan.activation_bytes_per_value
    seq = plan.sequence_length // par.context  # the tokens of a micro-batch on one context rank
    layers_per_stage = -(-shape.layers // par.pipeline)
    payload = micro_batch * seq * hidden * act_bytes
    # 2 all-reduces forward + 2 backward per layer (Shoeybi et al. 2019 Fig. 4); full recompute adds 2.
    collectives = 4 + (2 if plan.recompute == "full" else 0)
    tp_bw = group_bandwidth(acc, par.tensor, 1)
    tensor_s = (
        TP_EXPOSED
        * micro_batches
        * layers_per_stage
        * collectives
        * all_reduce_seconds(payload, par.tensor, tp_bw)
    )
    pipeline_s = expert_s = 0.0
    if par.pipeline > 1:  # one activation forward, one gradient backward per micro-batch per stage boundary
        pp_bw = group_bandwidth(acc, par.pipeline, par.tensor * par.context * par.data)
        pipeline_s = 2 * micro_batches * payload / (par.tensor if par.sequence_parallel else 1) / pp_bw
    if shape.is_moe and par.expert > 1:  # dispatch + combine, forward and backward: 4 all-to-alls per layer
        ep_bw = group_bandwidth(acc, par.expert, par.tensor)
        routed = micro_batch * seq * shape.experts_per_token * hidden * act_bytes
        share = (par.expert - 1) / par.expert
        expert_s = (
            MOE_DISPATCH_EXPOSED
            * micro_batches
            * shape.moe_layers
            / par.pipeline
            * 4
            * routed
            * share
            / ep_bw
        )
    return tensor_s, pipeline_s, expert_s


def _data_parallel_comm(plan: TrainingPlan, micro_batches: int, compute_s: float) -> float:
    """Exposed data-parallel gradient (and ZeRO-3 parameter) communication seconds per step."""
    par = plan.par
    _, g_b, _ = bytes_per_parameter(plan.precision, plan.optimizer, plan.optimizer_multiplier)
    dense, expert = parameters_per_device(plan.model, par)
    ranks = par.gradient_ranks
    dp_bw = group_bandwidth(plan.accelerator, ranks, par.tensor)
    # ZeRO-3 moves 1.5× the all-reduce volume (Rajbhandari et al. 2020 §7.2)
    volume = 1.5 if par.zero_stage >= 3 else 1.0
    data_total = volume * all_reduce_seconds((dense + expert) * g_b, ranks, dp_bw)
    if par.zero_stage >= 3:  # parameters are re-gathered every micro-batch, prefetched behind compute
        data_total *= micro_batches
        hidden_behind = 0.8 * compute_s
    else:  # gradients reduce during the last micro-batch's backward (2/3 of its compute)
        hidden_behind = compute_s / max(micro_batches, 1) * 2.0 / 3.0
    return max(DP_MIN_EXPOSED * data_total, data_total - hidden_behind)


def model_flops_utilization(
    model_flops_per_step: float, acc: Accelerator, precision: str, devices: int, seconds: float
) -> float:
    """MFU = model FLOPs / (devices × dense peak × time) — Chowdhery et al. 2022 (PaLM) App. B."""
    peak = acc.peak(precision) or 0.0
    return model_flops_per_step / (devices * peak * seconds) if seconds > 0 and peak > 0 else 0.0
