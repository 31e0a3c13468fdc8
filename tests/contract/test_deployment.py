"""docker-compose.yml and deploy/nginx.conf are kept correct by reading them (no container engine runs on
these machines): a buffering nginx in front of at least two API replicas, PostgreSQL with a healthcheck,
Redis as the rate limiter's shared store, migrations run once before the replicas start.
tests/contract/test_slow_clients.py runs this nginx.conf for real when nginx is installed."""

from __future__ import annotations

import fnmatch
import os
import re
import runpy
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
NGINX_CONF = ROOT / "deploy" / "nginx.conf"


# --- a small reader for nginx's configuration syntax: directives `name args;` and blocks `name args { }`


def _tokens(text: str) -> list[str]:
    tokens = re.findall(r"""'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|#[^\n]*|[{};]|[^\s{};'"#]+""", text)
    return [t for t in tokens if not t.startswith("#")]


def _parse(tokens: list[str], start: int = 0) -> tuple[list[tuple[str, list[str], list | None]], int]:
    """[(name, args, children or None)], the index after the block."""
    out, words, i = [], [], start
    while i < len(tokens):
        token = tokens[i]
        if token == ";":
            out.append((words[0], words[1:], None))
            words = []
        elif token == "{":
            children, i = _parse(tokens, i + 1)
            out.append((words[0], words[1:], children))
            words = []
        elif token == "}":
            return out, i
        else:
            words.append(token.strip("'\"") if token[0] in "'\"" else token)
        i += 1
    assert not words, f"unterminated directive {words}"
    return out, i


def parse_nginx(text: str) -> list:
    return _parse(_tokens(text))[0]


def find(block: list, name: str) -> list[tuple[list[str], list | None]]:
    return [(args, children) for n, args, children in block if n == name]


def one(block: list, name: str) -> tuple[list[str], list | None]:
    found = find(block, name)
    assert len(found) == 1, f"{name}: {len(found)} found"
    return found[0]


def seconds(value: str) -> float:
    match = re.fullmatch(r"(\d+)(ms|s|m)?", value)
    assert match, value
    return int(match[1]) * {"ms": 0.001, "s": 1, None: 1, "m": 60}[match[2]]


# --- the compose file


def _compose() -> dict:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())


def _command(service: dict) -> str:
    command = service.get("command", "")
    return " ".join(command) if isinstance(command, list) else str(command)


def _roles(services: dict) -> dict:
    db = [n for n, s in services.items() if str(s.get("image", "")).startswith("postgres:16")]
    redis = [n for n, s in services.items() if str(s.get("image", "")).startswith("redis:")]
    proxy = [n for n, s in services.items() if str(s.get("image", "")).startswith("nginx:")]
    api = [n for n, s in services.items() if "gunicorn -c service/gunicorn_conf.py" in _command(s)]
    migrate = [n for n, s in services.items() if "scalecost db upgrade" in _command(s)]
    assert len(db) == len(redis) == len(proxy) == len(migrate) == 1, (db, redis, proxy, migrate)
    return {"db": db[0], "redis": redis[0], "proxy": proxy[0], "api": api, "migrate": migrate[0]}


def test_compose_runs_at_least_two_replicas_behind_the_proxy_only():
    services = _compose()["services"]
    roles = _roles(services)
    replicas = sum(int(services[n].get("deploy", {}).get("replicas", 1)) for n in roles["api"])
    assert replicas >= 2
    for name in roles["api"]:
        assert "ports" not in services[name], f"{name} is published: clients must go through the proxy"
    proxy = services[roles["proxy"]]
    assert proxy.get("ports"), "the proxy is what clients reach"
    assert "./deploy/nginx.conf:/etc/nginx/nginx.conf:ro" in proxy["volumes"]
    for name in roles["api"]:
        assert proxy["depends_on"][name]["condition"] == "service_healthy"


def test_every_image_is_pinned():
    services = _compose()["services"]
    for name, service in services.items():
        if "build" in service:
            continue
        image = service["image"]
        tag = image.partition(":")[2]
        assert re.fullmatch(r"\d+\.\d+(\.\d+)?(-[a-z0-9.]+)?", tag), (
            f"{name}: {image} is not pinned to a version"
        )


def test_replicas_use_postgresql_and_redis_and_wait_for_migrations():
    services = _compose()["services"]
    roles = _roles(services)
    db, redis, migrate = roles["db"], roles["redis"], roles["migrate"]
    assert "healthcheck" in services[db] and "healthcheck" in services[redis]
    assert services[migrate]["depends_on"][db]["condition"] == "service_healthy"
    assert "scalecost catalog seed" in _command(services[migrate])
    for name in [migrate, *roles["api"]]:  # the URL itself is a secret: test_secrets_are_files_not_values
        assert services[name]["environment"]["DATABASE_URL_FILE"] == "/run/secrets/database_url"
    for name in roles["api"]:
        api = services[name]
        env = api["environment"]
        assert re.fullmatch(rf"redis://{redis}:6379(/\d+)?", env["RATELIMIT_STORAGE_URI"])
        assert api["depends_on"][db]["condition"] == "service_healthy"
        assert api["depends_on"][redis]["condition"] == "service_healthy"
        assert api["depends_on"][migrate]["condition"] == "service_completed_successfully"
        assert "healthz" in " ".join(api["healthcheck"]["test"])
        # gunicorn binds 127.0.0.1 unless told: a replica listens on every interface of its container
        assert env["HOST"] == "0.0.0.0"
        # workers stay the default gevent ones (only the proxy protects sync workers)
        assert env.get("GUNICORN_WORKER_CLASS", "gevent") == "gevent"


def test_nginx_upstream_names_the_replicas_and_buffers_requests():
    services = _compose()["services"]
    roles = _roles(services)
    http = one(parse_nginx(NGINX_CONF.read_text()), "http")[1]
    (upstream_name,), upstream = one(http, "upstream")
    servers = {args[0] for args, _ in find(upstream, "server")}
    expected = {f"{name}:{services[name]['environment']['PORT']}" for name in roles["api"]}
    assert servers == expected, "the upstream is exactly the compose replicas"

    server = one(http, "server")[1]
    (listen,), _ = one(server, "listen")
    published = {str(p).rsplit(":", 1)[-1] for p in services[roles["proxy"]]["ports"]}
    assert published == {listen}, "the published port reaches nginx"
    location = dict((args[0], children) for args, children in find(server, "location"))["/"]
    assert one(location, "proxy_pass")[0] == [f"http://{upstream_name}"]

    directives = {name: args for name, args, children in [*http, *server] if children is None}
    # the whole request is read before a replica sees it, and the answer before the replica is freed
    assert directives.get("proxy_request_buffering", ["on"]) == ["on"]
    assert directives.get("proxy_buffering", ["on"]) == ["on"]
    for name in ("client_header_timeout", "client_body_timeout", "send_timeout"):
        assert seconds(directives[name][0]) <= 30, name


def test_nginx_answers_its_own_errors_as_problem_json():
    server = one(one(parse_nginx(NGINX_CONF.read_text()), "http")[1], "server")[1]
    named = {args[0]: children for args, children in find(server, "location") if args[0].startswith("@")}
    pages = find(server, "error_page")
    assert {"408", "413", "502", "504"} <= {code for args, _ in pages for code in args[:-1]}
    for args, _ in pages:
        target = named[args[-1]]
        assert one(target, "default_type")[0] == ["application/problem+json"]
        status, body = one(target, "return")[0]
        codes = [a for a in args[:-1] if not a.startswith("=")]
        answered = [a[1:] for a in args if a.startswith("=")] or codes  # `=503` changes the status
        assert set(answered) == {status} and f'"status": {status}' in body, args


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a 1;", [("a", ["1"], None)]),
        ("b { c 'x; {y}' ; } # d;", [("b", [], [("c", ["x; {y}"], None)])]),
    ],
)
def test_the_nginx_reader(text, expected):
    assert parse_nginx(text) == expected


def test_dockerfile_migrates_seeds_and_serves_with_gunicorn():
    text = (ROOT / "Dockerfile").read_text()
    assert "scalecost db upgrade" in text and "scalecost catalog seed" in text
    assert "gunicorn -c service/gunicorn_conf.py" in text
    assert re.search(r"^ENV .*\bHOST=0\.0\.0\.0\b", text, re.MULTILINE), (
        "the container serves its published port"
    )


def _size_bytes(value: str) -> int:
    units = {"k": 1024, "m": 1024**2, "g": 1024**3}
    return int(value[:-1]) * units[value[-1].lower()] if value[-1].lower() in units else int(value)


def _location_for(server: list, path: str) -> list:
    """The location nginx picks for `path`: exact (=), else the first matching regex (~), else the longest prefix."""
    locations = [
        (args, children) for args, children in find(server, "location") if not args[0].startswith("@")
    ]
    for args, children in locations:
        if args[0] == "=" and args[1] == path:
            return children
    for args, children in locations:
        if args[0] in ("~", "~*") and re.search(args[1], path, re.IGNORECASE if args[0] == "~*" else 0):
            return children
    prefixes = [
        (args[-1], children) for args, children in locations if len(args) == 1 and path.startswith(args[0])
    ]
    return max(prefixes, key=lambda p: len(p[0]))[1]


@pytest.mark.parametrize(
    ("path", "limit"),
    [
        ("/v1/estimates/training", "MAX_CONTENT_LENGTH"),
        ("/v1/estimates/training/batch", "BATCH_MAX_BYTES"),
        ("/v1/estimates/inference/batch", "BATCH_MAX_BYTES"),
        ("/v1/price-imports", "PRICE_IMPORT_MAX_BYTES"),
    ],
)
def test_nginx_takes_every_body_the_service_takes(path, limit):
    """The proxy's client_max_body_size is at least the service's own limit for that path (a 4 MiB batch and a
    32 MiB price file are documented; nginx answered 413 at 1 MiB)."""
    from scalecost.config import from_env

    service_limit = from_env({})[limit]
    http = one(parse_nginx(NGINX_CONF.read_text()), "http")[1]
    server = one(http, "server")[1]
    location = _location_for(server, path)
    sizes = [
        args[0] for name, args, children in [*http, *server, *location] if name == "client_max_body_size"
    ]
    assert _size_bytes(sizes[-1]) >= service_limit, (path, sizes[-1], service_limit)
    assert one(location, "proxy_pass")[0][0].startswith("http://"), path


def test_nginx_does_not_publish_the_metrics():
    """/metrics is scraped from each replica on the compose network; the proxy answers 404 itself."""
    server = one(one(parse_nginx(NGINX_CONF.read_text()), "http")[1], "server")[1]
    location = _location_for(server, "/metrics")
    assert not find(location, "proxy_pass")
    status, body = one(location, "return")[0]
    assert status == "404" and '"status": 404' in body


# --- the image: pinned, non-root, a small build context; secrets from files; a graceful stop


def _dockerfile() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) of each instruction, continuation lines joined."""
    text = re.sub(r"\\\n", " ", (ROOT / "Dockerfile").read_text())
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith("#")]
    return [(line.split(None, 1)[0].upper(), line.split(None, 1)[1]) for line in lines]


def test_dockerfile_base_image_is_pinned_to_a_full_version():
    bases = [args.split()[0] for instruction, args in _dockerfile() if instruction == "FROM"]
    assert bases
    for image in bases:
        name, _, tag = image.partition(":")
        assert name == "python" and re.fullmatch(r"\d+\.\d+\.\d+-slim-[a-z]+", tag.split("@")[0]), (
            f"{image}: pin a full version tag like python:3.11.11-slim-bookworm"
        )


def test_the_image_runs_as_a_non_root_user():
    instructions = _dockerfile()
    users = [(i, args.strip()) for i, (instruction, args) in enumerate(instructions) if instruction == "USER"]
    assert users, "no USER: the service would run as root"
    index, user = users[-1]
    assert user.split(":")[0] not in ("root", "0"), user
    assert index < next(i for i, (instruction, _) in enumerate(instructions) if instruction == "CMD")
    uid = user.split(":")[0]
    assert any(
        instruction == "RUN" and "useradd" in args and f"--uid {uid}" in args
        for instruction, args in instructions
    )


def _dockerignored(path: str, patterns: list[str]) -> bool:
    """Whether a .dockerignore pattern excludes `path` or a folder above it (no `!` exceptions used here)."""
    parts = path.split("/")
    prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    for pattern in patterns:
        pattern = pattern.rstrip("/")
        candidates = [pattern, pattern.removeprefix("**/")]
        if any(fnmatch.fnmatchcase(prefix, p) for p in candidates for prefix in prefixes):
            return True
        if pattern.startswith("**/") and any(fnmatch.fnmatchcase(part, pattern[3:]) for part in parts):
            return True
    return False


@pytest.mark.parametrize(
    "path",
    [
        ".venv/bin/python",
        ".git/HEAD",
        "scalecost.db",
        "scalecost.db-wal",
        "tests/web/artifacts/page.png",
        ".pytest_cache/v/cache/lastfailed",
        "service/api/__pycache__/x.cpython-311.pyc",
        "deploy/secrets/database_url",
        ".env",
    ],
)
def test_dockerignore_keeps_local_state_and_secrets_out_of_the_image(path):
    patterns = [
        line.strip()
        for line in (ROOT / ".dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert not any(p.startswith("!") for p in patterns)
    assert _dockerignored(path, patterns), path
    for needed in (
        "service/__init__.py",
        "migrations/env.py",
        "requirements.lock",
        "pyproject.toml",
        "setup.py",
    ):
        assert not _dockerignored(needed, patterns), f"{needed} is needed by the build"


def test_secrets_are_files_not_values(tmp_path):
    """No password in docker-compose.yml: the database URL and password are compose secrets (files made by
    `make secrets`, git-ignored), read through DATABASE_URL_FILE and POSTGRES_PASSWORD_FILE."""
    compose = _compose()
    services, secrets = compose["services"], compose.get("secrets", {})
    for name, service in services.items():
        for key, value in (service.get("environment") or {}).items():
            assert not re.search(r"PASSWORD$", key), f"{name}: {key} holds a password; use {key}_FILE"
            assert not re.search(r"://[^/@\s]*:[^/@\s]*@", str(value)), f"{name}: {key} has credentials"
            if key.endswith("_FILE"):
                secret = value.removeprefix("/run/secrets/")
                assert value.startswith("/run/secrets/") and secret in service.get("secrets", []), (name, key)
                assert secrets[secret]["file"].startswith("./deploy/secrets/")
    assert "deploy/secrets/" in (ROOT / ".gitignore").read_text().splitlines()

    # `make secrets` writes what the services expect: the URL of the compose database with the password the
    # database was initialised with, which service/config.py reads from the file.
    roles = _roles(services)
    subprocess.run(
        ["sh", str(ROOT / "deploy" / "make-secrets.sh"), str(tmp_path)], check=True, capture_output=True
    )
    written = {
        name: (tmp_path / Path(spec["file"]).name).read_text().strip() for name, spec in secrets.items()
    }
    password = written["postgres_password"]
    assert len(password) >= 24
    db_env = services[roles["db"]]["environment"]
    assert written["database_url"] == (
        f"postgresql+psycopg://{db_env['POSTGRES_USER']}:{password}@{roles['db']}:5432/{db_env['POSTGRES_DB']}"
    )
    from scalecost.config import from_env

    url_file = tmp_path / "database_url"
    assert from_env({"DATABASE_URL_FILE": str(url_file)})["DATABASE_URL"] == written["database_url"]


def _duration_s(value: str) -> float:
    parts = re.findall(r"(\d+(?:\.\d+)?)(ms|h|m|s)", str(value))
    assert parts and "".join(n + u for n, u in parts) == str(value), value
    return sum(float(n) * {"ms": 0.001, "s": 1, "m": 60, "h": 3600}[u] for n, u in parts)


def test_compose_waits_longer_than_gunicorns_graceful_timeout():
    """`docker compose stop` sends SIGTERM, then SIGKILL after stop_grace_period (10 s by default): shorter than
    gunicorn's graceful_timeout, requests still in flight would be cut."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("GUNICORN_")}
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(environ)
    try:
        graceful = float(runpy.run_path(str(ROOT / "service" / "gunicorn_conf.py"))["graceful_timeout"])
    finally:
        os.environ.clear()
        os.environ.update(saved)
    services = _compose()["services"]
    for name in _roles(services)["api"]:
        service = services[name]
        assert _duration_s(service.get("stop_grace_period", "10s")) >= graceful + 5, name
        assert service["command"][0] == "gunicorn", "exec form: gunicorn is PID 1 and gets the SIGTERM itself"
    cmd = [args for instruction, args in _dockerfile() if instruction == "CMD"][-1]
    assert "exec gunicorn" in cmd, "the image's shell hands PID 1 to gunicorn"
