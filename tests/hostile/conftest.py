"""Fixtures of the hostile-input tests."""

import pytest


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    """Valid inputs of every kind (tests/fuzz/corpus.py), built once per module."""
    from tests.fuzz.corpus import build

    return build(tmp_path_factory.mktemp("valid"))
