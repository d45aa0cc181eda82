"""Hand-read precision cases of round 17a (bench/trust_samples/sample17a.tsv).

Small invented snippets of the shapes that were judged false on real code; each failed before its fix.
"""

from __future__ import annotations

import json

from torchpatch.engine.source import python_lines_of_cell
from torchpatch.frontends.cli import main


def _notebook(cells: list[list[str]]) -> str:
    return json.dumps({
        "cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": c}
                  for c in cells],
        "metadata": {"language_info": {"name": "python"}},
        "nbformat": 4, "nbformat_minor": 5,
    }, indent=1)


# A tutorial notebook with a cell that is just `ls -l text.txt`: IPython runs a one-line cell whose first
# word is a line magic or shell alias as that magic (automagic, InteractiveShell.transform_cell prefilters
# single-line cells), so the notebook is valid and TP001 "syntax error ... not checked" was wrong.
def test_a_single_line_automagic_cell_does_not_make_the_notebook_unreadable(tmp_path, capsys):
    path = tmp_path / "n.ipynb"
    path.write_text(_notebook([["import torch\n"], ["ls -l text.txt"], ["cd ../data\n"],
                               ["state = torch.load(p)"]]))
    assert main(["check", "--isolated", "--select", "TP301", "--output-format", "json", str(path)]) == 1
    captured = capsys.readouterr()
    (finding,) = json.loads(captured.out)
    assert finding["code"] == "TP301" and "syntax error" not in captured.err
    assert main(["check", "--isolated", "--fix", "--unsafe-fixes", "--select", "TP301", str(path)]) == 0
    sources = [c["source"] for c in json.loads(path.read_text())["cells"]]
    assert sources[1] == ["ls -l text.txt"] and sources[2] == ["cd ../data\n"]


def test_automagic_is_only_a_single_line_cell_that_is_not_python():
    # Python that starts with a magic's name stays code.
    assert python_lines_of_cell(["time = 3"], 0) == ["time = 3"]
    assert python_lines_of_cell(["run(model)"], 0) == ["run(model)"]
    assert python_lines_of_cell(["ls"], 0) == ["ls"]
    # IPython prefilters single-line cells only: in a longer cell the line is a syntax error there too.
    assert python_lines_of_cell(["import os", "ls -l"], 0) == ["import os", "ls -l"]
    assert python_lines_of_cell(["ls -l text.txt", ""], 3) == ["# torchpatch-magic:3:0", ""]


def test_a_real_syntax_error_in_a_single_line_cell_is_still_reported(tmp_path, capsys):
    path = tmp_path / "n.ipynb"
    path.write_text(_notebook([["import torch\n"], ["print(1"]]))
    assert main(["check", "--isolated", str(path)]) == 1
    assert "cell 2, line 1: syntax error" in capsys.readouterr().err


# Recall (bench/trust_samples/recall17a.tsv): DeepLearningExamples and votenet build buffers with
# `torch.cuda.IntTensor([0])`, `torch.cuda.FloatTensor(b, n, k).zero_()`, `torch.cuda.LongTensor(n).random_()`;
# every CUDA build 2.4-2.15 warns "The torch.cuda.*DtypeTensor constructors are no longer recommended".
def test_cuda_typed_tensor_constructor_calls_are_reported(tmp_path, capsys):
    path = tmp_path / "m.py"
    path.write_text("import torch\nfrom torch.cuda import DoubleTensor as DT\n"
                    "overflow = torch.cuda.IntTensor([0])\n"
                    "one_hot = torch.cuda.FloatTensor(8, 4, 12).zero_()\n"
                    "stats = DT(values)\n")
    assert main(["check", "--isolated", "--select", "TP225", "--output-format", "json", str(path)]) == 1
    rows = sorted(f["location"]["row"] for f in json.loads(capsys.readouterr().out))
    assert rows == [3, 4, 5]


def test_cuda_typed_tensor_names_that_are_not_called_are_not_reported(tmp_path, capsys):
    path = tmp_path / "m.py"
    path.write_text("import torch\n"
                    "label = label.type(torch.cuda.LongTensor)\n"
                    "ok = isinstance(x, (torch.cuda.FloatTensor, torch.cuda.HalfTensor))\n"
                    "Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor\n"
                    "cpu = torch.FloatTensor(2, 3)\n")
    assert main(["check", "--isolated", "--select", "TP225", "--output-format", "json", str(path)]) == 0
    assert json.loads(capsys.readouterr().out) == []
