"""Whole-file fixtures: realistic modules checked and fixed end to end, compared with the files beside them."""

from __future__ import annotations

import shutil
from pathlib import Path

from torchpatch.frontends.cli import main
from torchpatch.engine.linter import check_file
from torchpatch.engine.settings import Settings

FIXTURES = Path(__file__).parent / "fixtures"


def test_trainer_findings():
    # TP401 is on by default (torch warns on every call without use_reentrant=, issue #23).
    result = check_file(FIXTURES / "trainer.py", Settings())
    assert [(f.code, f.row) for f in result.findings] == [
        ("TP301", 23),  # th.load without weights_only (the weights_only=True call at line 48 is fine)
        ("TP202", 35),  # amp.GradScaler through `from torch.cuda import amp`
        ("TP202", 38),  # amp.autocast
        ("TP401", 39),  # checkpoint imported as ckpt
    ]
    # Not reported: the ImportError fallback (line 13), the version-guarded else branch (line 18),
    # the local `load` helper (line 47), `self.amp`, and `torch.jit.script` on a parameter named torch.


def test_trainer_fixed_matches_and_runs_the_fixpoint(tmp_path):
    work = tmp_path / "trainer.py"
    shutil.copy(FIXTURES / "trainer.py", work)
    options = ["check", "--isolated", "--fix", "--unsafe-fixes", "--extend-select", "TP401", "--quiet", str(work)]
    assert main(options) == 0
    assert work.read_text() == (FIXTURES / "trainer.fixed.py").read_text()
    assert main(options) == 0
    assert work.read_text() == (FIXTURES / "trainer.fixed.py").read_text()


def test_legacy_example_project_is_fully_reported():
    project = Path(__file__).resolve().parents[1] / "examples" / "legacy-project"
    settings = Settings(extend_select=["TP432"])  # opt-in: no working code changes behaviour
    found = [(str(path.relative_to(project)), f.code, f.row) for path in sorted(project.rglob("*.py"))
             for f in check_file(path, settings).findings]
    # Where each one is, not only which codes: a finding that moves or doubles is a failure.
    assert found == [
        ("legacy/attention.py", "TP432", 12), ("legacy/attention.py", "TP220", 12), ("legacy/attention.py", "TP420", 18),
        ("legacy/export.py", "TP101", 4), ("legacy/export.py", "TP101", 5), ("legacy/export.py", "TP201", 6),
        ("legacy/export.py", "TP101", 10), ("legacy/export.py", "TP430", 10), ("legacy/export.py", "TP102", 18),
        ("legacy/model.py", "TP202", 13), ("legacy/model.py", "TP202", 20), ("legacy/model.py", "TP201", 35),
        ("legacy/model.py", "TP204", 40), ("legacy/model.py", "TP401", 46), ("legacy/model.py", "TP205", 54),
        ("legacy/train.py", "TP301", 10), ("legacy/train.py", "TP111", 18), ("legacy/train.py", "TP202", 19),
        ("legacy/train.py", "TP202", 21), ("legacy/train.py", "TP303", 31), ("legacy/train.py", "TP210", 32),
    ]
    default = {f.code for path in sorted(project.rglob("*.py")) for f in check_file(path, Settings()).findings}
    assert "TP401" in default and "TP432" not in default  # TP401: torch warns on that call (issue #23)
