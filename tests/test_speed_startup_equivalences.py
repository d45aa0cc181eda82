"""Issue 27's start-up shortcuts give what the code they replace gave."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


@pytest.mark.parametrize("name", ["a", "./a/../b", "//x/y", "///x", "/a//b/./c/", ".", "..", "a/b/", "a b/ü.py"])
def test_the_cache_key_path_is_the_posix_form_of_the_absolute_path(name):
    from torchpatch.engine.cache import _posix_absolute

    assert _posix_absolute(Path(name)) == Path(os.path.abspath(Path(name))).as_posix()
