"""Catalog fixture: the shipped seed catalog as the engine sees it (see reference_catalog.py)."""

from __future__ import annotations

import pytest
from scalecost.engine.hardware import Catalog

from .reference_catalog import load_catalog

__all__ = ["load_catalog"]


@pytest.fixture(scope="session")
def catalog() -> Catalog:
    return load_catalog()
