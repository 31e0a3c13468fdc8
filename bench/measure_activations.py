"""Measure the activation bytes autograd keeps per transformer layer, to check the estimator's formula.

    python3 -m venv /tmp/tvenv && /tmp/tvenv/bin/pip install torch==2.13.0   # the CPU build (not in make test)
    /tmp/tvenv/bin/python bench/measure_activations.py > tests/engine/data/measured_activations.json

A Llama-style decoder layer (pre-norm RMSNorm, grouped-query attention through
torch.nn.functional.scaled_dot_product_attention, SwiGLU MLP) in bf16 on the CPU; every tensor autograd saves
for the backward pass is caught with torch.autograd.graph.saved_tensors_hooks and counted once per storage,
parameters excluded. Two variants of the norm and the SwiGLU product:
- "fused": RMSNorm keeps its input and 1/rms, SwiGLU keeps gate and up (what Megatron-Core/Transformer Engine
  and compiled PyTorch keep);
- "eager": the plain PyTorch composition (what eager torchtitan keeps).
Selective recomputation keeps no s×s attention scores here because SDPA is a fused attention kernel.

Two-matrix MLP layers (GPT-3 / Nemotron-4 style: LayerNorm, GELU or squared ReLU, no dropout), variants "gelu",
"relu2" and their "-unfused-attention" twins (softmax(QK^T)·V written out, the scores kept), check the formula of
non-gated models and of unfused attention without dropout.

A third variant, "op-sac", runs the eager layer under torch.utils.checkpoint with torchtitan's op-level selective
checkpointing policy (torchtitan/parallelisms/parallelize_llama.py `_save_list` @9dec370: keep the outputs of
aten.mm except every second one and of the SDPA kernels; recompute the rest) and counts the bytes the layer still
holds after its forward: every tensor alive (gc) that was not alive before, less the layer's output, plus the
layer's input, which the checkpoint keeps. On the CPU SDPA runs _scaled_dot_product_flash_attention_for_cpu, added
to the save list as the stand-in of the CUDA flash kernel torchtitan lists.
"""

from __future__ import annotations

import gc
import json
import platform

import torch
import torch.nn.functional as F


class FusedRMSNorm(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, eps):
        rstd = torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + eps)
        ctx.save_for_backward(x, rstd, weight)
        return (x.float() * rstd).to(x.dtype) * weight

    @staticmethod
    def backward(ctx, grad):  # pragma: no cover - not run
        raise NotImplementedError


class FusedSwiGLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, gate, up):
        ctx.save_for_backward(gate, up)
        return F.silu(gate) * up

    @staticmethod
    def backward(ctx, grad):  # pragma: no cover - not run
        raise NotImplementedError


DTYPE = torch.bfloat16


def _weights(h: int, heads: int, kv: int, f: int) -> tuple[torch.nn.Parameter, ...]:
    """A Llama layer's weights (q, k, v, o, gate, up, down, the two norms), seeded: the byte counts need no values."""
    torch.manual_seed(0)
    d = h // heads
    linear = ((h, h), (kv * d, h), (kv * d, h), (h, h), (f, h), (f, h), (h, f))
    matrices = tuple(torch.nn.Parameter(torch.randn(o, i, dtype=DTYPE) * 0.02) for o, i in linear)
    return matrices + tuple(torch.nn.Parameter(torch.ones(h, dtype=DTYPE)) for _ in range(2))


def _eager_rmsnorm(v: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """RMSNorm as plain PyTorch ops (what eager torchtitan runs)."""
    return (v.float() * torch.rsqrt(v.float().pow(2).mean(-1, keepdim=True) + 1e-5)).to(DTYPE) * w


def _row(h: int, heads: int, kv: int, f: int, s: int, b: int, variant: str, measured: int) -> dict:
    return {
        "hidden": h, "heads": heads, "kv_heads": kv, "ffn": f, "sequence": s, "batch": b,
        "variant": variant, "bytes": measured, "bytes_per_sbh": measured / (s * b * h),
    }  # fmt: skip


def layer_bytes(h: int, heads: int, kv: int, f: int, s: int, b: int, fused: bool) -> int:
    d = h // heads
    wq, wk, wv, wo, wg, wu, wd, n1, n2 = _weights(h, heads, kv, f)
    params = {p.untyped_storage().data_ptr() for p in (wq, wk, wv, wo, wg, wu, wd, n1, n2)}
    x = torch.randn(b, s, h, dtype=DTYPE, requires_grad=True)
    seen: dict[int, int] = {}

    def pack(t: torch.Tensor):
        storage = t.untyped_storage()
        if storage.data_ptr() not in params:
            seen[storage.data_ptr()] = storage.nbytes()
        return t

    def norm(v, w):
        return FusedRMSNorm.apply(v, w, 1e-5) if fused else _eager_rmsnorm(v, w)

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        a = norm(x, n1)
        q = (a @ wq.T).view(b, s, heads, d).transpose(1, 2)
        k = (a @ wk.T).view(b, s, kv, d).transpose(1, 2)
        v = (a @ wv.T).view(b, s, kv, d).transpose(1, 2)
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        x2 = x + o.transpose(1, 2).reshape(b, s, h) @ wo.T
        m = norm(x2, n2)
        gate, up = m @ wg.T, m @ wu.T
        product = FusedSwiGLU.apply(gate, up) if fused else F.silu(gate) * up
        out = x2 + product @ wd.T
    del out
    return sum(seen.values())


class FusedLayerNorm(torch.autograd.Function):
    """LayerNorm keeping what a fused kernel keeps (Transformer Engine / Apex): its input, mean and 1/std."""

    @staticmethod
    def forward(ctx, x, weight, eps):
        xf = x.float()
        mean = xf.mean(-1, keepdim=True)
        rstd = torch.rsqrt(xf.var(-1, unbiased=False, keepdim=True) + eps)
        ctx.save_for_backward(x, mean, rstd, weight)
        return ((xf - mean) * rstd).to(x.dtype) * weight

    @staticmethod
    def backward(ctx, grad):  # pragma: no cover - not run
        raise NotImplementedError


class FusedActivation(torch.autograd.Function):
    """GELU or squared ReLU keeping only its input (Megatron-Core's fused bias-GELU; squared ReLU likewise)."""

    @staticmethod
    def forward(ctx, x, squared_relu):
        ctx.save_for_backward(x)
        return torch.relu(x).square() if squared_relu else F.gelu(x)

    @staticmethod
    def backward(ctx, grad):  # pragma: no cover - not run
        raise NotImplementedError


def two_matrix_layer_bytes(
    h: int, heads: int, kv: int, f: int, s: int, b: int, squared_relu: bool, fused_attention: bool
) -> int:
    """A GPT / Nemotron-style layer without dropout (pre-norm LayerNorm, grouped-query attention, a two-matrix MLP
    with GELU or squared ReLU), fused norms and activation; attention through SDPA (a fused kernel) or written out
    (QK^T, causal mask, softmax, A·V: the "unfused" attention whose scores the layer keeps)."""
    d = h // heads
    wq, wk, wv, wo, w1, _, w2, n1, n2 = _weights(h, heads, kv, f)
    w2 = torch.nn.Parameter(w2.detach().clone())  # (h, f): FC2
    params = {p.untyped_storage().data_ptr() for p in (wq, wk, wv, wo, w1, w2, n1, n2)}
    x = torch.randn(b, s, h, dtype=DTYPE, requires_grad=True)
    causal = torch.ones(s, s, dtype=torch.bool).triu(1)
    seen: dict[int, int] = {}

    def pack(t: torch.Tensor):
        storage = t.untyped_storage()
        if storage.data_ptr() not in params and storage.data_ptr() != causal.untyped_storage().data_ptr():
            seen[storage.data_ptr()] = storage.nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        a = FusedLayerNorm.apply(x, n1, 1e-5)
        q = (a @ wq.T).view(b, s, heads, d).transpose(1, 2)
        k = (a @ wk.T).view(b, s, kv, d).transpose(1, 2)
        v = (a @ wv.T).view(b, s, kv, d).transpose(1, 2)
        if fused_attention:
            o = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        else:
            k = k.repeat_interleave(heads // kv, dim=1)
            v = v.repeat_interleave(heads // kv, dim=1)
            scores = (q * d**-0.5) @ k.transpose(-1, -2)
            o = torch.softmax(scores.masked_fill(causal, float("-inf")), dim=-1) @ v
        x2 = x + o.transpose(1, 2).reshape(b, s, h) @ wo.T
        m = FusedLayerNorm.apply(x2, n2, 1e-5)
        out = x2 + FusedActivation.apply(m @ w1.T, squared_relu) @ w2.T
    del out
    return sum(seen.values())


def _op_sac_context():
    """torchtitan's op-level SAC policy (parallelize_llama.py @9dec370), the CPU flash kernel in its save list."""
    from torch.utils.checkpoint import CheckpointPolicy, create_selective_checkpoint_contexts

    save = {
        torch.ops.aten.mm.default,
        torch.ops.aten._scaled_dot_product_efficient_attention.default,
        torch.ops.aten._scaled_dot_product_flash_attention.default,
        torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default,
    }
    count = {"forward": 0, "recompute": 0}

    def policy(ctx, func, *args, **kwargs):
        mode = "recompute" if ctx.is_recompute else "forward"
        if func == torch.ops.aten.mm.default:
            count[mode] += 1
        keep = func in save and not (func == torch.ops.aten.mm.default and count[mode] % 2 == 0)
        return CheckpointPolicy.MUST_SAVE if keep else CheckpointPolicy.PREFER_RECOMPUTE

    return create_selective_checkpoint_contexts(policy)


def _live_storages() -> dict[int, int]:
    gc.collect()
    out = {}
    for obj in gc.get_objects():
        if isinstance(obj, torch.Tensor) and not isinstance(obj, torch.nn.Parameter):
            storage = obj.untyped_storage()
            out[storage.data_ptr()] = storage.nbytes()
    return out


def op_sac_layer_bytes(h: int, heads: int, kv: int, f: int, s: int, b: int) -> int:
    """Bytes one eager layer keeps under torchtitan's op-level selective checkpointing (its input included)."""
    from torch.utils.checkpoint import checkpoint

    d = h // heads
    wq, wk, wv, wo, wg, wu, wd, n1, n2 = _weights(h, heads, kv, f)

    def block(x):
        a = _eager_rmsnorm(x, n1)
        q = (a @ wq.T).view(b, s, heads, d).transpose(1, 2)
        k = (a @ wk.T).view(b, s, kv, d).transpose(1, 2)
        v = (a @ wv.T).view(b, s, kv, d).transpose(1, 2)
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        x2 = x + o.transpose(1, 2).reshape(b, s, h) @ wo.T
        m = _eager_rmsnorm(x2, n2)
        return x2 + (F.silu(m @ wg.T) * (m @ wu.T)) @ wd.T

    x = torch.randn(b, s, h, dtype=DTYPE, requires_grad=True) * 1.0  # a block input that autograd tracks
    before = _live_storages()
    out = checkpoint(block, x, use_reentrant=False, context_fn=_op_sac_context)
    kept = {k: v for k, v in _live_storages().items() if k not in before}
    return sum(kept.values()) - out.untyped_storage().nbytes() + x.untyped_storage().nbytes()


def main() -> None:
    shapes = [  # (hidden, heads, kv heads, ffn, sequence, batch)
        (1024, 8, 2, 3584, 512, 2),
        (1024, 8, 8, 2816, 512, 2),
        (2048, 16, 4, 5632, 256, 2),
        (1536, 12, 2, 4096, 1024, 1),
    ]
    rows = []
    for h, heads, kv, f, s, b in shapes:
        for fused in (True, False):
            measured = layer_bytes(h, heads, kv, f, s, b, fused)
            rows.append(_row(h, heads, kv, f, s, b, "fused" if fused else "eager", measured))
        rows.append(_row(h, heads, kv, f, s, b, "op-sac", op_sac_layer_bytes(h, heads, kv, f, s, b)))
    # two-matrix MLPs (GPT-3 / Nemotron-4 style, no dropout): f = 4h, GELU and squared ReLU, fused and written-out
    # attention
    for h, heads, kv, _, s, b in shapes:
        for squared_relu in (False, True):
            for fused_attention in (True, False):
                measured = two_matrix_layer_bytes(h, heads, kv, 4 * h, s, b, squared_relu, fused_attention)
                variant = ("relu2" if squared_relu else "gelu") + (
                    "" if fused_attention else "-unfused-attention"
                )
                rows.append(_row(h, heads, kv, 4 * h, s, b, variant, measured))
    print(json.dumps({
        "command": "/tmp/tvenv/bin/python bench/measure_activations.py",
        "torch": torch.__version__, "python": platform.python_version(), "dtype": "bfloat16", "rows": rows,
    }, indent=1))  # fmt: skip


if __name__ == "__main__":
    main()
