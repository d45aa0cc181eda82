"""Writing fixed files back: atomically, only when the result parses, keeping encoding, BOM and mode."""

from __future__ import annotations

import os
from pathlib import Path

from torchpatch.engine.results import FileResult
from torchpatch.engine.source import encode_python, notebook_with_text


def fixed_content(result: FileResult) -> str | None:
    """The file's new content as text (None when nothing changed)."""
    source = result.source
    if source is None or result.fixed_text is None or result.fixed_text == result.original_text:
        return None
    if source.is_notebook:
        return notebook_with_text(source, result.fixed_text)
    return result.fixed_text


def original_content(result: FileResult) -> str:
    source = result.source
    if source is not None and source.is_notebook:
        return source.notebook_raw or ""
    return result.original_text or ""


class NotWritten(OSError):
    """The fixed file was not written; the message says why."""


def write_fixed(result: FileResult) -> bool:
    """Write the fixed file; True when it changed. The original stays on any failure.

    A symlink is written through to its target (and stays a link); a target reached twice (the
    link and the file both in the tree) is written once. A read-only file is left alone. On any
    failure the result carries the error (so the run cannot end in "Fixed"/exit 0) and no fix
    counts, and the error is raised for the caller to report.
    """
    content = fixed_content(result)
    if content is None:
        return False
    source = result.source
    data = content.encode("utf-8") if source.is_notebook else encode_python(source, content)
    try:
        target = Path(os.path.realpath(result.path))
        current = target.read_bytes()
        if source.is_notebook and current.startswith(b"\xef\xbb\xbf"):
            data = b"\xef\xbb\xbf" + data
        if current == data:
            return False  # already written through another path to the same file
        if not target.stat().st_mode & 0o222:
            raise NotWritten(f"read-only file (mode {target.stat().st_mode & 0o777:o}), left unchanged")
        atomic_write(target, data)
    except OSError as error:
        reason = str(error) if isinstance(error, NotWritten) else f"not written: {error.strerror or error}"
        result.error = reason if isinstance(error, NotWritten) else f"{reason}; the file was left unchanged"
        result.fixed_count = result.todo_count = 0
        result.fixed_codes = {}
        raise NotWritten(result.error) from None
    return True


def atomic_write(path: Path, data: bytes) -> None:
    import tempfile  # only when a file is written

    mode = path.stat().st_mode & 0o7777
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".torchpatch", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise
