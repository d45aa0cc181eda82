"""Dependency files (requirements, constraints, pyproject.toml, setup.cfg, setup.py, environment.yml): where
each requirement is written. Pure parsing, shared by the engine and the dependency rules (it imports neither)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from torchpatch._record import FrozenRecord
# Re-exported: they live in dependency_names, which the engine imports without the parsers below.
from torchpatch.dependency_names import (  # noqa: F401
    DEPENDENCY_FILE_PATTERNS, REQUIREMENT_FOLDERS, is_dependency_file, tomllib,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (3 ms of every start-up)
if TYPE_CHECKING:
    from packaging.requirements import Requirement


class RequirementSpan(FrozenRecord):
    """One requirement as written in a dependency file, with its character offsets."""

    requirement: "Requirement"
    start: int
    end: int

    @property
    def name(self) -> str:
        return self.requirement.name.lower().replace("_", "-")


def requirements_in(path: Path, text: str) -> list[RequirementSpan]:
    if path.name == "pyproject.toml":
        return _pyproject_requirements(text)
    if path.name == "setup.cfg":
        return _setup_cfg_requirements(text)
    if path.name == "setup.py":
        return _setup_py_requirements(text)
    if path.suffix in (".yml", ".yaml"):
        return conda_environment(text).requirements
    return _requirements_txt(text)


def core_requirements_in(path: Path, text: str) -> list[RequirementSpan] | None:
    """What a plain install of a package needs: its dependencies without any extra, optional or development
    group (``[project.optional-dependencies]``, ``extras_require``, dependency groups); None for a file that
    has no such split (requirements files, conda environments: every line is installed)."""
    if path.name == "pyproject.toml":
        return _pyproject_requirements(text, extras=False)
    if path.name == "setup.cfg":
        return _setup_cfg_requirements(text, extras=False)
    if path.name == "setup.py":
        return _setup_py_requirements(text, extras=False)
    return None


# -- requirements files: includes and index options ------------------------------------------------------
_INCLUDE = re.compile(r"^[ \t]*(?P<option>-r|--requirement|-c|--constraint)(?:[ \t]*=[ \t]*|[ \t]+|(?<=-r)|(?<=-c))"
                      r"(?P<target>[^\s#]+)", re.MULTILINE)
_INDEX = re.compile(r"^[ \t]*(?:-i|--index-url|--extra-index-url|-f|--find-links)(?:[ \t]*=[ \t]*|[ \t]+)"
                    r"(?P<url>[^\s#]+)", re.MULTILINE)


def requirement_includes(text: str) -> list[tuple[str, str]]:
    """``-r other.txt`` / ``-c constraints.txt`` lines: (option, path as written), in order."""
    found = []
    for match in _INCLUDE.finditer(text):
        option = match.group("option")
        found.append(("-c" if option in ("-c", "--constraint") else "-r", match.group("target")))
    return found


class IndexSpan(FrozenRecord):
    """A package index or find-links URL written in a requirements file."""

    url: str
    start: int
    end: int


def index_urls(text: str) -> list[IndexSpan]:
    return [IndexSpan(m.group("url"), m.start("url"), m.end("url")) for m in _INDEX.finditer(text)]


def _parse(requirement_text: str) -> "Requirement | PlainRequirement | None":
    """The requirement, or None where it is not one (PEP 508, as packaging reads it). A plain one (a name,
    extras, version specifiers: most lines) is read here with packaging's SpecifierSet, and a line that cannot
    be one (no name first, as a URL) is None at once; anything else (a marker, a ``name @ URL``, anything
    unusual) is read by packaging's Requirement, whose import costs 30 ms (its markers pull in
    packaging.tags, subprocess, logging and dataclasses). Packaging is imported here, not at start-up: most
    runs never read a dependency file."""
    head = _REQUIREMENT_HEAD.match(requirement_text)
    if head is None or (head.end() < len(requirement_text) and requirement_text[head.end()] not in "[@(~=!<>;"):
        return None  # packaging reads a name, then one of these or the end: a URL or a path is no requirement
    plain = _PLAIN_REQUIREMENT.fullmatch(requirement_text)
    if plain is not None:
        from packaging.specifiers import InvalidSpecifier, SpecifierSet

        try:
            specifier = SpecifierSet(plain.group("specifiers") or "")
        except InvalidSpecifier:
            specifier = None
        if specifier is not None:
            extras = plain.group("extras")
            return PlainRequirement(plain.group("name"), _EXTRA.findall(extras) if extras else (), specifier)
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        return Requirement(requirement_text)
    except InvalidRequirement:
        return None


class PlainRequirement:
    """What packaging's Requirement holds for a requirement without a marker or a URL (``_parse``)."""

    __slots__ = ("name", "extras", "specifier")
    url = None
    marker = None

    def __init__(self, name: str, extras: Iterable[str], specifier) -> None:
        self.name = name
        self.extras = set(extras)
        self.specifier = specifier

    def __str__(self) -> str:
        extras = f"[{','.join(sorted(self.extras))}]" if self.extras else ""
        return f"{self.name}{extras}{self.specifier}"

    def __repr__(self) -> str:
        return f"<PlainRequirement({str(self)!r})>"

    def __eq__(self, other: object) -> bool:
        # As packaging's Requirement compares: by the parts, the name as written.
        if not isinstance(other, PlainRequirement):
            return NotImplemented
        return (self.name, self.extras, self.specifier) == (other.name, other.extras, other.specifier)

    def __hash__(self) -> int:
        return hash((self.name, frozenset(self.extras), str(self.specifier)))


#: A name or an extra as packaging's tokenizer reads it (its IDENTIFIER).
_PLAIN_NAME = r"\b[a-zA-Z0-9][a-zA-Z0-9._-]*\b"
_PLAIN_SPECIFIER = r"(?:~=|===?|!=|<=?|>=?)[ \t]*[A-Za-z0-9][A-Za-z0-9.*+!_-]*"
#: ``name``, ``name[extra, ...]``, each maybe followed by specifiers parted by commas (in parentheses or not):
#: the requirements _parse reads without packaging's parser.
_PLAIN_REQUIREMENT = re.compile(
    rf"[ \t]*(?P<name>{_PLAIN_NAME})[ \t]*"
    rf"(?:\[[ \t]*(?P<extras>{_PLAIN_NAME}(?:[ \t]*,[ \t]*{_PLAIN_NAME})*)?[ \t]*\][ \t]*)?"
    rf"(?P<open>\([ \t]*)?(?P<specifiers>{_PLAIN_SPECIFIER}(?:[ \t]*,[ \t]*{_PLAIN_SPECIFIER})*)?"
    rf"(?(open)[ \t]*\))[ \t]*")
_EXTRA = re.compile(_PLAIN_NAME)
_REQUIREMENT_HEAD = re.compile(rf"[ \t]*{_PLAIN_NAME}[ \t]*")


_LINE = re.compile(r"^[ \t]*(?P<body>[^#\r\n]*?)[ \t]*(?:#.*)?$", re.MULTILINE)


def _requirements_txt(text: str) -> list[RequirementSpan]:
    spans = []
    for match in _LINE.finditer(text):
        body = match.group("body")
        if not body or body.startswith("-"):
            continue
        body = re.split(r"\s+--hash=|\s+;\s*$", body)[0].rstrip("\\ \t")
        requirement = _parse(body)
        if requirement is not None:
            start = match.start("body")
            spans.append(RequirementSpan(requirement, start, start + len(body)))
    return spans


def _pyproject_requirements(text: str, extras: bool = True) -> list[RequirementSpan]:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return []
    project = data.get("project", {}) if isinstance(data.get("project"), dict) else {}
    written = [str(item) for item in project.get("dependencies", []) or []]
    tool = data.get("tool", {}) if isinstance(data.get("tool"), dict) else {}
    if not extras:
        return _locate_strings(text, written) + _poetry_requirements(text, tool.get("poetry"), extras=False)
    for extra in (project.get("optional-dependencies", {}) or {}).values():
        written.extend(str(item) for item in extra or [])
    # PEP 735 dependency groups: strings, and {include-group = "..."} tables (whose strings are listed
    # under their own group).
    groups = data.get("dependency-groups", {})
    for group in (groups.values() if isinstance(groups, dict) else ()):
        written.extend(item for item in group or [] if isinstance(item, str))
    # PDM: [tool.pdm.dev-dependencies] groups of PEP 508 strings.
    pdm = tool.get("pdm", {}) if isinstance(tool.get("pdm"), dict) else {}
    for group in (pdm.get("dev-dependencies", {}) or {}).values():
        written.extend(item for item in group or [] if isinstance(item, str))
    spans = _locate_strings(text, written)
    spans.extend(_poetry_requirements(text, tool.get("poetry")))
    return sorted(spans, key=lambda span: span.start)


# Poetry writes `torch = "^2.4"` or `torch = { version = ">=2.4", source = "pytorch" }` under
# [tool.poetry.dependencies], [tool.poetry.dev-dependencies] and [tool.poetry.group.<name>.dependencies].
def _poetry_requirements(text: str, poetry, extras: bool = True) -> list[RequirementSpan]:
    if not isinstance(poetry, dict):
        return []
    tables = [poetry.get("dependencies")]
    if extras:
        tables.append(poetry.get("dev-dependencies"))
        for group in (poetry.get("group", {}) or {}).values():
            if isinstance(group, dict):
                tables.append(group.get("dependencies"))
    spans = []
    for table in tables:
        if not isinstance(table, dict):
            continue
        for name, value in table.items():
            if name.lower() == "python":
                continue
            if not extras and isinstance(value, dict) and value.get("optional") is True:
                continue  # installed only through an extra
            constraint = value.get("version") if isinstance(value, dict) else value
            if not isinstance(constraint, str):
                continue
            specifier = poetry_constraint(constraint)
            requirement = _parse(f"{name}{specifier}") if specifier is not None else None
            if requirement is None:
                continue
            located = _locate_poetry_entry(text, name, constraint)
            if located is not None:
                spans.append(RequirementSpan(requirement, *located))
    return spans


def _locate_poetry_entry(text: str, name: str, constraint: str) -> tuple[int, int] | None:
    pattern = re.compile(rf"^[ \t]*[\"']?{re.escape(name)}[\"']?[ \t]*=.*?[\"']{re.escape(constraint)}[\"']",
                         re.MULTILINE | re.IGNORECASE)
    match = pattern.search(text)
    if match is None:
        return None
    start = match.start() + len(match.group(0)) - len(match.group(0).lstrip())
    return start, match.end()


_POETRY_PART = re.compile(r"^(\^|~=|~|==|!=|>=|<=|>|<|=)?\s*(\d+(?:\.\d+)*(?:\.\*)?)$")


def poetry_constraint(constraint: str) -> str | None:
    """A Poetry version constraint as a PEP 440 specifier (``^2.4`` → ``>=2.4,<3.0``); None if not understood."""
    constraint = constraint.strip()
    if constraint in ("*", ""):
        return ""
    if "||" in constraint:
        return None
    parts = []
    for piece in re.split(r"\s*,\s*|\s+(?=[<>=!~^])", constraint):
        match = _POETRY_PART.match(piece.strip())
        if match is None:
            return None
        operator, version = match.group(1) or "", match.group(2)
        numbers = [int(n) for n in version.replace(".*", "").split(".")]
        if operator == "^":
            first = next((i for i, n in enumerate(numbers) if n != 0), len(numbers) - 1)
            upper = numbers[: first + 1]
            upper[-1] += 1
            parts += [f">={version}", "<" + ".".join(map(str, upper))]
        elif operator == "~" or operator == "~=" and len(numbers) == 1:
            upper = numbers[:2] if len(numbers) > 1 else numbers[:1]
            upper[-1] += 1
            parts += [f">={version}", "<" + ".".join(map(str, upper))]
        elif operator in ("", "=") :
            parts.append(f"=={version}")
        else:
            parts.append(f"{operator}{version}")
    return ",".join(parts)


def _setup_cfg_requirements(text: str, extras: bool = True) -> list[RequirementSpan]:
    import configparser  # only for setup.cfg

    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error:
        return []
    written: list[str] = []
    if parser.has_option("options", "install_requires"):
        written.extend(parser.get("options", "install_requires").splitlines())
    if extras and parser.has_section("options.extras_require"):
        for _, value in parser.items("options.extras_require"):
            written.extend(value.splitlines())
    items = [line.split("#", 1)[0].strip() for line in written]
    return _locate_strings(text, [item for item in items if item], quoted=False)


def _setup_py_requirements(text: str, extras: bool = True) -> list[RequirementSpan]:
    """``install_requires`` and ``extras_require`` of a ``setup(...)`` call, read without running setup.py:
    only string literals, written in the call or in a list, tuple or dict bound at module level
    (``REQUIRED = ["torch>=2.1"]``), and the lookup-table idiom of transformers and diffusers: a ``_deps`` list
    of literals, a ``deps = {b: a for a, b in ...}`` table over it, ``deps["torch"]`` and a ``deps_list("torch",
    ...)`` helper that returns ``[deps[pkg] for pkg in pkgs]``, lists joined with ``+``, and an ``extras`` dict
    filled item by item (``extras["torch"] = deps_list("torch")``). Anything else computed says nothing."""
    import ast

    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    reader = _SetupReader(tree)
    found: list[ast.Constant] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        callee = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
        if callee != "setup":
            continue
        for keyword in node.keywords:
            if keyword.arg == "install_requires":
                found.extend(reader.strings(keyword.value))
            elif keyword.arg == "extras_require" and extras:
                found.extend(reader.extras(keyword.value))
    unique = {id(constant): constant for constant in found}.values()
    ordered = sorted(unique, key=lambda constant: (constant.lineno, constant.col_offset))
    return _locate_strings(text, [constant.value for constant in ordered])


class _SetupReader:
    """The static values a setup.py binds at module level (never in a function or class body)."""

    _DEPTH = 30  # how deep names may refer to names before the answer is "unknown"

    def __init__(self, tree) -> None:
        import ast

        self.ast = ast
        self.assigned: dict[str, list] = {}  # name -> its values (None when augmented: unknown)
        self.items: dict[str, dict[str, list]] = {}  # ``extras["torch"] = ...``: name -> key -> values
        self.helpers: dict[str, str] = {}  # ``def deps_list(*pkgs): return [deps[pkg] for pkg in pkgs]`` -> "deps"
        for statement in self._module_statements(tree.body):
            if isinstance(statement, ast.FunctionDef):
                table = self._lookup_helper(statement)
                if table is not None:
                    self.helpers[statement.name] = table
                continue
            if not isinstance(statement, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                continue
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            for target in targets:
                if isinstance(target, ast.Name):
                    # ``REQS += [...]`` (or a bare annotation) makes the name's value unknown
                    value = None if isinstance(statement, ast.AugAssign) else statement.value
                    self.assigned.setdefault(target.id, []).append(value)
                elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) \
                        and isinstance(target.slice, ast.Constant) and isinstance(target.slice.value, str):
                    value = None if isinstance(statement, ast.AugAssign) else statement.value
                    self.items.setdefault(target.value.id, {}).setdefault(target.slice.value, []).append(value)

    def _module_statements(self, body):
        """Module-level statements, those under ``if``/``try``/``with`` included (``if os.name == "nt":``)."""
        ast = self.ast
        for statement in body:
            yield statement
            if isinstance(statement, (ast.If, ast.With, ast.For, ast.While)):
                yield from self._module_statements(statement.body)
                yield from self._module_statements(getattr(statement, "orelse", []))
            elif isinstance(statement, ast.Try):
                for block in (statement.body, *(h.body for h in statement.handlers), statement.orelse,
                              statement.finalbody):
                    yield from self._module_statements(block)

    def _lookup_helper(self, function) -> str | None:
        """The table a ``return [TABLE[p] for p in pkgs]`` helper looks names up in."""
        ast = self.ast
        if len(function.body) != 1 or not isinstance(function.body[0], ast.Return):
            return None
        value = function.body[0].value
        if isinstance(value, ast.ListComp) and isinstance(value.elt, ast.Subscript) \
                and isinstance(value.elt.value, ast.Name):
            return value.elt.value.id
        return None

    def _single(self, name: str):
        values = self.assigned.get(name, [])
        return values[0] if len(values) == 1 else None

    def _table(self, name: str) -> dict[str, object] | None:
        """``deps = {b: a for a, b in (... for x in _deps)}``: requirement name as written -> its literal."""
        ast = self.ast
        value = self._single(name)
        if not isinstance(value, ast.DictComp):
            return None
        sources = [node.id for node in ast.walk(value) if isinstance(node, ast.Name)
                   and isinstance(self._single(node.id), (ast.List, ast.Tuple))]
        if len(set(sources)) != 1:
            return None
        table = {}
        for item in self._single(sources[0]).elts:
            if isinstance(item, ast.Constant) and isinstance(item.value, str):
                written = re.match(r"\s*([^!=<>~ ;\[]+)", item.value)
                if written:
                    table[written.group(1)] = item
        return table

    def strings(self, node, depth: int = 0) -> list:
        """The string literals a requirements expression is made of."""
        ast = self.ast
        if node is None or depth > self._DEPTH:
            return []
        if isinstance(node, ast.Name):
            return self.strings(self._single(node.id), depth + 1)
        if isinstance(node, (ast.List, ast.Tuple)):
            found = []
            for item in node.elts:
                if isinstance(item, ast.Constant) and isinstance(item.value, str):
                    found.append(item)
                elif isinstance(item, ast.Subscript):
                    found.extend(self._looked_up(item, depth))
                elif isinstance(item, ast.Starred):
                    found.extend(self.strings(item.value, depth + 1))
            return found
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return self.strings(node.left, depth + 1) + self.strings(node.right, depth + 1)
        if isinstance(node, ast.Subscript):  # extras["onnxruntime"] inside another extra
            return self._item(node, depth)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id in ("list", "tuple", "sorted") and len(node.args) == 1:
                return self.strings(node.args[0], depth + 1)
            table_name = self.helpers.get(node.func.id)
            table = self._table(table_name) if table_name else None
            if table is not None:
                return [table[arg.value] for arg in node.args if isinstance(arg, ast.Constant)
                        and isinstance(arg.value, str) and arg.value in table]
        return []

    def _looked_up(self, node, depth: int) -> list:
        """``deps["torch"]`` in a list: that entry of the lookup table."""
        ast = self.ast
        if isinstance(node.value, ast.Name) and isinstance(node.slice, ast.Constant):
            table = self._table(node.value.id)
            if table is not None:
                entry = table.get(node.slice.value)
                return [entry] if entry is not None else []
        return self._item(node, depth)

    def _item(self, node, depth: int) -> list:
        ast = self.ast
        if isinstance(node.value, ast.Name) and isinstance(node.slice, ast.Constant):
            values = self.items.get(node.value.id, {}).get(node.slice.value, [])
            return [found for value in values for found in self.strings(value, depth + 1)]
        return []

    def extras(self, node) -> list:
        """Every extra's literals: a dict written out, or a name bound to one and filled item by item."""
        ast = self.ast
        name = node.id if isinstance(node, ast.Name) else None
        value = self._single(name) if name else node
        found = []
        if isinstance(value, ast.Dict):
            for item in value.values:
                found.extend(self.strings(item))
        if name:
            for values in self.items.get(name, {}).values():
                for item in values:
                    found.extend(self.strings(item))
        return found


def _locate_strings(text: str, written: list[str], quoted: bool = True) -> list[RequirementSpan]:
    """Where each requirement string is written, in order (quoted in TOML, bare in setup.cfg)."""
    spans = []
    position = 0
    for item in written:
        needles = ('"' + item + '"', "'" + item + "'") if quoted else (item,)
        found = [(text.find(needle, position), needle) for needle in needles]
        found = [(index, needle) for index, needle in found if index >= 0]
        if not found:
            continue
        index, needle = min(found)
        start = index + (1 if quoted else 0)
        requirement = _parse(item)
        if requirement is not None:
            spans.append(RequirementSpan(requirement, start, start + len(item)))
        position = index + len(needle)
    return spans


# -- conda environment files ------------------------------------------------------------------------------
#: conda package names that are PyPI's under another name.
_CONDA_NAMES = {"pytorch": "torch", "pytorch-cpu": "torch", "pytorch-gpu": "torch"}
_CONDA_SPEC = re.compile(r"^(?:(?P<channel>[\w.-]+)::)?(?P<name>[A-Za-z0-9][\w.-]*)\s*(?P<spec>.*)$")


class CondaEnvironment(FrozenRecord):
    requirements: list[RequirementSpan]  # conda and pip dependencies, conda names mapped to PyPI's
    channels: list[tuple[str, int, int]]  # channel name, offsets (in ``channels:`` and ``chan::pkg`` prefixes)
    python: RequirementSpan | None  # the ``python=3.x`` dependency


def conda_environment(text: str) -> CondaEnvironment:
    """The dependencies and channels of an ``environment.yml`` (the subset of YAML conda writes)."""
    requirements: list[RequirementSpan] = []
    channels: list[tuple[str, int, int]] = []
    python: RequirementSpan | None = None
    section = None
    pip_indent: int | None = None
    offset = 0
    for line in text.splitlines(keepends=True):
        start_of_line = offset
        offset += len(line)
        content = line.split("#", 1)[0].rstrip()
        if not content.strip():
            continue
        indent = len(content) - len(content.lstrip())
        stripped = content.strip()
        if indent == 0 and not stripped.startswith("-"):
            section = stripped.split(":", 1)[0].strip()
            pip_indent = None
            continue
        if not stripped.startswith("-"):
            continue
        item = stripped[1:].strip()
        quote = item[:1] if item[:1] in "'\"" else ""
        value = item.strip("'\"").strip()
        value_start = start_of_line + line.index(item) + len(quote)
        if section == "channels":
            channels.append((value, value_start, value_start + len(value)))
            continue
        if section != "dependencies":
            continue
        if pip_indent is not None and indent <= pip_indent:
            pip_indent = None
        if value.rstrip(":").strip() == "pip" and value.endswith(":"):
            pip_indent = indent
            continue
        if pip_indent is not None:
            if value.startswith("-"):
                continue  # -r / --index-url inside the pip list
            requirement = _parse(value)
            if requirement is not None:
                requirements.append(RequirementSpan(requirement, value_start, value_start + len(value)))
            continue
        match = _CONDA_SPEC.match(value)
        if match is None:
            continue
        if match.group("channel"):
            channel = match.group("channel")
            channels.append((channel, value_start, value_start + len(channel)))
        name = match.group("name").lower()
        specifier = _conda_specifier(match.group("spec"))
        if specifier is None:
            continue
        requirement = _parse(f"{_CONDA_NAMES.get(name, name)}{specifier}")
        if requirement is None:
            continue
        span = RequirementSpan(requirement, value_start, value_start + len(value))
        if name == "python":
            python = span
        else:
            requirements.append(span)
    return CondaEnvironment(requirements, channels, python)


def _conda_specifier(spec: str) -> str | None:
    """conda's ``=2.5.1`` (a prefix match), ``==2.5.1``, ``>=2.4,<2.6``, ``2.5.*`` or ``2.5.1=build`` in PEP 440."""
    spec = spec.strip()
    if not spec:
        return ""
    if spec.startswith("=") and not spec.startswith("=="):
        version = spec[1:].split("=", 1)[0].strip()
        return f"=={version.rstrip('.*')}.*" if re.fullmatch(r"\d+(\.\d+)*(\.\*)?", version) else None
    if re.fullmatch(r"\d+(\.\d+)*(\.\*)?(\s+\S+)?", spec):  # "2.5.1" or "2.5.1 py311_cuda" (space form)
        version = spec.split()[0]
        return f"=={version.rstrip('.*')}.*"
    if "|" in spec:
        return None
    return spec
