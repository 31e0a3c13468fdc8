"""Database faults: 503 problems (never 500), recovery without restart, and all-or-nothing writes."""

from __future__ import annotations

import datetime as dt
import socket
import threading
import uuid
from decimal import Decimal

import pytest
from scalecost import create_app
from scalecost.store import audit, catalog_admin
from scalecost.store.models import Accelerator, AcceleratorPrice, AuditEvent
from scalecost.store.session import normalise_url
from sqlalchemy import create_engine, select, text

from tests.conftest import PG_SKIP_REASON, PG_URL, free_port

pg_only = pytest.mark.skipif(not PG_URL, reason=PG_SKIP_REASON)


class TcpForwarder:
    """A tiny TCP proxy, started later on a port that was closed: the database 'comes back'."""

    def __init__(self, listen_port: int, target_port: int):
        self.listen_port, self.target_port = listen_port, target_port
        self.server = socket.create_server(("127.0.0.1", listen_port))
        self.running = True
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while self.running:
            try:
                client, _ = self.server.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self.target_port))
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def close(self) -> None:
        self.running = False
        self.server.close()


def _assert_503_problem(response) -> None:
    assert response.status_code == 503, response.get_data(as_text=True)
    assert response.mimetype in ("application/problem+json", "application/json")
    assert "Traceback" not in response.get_data(as_text=True)


@pg_only
def test_unreachable_database_at_start_is_503_then_recovers_when_it_returns(app, migrated_url, db_backend):
    if db_backend != "postgresql":
        pytest.skip("PostgreSQL only")
    port = free_port()
    url = migrated_url.replace("127.0.0.1:5432", f"127.0.0.1:{port}")
    other = create_app({"DATABASE_URL": url, "TESTING": True})
    client = other.test_client()
    _assert_503_problem(client.get("/healthz"))
    response = client.get("/v1/accelerators")
    _assert_503_problem(response)
    assert response.mimetype == "application/problem+json" and response.headers["Retry-After"]
    forwarder = TcpForwarder(port, 5432)
    try:
        assert client.get("/healthz").status_code == 200
        assert client.get("/v1/accelerators/nvidia-t4").status_code == 200
    finally:
        forwarder.close()
        other.extensions["scalecost.db"].dispose()


@pg_only
def test_terminated_connections_are_replaced_without_restart(app, migrated_url, db_backend):
    if db_backend != "postgresql":
        pytest.skip("PostgreSQL only")
    name = f"scalecost-{uuid.uuid4().hex[:8]}"
    other = create_app({"DATABASE_URL": f"{migrated_url}&application_name={name}", "TESTING": True})
    client = other.test_client()
    assert client.get("/v1/accelerators/nvidia-t4").status_code == 200
    admin = create_engine(normalise_url(PG_URL), isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        killed = conn.execute(
            text("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = :n"),
            {"n": name},
        ).scalar()
    admin.dispose()
    assert killed >= 1
    codes = [client.get("/v1/accelerators/nvidia-t4").status_code for _ in range(3)]
    assert 500 not in codes and codes[-1] == 200, codes
    assert client.get("/healthz").status_code == 200
    other.extensions["scalecost.db"].dispose()


def test_failed_multi_row_write_leaves_nothing_behind(app, monkeypatch):
    """set_price closes a row and inserts another; an error at the audit insert rolls all of it back."""
    database = app.extensions["scalecost.db"]

    def boom(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(audit, "record", boom)
    with pytest.raises(RuntimeError):
        with database.transaction() as session:
            acc = session.get(Accelerator, "nvidia-l4")
            catalog_admin.set_price(
                session, acc, "aws", {"usd_per_hour": Decimal("0.5")}, actor="t", request_id=None
            )
    with database.transaction() as session:
        rows = session.scalars(
            select(AcceleratorPrice)
            .where(AcceleratorPrice.accelerator_id == "nvidia-l4", AcceleratorPrice.provider == "aws")
            .order_by(AcceleratorPrice.effective_from)
        ).all()
        # the seed's history of g6.xlarge, untouched: its rows of 2024, 2026-01-21 and 2026-09-22
        assert [(r.usd_per_hour, r.effective_to) for r in rows] == [
            (Decimal("0.804800"), dt.date(2026, 1, 21)),
            (Decimal("0.804800"), dt.date(2026, 9, 22)),
            (Decimal("0.804800"), None),
        ]
        assert session.get(Accelerator, "nvidia-l4").version == 1
        assert session.scalar(select(AuditEvent).limit(1)) is None


def test_failed_write_through_http_is_500_problem_and_rolls_back(app, admin_headers, monkeypatch):
    app.config["PROPAGATE_EXCEPTIONS"] = False
    client = app.test_client()
    etag = client.get("/v1/accelerators/nvidia-l4").headers["ETag"]
    real_record = audit.record
    calls = {"n": 0}

    def fail_on_audit(*args, **kwargs):
        calls["n"] += 1
        real_record(*args, **kwargs)
        raise RuntimeError("crash after the audit insert")

    monkeypatch.setattr(audit, "record", fail_on_audit)
    response = client.put(
        "/v1/accelerators/nvidia-l4/prices/aws",
        json={"usd_per_hour": 0.5},
        headers={**admin_headers, "If-Match": etag},
    )
    assert response.status_code == 500 and response.mimetype == "application/problem+json" and calls["n"] == 1
    monkeypatch.setattr(audit, "record", real_record)
    assert client.get("/v1/accelerators/nvidia-l4").headers["ETag"] == etag
    assert [
        p["usd_per_hour"] for p in client.get("/v1/accelerators/nvidia-l4/prices/history?provider=aws").json
    ] == ["0.804800"] * 3  # the seed's three rows of g6.xlarge, untouched
    assert client.get("/v1/audit-events?target=accelerator:nvidia-l4", headers=admin_headers).json == []
