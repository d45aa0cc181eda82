"""The methods ``@dataclass`` writes, compiled once per Python build instead of at every start-up.

``dataclasses`` builds each class's ``__init__``, ``__repr__`` and ``__eq__`` as source text and compiles it
(``exec``) when the class is defined: for the 27 dataclasses a one-file ``check`` defines, a fifth of its
start-up (issue 27). While :func:`compiled_dataclasses` is in effect (the imports of the check command), that
``exec`` takes the code object compiled for the same text in an earlier run: the text is the key, the code is
what ``compile`` gives for it (the same file name ``<string>``, no inherited ``__future__`` flags, as
``exec`` of the text), so the classes are the same. The code objects live in one ``marshal`` file per
interpreter build (``cpython-311``...), beside the rule manifest; like ``__pycache__``, it is the user's own
cache, written atomically, and one that cannot be read or written only costs the compiles.
"""

import builtins
import contextlib
import marshal
import os
import sys

_FORMAT = 1


#: Entries kept across runs before those a run did not use are dropped (an edited editable install adds some).
_KEPT = 1000


def _cache_path() -> str:
    """In the rule manifest's folder (rules/_manifest.py's ``_manifest_dir``, not imported here: its imports
    define dataclasses of their own)."""
    folder = os.environ.get("TORCHPATCH_MANIFEST_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "torchpatch")
    return os.path.join(folder, f"dataclass-code-{sys.implementation.cache_tag}-{_FORMAT}.marshal")


@contextlib.contextmanager
def compiled_dataclasses():
    import dataclasses

    if "exec" in vars(dataclasses) or sys.implementation.cache_tag is None:
        yield  # already in effect (a nested use), or an interpreter without bytecode caches
        return
    path = _cache_path()
    try:
        with open(path, "rb") as stream:
            codes = marshal.load(stream)
        if type(codes) is not dict:
            codes = {}
    except (OSError, EOFError, ValueError, TypeError):
        codes = {}
    known = len(codes)
    used = set()
    run = builtins.exec

    def cached_exec(source, globals=None, locals=None):
        if type(source) is not str:
            return run(source, globals, locals)
        code = codes.get(source)
        if code is None:
            code = codes[source] = compile(source, "<string>", "exec", dont_inherit=True)
        used.add(source)
        return run(code, globals, locals)

    dataclasses.exec = cached_exec
    try:
        yield
    finally:
        del dataclasses.exec
        if len(codes) != known:
            _save(path, codes if len(codes) <= _KEPT else {source: codes[source] for source in used})


def _save(path: str, codes: dict) -> None:
    import tempfile

    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".dataclass-code-", suffix=".tmp")
        with os.fdopen(handle, "wb") as stream:
            marshal.dump(codes, stream)
        os.replace(temporary, path)
    except (OSError, ValueError):
        return
