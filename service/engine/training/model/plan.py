"""The typed training plan: what every training function takes instead of a dozen of its fields.

Built and validated from a request by request.py; evaluated by evaluate.py; patched (dataclasses.replace) by
advice.py and by planners that sweep layouts without going through JSON.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...architecture import ModelSpec
from ...hardware import Accelerator
from ...offers import NEUTRAL, Terms
from ...parallelism import Parallelism
from .framework import TPU_DEFAULT_RECOMPUTATION, inferred_framework
from .goodput import INTERRUPTIONS_PER_DEVICE_HOUR, RESTART_S
from .recompute import DEFAULT_RECOMPUTE_MODULES

TRAINING_PRECISIONS = ("fp32", "tf32", "bf16", "fp16", "fp8", "fp4")
OPTIMIZERS = ("adamw", "adam", "sgd", "sgd-momentum", "adafactor", "adam-8bit", "lion")
# "dots": keep the layer input and the outputs of the weight matmuls the backward needs (the QKV projections and
# the MLP's input projections), recompute the rest: JAX's jax.checkpoint_policies.checkpoint_dots_with_no_batch_dims,
# MaxText's remat_policy "minimal" (MaxText/layers/models.py @76bd53b0f); docs/formulas.md "Activation memory".
# "selective_op": torchtitan's op-level selective activation checkpointing (activations.py op_sac_bytes_per_token).
RECOMPUTATION = ("none", "selective", "selective_op", "full", "dots")
# The modes the planner tries when the request fixes none: those of Megatron-LM / PyTorch recipes (JAX's "dots"
# is a MaxText choice, not searched).
SEARCHED_RECOMPUTATION = ("none", "selective", "selective_op", "full")
# Interleaved 1F1B chunks per stage tried for one given device count: by the planner (search_space) and by the
# interleaving advice (interleave.py); NeMo's large recipes run 4–8
INTERLEAVED_CHUNKS = (1, 2, 4, 8)
# Training stacks whose kernels differ enough to move the step time (training/framework.py; docs/formulas.md,
# "Training framework"). megatron: Megatron-LM / Megatron-Core / Megatron-DeepSpeed's fused kernels; nemo and
# megatron-bridge run Megatron-Core.
FRAMEWORKS = (
    "megatron",
    "nemo",
    "megatron-bridge",
    "deepspeed",
    "torchtitan",
    "llm-foundry",
    "pytorch",
    "fsdp",
    # JAX/XLA stacks (training/model/framework.py JAX_STACKS): MaxText and Paxml, on TPUs and on GPUs
    "maxtext",
    "paxml",
)


@dataclass(frozen=True)
class TrainingPlan:
    """A validated training request with every default filled in."""

    model: ModelSpec
    accelerator: Accelerator
    par: Parallelism
    precision: str
    optimizer: str
    optimizer_multiplier: float | None
    recompute: str
    flash_attention: bool
    sequence_length: int  # 1 for CNNs
    global_batch: int  # sequences or samples per optimizer step
    micro_batch: int | None  # None = choose the largest that fits
    units: float  # training tokens (token models) or samples (CNN/ViT), epochs applied
    unit: str  # "token" or "sample"
    pretraining_units: float
    utilization: float | None
    checkpoint_interval: int | None
    checkpoint_bytes_per_s: float
    validation_interval: int | None
    validation_units: float
    usd_per_hour: float | None
    price_source: Any
    infrastructure_overhead: float
    decimals: int
    details: bool
    notes: tuple[str, ...] = ()
    # run-level goodput (training/goodput.py): interruptions per device-hour, seconds per restart, or the
    # goodput fraction itself when the request gives it
    interruptions_per_device_hour: float = INTERRUPTIONS_PER_DEVICE_HOUR
    restart_s: float = RESTART_S
    goodput: float | None = None
    # what the priced offer sells and how it bills (engine/offers.py); neutral for a price given in the request
    offer_terms: Terms = NEUTRAL
    # share of the stepping time lost to stragglers (None: goodput.straggler_share of the device count)
    straggler_share: float | None = None
    # transformer layers per pipeline stage whose saved activations are offloaded to host memory (offload.py)
    offload_layers: int = 0
    # how offload_layers was set: "given", "default" (none) or "fit" (the fewest that fit on a Grace part or a TPU:
    # fit_defaults.offload_to_fit)
    offload_source: str = "given"
    # the training stack (FRAMEWORKS) and whether its PyTorch model is torch.compile'd (training/framework.py)
    framework: str = "megatron"
    torch_compile: bool = False
    # how framework was set: "given", "default" (megatron) or "zero_stage" (fsdp, inferred from a ZeRO-3 layout)
    framework_source: str = "given"
    # the modules "selective" recomputes (model/recompute.py; Megatron-Core recompute_modules)
    recompute_modules: tuple[str, ...] = DEFAULT_RECOMPUTE_MODULES
    # how recompute was set: "given", "default" (the part's stack default) or "fit" (the least a TPU stack recomputes
    # that fits: fit_defaults.remat_to_fit)
    recompute_source: str = "given"
    # chunks the loss is computed in (MaxText num_vocab_tiling, chunked / fused linear cross entropy): the loss's
    # buffers at their peak are those of one chunk's logits (activations.activation_bytes_by_runtime)
    loss_chunks: int = 1

    def with_fields(self, **changes: Any) -> TrainingPlan:
        """This plan with some fields changed, for the advice's candidates (which answer for the change being one
        that build_plan would accept: only fields whose validation cannot fail for a valid plan are changed so).

        dataclasses.replace re-runs __init__ over every field (~17 µs, more than evaluating the copy with a known
        Basis); the plan has no __post_init__ and nothing derived is stored, so the fields are copied instead."""
        if not changes.keys() <= self.__dict__.keys():
            raise TypeError(f"not TrainingPlan fields: {sorted(changes.keys() - self.__dict__.keys())}")
        fields = {**self.__dict__, **changes}
        if self.offload_source == "fit" and "offload_layers" not in changes:
            # the offload chosen to fit this plan (fit_defaults.py) is not part of any change: a candidate is
            # judged without it, so no recommendation leans on an offload its change does not name
            fields["offload_layers"], fields["offload_source"] = 0, "default"
        if self.recompute_source == "fit" and "recompute" not in changes:
            # the recomputation chosen to fit this plan (fit_defaults.remat_to_fit) is re-chosen for the candidate,
            # from the stack's default, as the changed request would be answered
            fields["recompute"], fields["recompute_source"] = TPU_DEFAULT_RECOMPUTATION, "default"
        if self.framework_source != "given" and ("par" in changes or "accelerator" in changes):
            # a framework the request did not name follows the layout and the part (framework.inferred_framework)
            fields["framework"], fields["framework_source"] = inferred_framework(
                fields["par"].zero_stage, fields["accelerator"]
            )
        twin = object.__new__(TrainingPlan)
        object.__setattr__(twin, "__dict__", fields)
        return twin

    def on(self, accelerator: Accelerator, usd_per_hour: float | None) -> TrainingPlan:
        """The same plan on another accelerator at another hourly price (the advice's catalog scan)."""
        return self.with_fields(accelerator=accelerator, usd_per_hour=usd_per_hour)

    @property
    def units_per_step(self) -> int:
        """Tokens (or samples) per optimizer step."""
        return self.global_batch * (self.sequence_length if self.unit == "token" else 1)

    @property
    def per_replica_batch(self) -> int:
        """Sequences (or samples) per data-parallel replica per step."""
        return self.global_batch // self.par.data

    @property
    def activation_bytes_per_value(self) -> float:
        """Activations are kept in 4 bytes under fp32/tf32, else in 16 bits."""
        return 4.0 if self.precision in ("fp32", "tf32") else 2.0
