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
