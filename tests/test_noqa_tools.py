"""``--add-noqa`` and TP100 unused-noqa (ruff's RUF100)."""

from __future__ import annotations

import json


from torchpatch.frontends.cli import main

LOAD = 'import torch\nstate = torch.load("m.pt")\n'


def findings(capsys, *args: str) -> list[tuple[int, str]]:
    main(["check", "--isolated", "--output-format", "json", *args])
    return [(f["location"]["row"], f["code"]) for f in json.loads(capsys.readouterr().out)]


def test_add_noqa_suppresses_every_finding_and_merges_existing_directives(project, capsys):
    path = project / "a.py"
    path.write_text('import torch\n'
                    'a = torch.load("m.pt")\n'
                    'b = torch.load("m.pt"); ep = torch.export.export_for_training(m, x, strict=True)  # noqa: E501\n'
                    's = """torch.load(\n"""; c = torch.load("m.pt")\n'
                    'x = torch.load(\n    "m.pt")\n')
    assert main(["check", "--isolated", "--add-noqa", "a.py"]) == 0
    assert "Added 4 noqa directives." in capsys.readouterr().err
    assert path.read_text() == ('import torch\n'
                                'a = torch.load("m.pt")  # noqa: TP301\n'
                                'b = torch.load("m.pt"); ep = torch.export.export_for_training(m, x, strict=True)  # noqa: E501, TP301, TP101\n'
                                's = """torch.load(\n"""; c = torch.load("m.pt")  # noqa: TP301\n'
                                'x = torch.load(  # noqa: TP301\n    "m.pt")\n')
    assert findings(capsys, "a.py") == []
    assert main(["check", "--isolated", "--add-noqa", "a.py"]) == 0  # nothing left to add
    assert "Added 0 noqa directives." in capsys.readouterr().err


def test_add_noqa_in_a_notebook_keeps_it_a_notebook(project, capsys):
    cells = [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
              "source": ["import torch\n", 'x = torch.load("m.pt")\n', "%time y = 1"]}]
    path = project / "nb.ipynb"
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1))
    assert main(["check", "--isolated", "--add-noqa", "nb.ipynb"]) == 0
    source = json.loads(path.read_text())["cells"][0]["source"]
    assert source == ["import torch\n", 'x = torch.load("m.pt")  # noqa: TP301\n', "%time y = 1"]
    assert findings(capsys, "nb.ipynb") == []


def test_unused_noqa_is_reported_when_selected(project, capsys):
    (project / "a.py").write_text('import torch\n'
                                  'a = torch.load("m.pt")  # noqa: TP301\n'
                                  'b = torch.zeros(1)  # noqa: TP301\n'
                                  'c = torch.zeros(1)  # noqa: E501, TP101\n'
                                  'd = torch.zeros(1)  # noqa\n'
                                  'e = torch.zeros(1)  # noqa: TOR102\n'
                                  'f = "# noqa: TP301"\n'
                                  'g = torch.zeros(1)  # noqa: TP900\n')
    assert findings(capsys, "a.py") == []  # opt-in: not in the default selection
    assert findings(capsys, "--extend-select", "TP100", "a.py") == [(3, "TP100"), (4, "TP100"), (6, "TP100")]
    main(["check", "--isolated", "--extend-select", "TP100", "--output-format", "concise", "a.py"])
    out = capsys.readouterr().out
    assert "a.py:3:21: TP100 [*] Unused `noqa` directive (unused: `TP301`)" in out
    assert "(unused: `TP101`)" in out


def test_unused_noqa_fix(project, capsys):
    path = project / "a.py"
    path.write_text('import torch\nb = torch.zeros(1)  # noqa: TP301\nc = torch.zeros(1)  # noqa: E501, TP101\n'
                    'd = torch.load("m.pt")  # noqa: TP301, TP101\n')
    assert main(["check", "--isolated", "--extend-select", "TP100", "--fix", "a.py"]) == 0
    assert path.read_text() == ('import torch\nb = torch.zeros(1)\nc = torch.zeros(1)  # noqa: E501\n'
                                'd = torch.load("m.pt")  # noqa: TP301\n')


def test_removing_an_unused_torchfix_code_is_an_unsafe_fix(project, capsys):
    # TorchRL: `# noqa: TOR101` on a line TorchFix's TOR101 (wider than TP251) may still report.
    path = project / "a.py"
    text = 'import torch\nf = torch.vmap  # noqa: TOR101\ng = torch.load("m.pt")  # noqa: TOR101, TP301\n'
    path.write_text(text)
    assert findings(capsys, "--extend-select", "TP100", "a.py") == [(2, "TP100"), (3, "TP100")]
    assert main(["check", "--isolated", "--extend-select", "TP100", "--fix", "a.py"]) == 1
    assert path.read_text() == text
    main(["check", "--isolated", "--extend-select", "TP100", "--fix", "--unsafe-fixes", "a.py"])
    assert path.read_text() == 'import torch\nf = torch.vmap\ng = torch.load("m.pt")  # noqa: TP301\n'


def test_add_noqa_refuses_stdin(project, capsys):
    assert main(["check", "--isolated", "--add-noqa", "-"]) == 2
    assert "--add-noqa edits files" in capsys.readouterr().err
    assert not (project / "-").exists()
