"""Training activation memory per device: the bytes a layer keeps for its backward (by recomputation mode,
precision, tensor and sequence parallelism), and the busiest pipeline stage's activations (micro-batches in flight,
activation offload, the loss's buffers). memory.py adds the model states and the overhead."""

from __future__ import annotations

import math
from functools import lru_cache

from ...architecture import SHAPE_CACHE, TransformerShape, matmul_parameters_per_token
from ...hardware import Accelerator
from ...numeric import Num, maximum, minimum, where
from ...parallelism import Parallelism
from .framework import loss_bytes_per_logit
from .offload import offloaded_layers, resident_layers
from .plan import TrainingPlan
from .recompute import DEFAULT_RECOMPUTE_MODULES, keeps_scores, mlp_kept_per_hidden, saved_terms

# Bytes per value of the linear layers' inputs kept for backward (Transformer Engine's Linear keeps the quantized
# input's column-wise copy for the weight gradient and drops the row-wise one: transformer_engine/pytorch/module/
# linear.py @d0067d0, "Discard row-wise data since it is not needed in backward pass"). FP8: 1 byte. NVFP4: 4-bit
# E2M1 values plus one E4M3 scale per 16 values = 4.5 bits = 0.5625 bytes, in the layers run in NVFP4; the
# FP4_BF16_LAYER_SHARE kept in BF16 save 2 bytes; the average over the layers is used.
NVFP4_BYTES_PER_VALUE = (4.0 + 8.0 / 16.0) / 8.0
# FP4 training keeps about 16 % of the linear layers in BF16 (arXiv 2509.25149 §4: the first two and last eight of
# the 12B model's 62 blocks); step_time runs that share of the layers' GEMMs at the 16-bit rate.
FP4_BF16_LAYER_SHARE = 0.16
SAVED_GEMM_INPUT_BYTES = {
    "fp8": 1.0,
    "fp4": (1.0 - FP4_BF16_LAYER_SHARE) * NVFP4_BYTES_PER_VALUE + FP4_BF16_LAYER_SHARE * 2.0,
}

# Bytes per attention score an unfused attention keeps (at 2-byte activations): the softmax output, which both the
# softmax's and the A·V matmul's backward read. Korthikanti et al. 2022 Table 2 count 5 (softmax output 2, dropout
# mask 1, dropout output 2); without attention dropout (_layer_terms) the 2 remain (bench/measure_activations.py,
# variants "-unfused-attention").
UNFUSED_SCORE_BYTES = 2.0


def unfused_kv_expansion(sh: TransformerShape) -> float:
    """Bytes per s·b·h an unfused attention keeps beyond the K and V of _layer_terms: with grouped-query attention
    it repeats K and V for every query head before its matmuls (Megatron-Core DotProductAttention
    `repeat_interleave`) and autograd keeps the repeated copies, 4·d·(a − g)/h."""
    return 4.0 * sh.head_dim * (sh.attention_heads - sh.kv_heads) / sh.hidden_size


# Activations of shape-less CNNs: bytes stored per sample at 16-bit ≈ forward FLOPs / 200 — rough rule chosen so that
# ResNet-50 AMP at 256 images per GPU fits a 16 GB V100 (NVIDIA DeepLearningExamples RN50 v1.5 default batch 256).
CNN_FORWARD_FLOPS_PER_ACTIVATION_BYTE = 200.0


def activation_bytes(plan: TrainingPlan, micro_batch: int, micro_batches_per_step: int) -> float:
    """Stored activations on the busiest device for one training step, on plan.accelerator."""
    return of_runtime(
        activation_bytes_by_runtime(plan, micro_batch, micro_batches_per_step), plan.accelerator
    )


def of_runtime(by_runtime: tuple[float, float], accelerator: Accelerator) -> float:
    """The (xla, cuda) value of activation_bytes_by_runtime that holds on `accelerator`: XLA on a TPU."""
    return by_runtime[0 if accelerator.kind == "tpu" else 1]


def activation_bytes_by_runtime(
    plan: TrainingPlan, micro_batch: int, micro_batches_per_step: int
) -> tuple[float, float]:
    """activation_bytes under XLA (a TPU) and under a CUDA-class stack: (xla, cuda). They differ only by the loss's
    buffers (framework.loss_bytes_per_logit)."""
    model, par, act_bytes = plan.model, plan.par, plan.activation_bytes_per_value
    s_len, b = plan.sequence_length // par.context, micro_batch  # context parallel: each rank keeps s/cp
    if model.shape is None:
        if model.flops_per_sample:  # CNN / ViT without a shape: rough FLOPs-based rule (see constant)
            per_sample = model.flops_per_sample / CNN_FORWARD_FLOPS_PER_ACTIVATION_BYTE * act_bytes / 2.0
            shapeless = per_sample * b / (par.tensor * par.pipeline)
            return shapeless, shapeless
        # LSTM / MLP: a square network of width w ≈ √(N/12) stores ~16·w bytes (16-bit) per token per layer-
        # equivalent; total ≈ 16·w·(N / 12w²) — the transformer rule of Korthikanti et al. 2022 with 34 → 16.
        width = math.sqrt(model.total_parameters / 12.0)
        layers = max(1.0, model.total_parameters / (12.0 * width * width))
        shapeless = 16.0 * width * layers * s_len * b * act_bytes / 2.0 / (par.tensor * par.pipeline)
        return shapeless, shapeless
    sh = model.shape
    t, p = par.tensor, par.pipeline
    stored, working = layer_activation_bytes(
        sh, par, plan.recompute, plan.flash_attention, s_len, b, act_bytes,
        input_bytes=saved_input_bytes(plan.precision), modules=plan.recompute_modules,
    )  # fmt: skip
    in_flight, second_in_flight = in_flight_micro_batches(p, micro_batches_per_step, par.virtual_pipeline)
    first_kept, last_kept = kept_stage_bytes(
        sh.layers, p, plan.offload_layers, in_flight, second_in_flight, stored
    )
    # Logits 2·b·s·V/t (16-bit) + fp32 copy for the loss (Korthikanti et al. 2022 §4.1; docs/formulas.md); eager
    # PyTorch's fp32 cross entropy holds more, XLA less (framework.loss_bytes_per_logit)
    # one chunk's logits at a time (plan.loss_chunks)
    logits = s_len * b * sh.vocab_size / t / plan.loss_chunks
    return (
        activation_peak(
            first_kept,
            last_kept,
            working,
            logits * loss_bytes_per_logit(plan.framework, act_bytes, xla=True),
            p,
        ),
        activation_peak(
            first_kept, last_kept, working, logits * loss_bytes_per_logit(plan.framework, act_bytes), p
        ),
    )


# The busiest pipeline stage's activations, written once over `Num` (numeric.py): the single estimate passes
# scalars, the planner's array model (arrays.py) arrays of layouts.


def in_flight_micro_batches(pipeline: Num, micro_batches: Num, virtual: Num) -> tuple[Num, Num]:
    """Micro-batches whose activations the first and the second pipeline stage hold at the peak: 1F1B keeps up to p
    and p − 1 (Narayanan et al. 2021 §2.2.1); interleaving stores 1 + (p − 1)/(p·v) more (Korthikanti et al. 2022
    §4.2.3)."""
    in_flight = minimum(pipeline, maximum(1, micro_batches))
    second = minimum(pipeline - 1, maximum(1, micro_batches))
    extra = where((pipeline > 1) & (virtual > 1), 1.0 + (pipeline - 1) / (pipeline * virtual), 1.0)
    return in_flight * extra, second * extra


def kept_stage_bytes(
    layers: int, pipeline: Num, offload: int, in_flight: Num, second_in_flight: Num, stored: Num
) -> tuple[Num, Num]:
    """(first, last) pipeline stage's kept layer activations, `stored` bytes per layer and micro-batch.

    Activation offload (offload.py): `offload` layers per stage stay on the host but for a double buffer.
    Layers that do not divide: the first stage, which also holds the embedding, takes one layer fewer (Megatron-Core
    account_for_embedding_in_pipeline_split, NeMo's Llama 3.1 405B 126 layers on PP16; Llama 3 §3.3.2 "we reduce one
    Transformer layer each from the first and the last stages"), so the busiest stage is the first (one layer fewer,
    p micro-batches) or the second (p − 1)."""
    per_stage = -(-layers // pipeline)
    kept, buffered = resident_layers(per_stage, offloaded_layers(offload, per_stage))
    kept0, buffered0 = resident_layers(per_stage - 1, offloaded_layers(offload, per_stage - 1))
    uneven = (pipeline > 1) & (layers % pipeline != 0)
    first = where(
        uneven,
        maximum(kept0 * in_flight + buffered0, kept * second_in_flight + buffered),
        kept * in_flight + buffered,
    )
    return first * stored, (kept + buffered) * stored


def activation_peak(first_kept: Num, last_kept: Num, working: Num, loss: Num, pipeline: Num) -> Num:
    """The busiest stage's activations: the first stage's kept layers and one rebuilt layer (with the loss when it
    is also the last), or the last stage's with the loss. The loss and the rebuilt layer are never live together:
    the loss's buffers are freed once the LM head's backward has run, before the last layer's backward rebuilds (or
    reads) its activations."""
    tail = maximum(working, loss)
    return maximum(first_kept + where(pipeline == 1, tail, working), last_kept + tail)


def layer_activation_bytes(
    sh: TransformerShape,
    par: Parallelism,
    recompute: str,
    flash_attention: bool,
    s_len: int,
    b: int,
    act_bytes: float = 2.0,
    fp8_inputs: bool = False,
    input_bytes: float | None = None,
    modules: tuple[str, ...] = DEFAULT_RECOMPUTE_MODULES,
) -> tuple[float, float]:
    """(bytes kept per layer until its backward, bytes of one layer rebuilt during backward); `input_bytes`: bytes
    per value of the linear layers' inputs kept for backward (SAVED_GEMM_INPUT_BYTES; `fp8_inputs`: 1 byte);
    `modules`: what "selective" recomputes (model/recompute.py; default core attention)."""
    t = par.tensor
    h, a = sh.hidden_size, sh.attention_heads
    sbh = s_len * b * h
    mlp = _mlp_activation_scale(sh)
    # Korthikanti et al. 2022 Table 2 per layer (2-byte activations) without dropout (_layer_terms):
    # s·b·h·(8 + 24/t) + 2·a·s²·b/t; sequence parallel also splits the 8 (norm and GEMM inputs) by t; selective
    # recompute or a fused attention kernel drop the scores term (UNFUSED_SCORE_BYTES).
    if input_bytes is None:
        input_bytes = 1.0 if fp8_inputs else 2.0
    replicated, split = _layer_terms(sh, mlp, input_bytes)
    per_layer = sbh * _spread(replicated, split, t, par.sequence_parallel)
    if keeps_scores(recompute, modules, flash_attention):
        per_layer += (UNFUSED_SCORE_BYTES * a * s_len * s_len * b + unfused_kv_expansion(sh) * sbh) / t
    per_layer *= act_bytes / 2.0
    if recompute == "full":
        # layer input only (Table 2)
        stored = 2.0 * sbh / (t if par.sequence_parallel else 1) * act_bytes / 2.0
        working = per_layer  # one layer is rebuilt at a time during backward
    elif recompute == "selective_op":
        stored = s_len * b * op_sac_bytes_per_token(sh, t, par.sequence_parallel) * act_bytes / 2.0
        working = per_layer  # the recomputed ops of one layer are rebuilt at a time during backward
    elif (
        recompute == "dots"
    ):  # the layer input and the backward's matmul outputs (_dots_terms); one layer rebuilt
        kept, split = _dots_terms(sh)
        stored = sbh * ((kept + split) / t if par.sequence_parallel else kept + split / t) * act_bytes / 2.0
        working = per_layer
    elif recompute == "selective":  # the named modules' tensors are dropped, one layer's rebuilt at a time
        freed = (
            sbh * _spread(*saved_terms(sh, modules, input_bytes), t, par.sequence_parallel) * act_bytes / 2.0
        )
        stored, working = per_layer - freed, freed
    else:
        stored, working = per_layer, 0.0
    return stored, working


def _spread(replicated: float, split: float, t: int, sequence_parallel: bool) -> float:
    """Per tensor rank: the split part over t, the replicated part too under sequence parallelism."""
    return (replicated + split) / t if sequence_parallel else replicated + split / t


@lru_cache(maxsize=SHAPE_CACHE)
def _dots_terms(sh: TransformerShape) -> tuple[float, float]:
    """Bytes per s·b·h (2-byte activations) a layer keeps under "dots" recomputation: (kept whole unless sequence
    parallel, split by t). jax.checkpoint_policies.checkpoint_dots_with_no_batch_dims (MaxText remat_policy
    "minimal") may save every weight-matmul output, and JAX keeps those the backward reads: the Q, K and V
    projections (attention's backward) and the MLP's input projections (the activation's backward and the output
    projection's weight gradient), 2·(q + 2·g·d + f·(2 if gated))/h, plus the layer input 2 (the scan carry, for the
    norm's backward). The attention and MLP output projections feed only residual adds, whose backward reads
    nothing; norms, activations and the attention kernel (not a dot) are recomputed."""
    d = sh.head_dim
    width = _active_ffn_width(sh) / sh.hidden_size  # f/h
    gated = 2.0 if sh.ffn_type == "swiglu" else 1.0
    qkv = (sh.attention_heads + 2.0 * sh.kv_heads) * d / sh.hidden_size
    return 2.0, 2.0 * qkv + 2.0 * gated * width


def op_sac_bytes_per_token(sh: TransformerShape, t: int = 1, sequence_parallel: bool = False) -> float:
    """Bytes per token one layer keeps under torchtitan's op-level selective activation checkpointing (2-byte
    activations), per tensor-parallel rank.

    torchtitan wraps each block in torch.utils.checkpoint with a policy that saves the outputs of the ops in its save
    list — aten.mm except every second one, the SDPA flash/efficient kernels, the reduce-scatter of sequence
    parallelism — and recomputes everything else (pytorch/torchtitan torchtitan/parallelisms/parallelize_llama.py
    `_save_list` and `_apply_ac_to_transformer_block` @9dec370; torchtitan/distributed/activation_checkpoint.py
    @b5bcd76). Eager PyTorch keeps a saved op's output whether or not backward reads it (torch/utils/checkpoint.py
    _CachingTorchDispatchMode), and the checkpoint keeps the block input. The matmuls run in the order Q, K, V, O,
    then gate, up, down (SwiGLU: torchtitan's w1, w3, w2) or fc1, fc2 (GELU): the 1st, 3rd, 5th and 7th are kept.
    Kept: block input 2h, Q 2·a·d, V 2·g·d, attention output 2·a·d plus its fp32 log-sum-exp 4·a, the first MLP
    matmul output 2·f, and under SwiGLU the down projection output 2h — a row-parallel output, whole on every
    tensor rank (partial sums before the reduce-scatter). Sequence parallelism splits the block input and adds the
    two reduce-scatter outputs 2h/t each. bench/measure_activations.py measures it (variant "op-sac")."""
    whole, sequence, reduce_scatter, split = op_sac_terms(sh)
    if t > 1 and sequence_parallel:
        return whole + (sequence + reduce_scatter) / t + split / t
    return whole + sequence + split / t


@lru_cache(maxsize=SHAPE_CACHE)
def op_sac_terms(sh: TransformerShape) -> tuple[float, float, float, float]:
    """op_sac_bytes_per_token's bytes per token: (whole on every tensor rank, split by sequence parallelism, the
    reduce-scatter outputs kept under sequence parallelism, split by tensor parallelism)."""
    h, a, d = sh.hidden_size, sh.attention_heads, sh.head_dim
    width = _active_ffn_width(sh)  # f (active experts)
    split = 2.0 * a * d + 2.0 * sh.kv_heads * d + 2.0 * a * d + 4.0 * a + 2.0 * width
    whole = 2.0 * h if sh.ffn_type == "swiglu" else 0.0
    return whole, 2.0 * h, 4.0 * h, split


@lru_cache(maxsize=SHAPE_CACHE)
def op_sac_recomputed_share(sh: TransformerShape | None) -> float:
    """Share of the forward matmul FLOPs that op-level selective checkpointing runs again in backward: the 2nd,
    4th and 6th matmuls of each layer (K, O and the MLP's up projection under SwiGLU, fc2 under GELU; see
    op_sac_bytes_per_token), over all matmul weights per token (LM head included). Without a shape: half."""
    if sh is None:
        return 0.5
    h, d = sh.hidden_size, sh.head_dim
    attention = h * d * (sh.kv_heads + sh.attention_heads)
    if sh.is_moe:
        active = (sh.experts_per_token + sh.shared_experts) * sh.expert_ffn_hidden_size
        mlp = sh.dense_layers * sh.ffn_hidden_size + sh.moe_layers * active
    else:
        mlp = sh.layers * sh.ffn_hidden_size
    recomputed = sh.layers * attention + h * mlp
    return min(1.0, recomputed / max(1.0, matmul_parameters_per_token(sh)))


def saved_input_bytes(precision: str) -> float:
    """Bytes per value of the linear layers' inputs kept for backward: SAVED_GEMM_INPUT_BYTES, else 2 (16-bit)."""
    return SAVED_GEMM_INPUT_BYTES.get(precision, 2.0)


@lru_cache(maxsize=SHAPE_CACHE)
def _layer_terms(sh: TransformerShape, mlp: float, input_bytes: float = 2.0) -> tuple[float, float]:
    """Bytes per s·b·h kept per layer (at 2-byte activations): (kept whole unless sequence parallel, split by t),
    counted per saved tensor, as autograd keeps them in Megatron-Core and PyTorch (`mlp`: the Korthikanti-relative
    MLP scale, _mlp_activation_scale; the width f/h is taken from the shape).

    Whole: the two norm inputs 4 and the two GEMM inputs that read the norms' outputs (QKV, MLP in) 2·q. Split: Q 2,
    K and V 4·g·d/h (grouped-query attention), the attention output q, and the MLP past its input: SwiGLU's gate and
    up outputs 4·f/h plus the down-projection input q·f/h, or a GELU / squared-ReLU MLP's activation input 2·f/h
    plus the FC2 input q·f/h. q = `input_bytes`: 2 at 16-bit; under FP8/FP4 training the linear layers keep their
    inputs for backward quantized (SAVED_GEMM_INPUT_BYTES): Transformer Engine's quantized Linear and
    LayerNormLinear save the quantized cast of the input for the weight gradient, and DeepSeek-V3 caches the
    linear inputs in FP8 (DeepSeek-AI 2024 §3.3.2); norms, attention inputs and activation-function inputs stay
    16-bit.

    No dropout masks: current LLMs train without dropout (Llama, Nemotron-4 "dropout rate of zero", MPT, Falcon,
    BLOOM-176B's --hidden-dropout 0.0), and PyTorch's dropout at p = 0 returns its input and saves no mask
    (aten/src/ATen/native/Dropout.cpp). At 16-bit with multi-head attention and a 4h GELU MLP this is Korthikanti
    et al. 2022 Table 2's 34·s·b·h less its two 1-byte residual dropout masks: 8 whole + 24 split."""
    kv = 4.0 * sh.kv_heads * sh.head_dim / sh.hidden_size
    gated = sh.ffn_type == "swiglu"
    width = mlp * 4.0 / (1.5 if gated else 1.0)  # f/h back from the Korthikanti-relative scale
    q = input_bytes
    return 4.0 + 2.0 * q, 2.0 + kv + q + mlp_kept_per_hidden(width, gated, q)


@lru_cache(maxsize=SHAPE_CACHE)
def _active_ffn_width(s: TransformerShape) -> int:
    """The MLP width a token's activations see: f, or under MoE the routed + shared experts' widths (at least a
    dense layer's f when the model has dense layers)."""
    if s.is_moe:
        width = (s.experts_per_token + s.shared_experts) * s.expert_ffn_hidden_size
        return max(width, s.ffn_hidden_size if s.dense_layers else 0)
    return s.ffn_hidden_size


def _mlp_activation_scale(s: TransformerShape) -> float:
    """MLP activations relative to Korthikanti's GELU 4h MLP: width f/(4h), ×1.5 for the gated third matrix."""
    return _active_ffn_width(s) / (4.0 * s.hidden_size) * (1.5 if s.ffn_type == "swiglu" else 1.0)
