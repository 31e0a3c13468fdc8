"""The listing's pages: by offset (also read from the end), by keyset cursor, and capped totals — every way
of paging gives the same rows in the same order, on SQLite and PostgreSQL."""

from __future__ import annotations

import base64
import datetime as dt
import json

import pytest
from scalecost.store import scenario_listing
from scalecost.store import scenarios as store
from scalecost.store.models import Scenario
from sqlalchemy import select

START = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
ROWS = 45


@pytest.fixture
def database(app):
    database = app.extensions["scalecost.db"]
    rows = [
        {
            "name": f"Plan_{i:03d}" if i % 4 else f"plan%{i:03d}",
            "kind": "training" if i % 2 else "inference",
            "tags": ["t"] if i % 3 == 0 else [],
            "request": {},
            "estimate": {},
            "owner": "ann" if i % 5 else "bob",
            "updated_at": START + dt.timedelta(seconds=i // 3),  # ties: the id orders them
        }
        for i in range(ROWS)
    ]
    with database.transaction() as session:
        store.bulk_insert(session, rows)
    return database


def _expected(session, sort: str, **filters) -> list[int]:
    stmt = (
        select(Scenario.id)
        .where(Scenario.id.in_(scenario_listing.query(**filters)))
        .order_by(*scenario_listing.SORTS[sort])
    )
    return list(session.scalars(stmt))


FILTERS = [{}, {"tag": "t"}, {"name": "PLAN_"}, {"kind": "training", "owner": "ann"}]


@pytest.mark.parametrize("sort", list(scenario_listing.SORT_KEYS))
@pytest.mark.parametrize("filters", FILTERS, ids=lambda f: ",".join(f) or "none")
def test_offset_and_cursor_pages_give_every_row_once_in_order(database, sort, filters):
    with database.transaction() as session:
        expected = _expected(session, sort, **filters)
        assert expected
        for size in (1, 4, 7):
            by_offset = []
            for offset in range(0, ROWS + size, size):  # past the middle: read from the end
                page = scenario_listing.listing(session, **filters, sort=sort, offset=offset, limit=size)
                by_offset += [s.id for s in page.items]
                assert page.total == len(expected) and not page.total_is_lower_bound
                assert (page.next_cursor is not None) == (offset + size < len(expected))
            assert by_offset == expected

            by_cursor, after = [], None
            while True:
                page = scenario_listing.listing(session, **filters, sort=sort, limit=size, after=after)
                by_cursor += [s.id for s in page.items]
                if page.next_cursor is None:
                    break
                after = scenario_listing.decode_cursor(page.next_cursor)
                assert after.sort == sort
            assert by_cursor == expected


def test_a_cursor_from_an_offset_page_continues_it(database):
    with database.transaction() as session:
        expected = _expected(session, "-updated_at")
        middle = scenario_listing.listing(session, offset=20, limit=5)  # the second half is read from the end
        after = scenario_listing.listing(
            session, limit=5, after=scenario_listing.decode_cursor(middle.next_cursor)
        )
        assert [s.id for s in middle.items + after.items] == expected[20:30]


def test_name_filter_is_a_case_insensitive_substring_with_like_characters_escaped(database):
    with database.transaction() as session:
        names = lambda text: {s.name for s in scenario_listing.listing(session, name=text, limit=100).items}  # noqa: E731
        assert names("plan%") == {f"plan%{i:03d}" for i in range(0, ROWS, 4)}
        assert names("AN_0") == {f"Plan_{i:03d}" for i in range(ROWS) if i % 4 and i < 100}
        assert names("_") == {f"Plan_{i:03d}" for i in range(ROWS) if i % 4}
        assert names("nothing") == set()


def test_filtered_totals_stop_at_the_cap_and_say_so(database, monkeypatch):
    monkeypatch.setattr(scenario_listing, "COUNT_CAP", 10)
    with database.transaction() as session:
        matching = len(_expected(session, "-updated_at", owner="ann"))
        assert matching == 36
        first = scenario_listing.listing(session, owner="ann", limit=4)
        assert (first.total, first.total_is_lower_bound) == (10, True)
        # past the cap the count reaches one row beyond the page: the next page is always known
        deep = scenario_listing.listing(session, owner="ann", offset=16, limit=4)
        assert (deep.total, deep.total_is_lower_bound) == (21, True) and deep.next_cursor
        last = scenario_listing.listing(session, owner="ann", offset=32, limit=4)
        assert (last.total, last.total_is_lower_bound) == (36, False) and last.next_cursor is None
        assert len(last.items) == 4
        # unfiltered and kind-only totals come from the counters: always exact
        assert scenario_listing.listing(session, limit=4).total == ROWS
        kind = scenario_listing.listing(session, kind="inference", limit=4)
        assert (kind.total, kind.total_is_lower_bound) == (23, False)


def _token(data) -> str:
    raw = data if isinstance(data, bytes) else json.dumps(data).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


@pytest.mark.parametrize(
    "token",
    [
        "",
        "not base64 !",
        _token(b"\xff\xfe"),
        _token(b"[1, 2"),
        _token([1, 2]),
        _token({"v": 2, "s": "name", "k": ["a"]}),
        _token({"v": 1, "s": "cost", "k": ["a"]}),
        _token({"v": 1, "s": "name", "k": []}),
        _token({"v": 1, "s": "name", "k": [""]}),
        _token({"v": 1, "s": "name", "k": ["a\x00b"]}),
        _token({"v": 1, "s": "name", "k": ["\ud800"]}),
        _token({"v": 1, "s": "name", "k": ["x" * 201]}),
        _token({"v": 1, "s": "name", "k": [7]}),
        _token({"v": 1, "s": "-updated_at", "k": ["2026-01-01T00:00:00+00:00"]}),
        _token({"v": 1, "s": "-updated_at", "k": ["2026-01-01T00:00:00", 5]}),  # no offset
        _token({"v": 1, "s": "-updated_at", "k": ["yesterday", 5]}),
        _token({"v": 1, "s": "-updated_at", "k": ["2026-01-01T00:00:00+00:00", 0]}),
        _token({"v": 1, "s": "-updated_at", "k": ["2026-01-01T00:00:00+00:00", 2**31]}),
        _token({"v": 1, "s": "-updated_at", "k": ["2026-01-01T00:00:00+00:00", True]}),
        _token({"v": 1, "s": "-updated_at", "k": ["2026-01-01T00:00:00+00:00", "5"]}),
        _token({"v": 1, "s": "-updated_at", "k": [None, 5]}),
        _token({"v": 1, "s": "name", "k": [[[[[]]]]]}),
    ],
)
def test_decode_cursor_refuses_what_the_listing_did_not_hand_out(token):
    with pytest.raises(ValueError, match="Not a cursor"):
        scenario_listing.decode_cursor(token)


def test_cursor_round_trip_keeps_the_timestamp_to_the_microsecond():
    when = dt.datetime(2026, 5, 6, 7, 8, 9, 123456, tzinfo=dt.timezone(dt.timedelta(hours=2)))
    token = scenario_listing.encode_cursor("-updated_at", Scenario(id=42, name="x", updated_at=when))
    assert scenario_listing.decode_cursor(token) == scenario_listing.Cursor("-updated_at", (when, 42))
    assert scenario_listing.decode_cursor(token).key[0].utcoffset() == dt.timedelta(0)
    named = scenario_listing.encode_cursor("name", Scenario(id=3, name="ü-名前"))
    assert scenario_listing.decode_cursor(named) == scenario_listing.Cursor("name", ("ü-名前",))
