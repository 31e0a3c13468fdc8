"""docker-compose.yml is kept correct by reading it (no container engine runs on these machines)."""

from __future__ import annotations

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]


def test_compose_service_points_at_the_database_service():
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    services = compose["services"]
    db_name = next(n for n, s in services.items() if str(s.get("image", "")).startswith("postgres:16"))
    api = next(s for n, s in services.items() if n != db_name)
    assert "healthcheck" in services[db_name]
    assert api["depends_on"][db_name]["condition"] == "service_healthy"
    url = api["environment"]["DATABASE_URL"]
    assert url.startswith("postgresql") and f"@{db_name}:5432/" in url


def test_dockerfile_migrates_seeds_and_serves_with_gunicorn():
    text = (ROOT / "Dockerfile").read_text()
    assert "scalecost db upgrade" in text and "scalecost catalog seed" in text
    assert "gunicorn -c service/gunicorn_conf.py" in text
