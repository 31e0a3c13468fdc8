"""Record the golden answers of the corpus: `python -m tests.golden.record` (rewrites estimates.json.gz).

Only re-record on purpose, in a commit of its own that says why the numbers move."""

from __future__ import annotations

import gzip
import json
import tempfile
from pathlib import Path
from typing import Any

from scalecost import create_app
from scalecost.store import migrate
from scalecost.store.seeding import seed_catalog

from .corpus import corpus

GOLDEN = Path(__file__).with_name("estimates.json.gz")
# fields whose value depends on the day or the request, not on the estimate
VOLATILE = {"request_id", "priced_as_of", "age_days"}  # age_days: a catalog price's age, in days


def normalise(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: normalise(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [normalise(v) for v in value]
    return value


def answers(client) -> list[dict[str, Any]]:
    out = []
    for kind, body in corpus():
        response = client.post(f"/v1/estimates/{kind}", json=body)
        out.append(
            {"kind": kind, "request": body, "status": response.status_code, "body": normalise(response.json)}
        )
    return out


def app_on_fresh_database(directory: str):
    url = f"sqlite:///{directory}/golden.db"
    migrate.upgrade(url)
    app = create_app(
        {"DATABASE_URL": url, "TESTING": True, "RATELIMIT_ENABLED": False, "LOG_LEVEL": "WARNING"}
    )
    with app.extensions["scalecost.db"].transaction() as session:
        seed_catalog(session)
    return app


def main() -> None:
    with tempfile.TemporaryDirectory() as directory:
        app = app_on_fresh_database(directory)
        recorded = answers(app.test_client())
        app.extensions["scalecost.db"].dispose()
    with gzip.open(GOLDEN, "wt", encoding="utf-8") as f:
        json.dump(recorded, f, indent=1, sort_keys=True)
    statuses: dict[int, int] = {}
    for r in recorded:
        statuses[r["status"]] = statuses.get(r["status"], 0) + 1
    print(f"recorded {len(recorded)} answers to {GOLDEN} (status counts: {statuses})")


if __name__ == "__main__":
    main()
