"""Round 7, part c of issue #8's precision sample: each false finding (or wrong message) read on real
packages, as a synthetic case of the same shape (no package code)."""

from __future__ import annotations

import pytest

from precision_helpers import findings_of


# -- assigning to an old name patches it, it does not use it (xtuner 0.2.0 _lite/parallel/setup.py) ---

@pytest.mark.parametrize("statement", [
    "torch.distributed.reduce_scatter_tensor = my_reduce_scatter",
    "dist.all_gather_into_tensor = my_all_gather",
    "del torch.distributed.reduce_scatter_tensor",
    "torch.distributed.reduce_scatter_tensor, other = my_reduce_scatter, 1",
])
def test_patching_a_deprecated_function_is_not_reported(lint, statement):
    source = ("import torch\nimport torch.distributed as dist\n"
              "def my_reduce_scatter(*args):\n    pass\nmy_all_gather = my_reduce_scatter\n"
              f"def setup():\n    {statement}\n")
    assert findings_of(lint, source, "TP201", min_torch="2.4", target="2.15") == []


def test_the_patched_functions_uses_are_still_reported(lint):
    source = ("import torch\n"
              "original = torch.distributed.reduce_scatter_tensor\n"
              "def patched(out, inp, op=None, group=None, async_op=False):\n"
              "    return original(out, inp, op, group, async_op)\n"
              "torch.distributed.reduce_scatter_tensor = patched\n"
              "torch.distributed.reduce_scatter_tensor(a, b)\n")
    rows = sorted(f.row for f in findings_of(lint, source, "TP201", min_torch="2.4", target="2.15"))
    assert rows == [2, 4, 6]


def test_patching_a_removed_name_is_not_reported(lint):
    source = "import torch\nimport torch.onnx\ntorch.onnx.enable_log = lambda: None\n"
    assert findings_of(lint, source, "TP101", min_torch="2.4", target="2.15") == []
