"""Whole-file fixtures: realistic modules checked and fixed end to end, compared with the files beside them."""

from __future__ import annotations

import shutil
from pathlib import Path

from torchpatch.frontends.cli import main
from torchpatch.engine.linter import check_file
from torchpatch.engine.settings import Settings

FIXTURES = Path(__file__).parent / "fixtures"


def test_trainer_findings():
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
    assert main(["check", "--isolated", "--fix", "--unsafe-fixes", "--quiet", str(work)]) == 0
    assert work.read_text() == (FIXTURES / "trainer.fixed.py").read_text()
    assert main(["check", "--isolated", "--fix", "--unsafe-fixes", "--quiet", str(work)]) == 0
    assert work.read_text() == (FIXTURES / "trainer.fixed.py").read_text()


def test_legacy_example_project_is_fully_reported():
    project = Path(__file__).resolve().parents[1] / "examples" / "legacy-project"
    codes = sorted({f.code for path in sorted(project.rglob("*.py")) for f in check_file(path, Settings()).findings})
    assert codes == ["TP101", "TP102", "TP111", "TP201", "TP202", "TP204", "TP205", "TP210", "TP220", "TP301",
                     "TP303", "TP401", "TP420", "TP430", "TP432"]
