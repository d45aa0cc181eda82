"""Inputs beyond local paths: ``--files-from`` lists and fsspec URLs (``s3://``, ``gs://``, ``hf://``,
``file://``, ``memory://``...; the protocol packages are the user's to install).

A checkpoint behind a URL is read by byte ranges (``fs.cat_file(path, start, end)``): the auditor asks
only for the zip central directory, the local headers and the pickle records, never tensor data, so a
multi-gigabyte file costs kilobytes. ``RangeReader`` counts every byte it fetched.
"""

from __future__ import annotations

import io
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from torchpatch import install_hint

_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
#: The smallest ranged read: a zip local header (30 bytes + its name) and a small pickle come in one
#: request; a large record is fetched at its own size.
MIN_FETCH = 1024


class InputError(Exception):
    pass


def is_url(name: str) -> bool:
    return bool(_URL.match(name))


def read_files_from(source: str) -> list[str]:
    """One path or URL per line (``-``: stdin); blank lines and ``#`` comments skipped."""
    try:
        if source == "-":
            text = sys.stdin.read()
        else:
            text = Path(source).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise InputError(f"--files-from {source}: {getattr(error, 'strerror', None) or error}") from None
    names = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            names.append(line)
    return names


def filesystem(url: str):
    try:
        import fsspec
    except ImportError:
        raise InputError(f"{url}: URLs need fsspec: {install_hint('ray')} (or fsspec)") from None
    try:
        return fsspec.core.url_to_fs(url)
    except (ImportError, ValueError) as error:
        # An unknown protocol, or its package (s3fs, gcsfs, huggingface_hub) not installed.
        raise InputError(f"{url}: {str(error).splitlines()[0]}") from None


@dataclass(frozen=True)
class RemoteFile:
    url: str
    size: int | None
    mtime: float | None


def _mtime(info: dict) -> float | None:
    for key in ("mtime", "LastModified", "last_modified", "updated", "created"):
        value = info.get(key)
        if value is None:
            continue
        if isinstance(value, (int, float)):
            return float(value)
        timestamp = getattr(value, "timestamp", None)
        if timestamp is not None:
            return float(timestamp())
        try:
            from datetime import datetime

            return datetime.fromisoformat(str(value).replace("Z", "+00:00")).timestamp()
        except ValueError:
            continue
    return None


def expand_url(url: str) -> tuple[list[RemoteFile], bool]:
    """(the files a URL names, whether it was a folder/prefix); a missing object is an InputError."""
    fs, root = filesystem(url)
    try:
        if fs.isdir(root):
            found = fs.find(root, detail=True)
            files = [RemoteFile(fs.unstrip_protocol(name), info.get("size"), _mtime(info))
                     for name, info in sorted(found.items())
                     if info.get("type") != "directory" and not any(part.startswith(".") for part in name[len(root):].split("/"))]
            return files, True
        info = fs.info(root)
    except FileNotFoundError:
        raise InputError(f"no such file or folder: {url}") from None
    except OSError as error:
        raise InputError(f"{url}: {error.strerror or error}") from None
    return [RemoteFile(url, info.get("size"), _mtime(info))], False


class RangeReader(io.RawIOBase):
    """A seekable read-only stream over one object, fetched by byte ranges as the reader asks."""

    def __init__(self, fs, path: str, size: int) -> None:
        self.fs = fs
        self.path = path
        self.size = size
        self.position = 0
        self.buffer = b""
        self.buffer_start = 0
        self.bytes_fetched = 0
        self.requests = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.position

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        if whence == os.SEEK_SET:
            self.position = offset
        elif whence == os.SEEK_CUR:
            self.position += offset
        else:
            self.position = self.size + offset
        if self.position < 0:
            raise ValueError("negative seek position")
        return self.position

    def read(self, count: int = -1) -> bytes:
        if count is None or count < 0:
            count = max(self.size - self.position, 0)
        end = min(self.position + count, self.size)
        if end <= self.position:
            return b""
        buffer_end = self.buffer_start + len(self.buffer)
        if not (self.buffer_start <= self.position and end <= buffer_end):
            fetch_end = min(max(end, self.position + MIN_FETCH), self.size)
            self.buffer = self.fs.cat_file(self.path, start=self.position, end=fetch_end)
            self.buffer_start = self.position
            self.bytes_fetched += len(self.buffer)
            self.requests += 1
        data = self.buffer[self.position - self.buffer_start:end - self.buffer_start]
        self.position += len(data)
        return data

    def readinto(self, target) -> int:
        data = self.read(len(target))
        target[:len(data)] = data
        return len(data)


class CountingReader(io.RawIOBase):
    """A local file, counting the bytes the auditor read (the same figure as RangeReader's)."""

    def __init__(self, stream) -> None:
        self.stream = stream
        self.bytes_fetched = 0
        self.requests = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.stream.tell()

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        return self.stream.seek(offset, whence)

    def read(self, count: int = -1) -> bytes:
        data = self.stream.read(count)
        self.bytes_fetched += len(data)
        self.requests += 1
        return data

    def readinto(self, target) -> int:
        data = self.read(len(target))
        target[:len(data)] = data
        return len(data)
