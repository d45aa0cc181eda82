"""Hand-read precision cases for the behaviour and default-change rules (TP4xx): each false finding, wrong message or wrong fix
read on real code in the pre-registered rounds (bench/trust_samples/), as a synthetic case of the same
shape (no package code), grouped here by rule; the comment above each group names its round."""

from __future__ import annotations

import pytest

from precision_helpers import findings_of


# ---- round 11a ----------------------------------------------------------------------------------
# Round 11, part a of issue #8's precision sample (git snapshots of TorchServe, wenet and swav): each false
# finding (or wrong message, or missed finding) read on real code, as a synthetic case of the same shape (no
# package code).


# -- TP410's `dynamic_axes` hint on an explicit `dynamic_axes=None` -----------------------------------
# (wenet's BPU export passes `dynamic_axes=None` to `torch.onnx.export`. None is the parameter's default:
# torch 2.9-2.15's torch.export-based path (`onnx/_internal/exporter/_compat.py`) only warns about and
# converts a `dynamic_axes` that is not None, so "use `dynamic_shapes` with dynamo=True" is wrong there.)

def test_dynamic_axes_none_gets_no_dynamic_shapes_hint(lint):
    source = ("import torch\n"
              "torch.onnx.export(model, (x,), 'm.onnx', opset_version=11, dynamic_axes=None)\n")
    [finding] = findings_of(lint, source, "TP410", target="2.15", min_torch="2.4")
    assert "without `dynamo=`" in finding.message
    assert "dynamic_axes" not in finding.message


@pytest.mark.parametrize("value", ["{'x': {0: 'batch'}}", "axes"])
def test_a_real_dynamic_axes_keeps_the_hint(lint, value):
    source = f"import torch\ntorch.onnx.export(model, (x,), 'm.onnx', dynamic_axes={value})\n"
    [finding] = findings_of(lint, source, "TP410", target="2.15", min_torch="2.4")
    assert "`dynamic_axes` is meant for `dynamo=False`" in finding.message


# ---- round 11b ----------------------------------------------------------------------------------
# Round 11, part b of issue #8's precision sample: 111 findings read, all true; eight had a message that named
# the gcc/nvcc spelling `-std=c++20` for an MSVC flag `/std:c++17` (fixed in TP435). These are that fix and the
# shapes that needed the most care, as synthetic code (no package code): each must stay reported, and each safe
# fix read must keep its exact text.


# -- TP435: the message names the standard in the flag's own compiler spelling ------------------------
# (a build script that picks gcc flags on posix and MSVC flags on Windows, both reaching the extension.)

_PLATFORM_FLAGS = (
    "import os\n"
    "from torch.utils.cpp_extension import load\n"
    "cuda_flags = ['-O3', '-std=c++14']\n"
    "if os.name == 'posix':\n"
    "    host_flags = ['-O3', '-std=c++14']\n"
    "elif os.name == 'nt':\n"
    "    host_flags = ['/O2', '/std:c++17']\n"
    "ext = load(name='ext', sources=['a.cu'], extra_cflags=host_flags, extra_cuda_cflags=cuda_flags)\n"
)


def test_an_msvc_std_flag_is_told_the_msvc_spelling_of_cxx20(lint):
    findings = findings_of(lint, _PLATFORM_FLAGS, "TP435", min_torch="2.4", target="2.15")
    by_flag = {f.message.split("`")[1]: f.message for f in findings}
    assert sorted(by_flag) == ["-std=c++14", "/std:c++17"]
    assert "builds extensions with: `/std:c++20`" in by_flag["/std:c++17"]
    assert "-std=c++20" not in by_flag["/std:c++17"]
    assert "builds extensions with: `-std=c++20`" in by_flag["-std=c++14"]
    # the same string literal in two lists is reported once per list element: three flags in all
    assert len(findings) == 3


def test_setup_py_flags_in_a_compile_args_dict_are_reported_for_both_compilers(lint):
    source = (
        "import os\n"
        "from setuptools import setup\n"
        "from torch.utils.cpp_extension import BuildExtension, CUDAExtension\n"
        "nvcc_flags = ['-O3', '-std=c++14', '-use_fast_math']\n"
        "if os.name == 'posix':\n"
        "    c_flags = ['-O3', '-std=c++14']\n"
        "elif os.name == 'nt':\n"
        "    c_flags = ['/O2', '/std:c++17']\n"
        "setup(name='ext', ext_modules=[CUDAExtension(name='_ext', sources=['a.cu'],\n"
        "      extra_compile_args={'cxx': c_flags, 'nvcc': nvcc_flags})], cmdclass={'build_ext': BuildExtension})\n"
    )
    findings = findings_of(lint, source, "TP435", min_torch="2.4", target="2.15")
    assert [f.row for f in findings] == [4, 6, 8]
    assert "`/std:c++20`" in findings[2].message


# ---- round 12b ----------------------------------------------------------------------------------
# Round 12, part b of issue #8's precision sample (TorchRL, torch_xla and opacus snapshots): each false finding
# read on real code, as a synthetic case of the same shape (no package code).


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


# ---- round 13b ----------------------------------------------------------------------------------
# Round 13, part b of issue #8's precision sample (TransformerEngine, tensordict and torchchat snapshots): each
# finding whose message was wrong for its call, read on real code, as a synthetic case of the same shape (no
# package code).


# -- TP430: ``export_for_training`` first shipped in 2.5 ------------------------------------------------
# (torchchat export.py calls ``export_for_training(model, inputs, dynamic_shapes=...)``; the message said
# "your minimum is 2.4, where it is strict" and the fix "keep the 2.4-2.7 tracing", but the 2.4.1 wheel's
# torch/export/__init__.py has no export_for_training: 2.5.1-2.7.1 declare ``strict: bool = True``,
# 2.8.0-2.10.0 ``False``.)

def test_export_for_training_names_its_first_release(lint):
    source = ("from torch.export import export_for_training\n\n"
              "def lower(model, inputs):\n    return export_for_training(model, inputs, dynamic_shapes=None)\n")
    found = findings_of(lint, source, "TP430", target="2.15", min_torch="2.4")
    assert len(found) == 1
    assert "your minimum is 2.4, where it is strict" not in found[0].message
    assert "strict from its first release, 2.5, to 2.7" in found[0].message
    assert "2.5–2.7" in found[0].fix.message and "2.4" not in found[0].fix.message


@pytest.mark.parametrize(("min_torch", "said", "fix_said"), [
    ("2.6", "your minimum is 2.6, where it is strict", "2.6–2.7"),
    ("2.5", "your minimum is 2.5, where it is strict", "2.5–2.7"),
])
def test_export_for_training_above_its_first_release_names_the_minimum(lint, min_torch, said, fix_said):
    source = "import torch\nep = torch.export.export_for_training(model, (x,))\n"
    found = findings_of(lint, source, "TP430", target="2.15", min_torch=min_torch)
    assert len(found) == 1 and said in found[0].message and fix_said in found[0].fix.message


def test_export_keeps_its_message(lint):
    found = findings_of(lint, "import torch\nep = torch.export.export(model, (x,))\n", "TP430",
                        target="2.15", min_torch="2.4")
    assert len(found) == 1
    assert "your minimum is 2.4, where it is strict" in found[0].message
    assert "2.4–2.7" in found[0].fix.message


# ---- round 14c ----------------------------------------------------------------------------------
# Round 14, part c of issue #8's precision sample: what reading real packages showed, as synthetic cases of the
# same shape (no package code). All 81 findings of the round were true, so nothing here pins a fix: these cases
# keep the shapes read in text-generation-inference, torcheval, higher and Pearl reported (and their fixes as
# read), so that a later precision fix elsewhere that grows too wide shows up here. Each claim was checked
# against the real wheels (see bench/trust_samples/README.md, sample14c).


def _rows(findings):
    return [f.row for f in findings]


# -- a `-std=c++17` list handed to a CUDAExtension ------------------------------------------------------------
# 2.12.1's cpp_extension appends `-std=c++20` only when no `-std=` flag is present, so an explicit c++17 in a
# module-level list used as `extra_compile_args` overrides what 2.12+ headers need.

def test_cxx17_flag_in_a_module_level_list_is_reported(lint):
    code = (
        "from setuptools import setup\n"
        "from torch.utils.cpp_extension import BuildExtension, CUDAExtension\n\n"
        "flags = [\"-std=c++17\"]\n\n"
        "setup(\n"
        "    name=\"kernels\",\n"
        "    ext_modules=[CUDAExtension(name=\"k\", sources=[\"k.cu\"], extra_compile_args=flags)],\n"
        "    cmdclass={\"build_ext\": BuildExtension},\n"
        ")\n"
    )
    findings = findings_of(lint, code, "TP435", name="setup.py", target="2.15", min_torch="2.4")
    assert _rows(findings) == [4]
    assert "2.12" in findings[0].message
