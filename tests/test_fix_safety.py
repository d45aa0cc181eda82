"""Fixes that must never break code (issue: trust): each case here was a broken fix on real code."""

from __future__ import annotations

import pytest


def _fix(lint, code, unsafe=False, **options):
    result = lint(code, fix=True, unsafe_fixes=unsafe, **options)
    assert result.error is None, result.error
    return result


# -- module moves: submodule by submodule, as the wheels lay them out ------------------------------

def test_fully_shard_submodule_maps_to_the_package_not_to_the_function(lint):
    # litgpt finetune/lora.py: ``torch.distributed.fsdp.fully_shard`` is the function, not a module.
    code = "def parallelize(model):\n    from torch.distributed._composable.fsdp.fully_shard import fully_shard\n    fully_shard(model)\n"
    result = _fix(lint, code, min_torch="2.6")
    assert result.fixed_text == code.replace("torch.distributed._composable.fsdp.fully_shard", "torch.distributed.fsdp")


@pytest.mark.parametrize("line", [
    "from torch.distributed._tensor.api import _ToTorchTensor\n",  # the private tensor._api only
    "from torch.distributed._tensor.placement_types import DTensorSpec\n",  # tensor._dtensor_spec
    "from torch.distributed._tensor.placement_types import Shard, DTensorSpec\n",
    "from torch.distributed._tensor.random import OffsetBasedRNGTracker\n",  # 2.4 only: no new home
    "from torch.distributed._composable.fsdp._fsdp_api import MixedPrecisionPolicy\n",
    "from torch.distributed._tensor import *\n",
    "from torch.ao.quantization.quantizer.xnnpack_quantizer import XNNPACKQuantizer\n",  # ExecuTorch, not TorchAO
    "import torch.distributed._tensor.api as api\nx = api._ToTorchTensor\n",
    "import torch\nz = torch.distributed._tensor.api.DTensor\n",
    "import torch\nm = torch.distributed._tensor\n",  # the module object itself
])
def test_module_move_without_a_public_target_is_reported_not_fixed(lint, line):
    result = _fix(lint, line, unsafe=True, min_torch="2.6", select=["TP101", "TP201"])
    assert result.findings and result.fixed_text == line


@pytest.mark.parametrize("before, after", [
    ("from torch.distributed._tensor.api import DTensor\n", "from torch.distributed.tensor import DTensor\n"),
    ("from torch.distributed._tensor.placement_types import Shard, Replicate\n",
     "from torch.distributed.tensor.placement_types import Shard, Replicate\n"),
    ("from torch.distributed._tensor.device_mesh import init_device_mesh\n",
     "from torch.distributed.device_mesh import init_device_mesh\n"),
    ("import torch.distributed._tensor as dt\nx = dt.DTensor\n", "import torch.distributed.tensor as dt\nx = dt.DTensor\n"),
    ("import torch\ny = torch.distributed._tensor.Shard(0)\n", "import torch\ny = torch.distributed.tensor.Shard(0)\n"),
    ("from torch.distributed import _tensor\nx = _tensor.DTensor\n", "from torch.distributed import tensor as _tensor\nx = _tensor.DTensor\n"),
])
def test_module_move_to_the_public_module(lint, before, after):
    assert _fix(lint, before, min_torch="2.6").fixed_text == after


@pytest.mark.torch
def test_module_move_fixes_import_on_real_torch(lint):
    torch = pytest.importorskip("torch")
    code = ("from torch.distributed._composable.fsdp.fully_shard import fully_shard, FSDPModule\n"
            "from torch.distributed._composable.fsdp import MixedPrecisionPolicy\n"
            "from torch.distributed._tensor.api import DTensor\n"
            "from torch.distributed._tensor.placement_types import Shard, Replicate\n"
            "from torch.distributed._tensor.device_mesh import init_device_mesh\n"
            "import torch.distributed._tensor as dt\n"
            "x = dt.Shard\n")
    fixed = _fix(lint, code, min_torch="2.6").fixed_text
    assert "_tensor" not in fixed.replace("import torch.distributed.tensor as dt", "") and "_composable" not in fixed
    namespace: dict = {}
    exec(compile(fixed, "fixed.py", "exec"), namespace)
    import torch.distributed.fsdp as fsdp
    assert namespace["fully_shard"] is fsdp.fully_shard and namespace["x"] is torch.distributed.tensor.Shard


# -- unsafe fixes that were wrong ------------------------------------------------------------------

def test_weight_norm_is_not_migrated_where_remove_weight_norm_is_called(lint):
    code = ("import torch\nconv = torch.nn.utils.weight_norm(torch.nn.Conv1d(1, 1, 3))\n"
            "def strip(m):\n    torch.nn.utils.remove_weight_norm(m)\n")
    result = _fix(lint, code, unsafe=True)
    assert result.fixed_text == code
    finding = next(f for f in result.findings if "weight_norm" in f.message)
    assert finding.fix is None and "remove_weight_norm" in finding.message
    alone = "import torch\nconv = torch.nn.utils.weight_norm(torch.nn.Conv1d(1, 1, 3))\n"
    assert "parametrizations.weight_norm" in _fix(lint, alone, unsafe=True).fixed_text


@pytest.mark.torch
def test_remove_weight_norm_raises_on_the_parametrized_module():
    torch = pytest.importorskip("torch")
    module = torch.nn.utils.parametrizations.weight_norm(torch.nn.Linear(2, 2))
    with pytest.raises(ValueError, match="weight_norm of 'weight' not found"):
        torch.nn.utils.remove_weight_norm(module)


@pytest.mark.parametrize("call", ['torch.load(path, "cpu", pickle)', "torch.load(path, None, pickle, mmap=True)",
                                  "torch.load(*args)"])
def test_load_with_positional_pickle_module_gets_no_weights_only(lint, call):
    code = f"import pickle\nimport torch\nstate = {call}\n"
    result = _fix(lint, code, unsafe=True, select=["TP301"])
    assert [f.code for f in result.findings] == ["TP301"] and result.findings[0].fix is None
    assert result.fixed_text == code


@pytest.mark.torch
def test_weights_only_with_a_pickle_module_raises():
    torch = pytest.importorskip("torch")
    import io
    import pickle
    buffer = io.BytesIO()
    torch.save({"w": torch.ones(1)}, buffer)
    buffer.seek(0)
    with pytest.raises(RuntimeError, match="pickle_module"):
        torch.load(buffer, "cpu", pickle, weights_only=True)


# -- minimal edits ---------------------------------------------------------------------------------

@pytest.mark.parametrize("before, after", [
    ('state = torch.load(\n    path,\n    map_location="cpu",\n)\n',
     'state = torch.load(\n    path,\n    map_location="cpu",\n    weights_only=True,\n)\n'),
    ('state = torch.load(\n    path,  # the file\n    map_location="cpu",  # keep\n)\n',
     'state = torch.load(\n    path,  # the file\n    map_location="cpu",  # keep\n    weights_only=True,\n)\n'),
    ('state = torch.load(\n    path,\n    map_location="cpu"\n)\n',
     'state = torch.load(\n    path,\n    map_location="cpu",\n    weights_only=True\n)\n'),
    ("state = torch.load(path, 'cpu',)\n", "state = torch.load(path, 'cpu', weights_only=True,)\n"),
    ("state = torch.load(path,\n                   map_location='cpu')\n",
     "state = torch.load(path,\n                   map_location='cpu', weights_only=True)\n"),
    ("state = torch.load(\n    path, map_location='cpu',\n)\n", "state = torch.load(\n    path, map_location='cpu', weights_only=True,\n)\n"),
])
def test_added_keyword_follows_the_call_layout(lint, before, after):
    code = "import torch\n" + before
    assert _fix(lint, code, unsafe=True, select=["TP301"]).fixed_text == "import torch\n" + after


# -- autocast: the old classes pin a dtype, torch.amp.autocast inherits the enclosing one ------------

@pytest.mark.torch
@pytest.mark.parametrize("device, old, pinned, outer", [
    ("cuda", "torch.cuda.amp.autocast", "float16", "bfloat16"),
    ("cpu", "torch.cpu.amp.autocast", "bfloat16", "float16"),
])
def test_autocast_fix_keeps_the_pinned_dtype_inside_another_autocast(lint, device, old, pinned, outer):
    torch = pytest.importorskip("torch")
    import warnings
    code = f"import torch\ninner = {old}()\n"
    fixed = _fix(lint, code).fixed_text
    assert fixed == f'import torch\ninner = torch.amp.autocast("{device}", dtype=torch.{pinned})\n'
    results = {}
    for label, source in (("old", code), ("fixed", fixed), ("bare", f'import torch\ninner = torch.amp.autocast("{device}")\n')):
        namespace: dict = {}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with torch.autocast("cpu", dtype=getattr(torch, outer)):
                previous = torch.get_autocast_dtype(device)
                torch.set_autocast_dtype(device, getattr(torch, outer))  # what entering an outer CUDA autocast does
                try:
                    exec(compile(source, label, "exec"), namespace)
                finally:
                    torch.set_autocast_dtype(device, previous)
        results[label] = namespace["inner"].fast_dtype
    assert results["old"] == results["fixed"] == getattr(torch, pinned)
    assert results["bare"] == getattr(torch, outer)  # the rewrite TorchFix makes changes the dtype


def test_autocast_with_a_mapping_is_an_unsafe_fix(lint):
    code = "import torch\nctx = torch.cuda.amp.autocast(**options)\n"
    result = _fix(lint, code, select=["TP202"])
    assert result.fixed_text == code and result.findings[0].fix.applicability == "unsafe"
    assert "dtype" in result.findings[0].fix.message


# -- decided with the 2.4.1/2.5.1/2.6.0 wheels ------------------------------------------------------

def test_export_for_training_is_a_safe_fix_only_from_2_6(lint):
    # 2.5.1: export and export_for_training take different paths; 2.6.0: export hands over to
    # _export_for_training (torch/export/_trace.py, export_training_ir_rollout_check() is True).
    code = "import torch\nep = torch.export.export_for_training(model, (x,))\n"
    old = lint(code, min_torch="2.5", target="2.10").findings[0].fix
    assert old.applicability == "unsafe" and "2.6" in old.message
    assert lint(code, min_torch="2.6", target="2.10").findings[0].fix.applicability == "safe"


def test_lu_to_lu_factor_is_unsafe_because_it_raises_on_singular_input(lint):
    code = "import torch\nLU, pivots = torch.lu(A)\n"
    result = _fix(lint, code, select=["TP251"])
    assert result.fixed_text == code and result.findings[0].fix.applicability == "unsafe"
    infos = "import torch\nLU, pivots, info = torch.lu(A, get_infos=True)\n"
    assert _fix(lint, infos, select=["TP251"]).fixed_text == "import torch\nLU, pivots, info = torch.linalg.lu_factor_ex(A)\n"


@pytest.mark.torch
def test_lu_factors_a_singular_matrix_where_lu_factor_raises():
    torch = pytest.importorskip("torch")
    import warnings
    singular = torch.zeros(3, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        LU, pivots = torch.lu(singular)
    assert torch.equal(LU, torch.zeros(3, 3))
    with pytest.raises(RuntimeError, match="zero"):
        torch.linalg.lu_factor(singular)
    LU_ex, pivots_ex, info = torch.linalg.lu_factor_ex(singular)
    assert torch.equal(LU_ex, LU) and torch.equal(pivots_ex, pivots) and int(info) > 0


def test_an_import_needed_in_one_branch_is_added_there_not_at_module_level(lint):
    # torch is optional in this module: a module-level ``import torch`` would make it required.
    code = ('"""Optional torch."""\nimport os\n\n\ndef train(model):\n    import torch.cuda.amp as amp\n'
            '    with amp.autocast():\n        return model()\n\n\ntry:\n    from torch.cuda.amp import GradScaler\n'
            '    scaler = GradScaler()\nexcept ImportError:\n    scaler = None\n')
    fixed = _fix(lint, code, unsafe=True).fixed_text  # the GradScaler construction fix is unsafe
    assert fixed == ('"""Optional torch."""\nimport os\n\n\ndef train(model):\n    import torch\n'
                     '    with torch.amp.autocast("cuda", dtype=torch.float16):\n        return model()\n\n\ntry:\n'
                     '    import torch\n    scaler = torch.amp.GradScaler("cuda")\nexcept ImportError:\n    scaler = None\n')
    namespace: dict = {}
    compile(fixed, "fixed.py", "exec")
    assert "import torch\n" not in fixed.split("def train")[0]


@pytest.mark.torch
@pytest.mark.parametrize("call", ["torch.norm(x)", "torch.norm(x, p=1, dim=-1)", "torch.norm(x, 2, 1)",
                                  "torch.norm(x, 'fro', (0, 1))", "torch.norm(\n    x,\n    p=3,\n    dim=-1,\n)",
                                  "torch.norm(x, 2, 1, False, None, torch.float64)", "torch.norm(input=x, p=None)",
                                  "torch.norm(x, None, 0, True)"])
def test_norm_fix_keeps_layout_and_values(lint, call):
    torch = pytest.importorskip("torch")
    code = f"import torch\nn = {call}\n"
    fixed = _fix(lint, code, unsafe=True, select=["TP252"]).fixed_text
    assert "vector_norm" in fixed and fixed.count("\n") == code.count("\n")
    x = torch.randn(3, 4, dtype=torch.float64)
    before, after = {"x": x}, {"x": x}
    exec(code, before)
    exec(fixed, after)
    assert torch.allclose(before["n"], after["n"])


@pytest.mark.parametrize("before, after", [
    ("import os\n\nfrom torch.cuda.amp import autocast\n\nimport torch\n\nwith autocast():\n    pass\n",
     'import os\n\nimport torch\n\nwith torch.amp.autocast("cuda", dtype=torch.float16):\n    pass\n'),
    ("from torch.cuda.amp import autocast\n\nwith autocast():\n    pass\n",
     'import torch\n\nwith torch.amp.autocast("cuda", dtype=torch.float16):\n    pass\n'),
    ("import torch\nimport torch.cuda.amp as amp\n\n\ndef f():\n    with amp.autocast():\n        pass\n",
     'import torch\n\n\ndef f():\n    with torch.amp.autocast("cuda", dtype=torch.float16):\n        pass\n'),
])
def test_import_removal_leaves_no_stray_blank_line(lint, before, after):
    assert _fix(lint, before).fixed_text == after


def test_json_fix_edits_include_the_import_removal(tmp_path, capsys):
    import json

    from torchpatch.frontends.cli import main
    path = tmp_path / "m.py"
    path.write_text("import torch\nimport torch.cuda.amp as amp\n\n\ndef f():\n    with amp.autocast():\n        pass\n")
    assert main(["check", "--isolated", "--output-format", "json", str(path)]) == 1
    (finding,) = json.loads(capsys.readouterr().out)
    edits = finding["fix"]["edits"]
    assert {"content": "", "location": {"row": 2, "column": 1}, "end_location": {"row": 3, "column": 1}} in edits
    # Applying exactly these edits is what --fix writes.
    from torchpatch.engine.source import Locator
    text = path.read_text()
    locator = Locator(text)
    offsets = [(locator.offset(e["location"]["row"], e["location"]["column"] - 1),
                locator.offset(e["end_location"]["row"], e["end_location"]["column"] - 1), e["content"]) for e in edits]
    for start, end, content in sorted(offsets, reverse=True):
        text = text[:start] + content + text[end:]
    assert main(["check", "--isolated", "--fix", str(path)]) == 0
    assert path.read_text() == text


def test_dropping_a_true_verbose_is_unsafe_below_2_7(lint):
    # timm scheduler/plateau_lr.py passes ``verbose=verbose``: on 2.4-2.6 that printed the learning rate.
    code = "import torch\ns = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, verbose=verbose)\n"
    assert _fix(lint, code, select=["TP111"]).fixed_text == code
    assert _fix(lint, code, select=["TP111"], min_torch="2.7").fixed_text == \
        "import torch\ns = torch.optim.lr_scheduler.ReduceLROnPlateau(opt)\n"
    quiet = "import torch\ns = torch.optim.lr_scheduler.StepLR(opt, 10, verbose=False)\n"
    assert _fix(lint, quiet, select=["TP111"]).fixed_text == "import torch\ns = torch.optim.lr_scheduler.StepLR(opt, 10)\n"


@pytest.mark.torch
def test_tp301_explicit_weights_only_would_lose_the_env_escape_hatch(tmp_path, monkeypatch):
    """TP301 stays quiet at a 2.6+ minimum: an unset weights_only is True there, and only an unset one honours
    TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD (the escape hatch `weights_only=True` would take away); a pickle_module
    keeps the default False."""
    torch = pytest.importorskip("torch")
    import fractions
    import pickle

    path = tmp_path / "m.pt"
    torch.save({"counts": {"a": fractions.Fraction(1)}}, path)  # Fraction is not on the weights-only allowlist
    with pytest.raises(pickle.UnpicklingError):
        torch.load(path)
    monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")
    with pytest.warns(UserWarning, match="TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD"):
        assert torch.load(path)["counts"]["a"] == 1
    with pytest.raises(pickle.UnpicklingError):
        torch.load(path, weights_only=True)
    monkeypatch.delenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD")
    assert torch.load(path, pickle_module=pickle)["counts"]["a"] == 1


def test_a_renamed_function_used_as_a_value_is_no_safe_fix(lint):
    """lightning-thunder 0.2.6 lists `torch.ger` in its table of torch ops: `torch.outer` is another object
    (`torch.ger is torch.outer` is False), so rewriting the table entry changes what the table maps; a call
    or a decorator keeps its safe fix."""
    result = lint("import torch\nOPS = [torch.ger, torch.outer]\ny = torch.ger(a, b)\nf = torch.ger\n")
    fixes = {f.row: f.fix.applicability for f in result.findings if f.code == "TP201"}
    assert fixes == {2: "unsafe", 3: "safe", 4: "unsafe"}
    fixed = lint("import torch\nOPS = [torch.ger, torch.outer]\ny = torch.ger(a, b)\n", fix=True)
    assert fixed.fixed_text == "import torch\nOPS = [torch.ger, torch.outer]\ny = torch.outer(a, b)\n"


@pytest.mark.torch
def test_ger_and_outer_are_different_objects():
    torch = pytest.importorskip("torch")
    assert torch.ger is not torch.outer
