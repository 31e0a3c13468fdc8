"""Training memory per device: model states (weights, gradients, optimizer), activations (activations.py),
overhead."""

from __future__ import annotations

from typing import NamedTuple

from ...architecture import (
    ModelSpec,
    TransformerShape,
    embedding_parameters,
    layer_parameter_parts,
    layer_parameters,
)
from ...hardware import Accelerator
from ...numeric import Num, maximum, minimum, where
from ...parallelism import Parallelism
from ...units import GIB
from .activations import activation_bytes_by_runtime, of_runtime
from .plan import TrainingPlan

# Bytes per parameter (weights, gradients) by precision. Mixed precision keeps 16-bit weights and gradients
# plus an fp32 master copy in the optimizer; FP8 runs the matmuls in FP8 but keeps the same 16/32-bit state
# (Rajbhandari et al. 2020 §3.1; Micikevicius et al. 2022 "FP8 Formats"; NVIDIA Transformer Engine docs).
WEIGHT_GRAD_BYTES = {
    "fp32": (4.0, 4.0),
    "tf32": (4.0, 4.0),
    "bf16": (2.0, 2.0),
    "fp16": (2.0, 2.0),
    "fp8": (2.0, 2.0),
    "fp4": (2.0, 2.0),  # NVFP4 recipe: BF16 weights and gradients, FP32 master (arXiv 2509.25149 §4; as FP8)
}
# Optimizer-state bytes per parameter: (mixed precision incl. 4-byte fp32 master, pure fp32/tf32 without master).
# Adam m+v 8 B (+4 master = 12, ZeRO paper K = 12); SGD-momentum 4 (+4); 8-bit Adam m+v 2 (+4)
# (Dettmers et al. 2022); Lion momentum only 4 (+4) (Chen et al. 2023); Adafactor factored second moment ≈ 0,
# no momentum (Shazeer & Stern 2018); plain SGD only the master copy. "Transformer Math 101" (EleutherAI).
OPTIMIZER_BYTES = {
    "adamw": (12.0, 8.0),
    "adam": (12.0, 8.0),
    "sgd": (4.0, 0.0),
    "sgd-momentum": (8.0, 4.0),
    "adafactor": (4.0, 0.0),
    "adam-8bit": (6.0, 2.0),
    "lion": (8.0, 4.0),
}
# CUDA context + NCCL buffers + allocator pools, 0.5–2 GiB (docs/formulas.md; DeepSpeed #4527)
CUDA_CONTEXT_BYTES = 1.0 * GIB


def runtime_reserve_bytes(accelerator: Accelerator) -> float:
    """Device memory the runtime takes before the model: the CUDA context (GPUs and other CUDA-like runtimes).
    A TPU has none inside the capacity the catalog holds: XLA's reported HBM limit (jax memory_stats
    bytes_limit) already excludes what the TPU runtime keeps, and buffers are assigned at compile time."""
    return 0.0 if accelerator.kind == "tpu" else CUDA_CONTEXT_BYTES


FRAGMENTATION = (
    0.05  # allocator fragmentation, 5–10 % of allocated memory (PyTorch caching allocator; docs/formulas.md)
)


def fragmentation_fraction(accelerator: Accelerator) -> float:
    """Share of the allocated bytes lost to the allocator's fragmentation: FRAGMENTATION under a caching allocator
    (PyTorch on CUDA/ROCm); none on a TPU, where XLA assigns every buffer an offset at compile time (buffer
    assignment, openxla/xla xla/service/buffer_assignment.h) and the program's peak is what the plan holds."""
    return 0.0 if accelerator.kind == "tpu" else FRAGMENTATION


def part_overhead_bytes(accelerator: Accelerator, allocated: float) -> float:
    """The overhead that depends on the kind of part: its runtime reserve and its allocator's fragmentation of
    `allocated` (weights + gradients + optimizer states + activations)."""
    return runtime_reserve_bytes(accelerator) + fragmentation_fraction(accelerator) * allocated


ZERO3_LIVE_LAYER_FACTOR = (
    2.0  # ZeRO-3 keeps ~2 gathered layers live (prefetch + current): DeepSpeed "4 × largest layer" B
)


class MemoryBreakdown(NamedTuple):  # a named tuple: built per candidate micro-batch of every evaluation
    weights: float
    gradients: float
    optimizer_states: float
    activations: float
    overhead: float  # runtime reserve + gathered ZeRO-3 layers + fragmentation
    # the overhead without the terms that depend on the kind of part (part_overhead_bytes; evaluate.for_part)
    base_overhead: float = 0.0
    # the activations under XLA (a TPU) and under a CUDA-class stack: they differ by the loss's buffers
    # (framework.loss_bytes_per_logit); `on` takes the one of the part. None: the same on every part.
    by_runtime: tuple[float, float] | None = None

    @property
    def allocated(self) -> float:
        return self.weights + self.gradients + self.optimizer_states + self.activations

    @property
    def total(self) -> float:
        return self.allocated + self.overhead

    def on(self, accelerator: Accelerator) -> MemoryBreakdown:
        """The same memory on another kind of part (its activations, runtime reserve and fragmentation)."""
        mem = self
        if self.by_runtime is not None:
            mem = self._replace(activations=of_runtime(self.by_runtime, accelerator))
        return mem._replace(overhead=self.base_overhead + part_overhead_bytes(accelerator, mem.allocated))


def bytes_per_parameter(
    precision: str, optimizer: str, multiplier: float | None = None
) -> tuple[float, float, float]:
    """(weights, gradients, optimizer states) bytes per parameter before any sharding."""
    weight, grad = WEIGHT_GRAD_BYTES[precision]
    mixed = precision in ("bf16", "fp16", "fp8", "fp4")
    optim = multiplier * weight if multiplier is not None else OPTIMIZER_BYTES[optimizer][0 if mixed else 1]
    return weight, grad, optim


def training_memory(
    plan: TrainingPlan,
    micro_batch: int,
    micro_batches_per_step: int,
    params: tuple[float, float] | None = None,
    states: ModelStates | None = None,
) -> MemoryBreakdown:
    """Peak bytes on the busiest device (first pipeline stage, or last when it also holds the logits);
    `params`: parameters_per_device(plan.model, plan.par), `states`: model_states(plan, params), when the caller
    has them (they do not depend on the micro-batch)."""
    weights, grads, optim, gathered = states or model_states(plan, params)
    xla, cuda = activation_bytes_by_runtime(plan, micro_batch, micro_batches_per_step)
    activations = of_runtime((xla, cuda), plan.accelerator)
    allocated = weights + grads + optim + activations
    return MemoryBreakdown(
        weights,
        grads,
        optim,
        activations,
        gathered + part_overhead_bytes(plan.accelerator, allocated),
        gathered,
        (xla, cuda) if xla != cuda else None,
    )


ModelStates = tuple[
    float, float, float, float
]  # weights, gradients, optimizer states, ZeRO-3 gathered layers


def model_states(plan: TrainingPlan, params: tuple[float, float] | None = None) -> ModelStates:
    """Bytes of weights, gradients and optimizer states on the busiest device, and the layers ZeRO-3 gathers."""
    par = plan.par
    dense, expert = params or parameters_per_device(plan.model, par)
    degrees = (par.tensor, par.expert, par.expert_tensor_ranks)
    return sharded_states(
        plan, (dense, expert), par.shard_ranks, par.expert_shard_ranks, par.zero_stage, degrees
    )


def sharded_states(
    plan: TrainingPlan,
    params: tuple[Num, Num],
    dp: Num,
    edp: Num,
    z: Num,
    degrees: tuple[Num, Num, Num],
) -> tuple[Num, Num, Num, Num]:
    """model_states of a layout, scalars (the single estimate) or arrays of layouts (model/arrays.py) alike:
    `params` the (non-expert, expert) parameters per device, `dp` the ranks ZeRO shards over (Parallelism.shard_ranks),
    `edp` those of the experts (parallelism.expert_shard_ranks), `z` the ZeRO stage, `degrees` (tensor, expert,
    expert_tensor ranks)."""
    w_b, g_b, o_b = bytes_per_parameter(plan.precision, plan.optimizer, plan.optimizer_multiplier)
    dense, expert = params
    # ZeRO stage 1 shards optimizer states, 2 also gradients, 3 also weights over data parallel ranks
    # (Rajbhandari et al. 2020 §5; FSDP FULL_SHARD = stage 3); the experts over the expert-data-parallel ranks
    weights = (dense / where(z >= 3, dp, 1) + expert / where(z >= 3, edp, 1)) * w_b
    grads = (dense / where(z >= 2, dp, 1) + expert / where(z >= 2, edp, 1)) * g_b
    optim = (dense / where(z >= 1, dp, 1) + expert / where(z >= 1, edp, 1)) * o_b
    shape, (t, e, etr) = plan.model.shape, degrees
    layer: Num = 0.0
    if shape is not None:  # architecture.largest_layer_parameters, the experts over expert × expert_tensor
        dense_layer, moe_layer, embedding = layer_parameter_parts(shape, e * etr / t)
        layer = maximum(maximum(dense_layer, moe_layer), embedding) / t
    # never more than the unsharded weights ZeRO-2 would hold: gathering only re-materialises what was split
    gathered = minimum(ZERO3_LIVE_LAYER_FACTOR * layer * w_b, (dense + expert) * w_b - weights)
    return weights, grads, optim, where(z >= 3, gathered, 0.0)


def parameters_per_device(model: ModelSpec, par: Parallelism) -> tuple[float, float]:
    """(non-expert, expert) parameters on the busiest device before ZeRO sharding (layout_parameters)."""
    return layout_parameters(model, par.tensor, par.pipeline, par.expert, par.expert_tensor_ranks)


def layout_parameters(model: ModelSpec, t: Num, p: Num, e: Num, etr: Num) -> tuple[Num, Num]:
    """(non-expert, expert) parameters on the busiest device before ZeRO sharding, for tensor `t`, pipeline `p`,
    expert `e` and expert-tensor ranks `etr` (parallelism.expert_tensor_ranks): scalars or arrays of layouts.

    Tensor × pipeline parallel divide the layers; the first stage also holds the input embedding and the last
    the LM head (Megatron places them there; tied models keep a copy on both) — Narayanan et al. 2021 §2.
    Expert weights are divided by expert × expert_tensor × pipeline (Megatron-Core MoE, DeepSpeed-MoE; MoE
    parallel folding, Liu et al. 2025).
    """
    s = model.shape
    if s is None or model.shape_inferred:
        return model.total_parameters / (t * p), 0.0 * t
    dense_layer, moe_layer, _ = layer_parameters(s)
    n_dense = s.dense_layers if s.is_moe else s.layers
    n_moe = s.layers - n_dense
    expert_per_layer = s.experts * expert_parameters(s) if s.is_moe else 0
    layer_total = n_dense * dense_layer + n_moe * moe_layer
    experts_total = n_moe * expert_per_layer
    # busiest end stage with a pipeline holds one V·h matrix (+ learned positions on the first)
    end_stage = float(s.vocab_size * s.hidden_size + s.learned_position_embeddings * s.hidden_size)
    embeddings = where(p > 1, end_stage, float(embedding_parameters(s)))
    non_expert = (layer_total - experts_total) / (t * p) + embeddings / t
    return non_expert, experts_total / (etr * p * e)


def expert_parameters(s: TransformerShape) -> int:
    f = s.expert_ffn_hidden_size
    return (3 if s.ffn_type == "swiglu" else 2) * s.hidden_size * f
