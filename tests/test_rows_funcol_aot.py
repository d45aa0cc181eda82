"""API-table rows for `dist.funcol-renames`, `dist.nn-functional` and `export.aot-compile`: detection,
fix safety by min-torch, clean look-alikes, and each claim checked against real torch (CI installs 2.13.0)."""

from __future__ import annotations

import inspect
import warnings

import pytest

FUNCOL_RENAMES = {
    "all_gather_tensor": "all_gather_single",
    "all_gather_tensor_autograd": "all_gather_single_autograd",
    "reduce_scatter_tensor": "reduce_scatter_single",
    "reduce_scatter_tensor_autograd": "reduce_scatter_single_autograd",
    "all_gather_into_tensor_coalesced": "all_gather_single_coalesced",
    "reduce_scatter_tensor_coalesced": "reduce_scatter_single_coalesced",
}
NN_FUNCTIONAL_DEPRECATED = ["broadcast", "all_reduce", "all_gather", "all_to_all_single", "reduce_scatter"]


def _findings(lint, code, **options):
    result = lint(code, select=["ALL"], **options)
    assert result.error is None
    return [(f.code, f.message) for f in result.findings]


def test_funcol_rename_is_safe_only_from_2_13(lint):
    code = "from torch.distributed import _functional_collectives as fc\nout = fc.reduce_scatter_tensor(x, 'sum', 0, g)\n"
    fixed = "from torch.distributed import _functional_collectives as fc\nout = fc.reduce_scatter_single(x, 'sum', 0, g)\n"
    safe = lint(code, fix=True, select=["TP201"], target="2.15", min_torch="2.13")
    assert safe.fixed_text == fixed
    older = lint(code, fix=True, select=["TP201"], target="2.15", min_torch="2.12")
    assert older.fixed_text in (None, code)
    [(rule, message)] = _findings(lint, code, target="2.15", min_torch="2.12")
    assert rule == "TP201" and "2.13" in message


def test_funcol_rows_need_the_2_13_target(lint):
    code = "import torch.distributed._functional_collectives as funcol\nout = funcol.all_gather_tensor(x, 0, g)\n"
    assert _findings(lint, code, target="2.12") == []
    assert [rule for rule, _ in _findings(lint, code, target="2.13")] == ["TP201"]


def test_nn_functional_is_flagged_from_2_12_without_a_fix(lint):
    code = "import torch.distributed.nn as dnn\nfrom torch.distributed.nn.functional import all_reduce\ny = dnn.all_gather(x)\nz = all_reduce(x)\n"
    assert _findings(lint, code, target="2.11") == []
    found = _findings(lint, code, target="2.15", min_torch="2.13")
    # the dotted call, the from-import, and the call of the from-imported name (where torch warns)
    assert [rule for rule, _ in found] == ["TP201", "TP201", "TP201"]
    assert all("2.12" in message for _, message in found)
    result = lint(code, fix=True, unsafe_fixes=True, select=["ALL"], target="2.15", min_torch="2.13")
    assert result.fixed_text in (None, code)


CLEAN = [
    # the replacements, and the functional collectives' own all_reduce/broadcast (not deprecated)
    "import torch.distributed._functional_collectives as funcol\nout = funcol.all_gather_single(x, 0, g)\n",
    "import torch.distributed._functional_collectives as funcol\ny = funcol.all_reduce(x, 'sum', g)\n",
    # torch.distributed's own collectives share the names and are not deprecated
    "import torch.distributed as dist\ndist.all_reduce(x)\ndist.broadcast(x, 0)\ndist.all_gather(outs, x)\n",
    # the non-deprecated torch.distributed.nn.functional collectives
    "from torch.distributed.nn.functional import all_to_all, gather\nys = all_to_all(outs, ins)\n",
    # AOTInductor's package API
    "import torch\np = torch._inductor.aoti_compile_and_package(torch.export.export(m, (x,)), package_path='m.pt2')\n",
]


@pytest.mark.parametrize("code", CLEAN, ids=range(len(CLEAN)))
def test_clean(lint, code):
    assert _findings(lint, code, target="2.15", min_torch="2.13") == []


def test_aot_compile_is_flagged_from_2_6(lint):
    code = "import torch._export\nso = torch._export.aot_compile(m, (x,))\nrun = torch._export.aot_load(so, 'cpu')\n"
    assert _findings(lint, code, target="2.5") == []
    found = _findings(lint, code, target="2.6")
    assert [rule for rule, _ in found] == ["TP201", "TP201"]
    assert all("2.6" in message for _, message in found)


# -- against real torch ----------------------------------------------------------------------------------------


@pytest.mark.torch
def test_old_funcol_names_warn_and_forward_the_same_arguments(monkeypatch):
    torch = pytest.importorskip("torch")
    import torch.distributed._functional_collectives as funcol

    for old, new in FUNCOL_RENAMES.items():
        assert inspect.signature(getattr(funcol, old)) == inspect.signature(getattr(funcol, new)), old
        seen = []
        monkeypatch.setattr(funcol, new, lambda *args, **kwargs: seen.append((args, kwargs)) or "sentinel")
        arguments = tuple(range(len(inspect.signature(getattr(funcol, old)).parameters)))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert getattr(funcol, old)(*arguments) == "sentinel"
        assert seen == [(arguments, {})], old
        assert any(issubclass(w.category, FutureWarning) and new in str(w.message) for w in caught), old


@pytest.mark.torch
def test_nn_functional_collectives_warn(monkeypatch):
    torch = pytest.importorskip("torch")
    import torch.distributed.nn as dnn
    import torch.distributed.nn.functional as dist_fn

    class _Apply:
        @staticmethod
        def apply(*args):
            return "sentinel"

    for helper in ("_Broadcast", "_AllReduce", "_AllGather", "_AlltoAllSingle", "_Reduce_Scatter", "_AlltoAll", "_Gather"):
        monkeypatch.setattr(dist_fn, helper, _Apply)
    tensor = torch.ones(2)
    calls = {
        "broadcast": lambda: dist_fn.broadcast(tensor, 0),
        "all_reduce": lambda: dist_fn.all_reduce(tensor),
        "all_gather": lambda: dist_fn.all_gather(tensor),
        "all_to_all_single": lambda: dist_fn.all_to_all_single(tensor, tensor),
        "reduce_scatter": lambda: dist_fn.reduce_scatter(tensor, [tensor]),
    }
    assert sorted(calls) == sorted(NN_FUNCTIONAL_DEPRECATED)
    for name, call in calls.items():
        assert getattr(dnn, name) is getattr(dist_fn, name), name
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert call() == "sentinel"
        assert any(issubclass(w.category, FutureWarning) and "deprecated" in str(w.message) for w in caught), name
    # the collectives the table leaves alone do not warn
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        dist_fn.all_to_all([tensor], [tensor])
        dist_fn.gather(tensor)
    assert not [w for w in caught if issubclass(w.category, FutureWarning)]


@pytest.mark.torch
def test_aot_compile_logs_its_deprecation_and_the_package_api_exists():
    torch = pytest.importorskip("torch")
    import torch._export
    import torch._inductor

    for name in ("aot_compile", "aot_load"):
        assert "aot_compile_warning()" in inspect.getsource(getattr(torch._export, name)), name
    assert "being deprecated" in inspect.getsource(torch._export.aot_compile_warning)
    assert callable(torch._inductor.aoti_compile_and_package)
    assert callable(torch._inductor.aoti_load_package)


def test_composable_fully_shard_is_flagged_but_not_fsdp2(lint):
    code = ("import torch.distributed._composable as comp\nfrom torch.distributed._composable import replicate\n"
            "from torch.distributed.fsdp import fully_shard\ncomp.fully_shard(m)\nfully_shard(m)\nreplicate(m)\n")
    found = _findings(lint, code, target="2.6")
    assert [rule for rule, _ in found] == ["TP101"]
    assert "removed in 2.6" in found[0][1]
    result = lint(code, fix=True, unsafe_fixes=True, select=["ALL"], target="2.6")
    assert result.fixed_text in (None, code)


@pytest.mark.torch
def test_composable_fully_shard_is_gone_and_its_siblings_stay():
    torch = pytest.importorskip("torch")
    import importlib.util

    import torch.distributed._composable as comp

    assert importlib.util.find_spec("torch.distributed._composable.fully_shard") is None
    assert not hasattr(comp, "fully_shard")
    assert callable(comp.replicate) and callable(comp.checkpoint)
    assert callable(torch.distributed.fsdp.fully_shard)


QUANTIZED_CREATORS = {
    "quantize_per_tensor": "torch.quantize_per_tensor(torch.randn(4), 0.1, 0, torch.qint8)",
    "quantize_per_channel": "torch.quantize_per_channel(torch.randn(2, 2), torch.tensor([0.1, 0.1]), "
                            "torch.tensor([0, 0]), 0, torch.quint8)",
    "quantize_per_tensor_dynamic": "torch.quantize_per_tensor_dynamic(torch.randn(4), torch.quint8, False)",
}


def test_quantized_creators_are_flagged_from_2_13(lint):
    for name, call in QUANTIZED_CREATORS.items():
        code = f"import torch\nq = {call}\n"
        assert _findings(lint, code, target="2.12") == [], name
        found = _findings(lint, code, target="2.13")
        assert [rule for rule, _ in found] == ["TP201"], name
        assert "2.13" in found[0][1]
    assert _findings(lint, "import torch\ny = torch.dequantize(q)\nz = x.to(torch.float16)\n", target="2.15") == []


@pytest.mark.torch
@pytest.mark.parametrize("name", sorted(QUANTIZED_CREATORS))
def test_quantized_creators_warn_on_real_torch(name):
    """The warning is TORCH_WARN_ONCE (once per process): each call runs in a fresh interpreter."""
    pytest.importorskip("torch")
    import subprocess
    import sys

    probe = ("import torch, warnings\nwarnings.simplefilter('always')\n"
             f"with warnings.catch_warnings(record=True) as caught:\n    warnings.simplefilter('always')\n"
             f"    {QUANTIZED_CREATORS[name]}\n"
             "print(any('are deprecated' in str(w.message) and 'qint8' in str(w.message) for w in caught))\n")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "True", name


def test_memory_timeline_rule_versions(lint):
    code = "import torch\nprof = torch.profiler.profile()\nprof.export_memory_timeline('m.html')\n"
    assert _findings(lint, code, target="2.9") == []
    [(rule, message)] = _findings(lint, code, target="2.10")
    assert rule == "TP235" and "2.10" in message
    assert _findings(lint, "import numpy\nimport torch\nnumpy.export_memory_timeline('m')\n", target="2.15") == []


@pytest.mark.torch
def test_export_memory_timeline_warns_on_real_torch(tmp_path):
    torch = pytest.importorskip("torch")

    prof = torch.profiler.profile()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises((ValueError, AssertionError)):
            prof.export_memory_timeline(str(tmp_path / "memory.html"))  # not profiling memory: refused after the warning
    assert any(issubclass(w.category, FutureWarning) and "export_memory_timeline" in str(w.message) for w in caught)
    assert callable(torch.cuda.memory._record_memory_history)
    # the warning names `_export_memory_snapshot`, which does not exist; the rule points at `_dump_snapshot`
    assert not hasattr(torch.cuda.memory, "_export_memory_snapshot")
    assert callable(torch.cuda.memory._dump_snapshot)


def test_shard_tensor_is_flagged_from_2_7_without_a_fix(lint):
    code = "from torch.distributed.tensor._api import _shard_tensor\ndt = _shard_tensor(full, [Shard(0)], mesh)\n"
    assert _findings(lint, code, target="2.6") == []
    found = _findings(lint, code, target="2.7")
    assert found and all(rule == "TP201" and "2.7" in message for rule, message in found)
    result = lint(code, fix=True, unsafe_fixes=True, select=["ALL"], target="2.15", min_torch="2.7")
    assert result.fixed_text in (None, code)
    assert _findings(lint, "from torch.distributed.tensor import distribute_tensor\n"
                           "dt = distribute_tensor(full, mesh, [Shard(0)], src_data_rank=None)\n", target="2.15") == []


@pytest.mark.torch
def test_shard_tensor_warns_and_distribute_tensor_takes_src_data_rank():
    torch = pytest.importorskip("torch")
    from torch.distributed.tensor import _api

    assert "src_data_rank" in inspect.signature(torch.distributed.tensor.distribute_tensor).parameters
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(Exception):  # no process group: refused after the warning
            _api._shard_tensor(torch.ones(2), [torch.distributed.tensor.Shard(0)])
    assert any(issubclass(w.category, DeprecationWarning) and "distribute_tensor" in str(w.message) for w in caught)
