"""gunicorn settings for production (`gunicorn -c service/gunicorn_conf.py 'service:create_app()'`)."""

import multiprocessing
import os

bind = f"0.0.0.0:{os.environ.get('PORT', '8000')}"
workers = int(os.environ.get("WEB_CONCURRENCY", str(min(4, multiprocessing.cpu_count() * 2))))
threads = int(os.environ.get("GUNICORN_THREADS", "1"))
worker_class = "sync" if threads == 1 else "gthread"
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "30"))
graceful_timeout = int(
    os.environ.get("GUNICORN_GRACEFUL_TIMEOUT", "30")
)  # SIGTERM lets in-flight requests finish
keepalive = 5
accesslog = None  # the app writes one JSON access line per request itself
errorlog = "-"
loglevel = os.environ.get("LOG_LEVEL", "info").lower()
preload_app = False
