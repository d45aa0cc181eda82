"""--fix keeps every byte it does not need to change: BOM, CRLF, tabs, comments, encodings, notebooks."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pytest

from torchpatch.frontends.cli import main

EXPORT = "torch.export.export_for_training"


def run_fix(path: Path, *extra: str) -> int:
    # TP430 (export without strict=) would also flag the fixed export calls: these tests are about formatting.
    # export_for_training -> export is safe from 2.6 (where export hands over to _export_for_training).
    return main(["check", "--isolated", "--fix", "--ignore", "TP430", "--min-torch", "2.6", "--output-format", "concise",
                 *extra, str(path)])


def test_bom_and_crlf_are_kept(tmp_path):
    path = tmp_path / "m.py"
    path.write_bytes(b"\xef\xbb\xbfimport torch\r\nep = torch.export.export_for_training(m, (x,))\r\n")
    assert run_fix(path) == 0
    assert path.read_bytes() == b"\xef\xbb\xbfimport torch\r\nep = torch.export.export(m, (x,))\r\n"


def test_tabs_comments_and_continuations_are_kept(tmp_path):
    path = tmp_path / "m.py"
    original = (
        "import torch\n"
        "if True:\n"
        "\tep = torch.export.export_for_training(  # keep me\n"
        "\t\tmodel, \\\n"
        "\t\t(x,))   # and me\n"
    )
    path.write_text(original, newline="")
    assert run_fix(path) == 0
    assert path.read_text() == original.replace(EXPORT, "torch.export.export")


def test_declared_encoding_is_kept(tmp_path):
    path = tmp_path / "m.py"
    source = "# -*- coding: latin-1 -*-\nimport torch\n# café\nep = torch.export.export_for_training(m, a)\n"
    path.write_bytes(source.encode("latin-1"))
    assert run_fix(path) == 0
    assert path.read_bytes() == source.replace(EXPORT, "torch.export.export").encode("latin-1")


def test_non_ascii_columns(tmp_path):
    path = tmp_path / "m.py"
    source = "import torch\nnom = 'é'; ep = torch.export.export_for_training(m, a)  # ünïcode\n"
    path.write_text(source, encoding="utf-8")
    assert run_fix(path) == 0
    assert path.read_text(encoding="utf-8") == source.replace(EXPORT, "torch.export.export")


def test_mode_is_kept_and_no_temp_files_left(tmp_path):
    path = tmp_path / "m.py"
    path.write_text("import torch\nep = torch.export.export_for_training(m, a)\n")
    os.chmod(path, 0o750)
    assert run_fix(path) == 0
    assert stat.S_IMODE(path.stat().st_mode) == 0o750
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.py"]


def test_unsafe_fix_needs_the_flag(tmp_path):
    path = tmp_path / "m.py"
    original = 'import torch\nstate = torch.load("m.pt")\n'
    path.write_text(original)
    # TP301 reports a bare torch.load only below a 2.6 minimum (from 2.6 it is the safe default).
    assert run_fix(path, "--min-torch", "2.4") == 1
    assert path.read_text() == original
    assert run_fix(path, "--min-torch", "2.4", "--unsafe-fixes") == 0
    assert path.read_text() == 'import torch\nstate = torch.load("m.pt", weights_only=True)\n'


def test_diff_writes_nothing(tmp_path, capsys):
    path = tmp_path / "m.py"
    original = "import torch\nep = torch.export.export_for_training(m, a)\n"
    path.write_text(original)
    assert main(["check", "--isolated", "--min-torch", "2.6", "--diff", str(path)]) == 1
    out = capsys.readouterr().out
    assert "-ep = torch.export.export_for_training(m, a)" in out
    assert "+ep = torch.export.export(m, a)" in out
    assert path.read_text() == original
    assert main(["check", "--isolated", "--diff", str(tmp_path / "m.py"), "--select", "TP302"]) == 0


def test_import_added_in_existing_style_when_missing(tmp_path):
    path = tmp_path / "m.py"
    path.write_text('"""Doc."""\nfrom torch.export import export_for_training\n\nep = export_for_training(m, a)\n')
    assert run_fix(path) == 0
    assert path.read_text() == '"""Doc."""\nfrom torch.export import export as export_for_training\n\nep = export_for_training(m, a)\n'


def test_notebook_fix_keeps_outputs_metadata_and_layout(tmp_path):
    notebook = {
        "cells": [
            {"cell_type": "markdown", "metadata": {}, "source": ["# torch.load(x) in markdown\n"]},
            {"cell_type": "code", "execution_count": 1, "metadata": {"tags": ["setup"]}, "outputs": [],
             "source": ["%matplotlib inline\n", "import torch\n", "!nvidia-smi"]},
            {"cell_type": "code", "execution_count": 2, "metadata": {},
             "outputs": [{"output_type": "stream", "name": "stdout", "text": ["ok\n"]}],
             "source": ["ep = torch.export.export_for_training(m, (x,))\n", "print(ep)"]},
            {"cell_type": "code", "execution_count": 3, "metadata": {}, "outputs": [],
             "source": "%%bash\necho torch.export.export_for_training\n"},
        ],
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3"}},
        "nbformat": 4, "nbformat_minor": 5,
    }
    path = tmp_path / "n.ipynb"
    raw = json.dumps(notebook, indent=1, ensure_ascii=False) + "\n"
    path.write_text(raw, encoding="utf-8")
    assert run_fix(path) == 0
    expected = json.loads(raw)
    expected["cells"][2]["source"][0] = "ep = torch.export.export(m, (x,))\n"
    assert path.read_text(encoding="utf-8") == json.dumps(expected, indent=1, ensure_ascii=False) + "\n"


def test_notebook_findings_carry_cell_numbers(tmp_path, capsys):
    notebook = {"cells": [
        {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": "import torch\n%time x = 1"},
        {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": "y = 1\nz = torch.load('m.pt')"},
    ], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path = tmp_path / "n.ipynb"
    path.write_text(json.dumps(notebook))
    assert main(["check", "--isolated", "--output-format", "json", str(path)]) == 1
    findings = json.loads(capsys.readouterr().out)
    assert [(f["code"], f["cell"], f["location"]["row"], f["location"]["column"]) for f in findings] == [("TP301", 2, 2, 5)]


def test_noqa_lines_are_not_fixed(tmp_path):
    path = tmp_path / "m.py"
    original = 'import torch\na = torch.load("a.pt")  # noqa: TP301\nb = torch.load("b.pt")\n'
    path.write_text(original)
    assert run_fix(path, "--min-torch", "2.4", "--unsafe-fixes") == 0
    assert path.read_text() == original.replace('"b.pt")', '"b.pt", weights_only=True)')


def test_add_todos_marks_what_no_fix_handles_once(tmp_path):
    path = tmp_path / "m.py"
    path.write_text("import torch\n\ndef f(m):\n    ep = torch.export.export_for_training(m, a)\n"
                    "    return torch.onnx.dynamo_export(m, a)\n")
    assert run_fix(path, "--add-todos") == 1
    expected = ("import torch\n\ndef f(m):\n    ep = torch.export.export(m, a)\n"
                "    # TODO(torchpatch): TP101 `torch.onnx.dynamo_export` is deprecated in PyTorch 2.7, removed in 2.9")
    assert path.read_text().startswith(expected)
    once = path.read_text()
    assert run_fix(path, "--add-todos") == 1
    assert path.read_text() == once


def test_decorated_first_method_is_checked(lint):
    code = "import torch\nclass M(torch.nn.Module):\n    @torch.cuda.amp.custom_fwd\n    def forward(self, x):\n        return x\n"
    assert [f.row for f in lint(code).findings] == [3]


def test_removing_the_only_import_of_a_block_leaves_pass(tmp_path):
    """ignite 0.5.2's `try: from torch.cuda.amp import GradScaler` / `except ImportError:`: the fix that
    drops the import must keep the `try:` block valid, or the file is not written and the "fixable" is a lie."""
    path = tmp_path / "engine.py"
    path.write_text('def f():\n    try:\n        from torch.cuda.amp import GradScaler\n    except ImportError:\n'
                    '        raise ImportError("old torch")\n    return GradScaler(enabled=True)\n')
    # (the GradScaler construction fix is unsafe: it builds the base class)
    assert main(["check", "--isolated", "--no-cache", "--fix", "--unsafe-fixes", str(path)]) == 0
    assert path.read_text() == ('def f():\n    try:\n        pass\n    except ImportError:\n'
                                '        raise ImportError("old torch")\n    import torch\n'
                                '    return torch.amp.GradScaler("cuda", enabled=True)\n')


FSTRING_AUTOCAST = 'import torch\n\nprint(f"{torch.cuda.amp.autocast()}")\nx = torch.cuda.amp.autocast()\n'


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="Python 3.12+ parses nested double quotes in an f-string")
def test_a_fix_whose_result_does_not_parse_is_not_counted_fixable(tmp_path, capsys):
    """Before Python 3.12, `torch.amp.autocast("cuda")` inside `f"{...}"` does not parse, so --fix can never
    apply it: the finding is reported without a fix, the summary does not count it, and the reason is shown."""
    path = tmp_path / "m.py"
    path.write_text(FSTRING_AUTOCAST)
    assert main(["check", "--isolated", "--no-cache", str(path)]) == 1
    out = capsys.readouterr().out
    assert "[*] 1 fixable with the `--fix` option." in out
    assert "note: no fix offered: its result would not parse (syntax error at line 3: f-string" in out
    assert main(["check", "--isolated", "--no-cache", "--output-format", "json", str(path)]) == 1
    findings = json.loads(capsys.readouterr().out)
    assert [(f["location"]["row"], f["fix"] is None, "fix_unavailable" in f) for f in findings] == [
        (3, True, True), (4, False, False)]
    assert findings[0]["fix_unavailable"].startswith("its result would not parse (syntax error at line 3: f-string")
    assert main(["check", "--isolated", "--no-cache", "--statistics", "--output-format", "json", str(path)]) == 1
    assert json.loads(capsys.readouterr().out)[0]["fixable"] is True  # the line-4 finding still is
    assert main(["check", "--isolated", "--no-cache", "--fix", "--output-format", "concise", str(path)]) == 1
    out = capsys.readouterr().out
    assert path.read_text() == FSTRING_AUTOCAST.replace("x = torch.cuda.amp.autocast()",
                                                        'x = torch.amp.autocast("cuda", dtype=torch.float16)')
    assert "m.py:3:10: TP202 `torch.cuda.amp.autocast`" in out  # no [*]: nothing --fix can do
    assert "(1 fixed, 1 remaining" in out


def test_withheld_fix_keeps_the_finding_and_says_why(tmp_path):
    """Any Python: a fix whose edits leave invalid code loses its fix (with the reason); the others keep theirs."""
    from torchpatch.engine.linter import withhold_unparsable_fixes
    from torchpatch.findings import SAFE, Diagnostic, Edit, Fix

    text = "a = f(1)\nb = g(2)\n"
    broken = Diagnostic("TP999", "x", "m", 4, 8, Fix("break it", [Edit(4, 8, "f(1")], SAFE))
    fine = Diagnostic("TP999", "x", "m", 13, 17, Fix("keep it", [Edit(13, 17, "h(2)")], SAFE))
    withhold_unparsable_fixes(text, tmp_path / "m.py", [broken, fine])
    assert broken.fix is None and broken.fix_unavailable.startswith("its result would not parse (syntax error at line 1")
    assert broken.fix_unavailable.endswith(": break it")
    assert fine.fix is not None and fine.fix_unavailable is None


def test_withheld_fix_reason_survives_the_cache(tmp_path):
    from torchpatch.engine.cache import from_entry, to_entry
    from torchpatch.engine.linter import FileResult, Finding

    finding = Finding(code="TP202", name="n", message="m", url="u", path=tmp_path / "m.py", row=1, column=0, end_row=1,
                      end_column=3, fix=None, noqa_row=1, fix_unavailable="its result would not parse (x): y")
    result = FileResult(path=tmp_path / "m.py", findings=[finding])
    entry = json.loads(json.dumps(to_entry(result)))
    assert from_entry(entry, tmp_path / "m.py").findings[0].fix_unavailable == "its result would not parse (x): y"
