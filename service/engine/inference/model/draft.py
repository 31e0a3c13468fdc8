"""Speculative decoding's draft on the target's devices: its weights and its KV cache (docs/formulas.md
"Speculative decoding").

The engines load the draft beside the target: vLLM's SpeculativeConfig.draft_tensor_parallel_size "can only be 1 or
the same as the target model's tensor parallel size" (vllm/config/speculative.py, vllm-project/vllm @
002e77c1f0ef9b19cff8b9e21cfbd6feb3d6b443); SGLang's StandaloneWorker runs the draft on the target's gpu_id and
tp_rank with the target's token allocator and its own KV pool (python/sglang/srt/speculative/standalone_worker.py,
sgl-project/sglang @ 08dae28a87392047a801cdd587ec3c091269bad3). So the draft's weights and KV sit in the memory the
target's batch would use. We shard the draft like the target (same degree, same layout rule).

- draft_model named (serving.speculative.draft_model, resolved like `model`): its own shape in the target's weight
  format, except a format that quantizes only MoE experts (mxfp4: gpt-oss keeps attention and embeddings in bf16,
  formats.py) on a dense draft, which has no experts to quantize: bf16 then. KV per token from its own layers at the
  target's KV precision. Default cost ratio: its weight bytes ÷ the target's (a decode step streams the weights).
- draft_model unnamed: the cost ratio (draft_cost_ratio, default 5 %) × the target's weights and KV per token — an
  estimate, not a named model.
- mtp: the DeepSeek-V3 MTP module as vLLM builds it (vllm/model_executor/models/deepseek_mtp.py, vllm-project/vllm
  @ 03356f8cb59ba27f3d0ce8866d7516b5e32cff65): one decoder block of the target's (MoE when the target is), eh_proj
  (2h × h), enorm and hnorm (h each), and a SharedHead with its own norm and LM head (V·h) beside its own
  embed_tokens (V·h). For DeepSeek-V3 that is 13.46 B parameters; with the 671.03 B the preset counts (61 layers)
  it gives the checkpoint's 684.5 B (deepseek-ai/DeepSeek-V3 README, the report arXiv:2412.19437's release: "685B,
  which includes 671B of the Main Model weights and 14B of the Multi-Token Prediction (MTP) Module weights").
  Presets and hf_config count num_hidden_layers only, so the module is never in total_parameters and is added
  once, here. KV: one layer of the target's cache.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Protocol

from ...architecture import ModelSpec, transformer_parameters
from ...i18n import N_
from .formats import WeightFormat, weight_bytes, weight_format
from .kv import shape_kv_bytes_per_token
from .schedule import Schedule, Speculative

NAMED, ESTIMATED, MTP = "named", "estimated", "mtp"
# which weight format the draft is held in, and why (translated where the answer shows it: response.py)
SAME_FORMAT_NOTE = N_("the target's weight format")
DENSE_DRAFT_NOTE = N_("bf16, as the target's format quantizes only MoE experts and the draft is dense")


class Workload(Protocol):
    """What this module reads of memory.Workload (a structural type: memory.py imports this module)."""

    @property
    def model(self) -> ModelSpec: ...
    @property
    def engine(self) -> str: ...
    @property
    def fmt(self) -> WeightFormat: ...
    @property
    def kv_precision(self) -> str: ...
    @property
    def schedule(self) -> Schedule: ...
    @property
    def mode(self) -> str: ...
    @property
    def layout(self) -> str: ...
    @property
    def weights_bytes(self) -> float: ...
    @property
    def derived(self) -> dict[str, object]: ...


@dataclass(frozen=True)
class Draft:
    """What the draft holds: `model` in `fmt` (named, mtp), or `share` of the target (estimated)."""

    basis: str  # named | estimated | mtp
    model: ModelSpec | None
    fmt: WeightFormat | None
    format_note: str  # which weight format and why
    share: float = 0.0  # estimated: fraction of the target's weights and KV per token


def draft_format(draft: ModelSpec, fmt: WeightFormat) -> tuple[WeightFormat, str]:
    """The target's format, or bf16 when the format quantizes only MoE experts and the draft is dense."""
    s = draft.shape
    if fmt.dense_bits is not None and (s is None or not s.is_moe):
        return weight_format("bf16"), DENSE_DRAFT_NOTE
    return fmt, SAME_FORMAT_NOTE


def mtp_module(target: ModelSpec) -> ModelSpec | None:
    """The MTP module as a one-block model (module docstring); None without a transformer shape."""
    s = target.shape
    if s is None:
        return None
    one = replace(s, layers=1, dense_layers=0, tied_embeddings=False, learned_position_embeddings=0)
    block_embed_norm, _active = transformer_parameters(one)  # block + embed_tokens + head + shared_head.norm
    h = s.hidden_size
    total = float(block_embed_norm + 2 * h * h + 2 * h)  # + eh_proj + enorm + hnorm
    return ModelSpec("MTP module", "transformer", total, total, shape=one, source="vLLM deepseek_mtp.py")


def bind_draft(spec: Speculative, target: ModelSpec, fmt: WeightFormat) -> Speculative:
    """The speculative settings with the named draft's weight ratio (its default cost ratio) filled in."""
    if spec.method != "draft_model" or spec.draft is None:
        return spec
    draft_fmt, _note = draft_format(spec.draft, fmt)
    return replace(spec, draft_weight_ratio=weight_bytes(spec.draft, draft_fmt) / weight_bytes(target, fmt))


def resolve_draft(w: Workload) -> Draft | None:
    """The workload's draft (cached on the workload), or None without speculative decoding."""
    key = "speculative_draft"
    if key not in w.derived:
        w.derived[key] = _resolve(w)
    found = w.derived[key]
    return found if isinstance(found, Draft) else None


def _resolve(w: Workload) -> Draft | None:
    spec = w.schedule.speculative
    s = w.model.shape
    if spec is None or s is None or w.mode != "token":
        return None
    if spec.method == "mtp":
        module = mtp_module(w.model)
        return Draft(MTP, module, w.fmt, SAME_FORMAT_NOTE) if module is not None else None
    if spec.draft is not None:
        fmt, note = draft_format(spec.draft, w.fmt)
        return Draft(NAMED, spec.draft, fmt, note)
    return Draft(ESTIMATED, None, None, SAME_FORMAT_NOTE, share=spec.cost_ratio(s.layers))


def draft_weights_bytes(w: Workload) -> float:
    """The whole draft's weights, bytes (all devices together)."""
    d = resolve_draft(w)
    if d is None:
        return 0.0
    if d.model is None or d.fmt is None:
        return d.share * w.weights_bytes
    return weight_bytes(d.model, d.fmt)


def draft_per_device(w: Workload, count: int, target_kv_token: float) -> tuple[float, float]:
    """(draft weight bytes, draft KV bytes per token) on one of `count` devices, sharded like the target."""
    d = resolve_draft(w)
    if d is None:
        return 0.0, 0.0
    divide = count if w.layout in ("tensor", "layer") else 1
    weights = draft_weights_bytes(w) / divide
    if d.model is None or d.model.shape is None:
        return weights, d.share * target_kv_token
    kv = shape_kv_bytes_per_token(d.model.shape, w.engine, w.kv_precision, w.layout, count)
    return weights, kv
