"""Issue 27's start-up shortcuts give what the code they replace gave."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


@pytest.mark.parametrize("name", ["a", "./a/../b", "//x/y", "///x", "/a//b/./c/", ".", "..", "a/b/", "a b/ü.py"])
def test_the_cache_key_path_is_the_posix_form_of_the_absolute_path(name):
    from torchpatch.engine.cache import _posix_absolute

    assert _posix_absolute(Path(name)) == Path(os.path.abspath(Path(name))).as_posix()


@pytest.mark.parametrize("text", ["-r base.txt\n", "--requirement=base.txt\n", "  -c constraints.txt\n",
                                  "--constraint constraints.txt\n", "-rbase.txt\n", "torch>=2.4\nnumpy\n",
                                  "--index-url https://x\n", "-e .\n",
                                  "https://x/torch-1.8.1-cp37-cp37m.whl\n", "a\n\t-r more.txt\n"])
def test_a_requirements_file_includes_something_only_where_config_looks_for_includes(text):
    """config.torch_pins imports the parsers for a requirements file's includes only when _MAY_INCLUDE matches."""
    from torchpatch.dependency_files import requirement_includes
    from torchpatch.engine.config import _MAY_INCLUDE

    assert not requirement_includes(text) or _MAY_INCLUDE.search(text)
    assert bool(requirement_includes(text)) == any(line.lstrip().startswith(("-r", "--requirement", "-c", "--constraint"))
                                                   for line in text.splitlines())


def test_gunzip_gives_what_gzip_gives_and_raises_where_gzip_raises():
    import gzip
    import zlib

    from torchpatch._gunzip import gunzip
    from torchpatch.rules import _api_db, _warning_sites

    for path in (_api_db.DB_PATH, _api_db.STAR_PATH, _warning_sites.DATA_PATH):
        data = path.read_bytes()
        assert gunzip(data) == gzip.decompress(data)
    one = gzip.compress(b"first")
    for data in (one + gzip.compress(b" second"), one + b"\0\0\0\0", gzip.compress(b"")):
        assert gunzip(data) == gzip.decompress(data)
    for broken in (one[:-3], b"not gzip", one[:10] + zlib.compress(b"x")):
        with pytest.raises(Exception) as expected:
            gzip.decompress(broken)
        with pytest.raises(expected.type):
            gunzip(broken)
