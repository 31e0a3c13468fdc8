"""How an engine schedules requests: continuous (in-flight) batching with a token budget per step, or static batches.

vLLM, SGLang and TensorRT-LLM schedule continuously: every engine step runs the decode token of each running
request plus prefill tokens of waiting requests, up to a per-step token budget; requests join and leave the batch
at every step. llama.cpp's server, transformers and ExLlamaV2 are modelled as static batches (a whole batch is
prefilled, then decoded together) unless the request says otherwise. Defaults (docs/formulas.md "Continuous
batching"):
- vLLM V1: chunked prefill always on; max_num_batched_tokens for the OpenAI server 8192 on devices with >= 70 GiB
  other than the A100, else 2048 (vllm/engine/arg_utils.py EngineArgs.get_batch_defaults).
- SGLang: chunked_prefill_size 2048 under 35 GiB, 4096 under 60 GiB, 8192 under 160 GiB, 16384 above
  (python/sglang/srt/server_args.py, _handle_gpu_memory_settings, read in a stored copy of the file of the 0.5
  series — it names B200, MI300 and piecewise CUDA graphs — whose repository commit the tools here could not name;
  sgl-project/sglang @ 469c63e54e7d94591617ef9590c6aa26d54dc1bb, the only commit stored, predates the tiers).
- TensorRT-LLM: max_num_tokens 8192 (LLM API BuildConfig default); enable_chunked_prefill False (LlmArgs default),
  so a prompt is prefilled in one step and must fit the budget.
- Mixed steps (a prefill chunk beside the running decodes): vLLM V1 schedules running and waiting requests into one
  step under one token budget, TensorRT-LLM's in-flight batching mixes context and generation requests. SGLang does
  not unless asked (--enable-mixed-chunk, default False: python/sglang/srt/server_args.py, sgl-project/sglang @
  001067fffe33427bee0ed2f007fb7551a1d76b44): its scheduler runs a waiting prompt's chunk as a prefill-only batch
  ahead of the running decodes (get_next_batch_to_run: "Run prefill first if possible"), which stall meanwhile.
- Overlap scheduling: SGLang's scheduler launches step N + 1 before it processes step N's results
  (disable_overlap_schedule False, same server_args.py and commit; the overlapped event loop of v0.4, Dec 2024, its
  "zero-overhead batch scheduler": recalled, not re-read). vLLM's --async-scheduling is off by default (0.10-0.11); TensorRT-LLM's PyTorch
  backend overlap scheduler is not modelled (not checked at a commit).
"""

from __future__ import annotations

from dataclasses import dataclass

from ...architecture import ModelSpec
from ...hardware import Accelerator

SCHEDULERS = ("continuous", "static")
LENGTHS = ("varied", "fixed")  # workload.lengths
# Front-end latency of one request (HTTP, gateway, tokenization, admission, streaming the first token), counted in
# every continuous-batching TTFT: the median of measured minus modelled TTFT at low load over the public sweeps
# (tests/engine/data/public_serving_sweeps.csv, 17 points at <= 8 concurrent requests or <= 2 req/s: vLLM
# 0.10-0.11, SGLang 0.4-0.5, TensorRT-LLM 1.2 and NIM 1.8; residuals -23 to +98 ms, median 37 ms). It depends on
# the serving stack and on what a benchmark measures (NIM's 500- and 5,000-token pair implies under 10 ms, GPUStack's
# vLLM about 50 ms), so a request may give its own (slo.front_end_latency_s, 0-10 s).
DEFAULT_FRONT_END_LATENCY_S = 0.035
FRONT_END_LATENCY_RANGE = (0.0, 10.0)
CONTINUOUS_ENGINES = frozenset({"vllm", "sglang", "tensorrt-llm"})
PERCENTILES = ("p50", "p90", "p99")
DEFAULT_PERCENTILE = "p90"
GIB = 2**30
MIN_BATCHED_TOKENS, MAX_BATCHED_TOKENS = (
    16,
    1_048_576,
)  # the range every engine's argument parser accepts here

# a small budget with a source: (engine, lower bound of device memory in GiB) → tokens; first match wins
_BUDGETS: dict[str, tuple[tuple[float, int], ...]] = {
    "vllm": ((70.0, 8192), (0.0, 2048)),
    "sglang": ((160.0, 16384), (60.0, 8192), (35.0, 4096), (0.0, 2048)),
    "tensorrt-llm": ((0.0, 8192),),
}
_BUDGET_SOURCES = {
    "vllm": "vLLM EngineArgs.get_batch_defaults: OpenAI server 8192 on >= 70 GiB (not A100), else 2048",
    "sglang": "SGLang server_args chunked_prefill_size: 2048 < 35 GiB, 4096 < 60 GiB, 8192 < 160 GiB, 16384 above",
    "tensorrt-llm": "TensorRT-LLM BuildConfig max_num_tokens 8192",
}
_STATIC_BUDGET = 1 << 62  # a static batch has no per-step token budget


SPECULATIVE_METHODS = ("mtp", "draft_model")
# Speculative decoding (docs/formulas.md "Speculative decoding"): k draft tokens verified in one target step accept
# (1 − α^(k+1))/(1 − α) tokens on average for an i.i.d. per-token acceptance rate α (Leviathan, Kalman & Matias,
# "Fast Inference from Transformers via Speculative Decoding", ICML 2023, eq. 1). Validity: α in [0.3, 0.95] and
# k in 1-8 — DeepSeek-V3's report (arXiv:2412.19437 §5.4.3) gives 85-90 % acceptance for its one MTP token, and
# Leviathan et al. report α of about 0.5-0.9 for their draft/target pairs (recalled, not re-read this session).
ACCEPTANCE_RANGE = (0.3, 0.95)
DRAFT_TOKENS_RANGE = (1, 8)
MTP_ACCEPTANCE = 0.85  # DeepSeek-V3 §5.4.3: 85-90 % for the second token (the low end)
# Cost of one draft pass relative to one target decode step: an MTP module is one transformer block (DeepSeek-V3
# §2.2), so 1/layers of the target; a named draft model costs its weight bytes ÷ the target's (a decode step streams
# the weights: draft.py); an unnamed one is assumed at 5 % (e.g. a 1-3B draft for a 70B target), and its memory is
# estimated as that share of the target's weights and KV per token (draft.py).
DRAFT_MODEL_COST_RATIO = 0.05


@dataclass(frozen=True)
class Speculative:
    method: str  # mtp | draft_model
    draft_tokens: int
    acceptance_rate: float
    draft_cost_ratio: float | None = None  # None: the method's default
    draft: ModelSpec | None = None  # method draft_model: the named draft (serving.speculative.draft_model)
    draft_weight_ratio: float | None = (
        None  # the named draft's weight bytes ÷ the target's (draft.bind_draft)
    )

    @property
    def tokens_per_step(self) -> float:
        a, k = self.acceptance_rate, self.draft_tokens
        return (1.0 - a ** (k + 1)) / (1.0 - a)

    def cost_ratio(self, layers: int) -> float:
        if self.draft_cost_ratio is not None:
            return self.draft_cost_ratio
        if self.method == "mtp":
            return 1.0 / max(layers, 1)
        return self.draft_weight_ratio if self.draft_weight_ratio is not None else DRAFT_MODEL_COST_RATIO


@dataclass(frozen=True)
class Pool:
    """One pool of a disaggregated deployment: `replicas` engines of `tensor_parallel` devices of `accelerator`."""

    accelerator: Accelerator
    tensor_parallel: int
    replicas: int

    @property
    def devices(self) -> int:
        return self.tensor_parallel * self.replicas


@dataclass(frozen=True)
class Disaggregation:
    """Separate prefill and decode pools (disaggregated.py); the prompt's KV moves from one to the other."""

    prefill: Pool
    decode: Pool
    layerwise_kv_transfer: bool = (
        False  # the transfer overlaps the prefill layer by layer (Splitwise, Mooncake)
    )


@dataclass(frozen=True)
class Schedule:
    """The request's `serving` and `workload` choices; None = the engine's default on the accelerator."""

    scheduler: str = "static"
    chunked_prefill: bool | None = None
    max_num_batched_tokens: int | None = None
    requests_per_second: float | None = None  # Poisson arrivals; None = closed loop at batch_size concurrency
    max_concurrency: int | None = (
        None  # serving.max_num_seqs; None = the engine's default (max_num_seqs below)
    )
    prefix_hit_rate: float = 0.0  # share of each prompt found in the prefix cache (not prefilled again)
    # workload.lengths "fixed": every request has exactly the prompt and output lengths (synthetic benchmarks), so
    # at a fixed concurrency the requests that prefill in one step come back together (continuous.py)
    fixed_lengths: bool = False
    speculative: Speculative | None = None
    percentile: str = DEFAULT_PERCENTILE
    disaggregation: Disaggregation | None = None  # None: every replica prefills and decodes (co-located)
    cuda_graph_max_batch: int | None = (
        None  # decode batches above it run eagerly; None = the engine's default
    )
    mixed_chunk: bool | None = None  # prefill chunks share steps with decodes; None = the engine's default
    overlap_schedule: bool | None = None  # next step launched before the last one's results; None = default
    front_end_latency_s: float = DEFAULT_FRONT_END_LATENCY_S  # slo.front_end_latency_s: in every TTFT

    @property
    def continuous(self) -> bool:
        return self.scheduler == "continuous"


STATIC = Schedule()


def default_scheduler(engine: str) -> str:
    return "continuous" if engine in CONTINUOUS_ENGINES else "static"


def default_chunked_prefill(engine: str) -> bool:
    """vLLM V1 and SGLang chunk long prompts by default; TensorRT-LLM does not (enable_chunked_prefill False)."""
    return engine in ("vllm", "sglang")


def batched_tokens(schedule: Schedule, engine: str, acc: Accelerator) -> tuple[int, str]:
    """The per-step token budget on `acc`, and where it comes from."""
    if schedule.max_num_batched_tokens is not None:
        return schedule.max_num_batched_tokens, "request"
    tiers = _BUDGETS.get(engine)
    if tiers is None:
        return 8192, "assumed (vLLM's large-GPU default) for an engine without a documented budget"
    gib = (acc.memory_bytes or 0) / GIB
    a100 = "a100" in acc.id
    for floor, tokens in tiers:
        if gib >= floor and not (engine == "vllm" and a100 and floor >= 70.0):
            return tokens, _BUDGET_SOURCES[engine]
    return tiers[-1][1], _BUDGET_SOURCES[engine]


# Most sequences an engine runs at once when the request gives no serving.max_num_seqs, on GPUs (beyond it requests
# wait in the engine's queue: load.py running_limit):
# - vLLM: EngineArgs.get_batch_defaults, OpenAI server: max_num_seqs 1024 on devices with >= 70 GiB whose name is not
#   an A100 ("For GPUs like H100 and MI300x, use larger default values"), else 256 (vllm/engine/arg_utils.py; the
#   same branch sets the step budget above). Its TPU and CPU branches differ and are not modelled (no default there).
# - TensorRT-LLM: BuildConfig.max_batch_size 2048 (the LLM API's and trtllm-serve's default).
# - SGLang: max_running_requests is derived from the KV pool (no fixed default): the KV cache's room decides.
_MAX_NUM_SEQS_SOURCES = {
    "vllm": "vLLM EngineArgs.get_batch_defaults: OpenAI server max_num_seqs 1024 on >= 70 GiB (not A100), else 256",
    "tensorrt-llm": "TensorRT-LLM BuildConfig max_batch_size 2048",
}


def max_num_seqs(schedule: Schedule, engine: str, acc: Accelerator) -> tuple[int | None, str | None]:
    """The most sequences the engine runs at once (None: no limit but the KV cache's room), and where it comes
    from: the request's serving.max_num_seqs, else the engine's default on a GPU."""
    if schedule.max_concurrency is not None:
        return schedule.max_concurrency, "request"
    if acc.kind != "gpu" or engine not in _MAX_NUM_SEQS_SOURCES:
        return None, None
    if engine == "tensorrt-llm":
        return 2048, _MAX_NUM_SEQS_SOURCES[engine]
    large = (acc.memory_bytes or 0) / GIB >= 70.0 and "a100" not in acc.id
    return (1024 if large else 256), _MAX_NUM_SEQS_SOURCES[engine]


def seqs_limit(schedule: Schedule, engine: str, acc: Accelerator, upper: int) -> int:
    """`upper`, or max_num_seqs where smaller (the serving planner's largest batch: it runs without a queue)."""
    seqs = max_num_seqs(schedule, engine, acc)[0]
    return min(upper, seqs) if seqs else upper


# Largest decode batch an engine replays as a CUDA graph; larger decode steps launch every kernel from Python
# (docs/formulas.md "Eager decode beyond the CUDA-graph batch"):
# - vLLM: max_cudagraph_capture_size = min(max_num_seqs * 2, 512) (vllm/config/vllm.py, vllm-project/vllm @
#   09f030eaf851400a83ad3d99f730868f76df0ca7), max_num_seqs >= 256 by default → 512; a smaller
#   serving.max_num_seqs lowers it.
# - SGLang: cuda_graph_max_bs by device memory and tensor degree (python/sglang/srt/server_args.py,
#   _handle_gpu_memory_settings, the stored copy of the 0.5 series named in the module docstring): 8 under 20 GiB;
#   24 (tp < 4) / 80 under 35 GiB; 32 (tp < 4) / 160 under 60 GiB; 256 (tp < 4) / 512 under 160 GiB; 512 above.
#   Releases of late 2024 (v0.4.x) used 160 on every GPU of 25 GB and more (same file, older version).
# - TensorRT-LLM and the static engines: not modelled (no limit).
CUDA_GRAPH_SOURCES = {
    "vllm": "vLLM max_cudagraph_capture_size = min(max_num_seqs x 2, 512)",
    "sglang": "SGLang server_args cuda_graph_max_bs (tp < 4 / >= 4): 8 < 20 GiB, 24/80 < 35 GiB, 32/160 < 60 GiB, "
    "256/512 < 160 GiB, 512 above",
}


def cuda_graph_max_batch(schedule: Schedule, engine: str, acc: Accelerator, tensor_degree: int) -> float:
    """Decode rows the engine replays as one CUDA graph (inf: no eager regime modelled). Only GPUs: on Gaudi,
    vLLM warms up and captures an HPU graph for every decode batch bucket up to max_num_seqs (vLLM Hardware Plugin
    for Intel Gaudi docs, "Bucketing Mechanism" and "Warm-up"), so no decode batch runs eagerly there."""
    if acc.kind != "gpu":
        return float("inf")
    if schedule.cuda_graph_max_batch is not None:
        return float(schedule.cuda_graph_max_batch)
    if engine == "vllm":
        seqs = max_num_seqs(schedule, engine, acc)[0]
        return float(min(2 * seqs, 512)) if seqs is not None else 512.0
    if engine == "sglang":
        gib = (acc.memory_bytes or 0) / GIB
        for ceiling, (narrow, wide) in _SGLANG_GRAPH_TIERS:
            if gib < ceiling:
                return narrow if tensor_degree < 4 else wide
        return 512.0
    return float("inf")


# (device memory ceiling in GiB, (cuda_graph_max_bs at tensor degree < 4, at >= 4)): first match wins
_SGLANG_GRAPH_TIERS = (
    (20.0, (8.0, 8.0)),
    (35.0, (24.0, 80.0)),
    (60.0, (32.0, 160.0)),
    (160.0, (256.0, 512.0)),
)


def default_mixed_chunk(engine: str) -> bool:
    """SGLang runs prefill batches as their own steps (enable_mixed_chunk False); the others mix (module docstring)."""
    return engine != "sglang"


def mixed_chunk(schedule: Schedule, engine: str) -> bool:
    return default_mixed_chunk(engine) if schedule.mixed_chunk is None else schedule.mixed_chunk


def overlap_schedule(schedule: Schedule, engine: str) -> bool:
    """SGLang overlaps scheduling with the GPU by default (module docstring); the others are modelled without."""
    return engine == "sglang" if schedule.overlap_schedule is None else schedule.overlap_schedule


def chunked(schedule: Schedule, engine: str) -> bool:
    return default_chunked_prefill(engine) if schedule.chunked_prefill is None else schedule.chunked_prefill


def quantile_z(percentile: str) -> float:
    """Standard-normal z of p50/p90/p99."""
    return {"p50": 0.0, "p90": 1.2815515655446004, "p99": 2.3263478740408408}[percentile]


def quantile_q(percentile: str) -> float:
    return {"p50": 0.5, "p90": 0.9, "p99": 0.99}[percentile]
