"""docker-compose.yml and deploy/nginx.conf are kept correct by reading them (no container engine runs on
these machines): a buffering nginx in front of at least two API replicas, PostgreSQL with a healthcheck,
Redis as the rate limiter's shared store, migrations run once before the replicas start.
tests/contract/test_slow_clients.py runs this nginx.conf for real when nginx is installed."""

from __future__ import annotations

import re
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
    assert services[migrate]["environment"]["DATABASE_URL"].startswith("postgresql")
    for name in roles["api"]:
        api = services[name]
        env = api["environment"]
        assert env["DATABASE_URL"].startswith("postgresql") and f"@{db}:5432/" in env["DATABASE_URL"]
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
