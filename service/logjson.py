"""One JSON object per log line, for every logger: the service's own, gunicorn's error log, libraries'.

A record becomes {"time", "level", "logger", "message", "pid"} plus, inside a request, its "request_id", and,
with an exception, the whole traceback as one "exc_info" string (never a line of its own). A message that is
itself a JSON object (the access lines of api/extensions/observability.py) is merged into the object instead
of being quoted inside "message".

Imports only the standard library: gunicorn's master loads it (gunicorn_conf.py's logconfig_dict) before any
worker exists, and Flask is looked up only if a worker already imported it.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from typing import Any


def _request_id() -> str | None:
    flask = sys.modules.get("flask")
    if flask is None or not flask.has_request_context():
        return None
    return flask.g.get("request_id")


def _own_json(record: logging.LogRecord) -> dict[str, Any] | None:
    message = record.msg
    if record.args or not isinstance(message, str) or not message.startswith("{"):
        return None
    try:
        parsed = json.loads(message)
    except ValueError:
        return None
    return parsed if isinstance(parsed, dict) else None


class JsonFormatter(logging.Formatter):
    """logging.Formatter writing one JSON object (one line) per record."""

    def format(self, record: logging.LogRecord) -> str:
        body: dict[str, Any] = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "pid": record.process,
        }
        own = _own_json(record)
        if own is not None:
            body.update(own)
        else:
            body["message"] = record.getMessage()
        if "request_id" not in body:
            request_id = _request_id()
            if request_id:
                body["request_id"] = request_id
        if record.exc_info:
            body["exc_info"] = self.formatException(record.exc_info)
            body.setdefault("exc_type", record.exc_info[0].__name__ if record.exc_info[0] else None)
        if record.stack_info:
            body["stack_info"] = self.formatStack(record.stack_info)
        return json.dumps(body, default=str)


def handler(stream: Any = None) -> logging.Handler:
    """A stderr handler with the JSON formatter."""
    out = logging.StreamHandler(stream if stream is not None else sys.stderr)
    out.setFormatter(JsonFormatter())
    return out
