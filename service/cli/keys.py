"""`scalecost keys`: API keys (create, list, revoke)."""

from __future__ import annotations

import click

from .connection import transaction


@click.group()
def keys() -> None:
    """API keys (roles: viewer, editor, admin)."""


@keys.command("create")
@click.option("--name", required=True)
@click.option("--role", required=True, type=click.Choice(["viewer", "editor", "admin"]))
@click.option("--url")
def keys_create(name: str, role: str, url: str | None) -> None:
    """Create a key; the key itself is printed alone on the last line (shown once)."""
    from sqlalchemy.exc import IntegrityError

    from ..store import keys as key_store

    reserved = key_store.reserved_name_message(name)
    if reserved:
        raise click.BadParameter(reserved, param_hint="'--name'")
    try:
        with transaction(url) as session:
            key, secret = key_store.create(session, name, role, actor="cli")
            click.echo(f"created key '{key.name}' with role {key.role} (shown once, store it now):")
    except IntegrityError:
        raise click.ClickException(f"a key named '{name}' exists") from None
    click.echo(secret)


@keys.command("list")
@click.option("--url")
def keys_list(url: str | None) -> None:
    """List keys: name, role, prefix, created, revoked."""
    from ..store import keys as key_store

    with transaction(url) as session:
        for key in key_store.list_keys(session):
            revoked = key.revoked_at.isoformat() if key.revoked_at else "-"
            click.echo(
                f"{key.name}\t{key.role}\t{key.prefix}…\t{key.created_at.isoformat()}\trevoked:{revoked}"
            )


@keys.command("revoke")
@click.argument("name")
@click.option("--url")
@click.option(
    "--yes",
    is_flag=True,
    help="Also revoke the last live admin key (nobody can then manage keys over the API)",
)
def keys_revoke(name: str, url: str | None, yes: bool) -> None:
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
    click.echo(f"revoked '{name}'")
