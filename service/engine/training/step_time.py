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

from ..architecture import ModelSpec
from ..hardware import Accelerator
from ..parallelism import Parallelism, all_reduce_seconds, group_bandwidth, pipeline_bubble_fraction

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

    @property
    def compute_s(self) -> float:
        return self.gemm_s + self.attention_s + self.memory_bound_s + self.optimizer_s

    @property
    def communication_s(self) -> float:
        return self.tensor_comm_s + self.pipeline_comm_s + self.data_comm_s + self.expert_comm_s

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


def predict_step(
    model: ModelSpec,
    acc: Accelerator,
    par: Parallelism,
    precision: str,
    recompute: str,
    flash_attention: bool,
    sequence_length: int,
    micro_batch: int,
    micro_batches: int,
    units_per_step: float,
    gemm_flops_per_unit: float,
    attention_flops_per_unit: float,
    state_bytes_per_device: float,
    grad_bytes_per_device: float,
) -> StepTime:
    """Step time at the predicted efficiency. `units` are tokens (or samples for CNN/ViT); FLOPs are model FLOPs."""
    devices = par.devices
    peak = acc.peak(precision) or 0.0
    peak16 = acc.peak("bf16") or acc.peak("fp16") or peak  # attention kernels run in 16-bit even under FP8
    act_bytes = 4.0 if precision in ("fp32", "tf32") else 2.0
    e_gemm = best_gemm_efficiency(acc, precision) * GEMM_IN_MODEL
    shape = model.shape
    hidden = shape.hidden_size if shape else 4096
    tokens_mb = micro_batch * sequence_length if shape else 4096.0
    f_shape = 1.0 / (1.0 + GEMM_WIDTH_KNEE * par.tensor / hidden + GEMM_TOKENS_KNEE / max(tokens_mb, 1.0))
    if shape is None:
        f_shape *= SHAPELESS_KERNEL_EFFICIENCY.get(model.architecture, 1.0)
    # Hardware FLOPs: full recompute repeats the forward (+1/3), selective/FlashAttention re-run attention scores.
    gemm_hw = gemm_flops_per_unit * (4.0 / 3.0 if recompute == "full" else 1.0)
    attn_extra = 1.0 / 3.0 if recompute != "none" or flash_attention else 0.0
    attn_hw = attention_flops_per_unit * (1.0 + attn_extra)
    gemm_s = units_per_step * gemm_hw / (devices * peak * e_gemm * f_shape)
    attn_eff = best_gemm_efficiency(acc, "bf16") * (
        FLASH_ATTENTION_EFFICIENCY if flash_attention else UNFUSED_ATTENTION_EFFICIENCY
    )
    attention_s = units_per_step * attn_hw / (devices * peak16 * attn_eff) if attn_hw else 0.0
    bandwidth = acc.memory_bandwidth_bytes_per_s
    memory_bound_s = 0.0
    if shape is not None:
        per_token = ELEMENTWISE_BYTES_PER_HIDDEN * hidden * act_bytes / 2.0
        if not flash_attention:
            per_token += SOFTMAX_BYTES_PER_SCORE * shape.attention_heads * sequence_length * 0.5
        repeat = 4.0 / 3.0 if recompute == "full" else 1.0
        memory_bound_s = units_per_step * shape.layers * per_token * repeat / (devices * bandwidth)
    optimizer_s = OPTIMIZER_PASSES * state_bytes_per_device / bandwidth
    tensor_s = pipeline_s = expert_s = 0.0
    if shape is not None:
        layers_per_stage = -(-shape.layers // par.pipeline)
        payload = micro_batch * sequence_length * hidden * act_bytes
        # 2 all-reduces forward + 2 backward per layer (Shoeybi et al. 2019 Fig. 4); full recompute adds 2.
        collectives = 4 + (2 if recompute == "full" else 0)
        tp_bw = group_bandwidth(acc, par.tensor, 1)
        tensor_s = (
            TP_EXPOSED
            * micro_batches
            * layers_per_stage
            * collectives
            * all_reduce_seconds(payload, par.tensor, tp_bw)
        )
        if (
            par.pipeline > 1
        ):  # one activation forward, one gradient backward per micro-batch per stage boundary
            pp_bw = group_bandwidth(acc, par.pipeline, par.tensor * par.data)
            pipeline_s = 2 * micro_batches * payload / (par.tensor if par.sequence_parallel else 1) / pp_bw
        if (
            shape.is_moe and par.expert > 1
        ):  # dispatch + combine, forward and backward: 4 all-to-alls per layer
            ep_bw = group_bandwidth(acc, par.expert, par.tensor)
            routed = micro_batch * sequence_length * shape.experts_per_token * hidden * act_bytes
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
    compute_s = gemm_s + attention_s + memory_bound_s
    dp_bw = group_bandwidth(acc, par.data, par.tensor)
    # ZeRO-3 moves 1.5× the all-reduce volume (Rajbhandari et al. 2020 §7.2)
    volume = 1.5 if par.zero_stage >= 3 else 1.0
    data_total = volume * all_reduce_seconds(grad_bytes_per_device, par.data, dp_bw)
    if par.zero_stage >= 3:  # parameters are re-gathered every micro-batch, prefetched behind compute
        data_total *= micro_batches
        hidden_behind = 0.8 * compute_s
    else:  # gradients reduce during the last micro-batch's backward (2/3 of its compute)
        hidden_behind = compute_s / max(micro_batches, 1) * 2.0 / 3.0
    data_s = max(DP_MIN_EXPOSED * data_total, data_total - hidden_behind)
    stage_work = compute_s + tensor_s + pipeline_s + expert_s
    bubble = pipeline_bubble_fraction(par.pipeline, micro_batches, par.virtual_pipeline)
    bubble_s = stage_work * bubble / (1.0 - bubble) if bubble else 0.0
    return StepTime(
        gemm_s, attention_s, memory_bound_s, optimizer_s, tensor_s, pipeline_s, data_s, expert_s, bubble_s
    )


def model_flops_utilization(
    model_flops_per_step: float, acc: Accelerator, precision: str, devices: int, seconds: float
) -> float:
    """MFU = model FLOPs / (devices × dense peak × time) — Chowdhery et al. 2022 (PaLM) App. B."""
    peak = acc.peak(precision) or 0.0
    return model_flops_per_step / (devices * peak * seconds) if seconds > 0 and peak > 0 else 0.0
