"""gunicorn settings for production (`gunicorn -c service/gunicorn_conf.py 'scalecost:create_app()'`).

Workers are gevent workers: a client that sends its request slowly holds one greenlet (a few kB), not a
worker, so slow or stalled sockets cannot starve the service (with the sync workers of before, four sockets
trickling a request body held every worker and /healthz waited 35 s; tests/contract/test_slow_clients.py
keeps 64 open and requires p99 < 1 s). gunicorn documents that sync workers belong behind a buffering
proxy; docker-compose.yml also puts nginx in front (deploy/nginx.conf).
"""

import multiprocessing
import os

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
# Not preloaded: the gevent worker monkey-patches the standard library before it imports the app, so the
# app's sockets, locks and psycopg's waits (psycopg picks a gevent-friendly wait when select is patched)
# all cooperate.
preload_app = False


def post_worker_init(worker):
    """The errors gunicorn answers itself (400, 414, 431) are problem+json too (service/gunicorn_errors.py)."""
    from scalecost.gunicorn_errors import install  # type: ignore[import-not-found]  # a config file, not a module

    install()
