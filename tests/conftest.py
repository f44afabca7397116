"""Shared fixtures (the helpers they use live in tests/helpers.py, which tests import)."""

from __future__ import annotations

import pytest

from tests.helpers import make_classification, make_regression


@pytest.fixture
def regression_data():
    return make_regression()


@pytest.fixture
def classification_data():
    return make_classification()
