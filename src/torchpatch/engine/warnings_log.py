"""Reading saved warnings: a pytest output (its warnings summary, the torchpatch plugin's summary) or a Python log."""

from __future__ import annotations

import re
from pathlib import Path

from torchpatch.engine.runtime import TORCH_PACKAGES, WarningHit

#: The title of the plugin's terminal summary section (written by frontends/pytest_plugin.py).
PLUGIN_SECTION = "torchpatch: PyTorch warnings"

# A CI runner's timestamp in front of each line (GitHub Actions: ``2026-01-02T03:04:05.1234567Z ``).
_TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z? ")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_SECTION = re.compile(r"^={3,} (?P<title>.+?) ={3,}$")
# ``path:line: Category: message`` as warnings.formatwarning writes it (pytest indents it by two spaces).
_WARNING_LINE = re.compile(r"^(?P<indent> {0,2})(?P<path>\S[^:]*?|[A-Za-z]:\\[^:]*?):(?P<row>\d+): "
                           r"(?P<category>(?:[A-Za-z_][\w]*\.)*[A-Za-z_]\w*(?:Warning|Deprecation\w*)): (?P<message>.*)$")
# The plugin's rows: ``path:line: CODE [N hits, M tests] Category: message``.
_PLUGIN_ROW = re.compile(r"^(?P<path>\S.*?):(?P<row>\d+): (?P<code>TP\d{3}) \[(?P<count>\d+) hits?, (?P<tests>\d+) tests?\] "
                         r"(?P<category>[\w.]+): (?P<message>.*)$")
_PLUGIN_TEST = re.compile(r"^ {4}test: (?P<test>.+)$")
_PYTEST_MARKERS = re.compile(r"^={3,} (test session starts|warnings summary|short test summary info|FAILURES|ERRORS"
                             r"|.*\b(passed|failed|error|errors|skipped|deselected|no tests ran)\b.*) ={3,}$")
_TORCH_FILE = re.compile(r"(^|[/\\])(site|dist)-packages[/\\](" + "|".join(TORCH_PACKAGES) + r")[/\\]")
_CPP_FILE = re.compile(r"\.(cpp|cc|cxx|h|hpp|cu)$")
_OTHER_PACKAGE = re.compile(r"(^|[/\\])(site|dist)-packages[/\\]")
_FOREIGN_CATEGORY = re.compile(r"^(Pytest\w*|_pytest\..*|pluggy\..*)Warning$|^Pytest")
# Words torch's messages use; a warning at a user's line that names none of them is not torch's.
_TORCH_VOCABULARY = re.compile(
    r"torch|tensor|cuda|cudnn|autocast|autograd|\bgrad|dtype|device|storage|\bdim\b|dimension|\bnn\.|\bjit\b|onnx|"
    r"dynamo|inductor|\bfx\b|quantiz|checkpoint|reentrant|optimizer|scheduler|dataloader|\bmps\b|xla|triton|"
    r"attention|sdpa|size_average|reduction|softmax|dropout|weights_only|pickle|TypedStorage|GradScaler|"
    r"torchvision|torchaudio|torchao|\bmask\b|uint8|broadcast|deterministic|\bamp\b",
    re.IGNORECASE)


class LogError(Exception):
    """The log is not a pytest output or a Python warnings log."""


def read_log(path: Path) -> list[WarningHit]:
    try:
        data = path.read_bytes()
    except OSError as error:
        raise LogError(f"{path}: {error.strerror or error}") from None
    if b"\0" in data[:8192]:
        raise LogError(f"{path}: not a pytest output or a Python warnings log (binary data)")
    return parse_log(data.decode("utf-8", errors="replace"), str(path))


def parse_log(text: str, name: str = "log") -> list[WarningHit]:
    """Every torch warning the log names. The plugin's summary, when the log has one, is the whole story (it
    names the user's lines); otherwise the pytest warnings summary and plain ``file:line: Category: message``
    lines are read, and a warning whose location is a torch file is marked ``inside_torch``."""
    lines = [_ANSI.sub("", _TIMESTAMP.sub("", line.rstrip("\r"))) for line in text.split("\n")]
    sections = _sections(lines)
    plugin = [body for title, body in sections if title == PLUGIN_SECTION]
    if plugin:
        return [hit for body in plugin for hit in _plugin_rows(body)]
    hits: list[WarningHit] = []
    for title, body in sections:
        if title.startswith("warnings summary"):
            hits.extend(_pytest_summary(body))
    if not any(title.startswith("warnings summary") for title, _ in sections):
        hits.extend(_plain_lines(lines))
    is_pytest = any(_PYTEST_MARKERS.match(line) for line in lines)
    if not hits and not is_pytest and not any(_WARNING_LINE.match(line) for line in lines):
        raise LogError(f"{name}: not a pytest output or a Python warnings log (no warnings summary, no "
                       "`file:line: Category: message` line)")
    return hits


def _sections(lines: list[str]) -> list[tuple[str, list[str]]]:
    sections: list[tuple[str, list[str]]] = []
    current: list[str] | None = None
    for line in lines:
        match = _SECTION.match(line)
        if match:
            current = []
            sections.append((match.group("title"), current))
        elif current is not None:
            current.append(line)
    return sections


def _plugin_rows(body: list[str]) -> list[WarningHit]:
    hits: list[WarningHit] = []
    for line in body:
        match = _PLUGIN_ROW.match(line)
        if match:
            hits.append(WarningHit(match["path"], int(match["row"]), match["category"], match["message"],
                                   count=int(match["count"]), code=match["code"]))
            continue
        test = _PLUGIN_TEST.match(line)
        if test and hits:
            hits[-1].tests.append(test["test"])
    return hits


def _pytest_summary(body: list[str]) -> list[WarningHit]:
    """pytest's layout: the tests' node ids (or ``file: N warnings``), then the indented warning."""
    hits: list[WarningHit] = []
    tests: list[str] = []
    index = 0
    while index < len(body):
        line = body[index]
        match = _WARNING_LINE.match(line)
        if match:
            message = [match["message"]]
            index += 1
            while index < len(body) and body[index].startswith("  ") and not _WARNING_LINE.match(body[index]):
                message.append(body[index])
                index += 1
            if len(message) > 1 and message[-1].startswith("    "):
                message.pop()  # the source line warnings.formatwarning adds
            text = "\n".join([message[0], *(part[2:] for part in message[1:])])
            hit = _hit(match["path"], int(match["row"]), match["category"], text, tests)
            if hit is not None:
                hits.append(hit)
            tests = []
            continue
        if line.startswith("-- Docs:"):
            break
        if line and not line.startswith(" "):
            tests.append(line)
        index += 1
    return hits


def _plain_lines(lines: list[str]) -> list[WarningHit]:
    hits = []
    for line in lines:
        match = _WARNING_LINE.match(line)
        if match and not match["indent"]:
            hit = _hit(match["path"], int(match["row"]), match["category"], match["message"], [])
            if hit is not None:
                hits.append(hit)
    return hits


def _test_count(entries: list[str]) -> tuple[list[str], int]:
    tests, count = [], 0
    for entry in entries:
        collapsed = re.match(r"^(?P<file>.+?): (?P<n>\d+) warnings?$", entry)
        if collapsed:
            tests.append(collapsed["file"])
            count += int(collapsed["n"])
        else:
            tests.append(entry)
            count += 1
    return tests, max(count, 1)


def _hit(path: str, row: int, category: str, message: str, entries: list[str]) -> WarningHit | None:
    if _FOREIGN_CATEGORY.match(category.rsplit(".", 1)[-1]):
        return None
    tests, count = _test_count(entries)
    if _TORCH_FILE.search(path) or _CPP_FILE.search(path):
        return WarningHit(path, row, category, message, count, tests, torch_location=f"{path}:{row}",
                          inside_torch=True)
    if _OTHER_PACKAGE.search(path):
        return None  # another library's own warning
    hit = WarningHit(path, row, category, message, count, tests)
    if not (category.startswith(TORCH_PACKAGES) or _TORCH_VOCABULARY.search(message)):
        hit.uncertain = True
    return hit
