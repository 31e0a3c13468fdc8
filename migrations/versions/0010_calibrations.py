"""calibrations: calibration profiles (a team's measured points and the factors fitted on them) and their revisions

Issue 31 §2. A profile's head row holds its current fit; every fit (create, refit) and the deletion is an immutable
revision row, kept after the profile is deleted, with the points, the fitted factors and their uncertainty, each
point's errors before and after, and the per-metric residuals after the fit (log(predicted / measured)).

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-04
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def _fit_columns() -> list[sa.Column]:
    return [
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("accelerator_id", sa.String(length=64), nullable=False),
        sa.Column("stack", sa.String(length=64), nullable=True),
        sa.Column("apply_to", sa.String(length=16), server_default="same", nullable=False),
        sa.Column("points", sa.JSON(), nullable=False),
        sa.Column("factors", sa.JSON(), nullable=False),
        sa.Column("point_errors", sa.JSON(), nullable=False),
        sa.Column("residuals", sa.JSON(), nullable=False),
        sa.Column("fit", sa.JSON(), nullable=False),
        sa.Column("notes", sa.JSON(), nullable=False),
    ]


def upgrade() -> None:
    op.create_table(
        "calibration_profiles",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        *_fit_columns(),
        sa.Column("revision", sa.Integer(), server_default="1", nullable=False),
        sa.Column("owner", sa.String(length=128), nullable=False),
        sa.Column("version", sa.Integer(), server_default="1", nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_calibration_profiles")),
        sa.UniqueConstraint("name", name=op.f("uq_calibration_profiles_name")),
        sqlite_autoincrement=True,
    )
    with op.batch_alter_table("calibration_profiles", schema=None) as batch_op:
        batch_op.create_index("ix_calibration_profiles_updated_at_id", ["updated_at", "id"], unique=False)

    op.create_table(
        "calibration_revisions",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("profile_id", sa.Integer(), nullable=False),
        sa.Column("revision", sa.Integer(), nullable=False),
        sa.Column("action", sa.String(length=16), nullable=False),
        *_fit_columns(),
        sa.Column("author", sa.String(length=128), nullable=False),
        sa.Column("request_id", sa.String(length=128), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_calibration_revisions")),
        sa.UniqueConstraint("profile_id", "revision", name=op.f("uq_calibration_revisions_profile_id")),
        sqlite_autoincrement=True,
    )
    with op.batch_alter_table("calibration_revisions", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_calibration_revisions_profile_id"), ["profile_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("calibration_revisions", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_calibration_revisions_profile_id"))
    op.drop_table("calibration_revisions")
    with op.batch_alter_table("calibration_profiles", schema=None) as batch_op:
        batch_op.drop_index("ix_calibration_profiles_updated_at_id")
    op.drop_table("calibration_profiles")
