"""Record the plan answers of plan_corpus.py: `python -m tests.golden.record_plans` (rewrites plans.json.gz).

Re-record when the planners' answers change shape on purpose (a property added or dropped), then read the diff
of the `required` lists that tests/contract/test_response_schemas.py asks for. The numbers are not compared
(a search's answer depends on its time budget, `search.complete`); only the shapes are used, so the answers are
kept whole (`priced_as_of`, `age_days` included: they are properties to count)."""

from __future__ import annotations

import gzip
import json
import tempfile
from pathlib import Path
from typing import Any

from .plan_corpus import corpus
from .record import app_on_fresh_database

PLANS = Path(__file__).with_name("plans.json.gz")


def answers(client) -> list[dict[str, Any]]:
    out = []
    for kind, body in corpus():
        response = client.post(f"/v1/plans/{kind}", json=body)
        out.append({"kind": kind, "request": body, "status": response.status_code, "body": response.json})
    return out


def main() -> None:
    with tempfile.TemporaryDirectory() as directory:
        app = app_on_fresh_database(directory)
        recorded = answers(app.test_client())
        app.extensions["scalecost.db"].dispose()
    with gzip.open(PLANS, "wt", encoding="utf-8") as f:
        json.dump(recorded, f, indent=1, sort_keys=True)
    print(f"recorded {len(recorded)} plan answers to {PLANS}:")
    for r in recorded:
        body = r["body"]
        found = body.get("best") or body.get("plan")
        print(f"  {r['kind']:9} {r['status']} {'a plan' if found else 'nothing qualifies'}")


if __name__ == "__main__":
    main()
