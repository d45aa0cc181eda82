"""Catalog rows answered by TP113, TP236-TP242, TP434-TP436 and the FSDP / hipify / pybind11 table rows:
detection under other spellings, clean look-alikes, fixes, versions, and each claim checked against real torch
(CI installs 2.13.0 CPU; the other releases were read from their wheels, see each rule's docstring)."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import sys
import warnings
from pathlib import Path

import pytest


def _codes(lint, code, **options):
    result = lint(code, select=["ALL"], **options)
    assert result.error is None
    return [finding.code for finding in result.findings]


FLAGGED = [
    # TP113 run-decompositions-preserve-ops
    ("import torch\nep2 = torch.export.load('p.pt2').run_decompositions(_preserve_ops=ops)\n", "TP113", {}),
    # TP236 onnx-export-legacy-options: the new exporter by default (2.9+) or by dynamo=True
    ("from torch.onnx import export\nexport(m, (x,), 'm.onnx', dynamo=True, opset_version=18, autograd_inlining=False)\n",
     "TP236", {}),
    ("import torch\ntorch.onnx.export(m, (x,), 'm.onnx', opset_version=20, training=torch.onnx.TrainingMode.TRAINING)\n",
     "TP236", {"min_torch": "2.9"}),
    # TP237 onnx-export-bytesio
    ("import io as _io\nimport torch\nf = _io.BytesIO()\ntorch.onnx.export(m, (x,), f, opset_version=20)\n", "TP237",
     {"min_torch": "2.9"}),
    # TP238 / TP239: distinctive method names on receivers of unknown type
    ("import torch\nself.model.set_reduce_scatter_divide_factor(ws)\n", "TP238", {}),
    ("import torch\nstager.synchronize_staging()\n", "TP239", {}),
    # TP240 mkldnn-device
    ("import torch as th\nd = th.device('mkldnn:0')\n", "TP240", {}),
    # TP241 profiler-event-metadata, from torch.autograd.profiler.profile too
    ("import torch\ndef f():\n    with torch.autograd.profiler.profile() as prof:\n        run()\n"
     "    return [e.metadata_json for e in prof.function_events]\n", "TP241", {}),
    # TP242 flex-attention-backend-option: both keys raise whatever the minimum
    ("from torch.nn.attention import flex_attention as fa\n"
     "o = fa.flex_attention(q, k, v, kernel_options={'FORCE_USE_FLEX_ATTENTION': True, 'BACKEND': 'AUTO'})\n",
     "TP242", {}),
    # TP434 compile-stance-value, as a decorator and through torch._dynamo
    ("import torch\n@torch.compiler.set_stance('eager')\ndef f(x):\n    return x\n", "TP434", {}),
    ("import torch._dynamo\ntorch._dynamo.set_stance('aot_eager_then_compile')\n", "TP434", {"min_torch": "2.6"}),
    # TP435 cpp-extension-std-flag: setup.py spellings
    ("from torch.utils.cpp_extension import BuildExtension, CppExtension\n"
     "ext = CppExtension('e', ['e.cpp'], extra_compile_args=('-O2', '-std=gnu++14'))\n", "TP435", {}),
    ("import torch.utils.cpp_extension as ce\nm = ce.load('e', ['e.cu'], extra_cuda_cflags=['/std:c++17'])\n", "TP435", {}),
    # TP436 onnx-export-default-opset (opt-in)
    ("import torch\ntorch.onnx.export(m, (x,), 'm.onnx', dynamo=False)\n", "TP436", {"min_torch": "2.8"}),
    # TP201 table rows
    ("from torch.distributed.fsdp.fully_sharded_data_parallel import FullyShardedDataParallel\n"
     "FullyShardedDataParallel.set_state_dict_type(model, t)\n", "TP201", {}),
    ("import torch.utils.hipify.constants\n", "TP201", {}),
    ("from torch.utils.hipify import hipify_python\nok = hipify_python.is_special_file(path)\n", "TP201", {}),
    ("import torch\nflags = torch.utils.cpp_extension._get_pybind11_abi_build_flags()\n", "TP201", {}),
    # TP433 / TP105 for dist.dcp-safetensors
    ("from torch.distributed.checkpoint.filesystem import FileSystemWriter\nw = FileSystemWriter(p, serialization_format=f)\n",
     "TP433", {"min_torch": "2.7"}),
    ("import torch.distributed.checkpoint as dcp\nr = dcp.HuggingFaceStorageWriter(path, save_sharded=True)\n", "TP105", {}),
]


@pytest.mark.parametrize("code, rule, options", FLAGGED, ids=[f"{rule}-{n}" for n, (_, rule, _) in enumerate(FLAGGED)])
def test_flagged(lint, code, rule, options):
    assert rule in _codes(lint, code, **options)


CLEAN = [
    # a decomposition table, and a run_decompositions of another library
    "import torch\nep = ep.run_decompositions(torch.export.default_decompositions())\n",
    "import torch\nimport mylib\nmylib.graph.run_decompositions(_preserve_ops=ops)\n",
    # the TorchScript-based exporter still uses its own options
    "import torch\ntorch.onnx.export(m, (x,), 'm.onnx', dynamo=False, opset_version=17, operator_export_type=t)  # noqa: TP265\n",
    # a non-literal dynamo: not known which exporter runs
    "import io\nimport torch\ntorch.onnx.export(m, (x,), io.BytesIO(), dynamo=flag, opset_version=17)\n",
    # FileSystemWriter without the new keyword; a device string that is not mkldnn
    "import torch.distributed.checkpoint as dcp\nw = dcp.FileSystemWriter(path)\nd = torch.device('mkldnn_cpu' if x else 'cpu')\n",
    # a stance held in a variable; set_stance of another library
    "import torch\nimport mylib\ntorch.compiler.set_stance(mode)\nmylib.set_stance('eager')\n",
    # -std=c++20 and flags held in a variable
    "from torch.utils.cpp_extension import CppExtension\nCppExtension('e', ['e.cpp'], extra_compile_args={'cxx': ['-std=c++20']})\n",
    "from torch.utils.cpp_extension import CppExtension\nCppExtension('e', ['e.cpp'], extra_compile_args=flags)\n",
    # kernel_options held in a variable; other keys
    "from torch.nn.attention.flex_attention import flex_attention\no = flex_attention(q, k, v, kernel_options=opts)\n",
    "from torch.nn.attention.flex_attention import flex_attention\no = flex_attention(q, k, v, kernel_options={'BLOCK_M': 64})\n",
    # FSDP's other static methods, and the DCP helpers that replace state_dict_type
    "from torch.distributed.fsdp import FullyShardedDataParallel as FSDP\nosd = FSDP.optim_state_dict(model, optim)\n",
    "from torch.distributed.checkpoint.state_dict import StateDictOptions, get_model_state_dict\n"
    "sd = get_model_state_dict(model, options=StateDictOptions(full_state_dict=True, cpu_offload=True))\n",
    # hipify's entry point is not deprecated
    "from torch.utils.hipify import hipify_python\nhipify_python.hipify(project_directory='.', output_directory='out')\n",
    # the mkldnn module classes are served lazily in 2.14/2.15 and do not warn
    "import torch\nfrom torch.utils.mkldnn import MkldnnLinear, to_mkldnn\nm = to_mkldnn(model)\n",
]


@pytest.mark.parametrize("code", CLEAN)
def test_clean(lint, code):
    assert _codes(lint, code, target="2.15") == []


def test_versions_gate_the_findings(lint):
    metadata = ("import torch\nwith torch.profiler.profile() as prof:\n    run()\nfor e in prof.events():\n"
                "    print(e.metadata_json, e.event_metadata)\n")
    assert _codes(lint, metadata, target="2.11") == []
    assert _codes(lint, metadata, target="2.14") == ["TP241"]
    assert _codes(lint, metadata, target="2.15") == ["TP241", "TP241"]
    cxx17 = "from torch.utils.cpp_extension import load\nm = load('e', ['e.cpp'], extra_cflags=['-std=c++17'])\n"
    assert _codes(lint, cxx17, target="2.11") == []
    assert _codes(lint, cxx17, target="2.12") == ["TP435"]
    stance = "import torch\ntorch.compiler.set_stance('eager_then_compile')\n"
    assert _codes(lint, stance, min_torch="2.6") == ["TP434"]
    assert _codes(lint, stance, min_torch="2.7") == []
    bytes_io = "import io\nimport torch\ntorch.onnx.export(m, (x,), io.BytesIO(), opset_version=18)\n"
    assert "TP237" not in _codes(lint, bytes_io, target="2.8", min_torch="2.8")  # the old exporter by default there
    assert "TP237" in _codes(lint, bytes_io, target="2.9", min_torch="2.9")


def test_default_opset_is_reported_only_where_it_differs(lint):
    new = "import torch\ntorch.onnx.export(m, (x,), 'm.onnx', dynamo=True)\n"
    assert "TP436" not in _codes(lint, new, min_torch="2.9")
    assert "TP436" not in _codes(lint, new, min_torch="2.6", target="2.8")  # 18 on both
    [message] = [f.message for f in lint(new, select=["TP436"], min_torch="2.6").findings]
    assert "opset 18 on PyTorch 2.6 and 20 on 2.15" in message
    legacy = "import torch\ntorch.onnx.export(m, (x,), 'm.onnx', dynamo=False)\n"
    [message] = [f.message for f in lint(legacy, select=["TP436"], min_torch="2.7", target="2.8").findings]
    assert "opset 17 on PyTorch 2.7 and 18 on 2.8" in message
    # not selected by default: the rule is opt-in
    assert "TP436" not in [f.code for f in lint(legacy, min_torch="2.4").findings]


def test_flex_backend_fix_is_unsafe(lint):
    code = ("from torch.nn.attention.flex_attention import flex_attention\n"
            "out = flex_attention(q, k, v, kernel_options={\"FORCE_USE_FLEX_ATTENTION\": True, \"BLOCK_M\": 64})\n")
    assert "TP242" not in _codes(lint, code, target="2.9")  # 2.9 has no BACKEND key
    [message] = [f.message for f in lint(code, select=["TP242"], min_torch="2.4").findings]
    assert "legacy knob since PyTorch 2.10" in message
    safe_only = lint(code, fix=True, select=["TP242"], min_torch="2.10")
    assert safe_only.fixed_text in (None, code)
    fixed = lint(code, fix=True, unsafe_fixes=True, select=["TP242"], min_torch="2.10")
    assert fixed.fixed_text == code.replace('"FORCE_USE_FLEX_ATTENTION": True', '"BACKEND": "TRITON"')


def test_divide_factor_rename_is_safe_only_from_2_8(lint):
    code = "import torch\nmodel.set_reduce_scatter_divide_factor(2.0)\n"
    fixed = "import torch\nmodel.set_gradient_divide_factor(2.0)\n"
    assert lint(code, fix=True, select=["TP238"], min_torch="2.8").fixed_text == fixed
    assert lint(code, fix=True, select=["TP238"], min_torch="2.7").fixed_text in (None, code)


@pytest.mark.parametrize("flags, expected", [
    ("('-std=c++17',)", "()"),
    ("['-std=c++17', '-O3']", "['-O3']"),
    ("['-O3', '-std=c++14']", "['-O3']"),
    ("['-O3', '-std=c++17', '-g']", "['-O3', '-g']"),
])
def test_std_flag_fix_removes_only_the_flag(lint, flags, expected):
    code = f"from torch.utils.cpp_extension import CppExtension\next = CppExtension('e', ['e.cpp'], extra_compile_args={flags})\n"
    result = lint(code, fix=True, unsafe_fixes=True, select=["TP435"])
    assert result.fixed_text == code.replace(flags, expected)


# -- the claims, against the installed torch ----------------------------------------------------------

def _warnings_of(action):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = action()
    return result, [(item.category, str(item.message)) for item in caught]


@pytest.mark.torch
def test_torch_run_decompositions_has_no_preserve_ops():
    torch = pytest.importorskip("torch")
    parameters = inspect.signature(torch.export.ExportedProgram.run_decompositions).parameters
    assert "_preserve_ops" not in parameters and "decomp_table" in parameters
    assert callable(torch.export.default_decompositions)


@pytest.mark.torch
def test_torch_onnx_defaults_and_deprecations():
    torch = pytest.importorskip("torch")
    from torch.onnx import _constants

    assert _constants.ONNX_DEFAULT_OPSET == 20 and _constants.ONNX_TORCHSCRIPT_EXPORTER_MAX_OPSET == 20
    assert inspect.signature(torch.onnx.export).parameters["dynamo"].default is True
    doc = torch.onnx.export.__doc__
    for option in ("training", "operator_export_type", "do_constant_folding", "custom_opsets",
                   "export_modules_as_functions", "autograd_inlining"):
        assert f"{option}: Deprecated" in doc, option
    # read, not imported: the module needs onnxscript, which CI does not install
    spec = importlib.util.find_spec("torch")
    compat = Path(spec.origin).parent / "onnx" / "_internal" / "exporter" / "_compat.py"
    text = compat.read_text(encoding="utf-8")
    assert "Saving ONNX model to a BytesIO object is deprecated" in text and "DeprecationWarning" in text


@pytest.mark.torch
def test_torch_fsdp_and_dcp_methods():
    torch = pytest.importorskip("torch")
    from torch.distributed.checkpoint.staging import AsyncStager
    from torch.distributed.fsdp import FSDPModule
    from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
    from torch.distributed.fsdp import StateDictType
    import torch.distributed.checkpoint as dcp

    assert "self.set_gradient_divide_factor(factor)" in inspect.getsource(FSDPModule.set_reduce_scatter_divide_factor)
    _, caught = _warnings_of(lambda: AsyncStager.synchronize_staging(None))
    assert any(category is FutureWarning and "synchronize_staging" in text for category, text in caught)
    _, caught = _warnings_of(lambda: FSDP.set_state_dict_type(torch.nn.Linear(1, 1), StateDictType.FULL_STATE_DICT))
    assert any(category is FutureWarning and "FSDP.set_state_dict_type() are being" in text for category, text in caught)
    assert "serialization_format" in inspect.signature(dcp.FileSystemWriter).parameters
    assert "token" not in inspect.signature(dcp.HuggingFaceStorageWriter).parameters


@pytest.mark.torch
def test_torch_mkldnn_device_warns_and_the_modules_do_not():
    torch = pytest.importorskip("torch")
    device, caught = _warnings_of(lambda: torch.device("mkldnn"))
    assert device.type == "mkldnn"
    assert any("'mkldnn' is no longer used as device type" in text for _, text in caught)
    # Building the classes warns about the torch.jit.script_method they use (2.13), never about mkldnn.
    _, caught = _warnings_of(lambda: importlib.import_module("torch.utils.mkldnn").MkldnnLinear)
    assert not [text for _, text in caught if "mkldnn" in text.lower()]


@pytest.mark.torch
def test_torch_profiler_event_metadata():
    pytest.importorskip("torch")
    from torch.autograd.profiler_util import FunctionEvent

    assert isinstance(FunctionEvent.__dict__["metadata_json"], property)
    assert "`metadata_json` is deprecated. Use `event_metadata` instead." in inspect.getsource(FunctionEvent)
    assert "self.event_metadata" in inspect.getsource(FunctionEvent.__init__)


@pytest.mark.torch
def test_torch_flex_attention_rejects_both_backend_keys():
    torch = pytest.importorskip("torch")
    from torch.nn.attention.flex_attention import flex_attention

    q = torch.randn(1, 1, 16, 8)
    with pytest.raises(RuntimeError, match="BACKEND cannot be combined with legacy FORCE_USE_FLEX_ATTENTION"):
        flex_attention(q, q, q, kernel_options={"BACKEND": "TRITON", "FORCE_USE_FLEX_ATTENTION": True})


@pytest.mark.torch
def test_torch_invalid_stance_fails_when_a_compiled_function_runs():
    torch = pytest.importorskip("torch")
    from torch.compiler import set_stance

    compiled = torch.compile(lambda x: x + 1, backend="eager")
    set_stance("eager_on_recompiles")  # accepted without a check
    try:
        with pytest.raises(RuntimeError, match="invalid torch.compile stance"):
            compiled(torch.ones(2))
    finally:
        set_stance("default")
    with set_stance("eager_then_compile"):
        assert compiled(torch.ones(2)).tolist() == [2.0, 2.0]


@pytest.mark.torch
def test_torch_cpp_extension_builds_with_cxx20_unless_told_otherwise():
    pytest.importorskip("torch")
    from torch.utils import cpp_extension

    source = inspect.getsource(cpp_extension)
    assert "-std=c++20" in source and "'-std=c++17'" not in source
    assert "if not any(flag.startswith(cpp_flag_prefix) for flag in cflags)" in source  # a user -std wins


@pytest.mark.torch
def test_torch_cpp_helpers_warn():
    pytest.importorskip("torch")
    from torch.utils import cpp_extension
    from torch.utils.hipify import hipify_python

    flags, caught = _warnings_of(cpp_extension._get_pybind11_abi_build_flags)
    assert flags == [] and any(category is DeprecationWarning for category, _ in caught)
    _, caught = _warnings_of(lambda: hipify_python.is_cusparse_file("a.cu"))
    assert any(category is FutureWarning and "no longer uses function is_cusparse_file" in text for category, text in caught)
    sys.modules.pop("torch.utils.hipify.constants", None)
    _, caught = _warnings_of(lambda: importlib.import_module("torch.utils.hipify.constants"))
    assert any(category is FutureWarning and "constants.py is no longer used" in text for category, text in caught)
