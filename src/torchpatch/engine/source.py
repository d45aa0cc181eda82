"""Reading Python files and notebooks into text with positions, keeping every byte we will write back."""

from __future__ import annotations

import bisect
import codecs
import io
import json
import os
from itertools import accumulate
import re
from pathlib import Path

from torchpatch._record import Record
from torchpatch._lazy_pattern import LazyPattern

_LINE_BREAK = re.compile(r"\r\n|\r|\n")

# IPython syntax that is not Python: line magics, shell escapes, help requests.
_MAGIC_LINE = LazyPattern(r"^\s*(?:[%!]|\?|[\w.]+\?\??\s*$)|^\s*[\w.,\s]+=\s*[%!]")
# IPython's automagic: a cell of one line whose first word names a line magic or a shell alias runs
# that magic without `%` (InteractiveShell.transform_cell prefilters single-line cells only; the
# posix aliases and the usual magics below are IPython 8's defaults). Used only when the line is not
# Python, so `time = 3` or `run(x)` stay code.
_AUTOMAGIC = LazyPattern(
    r"^\s*(?:cat|cd|clear|conda|cp|env|history|ldir|less|lf|lk|ll|load_ext|ls|lx|mamba|man|matplotlib|"
    r"micromamba|mkdir|more|mv|pip|popd|pushd|pwd|reload_ext|reset|rm|rmdir|run|set_env|time|timeit|"
    r"unload_ext|who|whos|xmode)(?:\s|$)"
)
# Cell magics whose body is not Python at all.
_FOREIGN_CELL_MAGIC = LazyPattern(
    r"^%%(?!time\b|timeit\b|capture\b|prun\b|debug\b|python\b|python3\b|markdown\b)\w+"
)


CELL_MARKER = "# torchpatch-cell:{index}"
MAGIC_MARKER = "# torchpatch-magic:{index}:{line}"
_CELL_MARKER_LINE = LazyPattern(r"^# torchpatch-cell:(\d+)$")
_MAGIC_MARKER_LINE = LazyPattern(r"^\s*(?:pass  )?# torchpatch-magic:(\d+):(\d+)$")


class UnreadableFile(Exception):
    """A file that cannot be decoded or is not a valid notebook; the message is the reason."""


#: The Locator that Locator.of made last (a one-element list: replaced whole, never mutated).
_LAST_LOCATOR: list = [None]


class Locator:
    """Converts between character offsets and (row, column): 1-based rows, 0-based character columns."""

    def __init__(self, text: str) -> None:
        self.text = text
        if "\r" in text:
            self.line_starts = [0] + [match.end() for match in _LINE_BREAK.finditer(text)]
        else:  # the same table, several times faster than the regular expression
            self.line_starts = [0, *accumulate(len(line) + 1 for line in text.split("\n")[:-1])]

    @classmethod
    def of(cls, text: str) -> "Locator":
        """The Locator of ``text``, shared by the steps that place one file's findings: the checker, the fixes,
        ``noqa`` and the report each built one of the same text (the last one made is kept, matched by identity)."""
        last = _LAST_LOCATOR[0]
        if last is not None and last.text is text:
            return last
        made = _LAST_LOCATOR[0] = cls(text)
        return made

    def offset(self, row: int, column: int) -> int:
        return self.line_starts[row - 1] + column

    def offset_from_ast(self, row: int, utf8_column: int) -> int:
        """ast columns count UTF-8 bytes of the line; ours count characters."""
        start = self.line_starts[row - 1]
        end = self.line_starts[row] if row < len(self.line_starts) else len(self.text)
        line = self.text[start:end]
        if line.isascii():
            return start + utf8_column
        return start + len(line.encode("utf-8")[:utf8_column].decode("utf-8", "replace"))

    def position(self, offset: int) -> tuple[int, int]:
        row = bisect.bisect_right(self.line_starts, offset)
        return row, offset - self.line_starts[row - 1]

    def line(self, row: int) -> str:
        start = self.line_starts[row - 1]
        end = self.line_starts[row] if row < len(self.line_starts) else len(self.text)
        return self.text[start:end].rstrip("\r\n")


class Cell(Record):
    """One code cell of a notebook, placed in the notebook's combined Python text."""

    _fields = ("index", "number", "first_row", "row_count", "original_lines")

    def __init__(self, index: int, number: int, first_row: int, row_count: int, original_lines: list[str]) -> None:
        self.index = index  # 0-based index in the notebook's cells
        self.number = number  # 1-based among all cells, as Jupyter shows it
        self.first_row = first_row  # 1-based row of the cell's first line in the combined text
        self.row_count = row_count
        self.original_lines = original_lines  # the cell's source lines as stored (magics included)


class Source(Record):
    """A file's text as torchpatch sees it, and what is needed to write it back unchanged."""

    _fields = ("path", "text", "encoding", "bom", "cells", "notebook", "notebook_raw")

    def __init__(self, path: Path, text: str, encoding: str = "utf-8", bom: bool = False,
                 cells: list[Cell] | None = None, notebook: dict | None = None, notebook_raw: str | None = None) -> None:
        self.path = path
        self.text = text  # Python text (for notebooks: code cells joined, magics blanked)
        self.encoding = encoding
        self.bom = bom
        self.cells = [] if cells is None else cells
        self.notebook = notebook
        self.notebook_raw = notebook_raw

    @property
    def is_notebook(self) -> bool:
        return self.notebook is not None

    def cell_of_row(self, row: int) -> tuple[Cell, int] | None:
        """The notebook cell holding a row of the combined text, and the row inside that cell."""
        for cell in self.cells:
            if cell.first_row <= row < cell.first_row + max(cell.row_count, 1):
                return cell, row - cell.first_row + 1
        return None

    def place_rows(self, row: int, end_row: int) -> tuple[int | None, int, int]:
        """(cell number, row, end row) as the user sees them: rows inside the cell for notebooks."""
        placed = self.cell_of_row(row) if self.is_notebook else None
        if placed is None:
            return None, row, end_row
        cell, cell_row = placed
        return cell.number, cell_row, end_row - row + cell_row


_READ_FLAGS = os.O_RDONLY | getattr(os, "O_BINARY", 0)


def read_bytes(path: Path) -> bytes:
    """``path.read_bytes()`` in about two thirds of its CPU (measured on 3,887 files: 58 -> 36 ms): no file
    object, no buffered reader, reads sized by one fstat. Raises OSError as it does."""
    descriptor = os.open(path, _READ_FLAGS)
    try:
        size = os.fstat(descriptor).st_size
        parts = []
        while part := os.read(descriptor, max(size + 1, 1 << 16)):
            parts.append(part)
    finally:
        os.close(descriptor)
    return parts[0] if len(parts) == 1 else b"".join(parts)


def read_source(path: Path, data: bytes | None = None) -> Source:
    """The file's Source; ``data`` is its bytes when the caller already has them (stdin, the cache)."""
    if data is None:
        data = read_bytes(path)
    if path.suffix == ".ipynb":
        return _read_notebook(path, data)
    text, encoding, bom = decode_python(data)
    return Source(path=path, text=text, encoding=encoding, bom=bom)


def _utf8_encoding(data: bytes, bom: bool) -> str | None:
    """What ``tokenize.detect_encoding`` answers for a UTF-8 file (no PEP 263 cookie, or one naming UTF-8, on
    the lines it reads), without importing tokenize; None for any other file (ask detect_encoding)."""
    default = "utf-8-sig" if bom else "utf-8"
    stream = io.BytesIO(data)
    first = stream.readline()
    if bom:
        first = first[len(codecs.BOM_UTF8):]
    if not first:
        return default
    found = _names_utf8(first)
    if found is None:
        return None
    stripped = first.lstrip(b" \t\f")
    if found or stripped and stripped[:1] not in b"#\r\n":
        return default  # the cookie, or code on the first line: detect_encoding reads no further
    second = stream.readline()
    if not second:
        return default
    return None if _names_utf8(second) is None else default


#: PEP 263's cookie, as tokenize matches it.
_COOKIE = LazyPattern(r"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)", re.ASCII)


def _names_utf8(line: bytes) -> bool | None:
    """For one line detect_encoding reads: True when its cookie names UTF-8, False when it has none, None when
    it names another encoding or is not UTF-8 (tokenize judges those)."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if "coding" not in text:
        return False
    match = _COOKIE.match(text)
    if match is None:
        return False
    name = match.group(1)[:12].lower().replace("_", "-")  # tokenize's _get_normal_name
    return True if name == "utf-8" or name.startswith("utf-8-") else None


def decode_python(data: bytes) -> tuple[str, str, bool]:
    """Decode Python source the way the interpreter does (BOM, PEP 263 cookie), keeping line endings."""
    if b"\x00" in data[:8192]:
        raise UnreadableFile("binary file (contains NUL bytes)")
    bom = data.startswith(codecs.BOM_UTF8)
    encoding = _utf8_encoding(data, bom)
    if encoding is None:
        import tokenize  # a PEP 263 cookie (or a first line that is not UTF-8): the interpreter's reading of it

        try:
            encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        except SyntaxError as error:
            raise UnreadableFile(f"bad encoding declaration: {error}") from None
    body = data[len(codecs.BOM_UTF8):] if bom else data
    codec = "utf-8" if encoding == "utf-8-sig" else encoding
    try:
        text = body.decode(codec)
    except (UnicodeDecodeError, LookupError) as error:
        raise UnreadableFile(f"not valid {codec}: {error}") from None
    return text, codec, bom


def encode_python(source: Source, text: str) -> bytes:
    data = text.encode(source.encoding)
    return codecs.BOM_UTF8 + data if source.bom else data


_PYTHON_NAMES = ("python", "python3", "ipython")


def _read_notebook(path: Path, data: bytes) -> Source:
    try:
        raw = data.decode("utf-8-sig")
        notebook = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise UnreadableFile(f"invalid notebook JSON: {error}") from None
    if not isinstance(notebook, dict) or not isinstance(notebook.get("cells"), list):
        raise UnreadableFile("invalid notebook: no 'cells' list")
    metadata = notebook.get("metadata") or {}
    language = (metadata.get("language_info") or {}).get("name", "python")
    # Bento/VS Code write language_info "plaintext" beside a Python kernel (torchrec's tutorials): the
    # kernel's language decides then.
    kernel = (metadata.get("kernelspec") or {}).get("language")
    if isinstance(language, str) and language.lower() not in _PYTHON_NAMES and not (
            isinstance(kernel, str) and kernel.lower() in _PYTHON_NAMES):
        raise UnreadableFile(f"notebook language is {language!r}, not Python")
    parts: list[str] = []
    cells: list[Cell] = []
    row = 1
    for index, cell in enumerate(notebook["cells"]):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        lines = _cell_lines(cell.get("source", ""))
        python_lines = python_lines_of_cell(lines, index)
        parts.append(CELL_MARKER.format(index=index))
        cells.append(Cell(index=index, number=index + 1, first_row=row + 1, row_count=len(python_lines), original_lines=lines))
        parts.extend(python_lines)
        row += 1 + len(python_lines)
    return Source(path=path, text="\n".join(parts) + ("\n" if parts else ""), cells=cells, notebook=notebook, notebook_raw=raw)


def _cell_lines(source: object) -> list[str]:
    if isinstance(source, list):
        text = "".join(str(part) for part in source)
    else:
        text = str(source)
    return text.split("\n") if text else []


def python_lines_of_cell(lines: list[str], index: int) -> list[str]:
    """The cell's lines with IPython-only lines replaced by comments that say where they came from.

    A comment keeps rows aligned, is valid at any indentation, and lets a fixed notebook get its
    magics back unchanged.
    """
    if lines and _FOREIGN_CELL_MAGIC.match(lines[0]):
        return [MAGIC_MARKER.format(index=index, line=number) for number in range(len(lines))]
    written = [n for n, line in enumerate(lines) if line.strip()]
    if len(written) == 1 and _AUTOMAGIC.match(lines[written[0]]) and not _parses(lines[written[0]].strip()):
        return [MAGIC_MARKER.format(index=index, line=n) if n == written[0] else line for n, line in enumerate(lines)]
    magic: dict[int, str] = {}  # line number -> the indentation of the magic it belongs to
    continued: str | None = None
    for number, line in enumerate(lines):
        if continued is not None:
            magic[number] = continued  # ``!pip install a \`` goes on here
        elif _MAGIC_LINE.match(line):
            magic[number] = line[:len(line) - len(line.lstrip())]
        else:
            continue
        continued = magic[number] if line.rstrip().endswith("\\") else None
    if not magic:
        return list(lines)
    commented = [MAGIC_MARKER.format(index=index, line=n) if n in magic else line for n, line in enumerate(lines)]
    if _parses("\n".join(commented)):
        return commented
    # A magic inside a block (``if x:`` / ``    !pip install y``): a comment leaves the block empty;
    # ``pass`` at the magic's own indentation keeps it a statement.
    with_pass = [f"{magic[n]}pass  {MAGIC_MARKER.format(index=index, line=n)}" if n in magic else line
                 for n, line in enumerate(lines)]
    return with_pass if _parses("\n".join(with_pass)) else commented


def _parses(text: str) -> bool:
    import ast
    import warnings

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def notebook_with_text(source: Source, text: str) -> str | None:
    """The notebook JSON after its combined Python text became ``text``; None when no cell changed."""
    assert source.notebook is not None and source.notebook_raw is not None
    by_index: dict[int, list[str]] = {}
    current: list[str] | None = None
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the newline that ends the combined text, not a line of the last cell
    for line in lines:
        marker = _CELL_MARKER_LINE.match(line)
        if marker:
            current = by_index.setdefault(int(marker.group(1)), [])
            continue
        if current is not None:
            current.append(line)
    changed = False
    cells = source.notebook["cells"]
    replaced: dict[int, object] = {}
    for cell in source.cells:
        new_lines = by_index.get(cell.index)
        if new_lines is None:
            return None  # the structure is gone: refuse rather than guess
        restored = []
        for line in new_lines:
            magic = _MAGIC_MARKER_LINE.match(line)
            if magic and int(magic.group(1)) == cell.index:
                restored.append(cell.original_lines[int(magic.group(2))])
            else:
                restored.append(line)
        if restored == cell.original_lines:
            continue
        changed = True
        new_text = "\n".join(restored)
        original = cells[cell.index].get("source", "")
        if isinstance(original, list):
            cells[cell.index]["source"] = [line + "\n" for line in restored[:-1]] + ([restored[-1]] if restored and restored[-1] else [])
        else:
            cells[cell.index]["source"] = new_text
        replaced[cell.index] = cells[cell.index]["source"]
    if not changed:
        return None
    spliced = _splice_sources(source.notebook_raw, replaced)
    return spliced if spliced is not None else dump_notebook(source.notebook, source.notebook_raw)


# -- writing back only the edited cells' sources --------------------------------------------------
# A notebook is rewritten by replacing the JSON text of the changed cells' "source" values in the
# raw file: every other byte (line endings, escapes such as \u001b, key order, indentation) stays.

_WHITESPACE = LazyPattern(r"[ \t\r\n]*")
_STRING = LazyPattern(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_SCALAR = LazyPattern(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null")


class _Malformed(Exception):
    pass


def _skip(raw: str, at: int) -> int:
    return _WHITESPACE.match(raw, at).end()


def _value_end(raw: str, at: int, on_cell_source=None, path: tuple = ()) -> int:
    """The end of the JSON value starting at ``at``; reports each ``cells[i].source`` span."""
    char = raw[at:at + 1]
    if char == '"':
        match = _STRING.match(raw, at)
        if not match:
            raise _Malformed
        return match.end()
    if char == "{":
        at = _skip(raw, at + 1)
        if raw[at:at + 1] == "}":
            return at + 1
        while True:
            key_match = _STRING.match(raw, at)
            if not key_match:
                raise _Malformed
            key = json.loads(key_match.group(0))
            at = _skip(raw, key_match.end())
            if raw[at:at + 1] != ":":
                raise _Malformed
            start = _skip(raw, at + 1)
            end = _value_end(raw, start, on_cell_source, (*path, key))
            if on_cell_source and len(path) == 2 and path[0] == "cells" and key == "source":
                on_cell_source(path[1], start, end)
            at = _skip(raw, end)
            if raw[at:at + 1] == ",":
                at = _skip(raw, at + 1)
                continue
            if raw[at:at + 1] == "}":
                return at + 1
            raise _Malformed
    if char == "[":
        at = _skip(raw, at + 1)
        if raw[at:at + 1] == "]":
            return at + 1
        index = 0
        while True:
            end = _value_end(raw, at, on_cell_source, (*path, index) if path == ("cells",) else (*path, "[]"))
            index += 1
            at = _skip(raw, end)
            if raw[at:at + 1] == ",":
                at = _skip(raw, at + 1)
                continue
            if raw[at:at + 1] == "]":
                return at + 1
            raise _Malformed
    match = _SCALAR.match(raw, at)
    if not match:
        raise _Malformed
    return match.end()


def _source_spans(raw: str) -> dict[int, tuple[int, int]]:
    spans: dict[int, tuple[int, int]] = {}
    _value_end(raw, _skip(raw, 0), lambda index, start, end: spans.__setitem__(index, (start, end)))
    return spans


def _encode(value: str, like: str) -> str:
    """JSON for a string, escaped the way the original value text is (ASCII with \\u escapes or not)."""
    ascii_only = like.isascii() and "\\u" in like
    return json.dumps(value, ensure_ascii=ascii_only)


def _list_layout(original: str) -> tuple[str, str, str, list[str]] | None:
    """(after "[", between items, before "]", the items' raw texts) of a JSON list of strings."""
    items = list(_STRING.finditer(original))
    if not items:
        return None
    first, last = items[0], items[-1]
    opening = original[1:first.start()]
    closing = original[last.end():-1]
    between = original[items[0].end():items[1].start()] if len(items) > 1 else "," + opening
    return opening, between, closing, [m.group(0) for m in items]


def _splice_sources(raw: str, replaced: dict[int, object]) -> str | None:
    try:
        spans = _source_spans(raw)
    except (_Malformed, RecursionError, ValueError):
        return None
    if not set(replaced) <= set(spans):
        return None
    parts: list[str] = []
    position = 0
    for index in sorted(replaced, key=lambda i: spans[i][0]):
        start, end = spans[index]
        original = raw[start:end]
        value = replaced[index]
        if isinstance(value, str):
            text = _encode(value, original)
        else:
            layout = _list_layout(original) if original.startswith("[") else None
            if layout is None:
                return None
            opening, between, closing, old_items = layout
            known = {json.loads(item): item for item in old_items}
            items = [known.get(line) or _encode(line, original) for line in value]
            text = "[" + opening + between.join(items) + closing + "]" if items else "[]"
        parts.append(raw[position:start])
        parts.append(text)
        position = end
    parts.append(raw[position:])
    return "".join(parts)


def dump_notebook(notebook: dict, raw: str) -> str:
    """JSON in the notebook's own layout: its indent, its key order, its trailing newline."""
    indent_match = re.search(r"^( +|\t+)\S", raw, re.MULTILINE)
    indent: int | str | None = None
    if indent_match:
        token = indent_match.group(1)
        indent = token if token.startswith("\t") else len(token)
    ascii_only = "\\u" in raw and raw.isascii()
    text = json.dumps(notebook, indent=indent, ensure_ascii=ascii_only)
    if raw.endswith("\n"):
        text += "\n"
    return text
