"""`scalecost keys`: API keys (create, list, revoke)."""

from __future__ import annotations

import click

from .connection import transaction
from .output import json_option, report


@click.group()
def keys() -> None:
    """API keys (roles: viewer, editor, admin)."""


@keys.command("create")
@click.option("--name", required=True)
@click.option("--role", required=True, type=click.Choice(["viewer", "editor", "admin"]))
@click.option("--url")
@json_option
def keys_create(name: str, role: str, url: str | None, as_json: bool) -> None:
    """Create a key; the key itself is printed alone on the last line (shown once; `key` with --json)."""
    from sqlalchemy.exc import IntegrityError

    from ..store import keys as key_store

    reserved = key_store.reserved_name_message(name)
    if reserved:
        raise click.BadParameter(reserved, param_hint="'--name'")
    try:
        with transaction(url) as session:
            key, secret = key_store.create(session, name, role, actor="cli")
            created = {"name": key.name, "role": key.role, "prefix": key.prefix, "key": secret}
    except IntegrityError:
        raise click.ClickException(f"a key named '{name}' exists") from None
    text = [f"created key '{name}' with role {role} (shown once, store it now):", secret]
    report(as_json, created, text)


@keys.command("list")
@click.option("--url")
@json_option
def keys_list(url: str | None, as_json: bool) -> None:
    """List keys: name, role, prefix, created, revoked (ISO 8601 times; revoked null while live)."""
    from ..store import keys as key_store

    with transaction(url) as session:
        listed = [
            {
                "name": key.name,
                "role": key.role,
                "prefix": key.prefix,
                "created_at": key.created_at.isoformat(),
                "revoked_at": key.revoked_at.isoformat() if key.revoked_at else None,
            }
            for key in key_store.list_keys(session)
        ]
    text = (
        f"{k['name']}\t{k['role']}\t{k['prefix']}…\t{k['created_at']}\trevoked:{k['revoked_at'] or '-'}"
        for k in listed
    )
    report(as_json, listed, text)


@keys.command("revoke")
@click.argument("name")
@click.option("--url")
@click.option(
    "--yes",
    is_flag=True,
    help="Also revoke the last live admin key (nobody can then manage keys over the API)",
)
@json_option
def keys_revoke(name: str, url: str | None, yes: bool, as_json: bool) -> None:
    """Revoke the key NAME (it stops working at once). The last live admin key needs --yes."""
    from ..store import keys as key_store

    try:
        with transaction(url) as session:
            key_store.revoke(session, name, actor="cli", last_admin=yes)
    except key_store.KeyError_:
        raise click.ClickException(f"no live key named '{name}'") from None
    except key_store.LastAdminKey:
        raise click.ClickException(
            f"'{name}' is the last live admin key; revoking it would leave nobody able to manage keys or the "
            "catalog over the API. Create another admin key first (scalecost keys create --role admin …), or "
            "add --yes."
        ) from None
    report(as_json, {"revoked": name}, f"revoked '{name}'")
