"""What `scalecost estimate` and `scalecost plan` share: the body (a file, stdin or flags), the answer (the local
engine on the seed's catalog or a database's, or a running service with --server), and the output (the API's
JSON with --json, else a summary of the answer's human strings in the language of $LANG).

Exit codes: 0 answered; 1 the service or the database could not answer; 2 invalid input (a refused or
impossible field, an unreadable body, a bad option)."""

from __future__ import annotations

import contextlib
import json
import os
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any

import click

EXIT_INVALID = 2
EXIT_CODES = (
    "Exit codes: 0 answered; 1 the service or the database could not answer; 2 invalid input "
    "(a refused or impossible field, an unreadable body, a bad option)."
)
PATHS = {
    "training": "/v1/estimates/training",
    "inference": "/v1/estimates/inference",
    "training-plan": "/v1/plans/training",
    "serving-plan": "/v1/plans/inference",
}


class Invalid(click.ClickException):
    """Invalid input: one line naming the fields, exit 2."""

    exit_code = EXIT_INVALID


def common(command: Callable) -> Callable:
    """The options every estimate and plan command takes."""
    for option in reversed(
        (
            click.option(
                "--body", "body_file", type=click.File("r"), help="Request body (JSON), - for stdin"
            ),
            click.option("--json", "as_json", is_flag=True, help="Print the API's JSON answer"),
            click.option(
                "--server", metavar="URL", help="Ask the service at URL instead of the local engine"
            ),
            click.option("--api-key", envvar="SCALECOST_API_KEY", help="With --server ($SCALECOST_API_KEY)"),
            click.option(
                "--database-url", metavar="URL", help="Price on this database's catalog (default: the seed's)"
            ),
        )
    ):
        command = option(command)
    return command


def language() -> str:
    """The language tag $LC_ALL, $LC_MESSAGES or $LANG names (es_ES.UTF-8 → es), English otherwise."""
    from .. import i18n

    for name in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = os.environ.get(name, "").split(".")[0].split("@")[0]
        if value:
            return i18n.negotiate([(value.replace("_", "-"), 1.0)]) if value not in ("C", "POSIX") else "en"
    return "en"


def body(body_file: Any, flags: dict[str, Any]) -> dict[str, Any]:
    """The body file's object (or {}) with the flags given set on it (dotted paths)."""
    loaded: Any = {}
    if body_file is not None:
        try:
            loaded = json.load(body_file)
        except json.JSONDecodeError as error:
            raise Invalid(f"the body is not JSON: {error}") from None
        if not isinstance(loaded, dict):
            raise Invalid("the body must be a JSON object")
    for path, value in flags.items():
        if value is None:
            continue
        *parents, last = path.split(".")
        node = loaded
        for key in parents:
            node = node.setdefault(key, {})
            if not isinstance(node, dict):
                raise Invalid(f"{path}: the body's {key} is not an object")
        node[last] = value
    return loaded


def count(value: str | None) -> int | str | None:
    """A device count flag: a number, or a word the API takes ("auto")."""
    if value is None:
        return None
    return int(value) if value.isdigit() else value


def answer(kind: str, request: dict[str, Any], options: dict[str, Any]) -> dict[str, Any]:
    """The API's JSON answer, from the service (--server) or the local engine; Invalid for invalid input."""
    if options.get("server"):
        return _ask_server(kind, request, options["server"], options.get("api_key"))
    return _ask_engine(kind, request, options.get("database_url"))


def _ask_engine(kind: str, request: dict[str, Any], database_url: str | None) -> dict[str, Any]:
    from .. import library

    catalog = None
    if database_url:
        from .connection import _check_database

        catalog = library.catalog_from_database(_check_database(database_url))
    call = {
        "training": library.estimate_training,
        "inference": library.estimate_inference,
        "training-plan": library.plan_training,
        "serving-plan": library.plan_serving,
    }[kind]
    try:
        return call(request, catalog, language=language()).to_dict()
    except library.InvalidRequest as error:
        raise Invalid(_one_line(error.errors)) from None


def _ask_server(kind: str, request: dict[str, Any], server: str, api_key: str | None) -> dict[str, Any]:
    headers = {"Content-Type": "application/json", "Accept-Language": language()}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    url = server.rstrip("/") + PATHS[kind]
    sent = urllib.request.Request(url, data=json.dumps(request).encode(), headers=headers, method="POST")
    try:
        with urllib.request.urlopen(sent, timeout=600) as response:  # noqa: S310 - the user's URL
            return json.load(response)
    except urllib.error.HTTPError as error:
        problem = _problem(error)
        if error.code == 422 and problem.get("errors"):
            raise Invalid(_one_line(problem["errors"])) from None
        raise click.ClickException(
            f"{url} answered {error.code}: {problem.get('detail', error.reason)}"
        ) from None
    except (urllib.error.URLError, OSError) as error:
        raise click.ClickException(f"cannot reach {url}: {getattr(error, 'reason', error)}") from None


def _problem(error: urllib.error.HTTPError) -> dict[str, Any]:
    try:
        problem = json.load(error)
    except (ValueError, OSError):
        return {}
    return problem if isinstance(problem, dict) else {}


def _one_line(errors: dict[str, Any]) -> str:
    from ..engine.i18n import _

    with speaking():
        prefix = _("invalid request")
    return f"{prefix}: " + "; ".join(
        f"{field}: {' '.join(map(str, messages)) if isinstance(messages, list) else messages}"
        for field, messages in sorted(errors.items())
    )


def speaking() -> contextlib.AbstractContextManager[Any]:
    """The language of $LANG made active for the engine's gettext shim: labels through the service's catalogs
    (`_()`), numbers and money by its locale (`num()`, `money()`)."""
    from .. import i18n
    from ..engine.i18n import using

    return using(i18n.language(language()))


def rows(pairs: list[tuple[str, str]]) -> list[str]:
    """Labelled lines, indented, each value after the longest label (labels in the user's language)."""
    width = max(len(label) for label, _value in pairs) + 1
    return [f"  {(label + ':').ljust(width)} {value}" for label, value in pairs]


def show(data: dict[str, Any], as_json: bool, summary: Callable[[dict[str, Any]], list[str]]) -> None:
    if as_json:
        click.echo(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        with speaking():
            lines = summary(data)
        for line in lines:
            click.echo(line)
