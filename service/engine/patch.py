"""RFC 7386 JSON Merge Patch, used to express and re-apply recommendation changes."""

from __future__ import annotations

from typing import Any


def merge_patch(target: Any, patch: Any) -> Any:
    """Return `target` with `patch` applied (RFC 7386 §2); inputs are not modified."""
    if not isinstance(patch, dict):
        return patch
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def combine(first: Any, second: Any) -> Any:
    """Two merge patches as one: `second`'s values win and its nulls stay (merge_patch would apply them and drop
    the key, where here the null must reach the request it patches, to remove that field)."""
    if not isinstance(first, dict) or not isinstance(second, dict):
        return second
    out = dict(first)
    for key, value in second.items():
        out[key] = combine(out.get(key), value) if isinstance(value, dict) else value
    return out


def recommendation(
    code: str, severity: str, message: str, change: dict, field: str, op: str, value: Any
) -> dict[str, Any]:
    """A recommendation as the estimates answer it: the merge patch (`change`) and the claim it was verified
    against (`expected`: the answer's `field` compares with `value` by `op` once the change is applied)."""
    return {
        "code": code,
        "severity": severity,
        "message": message,
        "change": change,
        "expected": {"field": field, "op": op, "value": value},
    }
