"""BLAKE2b without ``hashlib``: importing hashlib initialises OpenSSL's digests (a tenth of a one-file check's
start-up), and blake2b, the only digest the engine uses (rule manifest, result cache, scan reports), is
CPython's own ``_blake2`` module, the very function ``hashlib.blake2b`` is."""

try:
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - an interpreter built without it
    from hashlib import blake2b

__all__ = ["blake2b"]
