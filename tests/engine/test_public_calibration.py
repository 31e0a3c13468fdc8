"""The estimator against the public calibration set (tests/engine/data/, cited per point): prints every point.

Issue 11's goal on the private held-out set: ≤ 12 % median error on tokens/s per device, ≥ 80 % within ±25 %,
no configuration that really ran predicted not to fit. These bounds keep what the public set shows today from
regressing; the printed table is the evidence (`pytest -s tests/engine/test_public_calibration.py`).

The first bounds apply to the points they were set on (published as tokens/s, on catalog parts with their own
datasheet peak); the second to every evaluated point, including torchtitan's Grand Teton H100 rows and the points
converted from a published TFLOP/s with the source's own FLOP count (Megatron-Core, MaxText, Meta; marked * in the
table), at the level they show today."""

from __future__ import annotations

from .public_points import evaluate_throughput, summary, table, throughput_rows
from .reference_catalog import load_catalog

# torchtitan's H100 benchmark rows run on Meta's Grand Teton part (96 GB HBM2e at 500 W), whose peak lies between
# the NVL and SXM figures (the catalog takes the midpoint): evaluated since the catalog has the part
GRAND_TETON = "nvidia-h100-96gb-hbm2e"


def test_throughput_against_public_measurements():
    every_row = evaluate_throughput(load_catalog())
    print("\n" + table(every_row))
    # the bounds were set on the rows without a `batch`; rows added later (the 39 MoE points of "moe-2026-12":
    # median 23.4 %, 3 of them predicted not to fit, a known gap in docs/formulas.md) are printed and counted in the
    # table's own summaries
    outcomes = [o for o in every_row if not o.batch]
    # the points these bounds were set on: published as tokens/s, on parts whose datasheet peak is the part's own
    grand_teton = {r["label"] for r in throughput_rows() if r["accelerator"] == GRAND_TETON}
    s = summary([o for o in outcomes if o.label not in grand_teton], derived=False)
    assert s["points"] >= 40
    assert s["median_abs_error"] < 0.075
    assert s["within_25_percent"] >= 0.90
    # every evaluated point, the Grand Teton H100 rows (peak between NVL and SXM: an assumption) and the converted
    # points included, each with the framework its source names (training.framework) and its recomputation
    # (torchtitan op-level SAC as selective_op, MaxText remat "minimal" as dots): the level of today (80 points,
    # median 6.9 %, 90 % within ±25 %, all fit; 77 points at 12.7 %, 71 % and 5 not fitting before this session's
    # framework field, TPU efficiency, selective_op/dots and the 256K / PP16 × VP8 points), kept from regressing
    everything = summary(outcomes)
    assert everything["points"] >= 80
    assert everything["median_abs_error"] < 0.08
    assert everything["within_25_percent"] >= 0.88
    assert everything["not_fitting"] == 0  # every configuration that really ran fits
    assert summary(outcomes, derived=True)["points"] >= 17  # the converted points stay evaluated


def test_tflops_conversions_use_each_sources_own_count():
    """Hand-worked FLOPs per token for one row of each source (formulas cited in public_points.py)."""
    from .public_points import flops_per_token, throughput_rows

    rows = {r["label"]: r for r in throughput_rows()}
    # Megatron-LM at f2e5db4, GPT 1.7B (L 24, h 2048, GeLU 4h, V 131072, S 4096): 72·L·h² + 12·L·h·S + 6·V·h
    megatron = 72 * 24 * 2048**2 + 12 * 24 * 2048 * 4096 + 6 * 131072 * 2048
    assert flops_per_token(rows["Megatron-Core GPT-1.7B TP1 PP1 48xH100"]) == megatron
    # MaxText at 76bd53b, 32B (scale 32 of the 2023 base: L 32, emb 10240, 32 heads x 256, ReLU mlp 32768, tied 32768
    # vocabulary, one RMSNorm per layer): 6·N + 6·L·a·d·S
    n = 32 * (4 * 10240 * 32 * 256 + 2 * 10240 * 32768 + 10240) + 32768 * 10240 + 10240
    maxtext = flops_per_token(rows["MaxText 32B v5p-128 (64 chips)"])
    assert maxtext is not None and abs(maxtext / (6 * n + 6 * 32 * 32 * 256 * 2048) - 1) < 0.001
    # Meta (PaLM MFU count): 6·N + 12·L·H·Q·T, ~2.64e12 at 8K for 405B
    meta = flops_per_token(rows["Llama3.1-405B production TP8 CP1 PP16 8192xH100 bf16"])
    assert meta is not None and 2.6e12 < meta < 2.7e12


def test_the_batches_added_later_keep_their_level():
    """The rows added after the bounds above, each batch at the level it reached when it was last worked on
    (`public_points` prints them per batch): the MoE batch at 16.6 % median, 64 % within ±25 %, every row fitting
    (from 23.4 %, 54 % and 3 not fitting when it was added); the dense batch at 10.3 %, 86 %, 2 tpu-recipes rows not
    fitting (7 before the loss and the rebuilt layer stopped being summed and XLA's loss was counted; the two left:
    GPT-3 175B on v6e-256 by ~5 %, Llama 3.1 405B on v5p-1024, whose vocabulary tiling has no request field, by
    0.4 %; docs/formulas.md, "Loss memory"); NeMo's long-sequence
    batch (4K to 1M tokens) at 3.6 %, every row within ±25 % (from 27.7 % and 44 % before the attention efficiency was
    re-fitted on it); NeMo 24.07's five H100 rows counted nowhere else (session 25) at 2.0 %, every row fitting
    (Nemotron-4 340B on 128 GPUs was "does not fit" until activations were counted without dropout and with FP8
    GEMM inputs in two-matrix MLPs; Nemotron-3 22B stays +33 %); NeMo 25.07's four GB200 rows at 4.9 % (Llama 3.1
    405B Megatron-FSDP TP2 +22 %). On the held-out set's parts (A100, H100, H200, B200, GB200, TPU v5p) every row of
    every batch together: 158 rows, 8.1 %, 88 %."""
    every_row = evaluate_throughput(load_catalog())
    moe = summary([o for o in every_row if o.batch == "moe-2026-12"])
    assert moe["points"] >= 39 and moe["median_abs_error"] < 0.18 and moe["within_25_percent"] >= 0.62
    assert moe["not_fitting"] == 0
    dense = summary([o for o in every_row if o.batch == "dense-2026-12"])
    assert dense["points"] >= 50 and dense["median_abs_error"] < 0.12 and dense["within_25_percent"] >= 0.78
    assert dense["not_fitting"] <= 2
    long_sequences = summary([o for o in every_row if o.batch == "longseq-2026-12"])
    assert long_sequences["points"] >= 9 and long_sequences["median_abs_error"] < 0.06
    assert long_sequences["within_25_percent"] == 1.0 and long_sequences["not_fitting"] == 0
    nemo2407 = summary([o for o in every_row if o.batch == "nemo2407-2026-12"])
    assert nemo2407["points"] >= 5 and nemo2407["median_abs_error"] < 0.05 and nemo2407["not_fitting"] == 0
    nemo2507 = summary([o for o in every_row if o.batch == "nemo2507-2026-12"])
    assert nemo2507["points"] >= 4 and nemo2507["median_abs_error"] < 0.08 and nemo2507["not_fitting"] == 0
    parts = ("nvidia-a100", "nvidia-h100", "nvidia-h200", "nvidia-b200", "nvidia-gb200", "google-tpu-v5p")
    on_parts = {r["label"] for r in throughput_rows() if r["accelerator"].startswith(parts)}
    held_out_like = summary([o for o in every_row if o.label in on_parts])
    assert held_out_like["points"] >= 158
    assert held_out_like["median_abs_error"] < 0.095 and held_out_like["within_25_percent"] >= 0.86


def test_rows_sent_with_only_their_published_fields():
    """Every row as a client sending only what its source publishes (published_only_request: no framework, no
    per-row annotations, the engine's defaults for sequence parallelism and an unpublished ZeRO stage,
    micro-batch or recomputation), as the held-out check may send them. With the old layout defaults
    (sequence parallelism off, ZeRO-0) and megatron kernels for every ZeRO-3 row this was 11.7 %, 77 % within
    ±25 %, 66 → 9 not fitting; since the layout defaults and the fsdp stack inferred from ZeRO-3: 9.8 %, 82 %, 9
    (host offload, bf16 states and loss chunks the sources' configs set, which only the request can say); since a
    Grace part offloads the fewest layers that fit when the request names none (session 25), 7: the two
    Megatron-FSDP Llama 3 70B rows on GB200/GB300 fit, the six tpu-recipes v6e rows and MaxText's 405B on v5p-1024
    do not."""
    outcomes = evaluate_throughput(load_catalog(), bare=True)
    s = summary(outcomes)
    print(f"\npublished fields only: {s}")
    assert s["median_abs_error"] < 0.105
    assert s["within_25_percent"] >= 0.80
    assert s["not_fitting"] <= 7
