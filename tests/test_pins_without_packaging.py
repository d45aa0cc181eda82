"""min-torch from pins: a file whose requirements cannot name torch is not parsed (packaging is not imported).

packaging's import is a third of a one-file check's start-up. A setup.py that imports torch in its code but
lists no torch requirement (detectron2), or a requirements file without a torch line, says nothing about
min-torch: a requirement naming torch starts after a quote (setup.py, pyproject.toml) or at a line start
(requirements files, Poetry keys), and the text is searched for that first.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from torchpatch.engine.config import min_torch_from_pins, torch_pins

DETECTRON2_LIKE_SETUP = '''\
import torch
from setuptools import setup

torch_ver = [int(x) for x in torch.__version__.split(".")[:2]]
assert torch_ver >= [1, 8], "Requires PyTorch >= 1.8"
setup(name="d2", install_requires=["numpy", "Pillow>=7.1"])
'''


@pytest.mark.parametrize("name, text, pinned", [
    ("setup.py", DETECTRON2_LIKE_SETUP, None),
    ("setup.py", 'from setuptools import setup\nsetup(install_requires=["numpy", "torch>=2.5"])\n', "2.5"),
    ("setup.py", "from setuptools import setup\nsetup(install_requires=[ 'Torch >= 2.6' ])\n", "2.6"),
    ("pyproject.toml", '[project]\nname = "x"\ndependencies = ["numpy"]\n', None),
    ("pyproject.toml", '[project]\nname = "x"\ndependencies = [\n  "torch>=2.7",\n]\n', "2.7"),
    ("pyproject.toml", '[tool.poetry.dependencies]\npython = "^3.10"\ntorch = "^2.5"\n', "2.5"),
    ("pyproject.toml", '[tool.poetry.dependencies]\ntorch = {version = ">=2.6"}\n', "2.6"),
    ("requirements.txt", "numpy\n# torch is installed by the image\n", None),
    ("requirements.txt", "numpy\n  torch==2.8.0 ; python_version >= '3.9'\n", "2.8"),
])
def test_pins_found_exactly_as_before(tmp_path: Path, name: str, text: str, pinned: str | None):
    (tmp_path / name).write_text(text)
    found = min_torch_from_pins(tmp_path)
    assert (str(found[0]) if found else None) == pinned


def test_included_requirements_still_read(tmp_path: Path):
    (tmp_path / "base.txt").write_text("torch>=2.6\n")
    (tmp_path / "requirements.txt").write_text("-r base.txt\nnumpy\n")
    assert [str(spec) for spec, _ in torch_pins(tmp_path / "requirements.txt")] == [">=2.6"]


def test_a_setup_py_without_a_torch_requirement_does_not_import_packaging(tmp_path: Path):
    (tmp_path / "setup.py").write_text(DETECTRON2_LIKE_SETUP)
    script = ("import json, sys\nfrom pathlib import Path\nfrom torchpatch.engine.config import min_torch_from_pins\n"
              "found = min_torch_from_pins(Path(sys.argv[1]))\n"
              "print(json.dumps([found is None, any(m.startswith('packaging') for m in sys.modules)]))\n")
    run = subprocess.run([sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True, check=True)
    assert json.loads(run.stdout) == [True, False]
