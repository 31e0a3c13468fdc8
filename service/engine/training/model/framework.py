"""What the training stack changes in a step: the attention kernel it runs and whether element-wise work is fused.

The step model's efficiencies (model/compute.py) were calibrated on Megatron-Core / NeMo, whose Transformer Engine layers
run cuDNN fused attention on Hopper and Blackwell and fuse norms, SwiGLU and rotary embeddings into few kernels.
Other stacks differ in two measurable ways (sources in docs/formulas.md, "Training framework"):

- Attention kernel. PyTorch's scaled_dot_product_attention dispatches to its FlashAttention-2 backend, not cuDNN,
  on Hopper unless told otherwise (cuDNN attention was made opt-in after PyTorch 2.5, pytorch/pytorch#138522), and
  FlashAttention-2 does not use Hopper's asynchronous tensor-core instructions: on an H100 the same causal attention
  ran at 329 TFLOP/s through SDPA's FlashAttention-2 against 631 TFLOP/s through cuDNN and 632 through
  FlashAttention-3 (Tritonbench, pytorch/pytorch#142132, batch 1, 24 heads, 4,608 tokens, head dim 128). On Ampere
  FlashAttention-2 is the fast kernel (no FlashAttention-3 or faster cuDNN path), so nothing changes there.
- Element-wise fusion. Eager PyTorch runs each norm, activation, multiply and rotary step as its own kernel that
  reads and writes its tensors; the bytes autograd keeps for an eager Llama layer are 1.70× those of the fused layer
  (tests/engine/data/measured_activations.json, four shapes: 1.66–1.74×), and the memory-bound traffic is taken to
  grow by the same factor. torch.compile (Inductor) fuses those chains back.
"""

from __future__ import annotations

from ...hardware import Accelerator

# SDPA's FlashAttention-2 over cuDNN/FlashAttention-3 on an H100 (pytorch/pytorch#142132: 329.5 / 631.3 TFLOP/s);
# on Blackwell, where FlashAttention-2 no more uses the new tensor-core instructions than on Hopper, the same ratio is
# assumed (no published Blackwell comparison found)
FA2_ON_HOPPER_RATIO = 329.483 / 631.338
# eager over fused saved bytes per layer (tests/engine/data/measured_activations.json, mean of four shapes)
EAGER_ELEMENTWISE_FACTOR = 1.70
# The loss at its backward peak, bytes per logit (b·s·V/t): Megatron-Core's fused vocab-parallel cross entropy keeps
# the 16-bit logits and one fp32 buffer (Korthikanti et al. 2022 §4.1): act_bytes + 4. torchtitan's
# `cross_entropy(pred.float())` (train.py @9dec370) holds three fp32 tensors the size of the logits at the loss's
# backward (the upcast logits, the log-softmax and its gradient): 12 B, the 16-bit logits freed by then.
UNFUSED_LOSS_BYTES_PER_LOGIT = 12.0
# XLA (TPU): the loss holds the 16-bit logits the LM head wrote, kept for the backward, and their 16-bit gradient —
# two activation-sized values per logit. MaxText upcasts the logits to fp32 (`cast_logits_to_fp32`) and builds a
# one-hot target before its cross entropy (MaxText/max_utils.py cross_entropy_with_logits), but XLA's instruction
# fusion folds element-wise producers (convert, iota-compare) into the reductions and the gradient's fusion that
# consume them, so neither fp32 logits nor the one-hot tensor are materialised (openxla/xla
# xla/service/instruction_fusion.cc). Checked on the tpu-recipes rows that ran (docs/formulas.md, "Loss memory").
XLA_LOSS_VALUES_PER_LOGIT = 2.0
# Accelerator id fragments of parts with Hopper's or Blackwell's tensor cores (wgmma / tcgen05), where fused
# attention kernels outrun FlashAttention-2
_FAST_ATTENTION_PARTS = ("h100", "h200", "h800", "h20", "gh200", "b200", "b300", "gb200", "gb300")
_BLACKWELL_PARTS = ("b200", "b300", "gb200", "gb300")

# Activation recomputation a request leaves out: on a TPU the XLA stack's own default, MaxText's remat_policy 'full'
# (MaxText/configs/base.yml @000e935: "remat_policy: 'full'"; also its tpu-recipes' large configs), on every other
# part Megatron-Core's selective recomputation of core attention (its recipes' default, Korthikanti et al. 2022)
TPU_DEFAULT_RECOMPUTATION = "full"
GPU_DEFAULT_RECOMPUTATION = "selective"


def default_recomputation(acc: Accelerator | None, transformer: bool = True) -> str:
    """training.activation_recomputation when the request gives none: "full" for a transformer on a TPU, else
    "selective" (a shape-less model has no stack recipe to follow)."""
    on_tpu = acc is not None and acc.kind == "tpu"
    return TPU_DEFAULT_RECOMPUTATION if on_tpu and transformer else GPU_DEFAULT_RECOMPUTATION


# framework → (attention kernel on Hopper, on Blackwell, eager PyTorch: unfused element-wise kernels and fp32 loss)
#   megatron/nemo/megatron-bridge: Transformer Engine, cuDNN fused attention and fused norm/SwiGLU (the calibration).
#   deepspeed: Megatron-DeepSpeed, Megatron's fused kernels with the flash-attn package (FlashAttention-2).
#   torchtitan: SDPA (FlashAttention-2 on Hopper; cuDNN on Blackwell since pytorch/torchtitan#1196), eager modules.
#   llm-foundry: the flash-attn package (FlashAttention-2); MPT blocks with fused low-precision LayerNorm.
#   pytorch: plain eager PyTorch (FSDP/DDP with SDPA), e.g. Hugging Face Trainer.
#   fsdp: a PyTorch FSDP / ZeRO-3 stack not named (request.py infers it from zero_stage 3 without a framework):
#     what torchtitan, llm-foundry and DeepSpeed share, FlashAttention-2 on Hopper (SDPA or the flash-attn package),
#     cuDNN on Blackwell as torchtitan, fused element-wise kernels (compiled, or fused as llm-foundry / DeepSpeed).
_STACKS: dict[str, tuple[str, str, bool]] = {
    "megatron": ("fused", "fused", False),
    "nemo": ("fused", "fused", False),
    "megatron-bridge": ("fused", "fused", False),
    "deepspeed": ("flash2", "flash2", False),
    "torchtitan": ("flash2", "fused", True),
    "llm-foundry": ("flash2", "flash2", False),
    "pytorch": ("flash2", "flash2", True),
    "fsdp": ("flash2", "fused", False),
    #   maxtext/paxml: JAX/XLA. On NVIDIA parts XLA fuses the element-wise chains into its GEMM and reduction fusions
    #     and attention runs cuDNN's fused kernel (MaxText attention=cudnn_flash_te, Paxml with Transformer Engine:
    #     JAX-Toolbox READMEs); on TPUs the XLA path applies whatever the framework field says. What the stack changes
    #     in GEMM throughput is a per-stack factor (training/model/stacks.py).
    "maxtext": ("fused", "fused", False),
    "paxml": ("fused", "fused", False),
}
# The JAX/XLA training stacks (FRAMEWORKS): not CUDA stacks, so a TPU request naming one is not told otherwise
JAX_STACKS = ("maxtext", "paxml")
# Megatron-Core's data parallelism is its distributed optimizer (ZeRO-1); a layout sharding the weights (ZeRO-3)
# without a named stack is taken as a PyTorch FSDP stack (docs/formulas.md, "Training framework")
FSDP_STACK = "fsdp"


# Stacks that ship a zero-bubble pipeline schedule (ZB-H1 class: each backward split into its input- and weight-gradient
# halves, the W passes filling the 1F1B bubble; parallelism.pipeline_bubble_fraction), with the interleaved chunks per
# stage it runs with (fewest, most), where the planners' default search tries it next to 1F1B:
#   torchtitan: parallelism.pipeline_parallel_schedule takes torch.distributed.pipelining's schedules by name
#     (torchtitan/config/parallelism.py @15e2431 → get_schedule_class), among them "InterleavedZeroBubble" (ZB1P) and
#     "ZBVZeroBubble"; both are multi-stage schedules, which torchtitan runs with at least 2 stages per rank
#     (torchtitan/distributed/pipeline_parallel.py @fb3b230: "Multi-stage schedule requires at least 2 stages per
#     rank"). Not with torch.compile: the split backward fails on a compiled model (pytorch/pytorch#161904, open).
#   deepspeed: Megatron-DeepSpeed's --enable-zbh1-pipeline replaces DeepSpeed's pipeline schedule with ZB-H1
#     (deepspeedai/Megatron-DeepSpeed#396, merged June 2024); DeepSpeed's pipeline engine does not interleave: 1 chunk.
# Not: megatron, nemo and megatron-bridge (Megatron-Core schedules 1F1B and interleaved 1F1B; zero bubble lives in
# the sail-sg/zero-bubble-pipeline-parallelism fork and NVIDIA/Megatron-LM#1399 asks for it, open), llm-foundry (no
# pipeline parallelism), pytorch and fsdp (FSDP/DDP stacks such as the Hugging Face Trainer, no pipeline schedule).
ZERO_BUBBLE_CHUNKS: dict[str, tuple[int, int]] = {"torchtitan": (2, 1 << 30), "deepspeed": (1, 1)}


def zero_bubble_chunks(framework: str, torch_compile: bool) -> tuple[int, int] | None:
    """(fewest, most) interleaved chunks per stage the stack runs its zero-bubble schedule with; None where it ships
    none (ZERO_BUBBLE_CHUNKS)."""
    if framework == "torchtitan" and torch_compile:
        return None
    return ZERO_BUBBLE_CHUNKS.get(framework)


def inferred_framework(zero_stage: int, accelerator: Accelerator | None) -> tuple[str, str]:
    """(framework, how it was set) for a request that names no framework: FSDP_STACK ("zero_stage") for a layout
    sharding the weights on a CUDA-class part, else megatron ("default"), the stack the step model is calibrated on."""
    if zero_stage >= 3 and accelerator is not None and accelerator.kind != "tpu":
        return FSDP_STACK, "zero_stage"
    return "megatron", "default"


def _generation(accelerator: Accelerator) -> str:
    """'hopper' / 'blackwell' (NVIDIA parts whose fused attention outruns FlashAttention-2), 'older' (other NVIDIA
    parts), 'xla' (TPUs) or 'vendor' (other vendors' parts, with their own kernels)."""
    if accelerator.kind == "tpu":
        return "xla"
    if accelerator.vendor != "NVIDIA":
        return "vendor"
    key = accelerator.id.lower()
    if not any(part in key for part in _FAST_ATTENTION_PARTS):
        return "older"
    return "blackwell" if any(part in key for part in _BLACKWELL_PARTS) else "hopper"


def attention_kernel(framework: str, accelerator: Accelerator) -> str:
    """'fused' (cuDNN / FlashAttention-3 class) or 'flash2' (FlashAttention-2) for this stack on an NVIDIA part;
    'xla' on a TPU, 'vendor' on other parts (their own kernels: the framework changes nothing there)."""
    generation = _generation(accelerator)
    if generation in ("xla", "vendor"):
        return generation
    if generation == "older":
        return (
            "flash2"  # Ampere and others: FlashAttention-2 is the fast kernel; no difference between stacks
        )
    hopper, blackwell, _eager = _stack(framework)
    return blackwell if generation == "blackwell" else hopper


def attention_factor(framework: str, accelerator: Accelerator) -> float:
    """Attention-kernel throughput relative to the calibrated (fused) kernel on this part."""
    if (
        _generation(accelerator) in ("hopper", "blackwell")
        and attention_kernel(framework, accelerator) == "flash2"
    ):
        return FA2_ON_HOPPER_RATIO
    return 1.0


def _stack(framework: str) -> tuple[str, str, bool]:
    return _STACKS.get(framework, _STACKS["megatron"])


def _eager(framework: str) -> bool:
    return _stack(framework)[2]


def elementwise_factor(framework: str, torch_compile: bool) -> float:
    """Memory-bound element-wise bytes relative to the fused kernels of the calibration."""
    return EAGER_ELEMENTWISE_FACTOR if _eager(framework) and not torch_compile else 1.0


def loss_bytes_per_logit(framework: str, activation_bytes: float, xla: bool = False) -> float:
    """Peak bytes per logit of the loss: fused (Megatron-class stacks, llm-foundry's fused cross entropy), eager
    PyTorch's fp32 cross entropy, or XLA's (`xla`: a TPU, whatever the framework field says)."""
    if xla:
        return XLA_LOSS_VALUES_PER_LOGIT * activation_bytes
    if _eager(framework):
        return UNFUSED_LOSS_BYTES_PER_LOGIT
    return activation_bytes + 4.0
