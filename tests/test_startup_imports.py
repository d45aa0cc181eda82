"""Start-up stays small: what ``torchpatch check one_file.py`` imports, counted in a fresh interpreter.

Counted in modules, not seconds (CPU time on a shared machine varies by a third). A one-file run (a
pre-commit hook, an editor save) imports the engine and only the rule modules that watch a name the file
holds: adding rules must not add to it. The budget is today's count plus a little; raise it only for a
reason worth a user's start-up time, and say so in the commit.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

#: Modules a one-file check may import beyond what the interpreter had loaded (110 for a clean file and 116 for
#: one with a TP301 finding when this was written, CPython 3.11; 81 and 87 after issue 27's start-up work: no
#: argparse for a plain check, no hashlib, tomllib, configparser, json cache, scan executors or threading
#: unless used; 77 and 83 after its third round: the dependency-file parsers, configparser, textwrap and
#: pkgutil only when used; 65 and 71 after its fourth: no dataclasses, inspect, dis or tokenize).
MODULE_BUDGET = 78

_COUNT = """\
import json, sys
before = set(sys.modules)
from torchpatch.frontends.cli import main
try:
    main(["check", "--no-cache", sys.argv[1]])
except SystemExit:
    pass
print(json.dumps(sorted(set(sys.modules) - before)))
"""


def _imported_by_check(path: Path, manifest_dir: Path) -> list[str]:
    environment = {**os.environ, "TORCHPATCH_MANIFEST_DIR": str(manifest_dir)}
    run = lambda: subprocess.run([sys.executable, "-c", _COUNT, str(path)], capture_output=True, text=True,  # noqa: E731
                                 cwd=path.parent, env=environment, check=True)
    run()  # the first run in a fresh manifest folder writes the rule manifest (it imports every rule once)
    return json.loads(run().stdout.splitlines()[-1])


def _rule_modules(modules: list[str]) -> set[str]:
    from torchpatch.rules import _NOT_RULES

    return {m for m in modules if m.startswith("torchpatch.rules.")
            and not m.rsplit(".", 1)[1].startswith("_") and m.rsplit(".", 1)[1] not in _NOT_RULES}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "clean.py").write_text("import torch\n\n\ndef area(x):\n    return torch.mul(x, x).sum()\n")
    (tmp_path / "loads.py").write_text('import torch\n\nstate = torch.load("m.pt")\n')
    return tmp_path


def test_a_file_that_mentions_no_watched_name_imports_no_rule(project, tmp_path_factory):
    modules = _imported_by_check(project / "clean.py", tmp_path_factory.mktemp("manifest"))
    assert _rule_modules(modules) == set()
    assert len(modules) <= MODULE_BUDGET, f"{len(modules)} modules: {modules}"


def test_a_finding_imports_only_the_rules_that_watch_its_name(project, tmp_path_factory):
    modules = _imported_by_check(project / "loads.py", tmp_path_factory.mktemp("manifest"))
    rules = _rule_modules(modules)
    assert "torchpatch.rules.torch_load_without_weights_only" in rules  # TP301 reports it
    assert len(rules) <= 8, sorted(rules)  # the few that watch torch.load, not the whole database
    assert len(modules) <= MODULE_BUDGET, f"{len(modules)} modules: {modules}"
    assert "torch" not in modules  # never a runtime dependency
    # What a plain one-file check no longer needs (issue 27): each is a few milliseconds of start-up.
    # dataclasses compiled each record class's methods at start-up (16 ms for 24 classes) and imported inspect.
    # typing cost 3 ms of a 55 ms check (collections.abc and a TYPE_CHECKING constant instead).
    assert not {"argparse", "hashlib", "tomllib", "tempfile", "threading", "multiprocessing", "configparser",
                "textwrap", "pkgutil", "gzip", "dataclasses", "inspect", "tokenize", "typing",
                "torchpatch.dependency_files",
                "torchpatch.engine.cache", "torchpatch.frontends.executors.scan"} & set(modules)


_WARM = """\
import json, sys
from torchpatch.frontends.cli import main
try:
    main(["check", "--cache-dir", sys.argv[2], sys.argv[1]])
except SystemExit:
    pass
print(json.dumps(sorted(sys.modules)))
"""


def test_a_rerun_whose_files_all_hit_the_cache_imports_no_checking_engine(project, tmp_path_factory):
    """Issue 27: a warm rerun reads the cache and stats files; the linter, the checker and the rules stay unloaded."""
    environment = {**os.environ, "TORCHPATCH_MANIFEST_DIR": str(tmp_path_factory.mktemp("manifest"))}
    cache = tmp_path_factory.mktemp("cache")
    run = lambda: subprocess.run([sys.executable, "-c", _WARM, str(project), str(cache)], capture_output=True,  # noqa: E731
                                 text=True, cwd=project, env=environment, check=True)
    cold = json.loads(run().stdout.splitlines()[-1])
    assert "torchpatch.engine.linter" in cold
    warm = set(json.loads(run().stdout.splitlines()[-1]))
    assert not {"torchpatch.engine.linter", "torchpatch.engine.checker", "torchpatch.engine.resolve", "typing",
                "ast", "dataclasses"} & warm  # ast: 2 ms, only annotations of findings and rules.base named it
    assert not _rule_modules(sorted(warm))
