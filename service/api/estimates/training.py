"""POST /v1/estimates/training: request schema (every field with its unit and allowed values)."""

from __future__ import annotations

import marshmallow as ma
from marshmallow import validate

from ... import engine
from ...engine import MAX_STRAGGLER_SHARE, PIPELINE_SCHEDULES
from ...engine.i18n import N_
from ..extensions.fields import AutoOr, Boolean, Count, Deadline, Float, Integer, String, fraction_range
from ..models.schemas import ModelSpecField
from .common import PRICE_OVERRIDES, CostSchema, OutputSchema, calibration_field

# one source for every enum: the engine's tuples (the schema refuses early, the engine relies on it)
TRAINING_PRECISIONS = list(engine.TRAINING_PRECISIONS)
OPTIMIZERS = list(engine.OPTIMIZERS)
RECOMPUTATION = list(engine.RECOMPUTATION)
RECOMPUTE_MODULES = list(engine.RECOMPUTE_MODULES)
FRAMEWORKS = list(engine.FRAMEWORKS)
MAX_DEVICES = 1_000_000


class ValidationRunSchema(ma.Schema):
    class Meta:
        unknown = ma.RAISE

    interval_steps = Integer(
        required=True, validate=validate.Range(1, 10**9), metadata={"description": "Evaluate every N steps"}
    )
    tokens = Count(
        required=True, max_value=1e13, metadata={"description": "Tokens (or samples) evaluated each time"}
    )


class TrainingRunSchema(ma.Schema):
    """The run. Mixed precision: bf16/fp16 keep 16-bit weights and gradients plus fp32 master weights and
    optimizer states; fp8 runs the matmuls in fp8 with the same 16/32-bit states; fp32/tf32 keep 4-byte
    everything (tf32 only changes the matmul rate)."""

    class Meta:
        unknown = ma.RAISE

    tokens = Count(
        max_value=1e16,
        metadata={"description": "Training tokens (transformers, LSTMs, MLPs)", "example": "1B"},
    )
    samples = Count(
        max_value=1e13, metadata={"description": "Training samples per epoch (cnn/vit)", "example": 1281167}
    )
    epochs = Float(
        validate=validate.Range(min=0.001, max=10_000),
        metadata={
            "description": "Passes over `tokens`/`samples` (default 1; 0.001 to 10,000)",
            "example": 90,
        },
    )
    global_batch_size = Integer(
        required=True,
        validate=validate.Range(1, 100_000_000),
        metadata={"description": "Sequences (or samples) per optimizer step", "example": 1024},
    )
    sequence_length = Integer(
        validate=validate.Range(1, 10_000_000),
        metadata={"description": "Tokens per sequence", "example": 4096},
    )
    micro_batch_size = Integer(
        validate=validate.Range(1, 1_000_000),
        metadata={"description": "Sequences per device per forward pass"},
    )
    precision = String(
        validate=validate.OneOf(TRAINING_PRECISIONS),
        metadata={
            "description": "Training precision. Not given: the best the accelerator supports, in the order "
            "bf16, fp16 (V100, T4), tf32, fp32 (never fp8 or fp4); `assumptions.precision` and "
            "`assumptions.notes` say which was used. fp4: NVIDIA's NVFP4 recipe (MXFP4 on AMD), the linear "
            "layers' matmuls at the FP4 peak, on parts with an fp4 peak (`peak_flops_per_s.fp4`)",
            "example": "bf16",
        },
    )
    optimizer = String(validate=validate.OneOf(OPTIMIZERS), metadata={"example": "adamw"})
    optimizer_memory_multiplier = Float(
        validate=validate.Range(0, 64),
        metadata={"description": "Override optimizer-state bytes as a multiple of the parameter bytes"},
    )
    activation_recomputation = String(
        validate=validate.OneOf(RECOMPUTATION),
        metadata={
            "example": "selective",
            "description": "none; selective: Megatron's, recomputes core attention (default); selective_op: "
            "torchtitan's op-level policy, keeps every other matmul output and the attention output and "
            "recomputes the rest; full: keeps each layer's input only; dots: JAX's "
            "checkpoint_dots_with_no_batch_dims (MaxText remat_policy minimal), keeps the layer input and the "
            "matmul outputs the backward reads",
        },
    )
    recompute_modules = ma.fields.List(
        String(validate=validate.OneOf(RECOMPUTE_MODULES)),
        validate=validate.Length(0, len(RECOMPUTE_MODULES)),
        metadata={
            "description": 'What "selective" recomputes: Megatron-Core\'s recompute_modules (default ["core_attn"]). '
            "core_attn: the attention scores; layernorm: the norm outputs that are not fused into a linear layer "
            "(MoE layers' pre-MLP norm, MLA's input norm); moe_act: the routed experts' activation output; mlp: "
            "a dense layer's MLP; moe: the whole MoE layer; shared_experts: the shared experts; mla_up_proj: "
            "multi-latent attention's up projections. Only with activation_recomputation selective; moe_act, moe, "
            "shared_experts and mla_up_proj need a model with that part",
            "example": ["core_attn", "moe_act"],
        },
    )
    flash_attention = Boolean(metadata={"description": "Default true"})
    framework = String(
        validate=validate.OneOf(FRAMEWORKS),
        metadata={
            "description": 'The training stack, for its kernels (docs/formulas.md, "Training framework"). Default '
            "megatron (Megatron-Core / NeMo / Megatron-Bridge: Transformer Engine's cuDNN fused attention and fused "
            "element-wise kernels, what the step model is calibrated on). torchtitan and pytorch (eager PyTorch, "
            "e.g. FSDP2 with SDPA) run FlashAttention-2 on Hopper, about half the cuDNN attention rate there "
            "(torchtitan uses cuDNN on Blackwell), and unfused element-wise kernels (1.7x the memory traffic) unless "
            "`torch_compile`; llm-foundry and deepspeed (Megatron-DeepSpeed) run FlashAttention-2 with fused "
            "element-wise kernels. fsdp: a PyTorch FSDP / ZeRO-3 stack not named (FlashAttention-2 on Hopper, cuDNN "
            "on Blackwell, fused element-wise kernels), the default when zero_stage is 3 on a GPU; "
            "assumptions.framework_source says which applied. No difference on Ampere and older parts "
            "(FlashAttention-2 is their fast kernel). maxtext and paxml: the JAX/XLA stacks (cuDNN fused attention "
            "and XLA-fused element-wise work on GPUs, the XLA path on TPUs). Off NVIDIA parts the vendor family's "
            "GEMM factor applies too (assumptions.training_stack; docs/formulas.md, 'Training stacks')",
            "example": "megatron",
        },
    )
    torch_compile = Boolean(
        metadata={
            "description": "The PyTorch model is torch.compile'd (fuses the element-wise chains of eager stacks: "
            "torchtitan, pytorch). Default false"
        }
    )
    activation_offload_layers = Integer(
        validate=validate.Range(0, 100_000),
        metadata={
            "description": "Transformer layers per pipeline stage whose saved activations are copied to host "
            "memory after their forward pass and back before their backward (Megatron-Core "
            "cpu_offloading_num_layers; NeMo's GB200 recipes use it). Default 0. The device keeps the other "
            "layers' activations and a double buffer of two offloaded layers; copies that the offloaded layers' "
            "compute cannot hide add `time.breakdown.activation_offload_s` (host link: NVLink-C2C on Grace "
            "systems, else PCIe). A given value holds in every layout the planners and `auto` search (layouts whose "
            "stages have no more layers are left out)",
            "example": 0,
        },
    )
    loss_chunks = Integer(
        validate=validate.Range(1, 1024),
        metadata={
            "description": "Chunks the loss is computed in, each chunk's logits freed before the next (MaxText "
            "num_vocab_tiling, torchtune's chunked cross entropy, Liger's fused linear cross entropy): the "
            "loss's buffers at their peak divide by this. Default 1 (the whole micro-batch's logits at once, as "
            "Megatron-Core's fused cross entropy and eager PyTorch hold them). Memory only: the chunks' extra "
            "kernel launches are not counted",
            "example": 1,
        },
    )
    checkpoint_interval_steps = Integer(
        validate=validate.Range(1, 10**9), metadata={"description": "Write a checkpoint every N steps"}
    )
    checkpoint_write_bandwidth_bytes_per_s = Float(
        validate=validate.Range(min=1e6, max=1e13),
        metadata={"description": "Storage write bandwidth, bytes/s"},
    )
    goodput = Float(
        validate=fraction_range(0.01, 1.0),
        metadata={
            "description": "Share of the wall time spent stepping (a fraction: 0.9 means 90 %; steps slowed by "
            "stragglers count as stepping). Replaces the interruption model; checkpoint writes and "
            "interruptions take the rest. Default: modelled from "
            "interruptions_per_device_hour, restart_seconds and the checkpoint interval",
            "example": 0.9,
        },
    )
    interruptions_per_device_hour = Float(
        validate=validate.Range(0, 1),
        metadata={
            "description": "Job interruptions (failures, maintenance) per device-hour; default 2.19e-5, Llama 3's "
            "466 in 54 days on 16,384 GPUs (Dubey et al. 2024 §3.3.4)"
        },
    )
    restart_seconds = Float(
        validate=validate.Range(0, 86400),
        metadata={
            "description": "Seconds from an interruption to training again, lost work aside (detection, "
            "re-launch, checkpoint load); default 900"
        },
    )
    straggler_share = Float(
        validate=validate.Range(0, MAX_STRAGGLER_SHARE),
        metadata={
            "description": "Share of the stepping time lost waiting for slow workers (a fraction). Default "
            "0.104 from 128 devices (expected share of a GPU-hour in production jobs of ≥ 128 GPUs, Lin et "
            "al., OSDI 2025), 0.104 · ln N / ln 128 below; 0 on one device",
            "example": 0.05,
        },
    )
    validation = ma.fields.Nested(ValidationRunSchema)
    include_pretraining = Boolean(metadata={"description": "Add what the base model's pre-training cost"})
    pretraining_tokens = Count(
        max_value=1e16, metadata={"description": "Pre-training tokens (default: compute-optimal 20·N)"}
    )


class ParallelismSchema(ma.Schema):
    class Meta:
        unknown = ma.RAISE

    data = Integer(validate=validate.Range(1, MAX_DEVICES), metadata={"description": "Data-parallel degree"})
    tensor = Integer(validate=validate.Range(1, 1024), metadata={"description": "Tensor-parallel degree"})
    pipeline = Integer(validate=validate.Range(1, 4096), metadata={"description": "Pipeline stages"})
    expert = Integer(validate=validate.Range(1, 4096), metadata={"description": "Expert-parallel degree"})
    expert_tensor = Integer(
        validate=validate.Range(1, 1024),
        metadata={
            "description": "Tensor-parallel degree of the expert layers (Megatron-Core expert_tensor_parallel_size, "
            "MoE parallel folding). Not given: the experts are split like the dense layers (over `tensor`) and "
            "`expert` must divide `data`. Given: `expert` × `expert_tensor` ranks are drawn from tensor × context "
            "× data, so expert ranks may span tensor ranks (e.g. tensor 2, data 16, expert 32, expert_tensor 1). "
            "Not searched by hardware.count auto",
            "example": 1,
        },
    )
    zero_stage = Integer(
        validate=validate.Range(0, 3),
        metadata={
            "description": "ZeRO stage 0–3. Default 1 (optimizer states sharded over the data ranks, Megatron's "
            "distributed optimizer) when data × context > 1, else 0; 0 must be asked for"
        },
    )
    sequence_parallel = Boolean(
        metadata={
            "description": "Megatron sequence parallelism (norms and element-wise activations split over the tensor "
            "ranks). Default: on when tensor > 1"
        }
    )
    context = Integer(
        validate=validate.Range(1, 1024),
        metadata={
            "description": "Context-parallel degree: each sequence is split over this many ranks, attention "
            "passing K/V blocks in a ring (Megatron-Core CP, ring attention). data × tensor × pipeline × "
            "context = count; the sequence length must be a multiple of 2 × context. Default 1"
        },
    )
    pipeline_schedule = String(
        validate=validate.OneOf(PIPELINE_SCHEDULES),
        metadata={
            "description": "Pipeline schedule. 1f1b (default; interleaved when virtual_pipeline > 1) or zero_bubble: "
            "ZB-H1 (Qi et al. 2024, Zero Bubble Pipeline Parallelism; torchtitan's ZBV / InterleavedZeroBubble), "
            "which runs the backward's weight-gradient halves in the 1F1B bubble: a third of its idle time at 1F1B's "
            "peak memory. Needs pipeline > 1",
            "example": "1f1b",
        },
    )
    expert_overlap = Boolean(
        metadata={
            "description": "Run each expert-parallel all-to-all (MoE token dispatch and combine) behind the compute of "
            "another micro-batch: Megatron-Core's 1F1B A2A overlap (overlap_moe_expert_parallel_comm with "
            "delay_wgrad_compute), DeepSeek-V3's DualPipe. Only the warm-up and cool-down micro-batches and the "
            "all-to-all beyond the compute stay exposed, and the overlapped compute loses the SMs the communication "
            "kernels take. Default false (Megatron-Core's default): the all-to-all is on the critical path",
            "example": False,
        }
    )
    data_shard = Integer(
        validate=validate.Range(1, MAX_DEVICES),
        metadata={
            "description": "Hybrid sharding: ZeRO (zero_stage 1–3) shards over groups of this many data × context "
            "ranks and replicates across the groups, which all-reduce their gradient shards once per step "
            "(PyTorch FSDP2 HSDP dp_shard, MaxText multislice: FSDP inside a slice, data "
            "parallel across slices). Must divide data × context and be a multiple of context (FSDP2 shards over "
            "dp_shard × cp). Default: one group of all (full sharding)",
            "example": 8,
        },
    )
    virtual_pipeline = Integer(
        validate=validate.Range(1, 128),
        metadata={
            "description": "Interleaved 1F1B model chunks per pipeline stage (Megatron "
            "--num-layers-per-virtual-pipeline-stage); divides the bubble by this factor "
            "(Narayanan et al. 2021 §2.2.2). 1 without pipeline parallelism. Default 1"
        },
    )


class InterconnectSchema(ma.Schema):
    """The cluster the devices sit in, when it differs from the catalog's system for the part."""

    class Meta:
        unknown = ma.RAISE

    scale_up_domain_devices = Integer(
        validate=validate.Range(1, 100_000),
        metadata={
            "description": "Devices per NVLink / Infinity Fabric / ICI domain (8 for HGX, 72 for GB200 NVL72)",
            "example": 72,
        },
    )
    scale_out_bytes_per_s = Float(
        validate=validate.Range(min=1e8, max=1e12),
        metadata={
            "description": "Network rate per device between domains, one direction, bytes/s "
            "(400 Gb/s InfiniBand per GPU = 5e10)",
            "example": 5e10,
        },
    )


class TrainingHardwareSchema(ma.Schema):
    class Meta:
        unknown = ma.RAISE

    accelerator = String(
        required=True,
        validate=validate.Length(1, 64),
        metadata={"description": "Catalog id (GET /v1/accelerators)", "example": "nvidia-h100-sxm-80gb"},
    )
    count = AutoOr(
        Integer(validate=validate.Range(1, MAX_DEVICES)),
        inner_doc={"type": "integer", "minimum": 1, "maximum": MAX_DEVICES},
        what=N_("a device count from 1 to {count}").format(count=f"{MAX_DEVICES:,}"),
        required=True,
        metadata={
            "description": 'Devices, or "auto" with constraints.deadline: the fewest devices whose fastest layout '
            "meets the deadline (assumptions.auto says what was chosen)",
            "example": 8,
        },
    )
    utilization = Float(
        validate=fraction_range(0.01, 1),
        metadata={
            "description": "Model FLOPs utilisation, a fraction from 0.01 to 1 (0.4 = 40 %); predicted when absent",
            "example": 0.4,
        },
    )
    parallelism = AutoOr(
        ma.fields.Nested(ParallelismSchema),
        inner_doc={"$ref": "#/components/schemas/Parallelism"},
        what=N_("a parallelism object"),
        metadata={
            "description": 'The parallel layout, or "auto": the fastest layout of the planner\'s search space for '
            "the accelerator and count (ties: least memory), with the micro-batch it chose unless "
            "training.micro_batch_size is given; assumptions.auto says what was chosen"
        },
    )
    interconnect = ma.fields.Nested(
        InterconnectSchema,
        metadata={
            "description": "Override the catalog's scale-up domain and scale-out network for this cluster"
        },
    )


class EstimateConstraintsSchema(ma.Schema):
    class Meta:
        unknown = ma.RAISE

    deadline = Deadline(
        metadata={
            "description": 'With hardware.count "auto": finish within (seconds or an ISO 8601 duration, P45D)'
        }
    )
    max_devices = Integer(
        validate=validate.Range(1, MAX_DEVICES),
        metadata={"description": 'With hardware.count "auto": the most devices to consider (default 8192)'},
    )


class TrainingRequestSchema(ma.Schema):
    class Meta:
        unknown = ma.RAISE

    model = ModelSpecField(required=True)
    training = ma.fields.Nested(TrainingRunSchema, required=True)
    hardware = ma.fields.Nested(TrainingHardwareSchema, required=True)
    cost = ma.fields.Nested(CostSchema)
    output = ma.fields.Nested(OutputSchema)
    calibration = calibration_field()
    prices = PRICE_OVERRIDES
    constraints = ma.fields.Nested(EstimateConstraintsSchema)
