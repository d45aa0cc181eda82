"""Round 12, part b of issue #8's precision sample (TorchRL, torch_xla and opacus snapshots): each false
finding read on real code, as a synthetic case of the same shape (no package code)."""

from __future__ import annotations

import pytest

from precision_helpers import findings_of


# -- TP444: the spec of a ``forward(self, *args)`` module is one level deeper ---------------------------
# (torch_xla test/stablehlo: a module whose forward takes ``*args`` is exported with
# ``dynamic_shapes=(({2: Dim("dim")},),)``: the outer tuple is forward's parameters, the inner one the
# tensors that ``*args`` collects. The rule read the inner tuple as a per-dimension spec of the first
# tensor, so the dict at its position 0 "marked dim 0 dynamic" and a batch of 1 was reported; torch 2.13
# exports that call with dim 2 symbolic and dim 0 static, as the spec says.)

_STAR_ARGS_MODULE = (
    "import torch\nfrom torch.export import Dim, export\n\n"
    "class Wrap(torch.nn.Module):\n    def forward(self, *args):\n        return args[0].transpose(-2, -1)\n\n"
)


@pytest.mark.parametrize("source", [
    _STAR_ARGS_MODULE
    + "def test_it():\n    args = (torch.rand((1, 8, 3, 256)),)\n    shapes = (({2: Dim('dim')},),)\n"
      "    return export(Wrap(), args=args, dynamic_shapes=shapes, strict=False)\n",
    _STAR_ARGS_MODULE
    + "ep = export(Wrap(), (torch.rand(1, 4), torch.rand(5, 4)), dynamic_shapes=(({1: Dim('d')}, None),), strict=False)\n",
    # a per-tensor tuple never holds a dict: such a spec describes a container, not a tensor's dims
    _STAR_ARGS_MODULE
    + "ep = export(Wrap(), (torch.rand(1, 4),), dynamic_shapes=[({1: Dim('d')}, None)], strict=False)\n",
])
def test_a_nested_star_args_spec_is_matched_to_the_tensors_it_names(lint, source):
    assert findings_of(lint, source, "TP444", target="2.15", min_torch="2.4") == []


@pytest.mark.parametrize(("source", "said"), [
    # the nested spec marks dim 0 of the first tensor, which has size 1: still reported
    (_STAR_ARGS_MODULE
     + "ep = export(Wrap(), (torch.rand(1, 4),), dynamic_shapes=(({0: Dim('batch')},),), strict=False)\n",
     "dim 0 has size 1"),
    # the nested spec marks dim 2, which has size 1: reported for dim 2, not for dim 0
    (_STAR_ARGS_MODULE
     + "ep = export(Wrap(), (torch.rand(1, 8, 1),), dynamic_shapes=(({2: Dim('d')},),), strict=False)\n",
     "dim 2 has size 1"),
    # the second tensor of ``*args``
    (_STAR_ARGS_MODULE
     + "ep = export(Wrap(), (torch.rand(4, 4), torch.rand(1, 4)), dynamic_shapes=((None, {0: Dim('b')}),), "
       "strict=False)\n",
     "dim 0 has size 1"),
])
def test_a_size_one_dim_that_a_nested_spec_marks_stays_reported(lint, source, said):
    found = findings_of(lint, source, "TP444", target="2.15", min_torch="2.4")
    assert len(found) == 1
    assert said in found[0].message


# -- the own-pin run: an extra's torch pin is not the package's floor -------------------------------------
# (TorchRL pyproject.toml: ``dependencies = ["torch>=2.1.0", ...]`` and an extra
# ``replay_buffer = ["torch>=2.7.0"]``. The pins of the whole file were intersected, so min-torch became 2.7
# and 31 true findings (TP433 `padding_side=` needs 2.5, TP301) went away; a plain install allows 2.1.)

from torchpatch.engine.config import min_torch_from_pins  # noqa: E402


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
