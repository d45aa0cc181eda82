"""``gzip.decompress`` of the packaged data tables without importing :mod:`gzip` (and the ``struct`` and
``_compression`` it imports) on every check that reads one (issue 27: start-up of a one-file check)."""

from __future__ import annotations

import zlib


def gunzip(data: bytes) -> bytes:
    """What ``gzip.decompress(data)`` returns. zlib reads one gzip member; anything else (several members,
    padding after one, a damaged stream) is left to :mod:`gzip`, which answers or raises as it always did."""
    reader = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        out = reader.decompress(data)
    except zlib.error:
        out = None
    if out is not None and reader.eof and not reader.unused_data:
        return out
    import gzip

    return gzip.decompress(data)
