"""What `scalecost prices` prints: a price import's answer as text (files, summary, diff, saved scenarios moved)."""

from __future__ import annotations

import click


def money(value: str | None) -> str:
    return "-" if value is None else f"{float(value):,.6f}".rstrip("0").rstrip(".")


def offer(row: dict) -> str:
    where = " ".join(str(row[k]) for k in ("instance_type", "region") if row.get(k))
    return f"{row['accelerator_id']} {row['provider']} {where} {row['pricing_model']}".replace("  ", " ")


def print_import(answer: dict, verbose: bool) -> None:
    """The whole answer: files read, summary, the diff row by row, saved scenarios moved, what was written."""
    _print_files(answer)
    _print_diff(answer, verbose)
    _print_scenarios_moved(answer["scenarios"])
    _print_outcome(answer)


def _print_files(answer: dict) -> None:
    for f in answer["files"]:
        published = f" published {f['published']}" if f.get("published") else ""
        click.echo(
            f"{answer['source']}: {f['name']} ({f['bytes']:,} bytes, sha256 {f['sha256'][:12]}…{published})"
        )
    if answer.get("already_imported"):
        earlier = answer["already_imported"]
        click.echo(
            f"these files were imported before: import #{earlier['import_id']} at {earlier['at']} by {earlier['by']}"
        )


def _print_diff(answer: dict, verbose: bool) -> None:
    s = answer["summary"]
    click.echo(
        f"added {s['added']}, changed {s['changed']}, unchanged {s['unchanged']}, kept {s['kept']}, not in the "
        f"file {s['not_in_file']}, unmapped {s['unmapped']}, refused {s['refused']}, ignored {s['ignored']}"
    )
    for row in answer["added"]:
        click.echo(
            f"  + {offer(row)}: {money(row['usd_per_hour'])} USD/accelerator-h from {row['effective_from']}"
        )
    for row in answer["changed"]:
        pct = f"{row['percent_change']:+.3g} %" if row["percent_change"] is not None else "n/a"
        click.echo(
            f"  ~ {offer(row)}: {money(row['old_usd_per_hour'])} → {money(row['usd_per_hour'])} ({pct}) "
            f"from {row['effective_from']}"
        )
    for row in answer["unchanged"] if verbose else []:
        click.echo(f"  = {offer(row)}: {money(row['usd_per_hour'])}")
    for row in answer["kept"]:
        click.echo(f"  ! {offer(row)}: {money(row['usd_per_hour'])} not applied: {row['reason']}")
    for row in answer["not_in_file"]:
        click.echo(
            f"  ? not in the file (a candidate to close): {offer(row)} {money(row['usd_per_hour'])} "
            f"(price #{row['price_id']}, set by {row['set_by']})"
        )
    for row in answer["unmapped"]:
        click.echo(
            f"  unmapped instance type {row['instance_type']!r} ({row['offers']} offer(s), e.g. {row['where'][0]}): "
            "add it to the instance map (--map FILE)"
        )
    for row in answer["refused"]:
        click.echo(f"  refused {row['where']}: {row['reason']}")


def _print_scenarios_moved(moved: dict) -> None:
    click.echo(f"saved scenarios moved: {moved['moved']}")
    for p in moved["by_price"]:
        pct = f"{p['percent']:+.3g} %" if p["percent"] is not None else "price gone"
        who = f"cost.provider={p['provider']}" if p["provider"] else "catalog default"
        click.echo(
            f"  {p['accelerator_id']} ({who}): {money(p['usd_per_accelerator_hour_before'])} → "
            f"{money(p['usd_per_accelerator_hour_after'])} USD/accelerator-h ({pct}), {p['scenarios']} scenario(s)"
        )
    for e in moved["largest"][:10]:
        pct = f"{e['percent']:+.3g} %" if e["percent"] is not None else "n/a"
        click.echo(
            f"    #{e['id']} {e['name']!r} {e['basis']}: {money(e['usd_before'])} → {money(e['usd_after'])} ({pct})"
        )


def _print_outcome(answer: dict) -> None:
    s = answer["summary"]
    if answer["applied"]:
        click.echo(
            f"applied as price import #{answer['import_id']} ({s['added'] + s['changed']} changes, one audit event each)"
        )
    elif answer["dry_run"]:
        click.echo("dry run: nothing was written")
    else:
        click.echo("nothing to change: nothing was written")
