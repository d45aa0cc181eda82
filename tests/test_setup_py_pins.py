"""The torch floor of a setup.py read statically (issue #23): transformers' and diffusers' ``_deps`` lookup table."""

from __future__ import annotations

from pathlib import Path

import pytest

from torchpatch.dependency_files import requirements_in
from torchpatch.engine.config import min_torch_from_pins

# The shape of transformers 5.x's setup.py (diffusers' is the same): a table of literals, a dict comprehension
# over it, a lookup helper, extras filled item by item, and install_requires made of lookups.
TRANSFORMERS_LIKE = '''
import os, re
from setuptools import setup

_deps = [
    "Pillow>=10.0.1,<=15.0",
    "accelerate>=1.1.0",
    "huggingface-hub>=1.3.0,<2.0",
    "numpy>=1.17",
    "torch>=2.6",
    "torchvision",
]
deps = {b: a for a, b in (re.findall(r"^(([^!=<>~ ]+)(?:[!=<>~ ].*)?$)", x)[0] for x in _deps)}


def deps_list(*pkgs):
    return [deps[pkg] for pkg in pkgs]


extras = {}
extras["torch"] = deps_list("torch", "accelerate")
extras["vision"] = deps_list("torchvision", "Pillow")
if os.name == "nt":
    extras["flax"] = []
else:
    extras["flax"] = deps_list("numpy")
extras["all"] = extras["torch"] + extras["vision"]
install_requires = [
    deps["huggingface-hub"],
    deps["numpy"],
]
setup(name="x", install_requires=list(install_requires), extras_require=extras)
'''


def test_the_deps_table_idiom_is_read(tmp_path):
    setup_py = tmp_path / "setup.py"
    setup_py.write_text(TRANSFORMERS_LIKE)
    written = [span.requirement.name for span in requirements_in(setup_py, TRANSFORMERS_LIKE)]
    assert sorted(set(written)) == ["Pillow", "accelerate", "huggingface-hub", "numpy", "torch", "torchvision"]
    torch_span = next(s for s in requirements_in(setup_py, TRANSFORMERS_LIKE) if s.requirement.name == "torch")
    assert TRANSFORMERS_LIKE[torch_span.start:torch_span.end] == "torch>=2.6"  # where the pin is written
    version, where = min_torch_from_pins(tmp_path)
    assert (str(version), where) == ("2.6", "setup.py")


@pytest.mark.parametrize("install_requires", [
    'install_requires=[deps["torch"], deps["numpy"]]',
    'install_requires=deps_list("torch", "numpy")',
    'install_requires=REQUIRED + [deps["torch"]]',
])
def test_install_requires_through_the_table(tmp_path, install_requires):
    text = (TRANSFORMERS_LIKE.replace('"torch>=2.6"', '"torch>=2.8"').replace(
        "setup(name=\"x\", install_requires=list(install_requires), extras_require=extras)",
        f"REQUIRED = [\"numpy\"]\nsetup(name=\"x\", {install_requires})"))
    (tmp_path / "setup.py").write_text(text)
    assert str(min_torch_from_pins(tmp_path)[0]) == "2.8"


def test_what_is_computed_says_nothing(tmp_path):
    text = '''
from setuptools import setup
_deps = open("requirements.txt").read().splitlines()
deps = {b: a for a, b in (x.split("==") for x in _deps)}
def deps_list(*pkgs):
    return [deps[pkg] for pkg in pkgs]
setup(name="x", install_requires=deps_list("torch"), extras_require={"t": [deps["torch"]]})
'''
    (tmp_path / "setup.py").write_text(text)
    assert min_torch_from_pins(tmp_path) is None


def test_show_settings_names_setup_py_as_the_source(tmp_path, monkeypatch, capsys):
    from torchpatch.frontends.cli import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "setup.py").write_text(TRANSFORMERS_LIKE)
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "src" / "pkg" / "m.py").write_text("import torch\n")
    assert main(["check", "--show-settings", "src/pkg/m.py"]) == 0
    assert f'min-torch = "2.6"  # torch pins in {tmp_path / "setup.py"}' in capsys.readouterr().out
