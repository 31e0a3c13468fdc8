"""Predicted step time and model-FLOPs utilization (MFU) for a training configuration.

A small roofline-style model, not a constant: matmul time at the accelerator's best-GEMM efficiency scaled
by GEMM shape, attention kernels, memory-bound element-wise work at HBM bandwidth, the optimizer step,
tensor/pipeline/data/expert communication over the interconnect, and the pipeline bubble. The free
constants below were fitted by hand to Megatron-LM's weak-scaling table (Narayanan et al. 2021, Table 1)
and NVIDIA NeMo 24.09's published H100 pre-training throughput; tests/engine/test_calibration.py prints
the error on every point.
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

from ...architecture import (
    ModelSpec,
    TransformerShape,
)
from ...hardware import Accelerator
from ...numeric import Num, where
from .activations import FP4_BF16_LAYER_SHARE
from .flops import UnitFlops, recompute_gemm_factor
from .framework import attention_factor, elementwise_factor
from .memory import MemoryBreakdown, expert_parameters
from .plan import TrainingPlan
from .recompute import recomputed_elementwise_bytes, recomputes_attention
from .stacks import stack_gemm_factor

# Best single BF16 GEMM as a fraction of dense peak — ml-engineering "Maximum Achievable Matmul FLOPS" (MAMF).
BEST_GEMM_EFFICIENCY = (
    ("gb200", 0.78),
    ("b200", 0.78),
    # B300/GB300 (Blackwell Ultra, same tensor-core generation): assumed as B200, no published MAMF
    ("b300", 0.78),
    ("h100", 0.80),
    ("h200", 0.80),
    # H800: the H100 SXM's GH100 die and tensor rates with NVLink and FP64 cut (catalog row): the H100's MAMF assumed
    ("h800", 0.80),
    ("a100", 0.87),
    ("mi300x", 0.51),
    ("mi325x", 0.60),  # ml-engineering: MI325X MAMF ~785 of 1307 TFLOPS
    ("gaudi2", 0.97),
    # Google TPUs (v2-v7): an in-model matmul runs at the MXU roofline. How To Scale Your Model, Part 9 "How to
    # Profile TPU Programs" (jax-ml/scaling-book profiling.md @0819a7d): the sharded FFW up-projection
    # bf16[32·1024, 8192] x [8192, 32768] on 8 TPUv2 cores takes 96 ms against 95.6 ms at peak (99.6 %); XLA
    # streams HBM -> VMEM -> MXU (128x128 systolic arrays on every generation) behind the matmul
    ("google-tpu", 0.99),
)
DEFAULT_GEMM_EFFICIENCY = 0.70  # assumption for accelerators without a published MAMF measurement
# Constants marked (fitted) were set by a grid search minimising the error on the calibration points
# (Megatron-LM 2021 Table 1, NeMo 24.09 DGX-H100 FP8); see tests/engine/test_calibration.py.
# GEMMs inside a training step reach ~87.5 % of the best isolated GEMM (fitted; re-fitted with
# FLASH_ATTENTION_EFFICIENCY on all public points, docs/formulas.md "Attention inside a training step")
GEMM_IN_MODEL = 0.875
FP8_GEMM_RATIO = 0.90  # FP8 GEMMs reach a slightly lower share of their 2× peak than BF16 (fitted)
# NVFP4/MXFP4 GEMMs: no published best-GEMM (MAMF-style) measurement found; the FP8 ratio is assumed (assumption)
FP4_GEMM_RATIO = FP8_GEMM_RATIO
# f_shape = 1/(1 + W0/(h/t) + T0/(b·s)): narrow per-device GEMMs and short micro-batches underfill tensor cores
GEMM_WIDTH_KNEE = 256.0  # W0 (fitted)
GEMM_TOKENS_KNEE = 64.0  # T0 (assumption)
# Fused attention (FlashAttention-2 on Ampere, cuDNN / FlashAttention-3 class on Hopper and Blackwell) forward +
# backward inside a training step, as a share of the best GEMM rate (fitted with GEMM_IN_MODEL on the public points,
# whose long-sequence rows, NeMo's performance_long_sequence.md at 4K-1M tokens, constrain it: 0.70 had left every
# source over-predicted by +23...+62 % from 32K on). Below the kernels' own benchmarks: FlashAttention-2 reaches
# 50-73 % of A100 peak forward, up to 63 % backward (Dao 2023).
FLASH_ATTENTION_EFFICIENCY = 0.50
# unfused softmax(QKᵀ)V is several times slower than FlashAttention (Dao et al. 2022, Fig. 1) (fitted)
UNFUSED_ATTENTION_EFFICIENCY = 0.20
# Memory-bound element-wise work (norms, residuals, activations, dropout, casts) in bytes per token per layer
# per unit of h, forward + backward: Korthikanti et al. 2022 store 34·h B/token/layer, each touched ~12× (fitted)
ELEMENTWISE_BYTES_PER_HIDDEN = 450.0
# unfused attention: scores written/read ~8× at 2 B (Korthikanti et al. 2022 §4.2)
SOFTMAX_BYTES_PER_SCORE = 16.0
# XLA on TPU fuses the element-wise work into the matmuls: "a dot or fusion op is a set of operations containing at
# most 1 matrix multiplication and possibly a bunch of related pointwise VPU-ops" (How To Scale Your Model, Part 9,
# jax-ml/scaling-book profiling.md @0819a7d); the VPU runs them on tiles in VMEM while the MXU multiplies, so they
# add no HBM pass of their own. On these vendors' parts only the unfused-attention score traffic stays memory-bound.
XLA_FUSED_ELEMENTWISE_VENDORS = ("Google",)
# gradient all-reduce overlaps the backward pass; ≥10 % stays exposed (Li et al. 2020, PyTorch DDP)
DP_MIN_EXPOSED = 0.1
TP_EXPOSED = 0.6  # share of tensor-parallel collectives not hidden behind GEMMs (fitted)
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
# Routed-expert GEMMs of a mixture of experts are grouped GEMMs over many small per-expert matrices and reach a
# lower share of peak than a dense GEMM of the same FLOPs. 0.65 is the serving side's routed-expert factor
# (inference/efficiency.py MOE_EXPERT_EFFICIENCY, fitted on gpt-fast's Mixtral decode); on the six public MoE
# training points (NeMo Mixtral-8x7B and DeepSeek-V3 on GB200/B200, AutoModel DeepSeek-V3 on H100) 0.55–0.75 all
# give the same median error, so the one factor is kept for both wings (tests/engine/test_public_calibration.py).
MOE_GROUPED_GEMM_EFFICIENCY = 0.65
CP_MIN_EXPOSED = 0.1
# Gradient bucket: max(40M, 1M × dp) parameters (NVIDIA/Megatron-LM megatron/core/distributed/
# distributed_data_parallel.py @d98e8a6: "larger DP sizes need larger buckets to ensure collectives do not become
# latency-bound")
DDP_BUCKET_PARAMETERS = 40e6
DDP_BUCKET_PARAMETERS_PER_RANK = (
    1e6  # share of the ring K/V exchange never hidden (as DP_MIN_EXPOSED; assumption)
)
# FP8 training runs the transformer layers' linear GEMMs in FP8 but keeps the LM head (output projection, 6·h·V
# FLOPs per token) in BF16: Megatron-Core builds its output layer as a plain ColumnParallelLinear, not a Transformer
# Engine layer, so `--fp8` does not reach it; torchtitan's float8 converter skips the `output` module by default
# (filter_fqns). Attention kernels already run at the 16-bit peak. StepWork.bf16_gemm_share carries the LM head's share.
FP8_BF16_GEMMS = ("lm_head",)
# FP4 training (NVIDIA's NVFP4 recipe, "Pretraining Large Language Models with NVFP4", arXiv 2509.25149 §4): only the
# linear layers' GEMMs (Fprop, Dgrad, Wgrad) run in NVFP4; embeddings, the output head, norms, non-linearities and
# attention stay in BF16, and "a few sensitive linear layers" are kept in BF16 too: the first two and last eight of
# the 12B model's 62 blocks, about 16 % of the linear layers. The engine keeps that share of the transformer layers'
# linear GEMM work at the 16-bit rate (besides the LM head, FP8_BF16_GEMMS). Megatron-Bridge's own Llama NVFP4
# benchmark recipes run every layer in NVFP4 (first_last_layers_bf16 left False), so they are faster than this
# recipe by up to that share (docs/formulas.md, "FP4 training"). The share is activations.FP4_BF16_LAYER_SHARE (0.16).
LOW_PRECISION_TRAINING = ("fp8", "fp4")  # matmuls below 16 bits, the rest of the step in 16-bit


class StepTime(NamedTuple):
    """Seconds per optimizer step on every device, by cause (a named tuple: evaluate builds one per micro-batch
    and accelerator it compares, and a tuple is built several times faster than a frozen dataclass)."""

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
    offload_s: float = 0.0  # exposed activation copies to and from host memory (offload.py)

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
            + self.offload_s
        )

    @property
    def busy_s(self) -> float:
        return self.compute_s + self.communication_s

    @property
    def total_s(self) -> float:
        return self.busy_s + self.bubble_s

    def scaled(self, factor: float) -> StepTime:
        return StepTime(*(value * factor for value in self))


def best_gemm_efficiency(acc: Accelerator, precision: str) -> float:
    base = _gemm_base(acc.id)
    if precision == "fp8":
        return base * FP8_GEMM_RATIO
    return base * FP4_GEMM_RATIO if precision == "fp4" else base


@lru_cache(maxsize=1024)
def _gemm_base(accelerator_id: str) -> float:
    key = accelerator_id.lower()
    return next((value for prefix, value in BEST_GEMM_EFFICIENCY if prefix in key), DEFAULT_GEMM_EFFICIENCY)


def moe_permute_bytes_per_token(model: ModelSpec, act_bytes: float) -> float:
    """Token permutation of the MoE layers, bytes per token per layer (averaged over all layers), forward + backward.

    Megatron-Core's permute gathers each token into its k expert slots ([T, h] -> [T·k, h]) and unpermute sums the
    k expert outputs back, weighted by the router probabilities ([T·k, h] -> [T, h]) (megatron/core/transformer/moe/
    moe_utils.py permute/unpermute; Transformer Engine's fused moe_permute/moe_unpermute with moe_permute_fusion).
    Forward: k·h read + k·h written, then k·h read + h written; backward mirrors them: h read + k·h written, k·h read
    + h written. (5k + 3)·h values per MoE layer, which the dense h-based count (ELEMENTWISE_BYTES_PER_HIDDEN) does
    not hold. The alltoall dispatcher's second sort of the received chunks is not counted (DeepEP/HybridEP write
    them in place)."""
    shape = model.shape
    if shape is None or not shape.is_moe:
        return 0.0
    k = shape.experts_per_token
    return shape.moe_layers / shape.layers * (5 * k + 3) * shape.hidden_size * act_bytes


def _routed_share(model: ModelSpec, flops: UnitFlops) -> float:
    """Share of the GEMM FLOPs that are routed-expert grouped GEMMs."""
    shape = model.shape
    if shape is None or not shape.is_moe or model.shape_inferred or flops.gemm <= 0:
        return 0.0
    routed = 6.0 * shape.experts_per_token * expert_parameters(shape) * shape.moe_layers
    return min(1.0, routed / flops.gemm)


def expert_gemm_shape(
    shape: TransformerShape, expert_tensor: Num, expert: Num, tensor: Num = 1, sequence_parallel: Num = False
) -> tuple[Num, Num]:
    """(1 + W0·etp/f_e, rows of each local expert's GEMM per micro-batch token) for the routed-expert GEMMs: the
    same f_shape knees as a dense GEMM (GEMM_WIDTH_KNEE, GEMM_TOKENS_KNEE), on the expert's own width per
    expert-tensor rank, f_e/etp, and on its own rows — a micro-batch's tokens × k copies × the EP ranks sending
    them, over the E experts: fine-grained experts (Qwen3-30B-A3B's 768) and few tokens per expert (no expert
    parallelism over 256 experts) underfill the tensor cores as narrow dense GEMMs do. With expert ranks drawn from
    the tensor ranks (expert_tensor < tensor) under sequence parallelism, each rank dispatches its s/t share of the
    tokens, so its experts see etp/t of them (Megatron-Core's alltoall dispatcher with MoE parallel folding).
    Scalars (the single estimate) or arrays of layouts (model/arrays.py) alike."""
    base = 1.0 + GEMM_WIDTH_KNEE * expert_tensor / shape.expert_ffn_hidden_size
    rows = shape.experts_per_token * expert / shape.experts
    return base, where(sequence_parallel & (expert_tensor < tensor), rows * (expert_tensor / tensor), rows)


class StepWork(NamedTuple):
    """The compute terms' numerators, which depend on neither the accelerator nor the micro-batch: built once per
    plan (evaluate's Basis) and divided by each accelerator's rates in StepModel."""

    devices: int
    gemm_work: float  # units × hardware GEMM FLOPs per step (× the routed-expert slowdown)
    attention_work: float  # units × hardware attention-score FLOPs per step
    has_attention: bool
    elementwise_work: (
        float | None
    )  # units × layers × memory-bound bytes per token (× recompute); None: no shape
    shape_base: float  # 1 + W0·t/h of f_shape = 1/(1 + W0·t/h + T0/(b·s/cp))
    tokens_per_micro: int | None  # sequence length (None: shapeless, 4096 tokens assumed)
    context: int
    shapeless: float | None  # SHAPELESS_KERNEL_EFFICIENCY of a model without a shape
    flash_attention: bool
    # share of elementwise_work that is unfused-attention score traffic (SOFTMAX_BYTES_PER_SCORE), the rest being
    # the element-wise work XLA fuses into the matmuls on XLA_FUSED_ELEMENTWISE_VENDORS' parts
    softmax_share: float
    # share of gemm_work that stays in 16-bit under fp8/fp4 training: the LM head (FP8_BF16_GEMMS), and under fp4
    # also FP4_BF16_LAYER_SHARE of the transformer layers' linear GEMMs
    bf16_gemm_share: float = 0.0
    framework: str = "megatron"  # the training stack: its attention kernel depends on the part (framework.py)
    # the routed experts' part of gemm_work (grouped GEMMs) and its own f_shape terms (expert_gemm_shape)
    routed_gemm_work: float = 0.0
    expert_shape_base: float = 1.0
    expert_rows_per_token: float = 1.0


def step_work(plan: TrainingPlan, flops: UnitFlops) -> StepWork:
    """GEMM, attention and element-wise work of one step (hardware FLOPs and bytes, all devices together)."""
    model, par = plan.model, plan.par
    units = plan.units_per_step
    shape = model.shape
    hidden = shape.hidden_size if shape else 4096
    # Hardware FLOPs: full recompute repeats the forward (+1/3), op-level selective checkpointing the forward of
    # the matmuls it does not keep, selective/FlashAttention re-run attention scores.
    gemm_hw = flops.gemm * recompute_gemm_factor(plan)
    attn_extra = (
        1.0 / 3.0
        if recomputes_attention(plan.recompute, plan.recompute_modules, plan.flash_attention)
        else 0.0
    )
    attn_hw = flops.attention * (1.0 + attn_extra)
    routed_share = _routed_share(model, flops)
    slowdown = 1.0 - routed_share + routed_share / MOE_GROUPED_GEMM_EFFICIENCY
    expert_base, expert_rows = (
        expert_gemm_shape(shape, par.expert_tensor_ranks, par.expert, par.tensor, par.sequence_parallel)
        if routed_share > 0 and shape
        else (1.0, 1.0)
    )
    bf16_share = _bf16_gemm_share(plan, flops, slowdown)
    elementwise, softmax_share = _elementwise_work(plan, units, hidden) if shape is not None else (None, 0.0)
    return StepWork(
        devices=par.devices,
        gemm_work=units * gemm_hw * slowdown,
        routed_gemm_work=units * gemm_hw * routed_share / MOE_GROUPED_GEMM_EFFICIENCY,
        expert_shape_base=expert_base,
        expert_rows_per_token=expert_rows,
        attention_work=units * attn_hw,
        has_attention=bool(attn_hw),
        elementwise_work=elementwise,
        shape_base=1.0 + GEMM_WIDTH_KNEE * par.tensor / hidden,
        tokens_per_micro=plan.sequence_length if shape else None,
        context=par.context,
        shapeless=SHAPELESS_KERNEL_EFFICIENCY.get(model.architecture, 1.0) if shape is None else None,
        flash_attention=plan.flash_attention,
        softmax_share=softmax_share,
        bf16_gemm_share=bf16_share,
        framework=plan.framework,
    )


def _bf16_gemm_share(plan: TrainingPlan, flops: UnitFlops, slowdown: float) -> float:
    """Share of the GEMM work that stays in 16 bits under FP8/FP4 training: the lm_head (FP8_BF16_GEMMS), and
    under FP4 also FP4_BF16_LAYER_SHARE of the layers."""
    shape, model = plan.model.shape, plan.model
    share = 0.0
    if (
        plan.precision in LOW_PRECISION_TRAINING
        and shape is not None
        and not model.shape_inferred
        and flops.gemm > 0
    ):
        share = min(1.0, 6.0 * shape.hidden_size * shape.vocab_size / (flops.gemm * slowdown))
    if plan.precision == "fp4" and flops.gemm > 0:
        share += FP4_BF16_LAYER_SHARE * (1.0 - share)
    return share


def _elementwise_work(plan: TrainingPlan, units: float, hidden: int) -> tuple[float, float]:
    """(element-wise bytes of one step, the unfused softmax's share of them)."""
    shape, model = plan.model.shape, plan.model
    assert shape is not None
    softmax_share = 0.0
    # eager stacks touch the element-wise bytes more often (framework.py); the unfused softmax is its own count
    per_token = ELEMENTWISE_BYTES_PER_HIDDEN * hidden * plan.activation_bytes_per_value / 2.0
    per_token *= elementwise_factor(plan.framework, plan.torch_compile)
    if shape.is_moe and not model.shape_inferred:  # fused kernels in every stack: after the eager factor
        per_token += moe_permute_bytes_per_token(model, plan.activation_bytes_per_value)
    if not plan.flash_attention:
        softmax = SOFTMAX_BYTES_PER_SCORE * shape.attention_heads * plan.sequence_length * 0.5
        softmax_share = softmax / (per_token + softmax)
        per_token += softmax
    # full, "dots" and op-level selective recompute re-run the forward's element-wise work (norms,
    # activations) in the backward
    repeat = 4.0 / 3.0 if plan.recompute in ("full", "dots", "selective_op") else 1.0
    # selective's named norms and activations (model/recompute.py): one more forward pass of their bytes
    if plan.recompute == "selective":
        per_token += (
            recomputed_elementwise_bytes(shape, plan.recompute_modules)
            * plan.activation_bytes_per_value
            / 2.0
        )
    return units * shape.layers * per_token * repeat, softmax_share


def compute_rates(work: StepWork, acc: Accelerator, precision: str) -> tuple[float, float, float]:
    """(GEMM rate devices × peak × e_gemm, attention seconds, memory-bound element-wise seconds) of one step's
    `work` on `acc`: GEMM time = units × hardware GEMM FLOPs / (devices × peak × e_gemm × f_shape), f_shape per
    micro-batch; attention kernels and memory-bound element-wise work do not depend on the micro-batch."""
    devices = work.devices
    peak = acc.peak(precision) or 0.0
    peak16 = (
        acc.peak("bf16") or acc.peak("fp16") or peak
    )  # attention kernels run in 16-bit even under FP8/FP4
    stack = stack_gemm_factor(work.framework, acc)  # the stack's share of the calibrated rates (stacks.py)
    e_gemm = best_gemm_efficiency(acc, precision) * GEMM_IN_MODEL * stack
    attn_eff = (
        best_gemm_efficiency(acc, "bf16")
        * stack
        * (
            FLASH_ATTENTION_EFFICIENCY * attention_factor(work.framework, acc)
            if work.flash_attention
            else UNFUSED_ATTENTION_EFFICIENCY
        )
    )
    attention_s = work.attention_work / (devices * peak16 * attn_eff) if work.has_attention else 0.0
    memory_bound_s = 0.0
    if work.elementwise_work is not None:
        if acc.vendor in XLA_FUSED_ELEMENTWISE_VENDORS:  # only the unfused-attention score traffic remains
            memory_bound_s = (
                work.elementwise_work * work.softmax_share / (devices * acc.memory_bandwidth_bytes_per_s)
            )
        else:
            memory_bound_s = work.elementwise_work / (devices * acc.memory_bandwidth_bytes_per_s)
    gemm_rate = devices * peak * e_gemm
    if work.bf16_gemm_share > 0.0:  # the LM head (and under fp4 the BF16 layers) at the 16-bit rate
        rate16 = devices * peak16 * best_gemm_efficiency(acc, "bf16") * GEMM_IN_MODEL * stack
        share = work.bf16_gemm_share
        gemm_rate = 1.0 / ((1.0 - share) / gemm_rate + share / rate16)
    return gemm_rate, attention_s, memory_bound_s


def gemm_seconds(work: StepWork, gemm_rate: float, micro_batch: int) -> float:
    """GEMM seconds per step with `micro_batch`: f_shape = 1/(1 + W0·t/h + T0/(b·s/cp)) (× the shapeless factor)."""
    tokens_mb = (
        micro_batch * work.tokens_per_micro / work.context if work.tokens_per_micro is not None else 4096.0
    )
    f_shape = 1.0 / (work.shape_base + GEMM_TOKENS_KNEE / max(tokens_mb, 1.0))
    if work.shapeless is not None:
        f_shape *= work.shapeless
    dense = (work.gemm_work - work.routed_gemm_work) / (gemm_rate * f_shape)
    if work.routed_gemm_work <= 0.0:
        return dense
    rows = max(tokens_mb * work.expert_rows_per_token, 1.0)
    return dense + work.routed_gemm_work * (work.expert_shape_base + GEMM_TOKENS_KNEE / rows) / gemm_rate


def optimizer_seconds(memory: MemoryBreakdown, bandwidth: float) -> float:
    """The optimizer step reads and writes every state byte (OPTIMIZER_PASSES) at HBM bandwidth."""
    return OPTIMIZER_PASSES * (memory.weights + memory.gradients + memory.optimizer_states) / bandwidth


def compute_floor_s(
    work: StepWork, acc: Accelerator, precision: str, micro_batch: int, memory: MemoryBreakdown
) -> float:
    """StepTime.compute_s of `micro_batch` on `acc` (GEMMs, attention, element-wise work, optimizer step), which
    every micro-batch up to this one needs at least (GEMM efficiency grows with the micro-batch) and to which
    communication and the bubble only add: a floor of busy_s with no bandwidth lookup and no StepModel."""
    gemm_rate, attention_s, memory_bound_s = compute_rates(work, acc, precision)
    return (
        gemm_seconds(work, gemm_rate, micro_batch)
        + attention_s
        + memory_bound_s
        + optimizer_seconds(memory, acc.memory_bandwidth_bytes_per_s)
    )
