"""Writing fixed files back: atomically, only when the result parses, keeping encoding, BOM and mode."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from torchpatch.engine.linter import FileResult
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


def write_fixed(result: FileResult) -> bool:
    """Write the fixed file; True when it changed. The original stays on any failure."""
    content = fixed_content(result)
    if content is None:
        return False
    source = result.source
    data = content.encode("utf-8") if source.is_notebook else encode_python(source, content)
    if source.is_notebook and source.notebook_raw is not None and result.path.read_bytes().startswith(b"\xef\xbb\xbf"):
        data = b"\xef\xbb\xbf" + data
    atomic_write(result.path, data)
    return True


def atomic_write(path: Path, data: bytes) -> None:
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
