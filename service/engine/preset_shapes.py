"""Builders the preset modules share (presets.py, presets_trained.py): a ModelSpec from a shape, and the shapes of
the common decoder families. Kept apart so that the preset lists can import them without importing each other."""

from __future__ import annotations

from .architecture import ModelSpec, TransformerShape, transformer_parameters


def _transformer(
    name: str, shape: TransformerShape, seq: int, source: str, notes: tuple[str, ...] = ()
) -> ModelSpec:
    total, active = transformer_parameters(shape)
    return ModelSpec(
        name=name,
        architecture="transformer",
        total_parameters=float(total),
        active_parameters=float(active),
        shape=shape,
        shape_inferred=False,
        default_sequence_length=seq,
        source=source,
        notes=notes,
    )


def _shape(
    layers: int, h: int, a: int, g: int, f: int, v: int, ctx: int, **extra: object
) -> TransformerShape:
    """A gated-MLP (SwiGLU/GeGLU) decoder with RMSNorm; `extra` sets head_dim, MoE, tying, biases."""
    fields: dict[str, object] = dict(
        layers=layers,
        hidden_size=h,
        attention_heads=a,
        kv_heads=g,
        ffn_hidden_size=f,
        ffn_type="swiglu",
        vocab_size=v,
        tied_embeddings=False,
        max_context_tokens=ctx,
    )
    fields.update(extra)
    return TransformerShape(**fields)  # type: ignore[arg-type]


def _llama(layers: int, h: int, a: int, g: int, f: int, v: int, ctx: int) -> TransformerShape:
    """A Llama-style decoder: SwiGLU MLP, untied embeddings."""
    return _shape(layers, h, a, g, f, v, ctx)


def _gpt(layers: int, h: int, a: int, v: int, ctx: int) -> TransformerShape:
    return TransformerShape(
        layers=layers,
        hidden_size=h,
        attention_heads=a,
        kv_heads=a,
        ffn_hidden_size=4 * h,
        ffn_type="gelu",
        vocab_size=v,
        tied_embeddings=True,
        max_context_tokens=ctx,
        biases=True,
        learned_position_embeddings=ctx,
    )
