"""Hand-read precision case of round 15 (bench/trust_samples/sample15a.tsv): torchrec's Bento notebooks
write ``language_info: {"name": "plaintext"}`` beside a Python kernelspec; they were skipped as "not Python"
(TP001), and their torch code went unchecked."""

from __future__ import annotations

import json
import subprocess
import sys


def _notebook(metadata: dict) -> str:
    return json.dumps({"metadata": metadata, "nbformat": 4, "nbformat_minor": 5, "cells": [
        {"cell_type": "code", "execution_count": None, "id": "0", "metadata": {}, "outputs": [],
         "source": ["import torch\n", "m = torch.load('m.pt')\n"]}]})


def _check(tmp_path, metadata: dict) -> str:
    path = tmp_path / "n.ipynb"
    path.write_text(_notebook(metadata))
    run = subprocess.run([sys.executable, "-m", "torchpatch", "check", "--isolated", "--no-cache", "--exit-zero",
                          "--output-format", "concise", str(path)], capture_output=True, text=True, cwd=tmp_path)
    return run.stdout + run.stderr


def test_a_python_kernel_wins_over_a_plaintext_language_info(tmp_path):
    out = _check(tmp_path, {"kernelspec": {"display_name": "torchrec", "language": "python", "name": "bento"},
                            "language_info": {"name": "plaintext"}})
    assert "TP301" in out and "TP001" not in out, out


def test_a_notebook_of_another_language_is_still_skipped(tmp_path):
    out = _check(tmp_path, {"kernelspec": {"display_name": "R", "language": "R", "name": "ir"},
                            "language_info": {"name": "R"}})
    assert "not Python" in out and "TP301" not in out, out
