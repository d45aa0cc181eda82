"""The rule database is complete and consistent, and docs/rules/ is what the rules render to."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

from torchpatch.docs import render_all
from torchpatch.rules import all_rules
from torchpatch.rules.base import SAFE, UNSAFE, Invalid

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "torchpatch"
RULES = all_rules()


def test_codes_and_names_are_unique_and_well_formed():
    codes = [rule.code for rule in RULES]
    names = [rule.name for rule in RULES]
    assert len(set(codes)) == len(codes)
    assert len(set(names)) == len(names)
    for rule in RULES:
        assert re.fullmatch(r"TP[1-9]\d\d", rule.code), rule.code
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", rule.name), rule.name
        module_file = Path(__import__(rule.__module__, fromlist=["_"]).__file__).stem
        assert module_file == rule.name.replace("-", "_"), f"{rule.code} lives in {module_file}.py"


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_rule_is_complete(rule):
    assert rule.deprecated_in or rule.removed_in or rule.changed_in, "every rule has a version"
    assert rule.summary and not rule.summary.endswith(".")
    assert "## What it does" in rule.prose() and "## Why is this bad?" in rule.prose()
    assert rule.INVALID, "every rule has an invalid example"
    assert rule.fix_safety in (None, SAFE, UNSAFE)
    if rule.fix_safety is not None:
        assert any(isinstance(e, Invalid) and e.fixed for e in rule.INVALID), "a fixable rule shows its fix"
    assert rule.catalog_ids or rule.references


def test_torchfix_codes_do_not_collide_with_ours():
    for rule in RULES:
        for code in rule.torchfix_codes:
            assert code.startswith("TOR")


def test_committed_docs_are_fresh():
    folder = ROOT / "docs" / "rules"
    expected = render_all(folder)
    committed = {path: path.read_text(encoding="utf-8") for path in folder.glob("*.md")}
    stale = sorted(str(p.name) for p in set(expected) | set(committed) if expected.get(p) != committed.get(p))
    assert not stale, f"docs/rules is stale for {stale}: run `python -m torchpatch.docs`"


# -- layout: imports run one way (frontends → engine → rules → the shared modules) ---------------------------
#: What rules and the engine both use; these import only each other (and the standard library, packaging).
SHARED = ("torchpatch.findings", "torchpatch.syntax", "torchpatch.dependency_files", "torchpatch.versions",
          "torchpatch.platform_facts", "torchpatch._hashing", "torchpatch._gunzip", "torchpatch.dependency_names",
          "torchpatch._record")
#: Everything but the front ends (and ``python -m torchpatch``, which starts the CLI).
CORE = ("engine", "rules", "audit", "doctor", "output", "knowledge", "docs", "versions", "platform_facts",
        "syntax", "findings", "dependency_files", "_hashing", "_gunzip", "dependency_names", "_record")


def _module_name(path: Path, root: Path = PACKAGE.parent) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported_modules(path: Path, root: Path = PACKAGE.parent) -> set[str]:
    """Every torchpatch module the file imports, at any depth of the file and under TYPE_CHECKING too."""
    name = _module_name(path, root)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[:len(package.split(".")) - (node.level - 1)]
                base = ".".join(anchor + ([node.module] if node.module else []))
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)  # ``from torchpatch import engine``
    return {module for module in found if module == "torchpatch" or module.startswith("torchpatch.")}


def _within(module: str, packages) -> bool:
    return any(module == package or module.startswith(package + ".") for package in packages)


def _files(*subpaths: str) -> list[Path]:
    files = []
    for subpath in subpaths:
        folder, module = PACKAGE / subpath, PACKAGE / f"{subpath}.py"
        files.extend(sorted(folder.rglob("*.py")) if folder.is_dir() else [module])
    return files


def test_layout_helpers_see_every_kind_of_import(tmp_path):
    probe = tmp_path / "torchpatch" / "rules" / "probe.py"
    probe.parent.mkdir(parents=True)
    probe.write_text("from __future__ import annotations\nfrom typing import TYPE_CHECKING\nimport torchpatch.engine.cache\n"
                     "from torchpatch import frontends\nfrom ..engine import linter\nfrom . import base\n"
                     "if TYPE_CHECKING:\n    from torchpatch.engine.checker import Context\n"
                     "def late():\n    from torchpatch.engine.dependencies import check_dependencies\n")
    assert _module_name(probe, tmp_path) == "torchpatch.rules.probe"
    assert {"torchpatch.engine.cache", "torchpatch.frontends", "torchpatch.engine.linter", "torchpatch.rules.base",
            "torchpatch.engine.checker", "torchpatch.engine.dependencies"} <= _imported_modules(probe, tmp_path)


def test_rules_import_only_rules_and_the_shared_modules():
    wrong = {f"{path.relative_to(PACKAGE)} imports {module}"
             for path in _files("rules") for module in _imported_modules(path)
             if module != "torchpatch" and not _within(module, ("torchpatch.rules",) + SHARED)}
    assert not wrong, sorted(wrong)


def test_shared_modules_import_nothing_above_them():
    wrong = {f"{path.relative_to(PACKAGE)} imports {module}"
             for path in _files(*(name.split(".", 1)[1] for name in SHARED)) for module in _imported_modules(path)
             if not _within(module, SHARED)}
    assert not wrong, sorted(wrong)


def test_the_core_never_imports_the_front_ends():
    assert all(_files(name) for name in CORE), "a core module named here no longer exists"
    wrong = {f"{path.relative_to(PACKAGE)} imports {module}"
             for path in _files(*CORE) for module in _imported_modules(path) if _within(module, ("torchpatch.frontends",))}
    assert not wrong, sorted(wrong)


def test_loading_every_rule_loads_no_engine_module():
    code = ("import sys; from torchpatch.rules import all_rules; all_rules(); "
            "print(sorted(m for m in sys.modules if m.startswith(('torchpatch.engine', 'torchpatch.frontends'))))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert loaded == "[]"


def test_outside_the_rules_the_finding_types_come_from_their_own_module():
    """``torchpatch.rules.base`` re-exports them for rule authors; the engine and its readers use the source."""
    import torchpatch.findings

    shared = {name for name in vars(torchpatch.findings) if name.isupper() or name in ("Edit", "Fix", "Diagnostic")}
    wrong = set()
    for path in _files(*(name for name in CORE if name != "rules")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module == "torchpatch.rules.base":
                wrong.update(f"{path.relative_to(PACKAGE)}: {alias.name}" for alias in node.names if alias.name in shared)
    assert {"SAFE", "UNSAFE", "Edit", "Fix", "Diagnostic"} <= shared
    assert not wrong, sorted(wrong)
