"""gunicorn settings for production (`gunicorn -c service/gunicorn_conf.py 'scalecost:create_app()'`).

Workers are gevent workers: a client that sends its request slowly holds one greenlet (a few kB), not a
worker, so slow or stalled sockets cannot starve the service (with the sync workers of before, four sockets
trickling a request body held every worker and /healthz waited 35 s; tests/contract/test_slow_clients.py
keeps 64 open and requires p99 < 1 s). gunicorn documents that sync workers belong behind a buffering
proxy; docker-compose.yml also puts nginx in front (deploy/nginx.conf).
"""

import logging
import multiprocessing
import os
import shutil
import tempfile

# This machine only unless HOST says otherwise: `make run` on a laptop is not served to the network. The Docker
# image and docker-compose.yml set HOST=0.0.0.0 (a container's port is reached from outside it).
HOST = os.environ.get("HOST", "127.0.0.1")
PORT = os.environ.get("PORT", "8000")
bind = f"[{HOST}]:{PORT}" if ":" in HOST else f"{HOST}:{PORT}"  # an IPv6 address in brackets
workers = int(os.environ.get("WEB_CONCURRENCY", str(min(4, multiprocessing.cpu_count() * 2))))
# gevent (default): one greenlet per connection, up to worker_connections per worker. `sync` or `gthread`
# are only safe behind a buffering proxy (compose's nginx is one).
worker_class = os.environ.get("GUNICORN_WORKER_CLASS", "gevent")
worker_connections = int(os.environ.get("GUNICORN_WORKER_CONNECTIONS", "1000"))
threads = int(os.environ.get("GUNICORN_THREADS", "1"))  # gthread only
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "30"))
graceful_timeout = int(
    os.environ.get("GUNICORN_GRACEFUL_TIMEOUT", "30")
)  # SIGTERM lets in-flight requests finish
# Seconds a connection may take to send a request line and headers (each request, the first included, on
# the gevent worker), and to stay idle between keep-alive requests.
keepalive = 5
accesslog = None  # the app writes one JSON access line per request itself
errorlog = "-"
loglevel = os.environ.get("LOG_LEVEL", "info").lower()
# Every stderr line one JSON object: gunicorn's own error log, the service's loggers and any library's (root),
# tracebacks as a field (service/logjson.py; tests/contract/test_operations_gunicorn.py reads every line back).
logconfig_dict = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"json": {"()": "scalecost.logjson.JsonFormatter"}},
    "handlers": {
        "stderr": {"class": "logging.StreamHandler", "formatter": "json", "stream": "ext://sys.stderr"},
        "null": {"class": "logging.NullHandler"},
    },
    "root": {"level": loglevel.upper(), "handlers": ["stderr"]},
    "loggers": {
        "gunicorn.error": {"level": loglevel.upper(), "handlers": ["stderr"], "propagate": False},
        # off, as accesslog = None says: with a logconfig_dict gunicorn would write its own access lines
        "gunicorn.access": {"level": "CRITICAL", "handlers": ["null"], "propagate": False},
        "scalecost": {"level": loglevel.upper(), "handlers": ["stderr"], "propagate": False},
    },
}
# Not preloaded: the gevent worker monkey-patches the standard library before it imports the app, so the
# app's sockets, locks and psycopg's waits (psycopg picks a gevent-friendly wait when select is patched)
# all cooperate.
preload_app = False


def post_worker_init(worker):
    """The errors gunicorn answers itself (400, 414, 431) are problem+json too (service/gunicorn_errors.py)."""
    from scalecost.gunicorn_errors import install  # type: ignore[import-not-found]  # a config file, not a module

    install()


# --- Prometheus metrics of every worker (service/api/extensions/metrics.py): prometheus_client's multiprocess
# mode. Each worker writes its values to files in PROMETHEUS_MULTIPROC_DIR and GET /metrics adds them all up.
# The directory must be set before a worker imports prometheus_client, and empty at start (values of a former
# run would be counted again): a directory of our own when unset, removed at exit; an operator's is emptied.
_OWN_METRICS_DIR: list[str] = []


def on_starting(server):
    # Python warnings (the workers' too) go through the JSON root handler, not raw to stderr
    logging.captureWarnings(True)
    directory = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if not directory:
        directory = tempfile.mkdtemp(prefix="scalecost-metrics-")
        _OWN_METRICS_DIR.append(directory)
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = directory
    os.makedirs(directory, exist_ok=True)
    for name in os.listdir(directory):
        if name.endswith(".db"):
            os.unlink(os.path.join(directory, name))
    server.log.info("metrics of all workers in PROMETHEUS_MULTIPROC_DIR=%s", directory)


def child_exit(server, worker):
    """A worker that exits (restart, crash, timeout) stops counting in the live gauges (slots in use)."""
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(worker.pid)


def on_exit(server):
    for directory in _OWN_METRICS_DIR:
        shutil.rmtree(directory, ignore_errors=True)
