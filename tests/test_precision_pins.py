"""Hand-read precision cases for min-torch read from the project's pins: each false finding, wrong message or wrong fix
read on real code in the pre-registered rounds (bench/trust_samples/), as a synthetic case of the same
shape (no package code), grouped here by rule; the comment above each group names its round."""

from __future__ import annotations

import pytest

from torchpatch.engine.config import min_torch_from_pins


# ---- round 7a -----------------------------------------------------------------------------------
# Round 7, part a of issue #8's precision sample: each false finding (or wrong message, or missed finding) read
# on real packages, as a synthetic case of the same shape (no package code).


def test_min_torch_from_a_pin_with_a_local_label(tmp_path):
    from torchpatch.engine.config import min_torch_from_pins

    (tmp_path / "requirements.txt").write_text("numpy\ntorch==2.7.1+cu118\n", encoding="utf-8")
    version, where = min_torch_from_pins(tmp_path)
    assert str(version) == "2.7" and where == "requirements.txt"


# ---- round 12b ----------------------------------------------------------------------------------
# Round 12, part b of issue #8's precision sample (TorchRL, torch_xla and opacus snapshots): each false finding
# read on real code, as a synthetic case of the same shape (no package code).


# -- the own-pin run: an extra's torch pin is not the package's floor -------------------------------------
# (TorchRL pyproject.toml: ``dependencies = ["torch>=2.1.0", ...]`` and an extra
# ``replay_buffer = ["torch>=2.7.0"]``. The pins of the whole file were intersected, so min-torch became 2.7
# and 31 true findings (TP433 `padding_side=` needs 2.5, TP301) went away; a plain install allows 2.1.)


@pytest.mark.parametrize(("name", "text", "expected"), [
    ("pyproject.toml", '[project]\nname = "p"\ndependencies = ["numpy", "torch>=2.1.0"]\n'
                       '[project.optional-dependencies]\nbuffers = ["torch>=2.7.0"]\n', "2.4"),
    ("pyproject.toml", '[project]\nname = "p"\ndependencies = ["torch>=2.5"]\n'
                       '[dependency-groups]\ndev = ["torch>=2.9"]\n', "2.5"),
    ("pyproject.toml", '[tool.poetry.dependencies]\npython = "^3.10"\ntorch = ">=2.5"\n'
                       '[tool.poetry.group.gpu.dependencies]\ntorch = ">=2.8"\n', "2.5"),
    ("setup.cfg", "[options]\ninstall_requires =\n    torch>=2.6\n[options.extras_require]\nfast =\n    torch>=2.10\n",
     "2.6"),
    ("setup.py", 'from setuptools import setup\nsetup(install_requires=["torch>=2.6"], '
                 'extras_require={"fast": ["torch>=2.10"]})\n', "2.6"),
])
def test_an_extras_torch_pin_does_not_lift_the_plain_installs_floor(tmp_path, name, text, expected):
    (tmp_path / name).write_text(text, encoding="utf-8")
    assert str(min_torch_from_pins(tmp_path)[0]) == expected


@pytest.mark.parametrize(("name", "text", "expected"), [
    # torch only in an extra (or unversioned in the plain install): the extra's pin is all the file says
    ("pyproject.toml", '[project]\nname = "p"\ndependencies = ["torch"]\n'
                       '[project.optional-dependencies]\ngpu = ["torch>=2.7"]\n', "2.7"),
    ("pyproject.toml", '[project]\nname = "p"\ndependencies = ["numpy"]\n'
                       '[project.optional-dependencies]\ngpu = ["torch>=2.8"]\n', "2.8"),
    ("setup.cfg", "[options]\ninstall_requires =\n    numpy\n[options.extras_require]\ndev =\n    torch==2.9.1\n", "2.9"),
])
def test_an_extras_pin_still_counts_when_the_plain_install_pins_no_torch_version(tmp_path, name, text, expected):
    (tmp_path / name).write_text(text, encoding="utf-8")
    assert str(min_torch_from_pins(tmp_path)[0]) == expected
