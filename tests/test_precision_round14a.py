"""Round 14, part a of issue #8's precision sample (git snapshots of torchsnapshot and FBGEMM): no false
finding among the 106. These pin the shapes read there that sit next to compatibility-looking code but
are not guards, so a later widening of the guard recognition cannot silently drop them (synthetic code of
the same shape, no package code)."""

from __future__ import annotations

import pytest

from precision_helpers import findings_of


# -- TP233 under a compile-mode check, and on a plain int argument --------------------------------------
# (`torch._check_is_size` is wrapped in `@_deprecated(..., FutureWarning)` in 2.11.0 torch/__init__.py,
# whatever its argument; `torch.jit.is_scripting()` / `is_torchdynamo_compiling()` say how the code runs,
# not which torch it runs on.)

@pytest.mark.parametrize("source", [
    "import torch\nfrom torch.compiler import is_compiling\ndef f(n):\n"
    "    if not torch.jit.is_scripting() and is_compiling():\n        torch._check_is_size(n)\n",
    "import torch\ndef meta(values, cat_dim: int = 1):\n    torch._check_is_size(cat_dim)\n"
    "    torch._check(cat_dim >= 0)\n    return values\n",
])
def test_check_is_size_behind_a_compile_mode_check_is_still_reported(lint, source):
    findings = findings_of(lint, source, "TP233", target="2.15", min_torch="2.4")
    assert len(findings) == 1
    assert "2.11" in findings[0].message
    assert findings[0].fix is not None and findings[0].fix.applicability == "unsafe"


# -- TP201's keyword-form collectives keep their keywords --------------------------------------------------
# (`all_gather_single(output_tensor, input_tensor, ...)` and `reduce_scatter_single(output, input, ...)` take
# the old functions' parameter names in 2.13.0 and 2.15.0 torch/distributed/distributed_c10d.py.)

def test_keyword_collectives_are_renamed_without_touching_their_arguments(lint):
    source = (
        "import torch\n"
        "torch.distributed.all_gather_into_tensor(output_tensor=out, input_tensor=inp, group=g)\n"
        "torch.distributed.reduce_scatter_tensor(output=out, input=inp, group=g)\n"
    )
    findings = findings_of(lint, source, "TP201", target="2.15", min_torch="2.4")
    assert [f.row for f in findings] == [2, 3]
    assert all(f.fix is not None and f.fix.applicability == "unsafe" for f in findings)
    fixed = lint(source, fix=True, unsafe_fixes=True, target="2.15", min_torch="2.4", select=["TP201"]).fixed_text
    assert fixed == (
        "import torch\n"
        "torch.distributed.all_gather_single(output_tensor=out, input_tensor=inp, group=g)\n"
        "torch.distributed.reduce_scatter_single(output=out, input=inp, group=g)\n"
    )


# -- TP223: a `hasattr(storage, "_untyped")` test after the typed-storage call does not guard it ----------
# (`TypedStorage.from_buffer` calls `_warn_typed_storage_removal()` first in 2.4.1 torch/storage.py.)

def test_typed_storage_followed_by_an_attribute_probe_is_still_reported(lint):
    source = (
        "import torch\n"
        "def load(data):\n"
        "    storage = torch.FloatStorage.from_buffer(memoryview(data), byte_order='native')\n"
        "    if hasattr(storage, '_untyped'):\n"
        "        storage = storage._untyped()\n"
        "    return storage\n"
    )
    findings = findings_of(lint, source, "TP223", target="2.15", min_torch="2.4")
    assert [f.row for f in findings] == [3]


# -- TP310 in a thin process-group wrapper whose guard is about the group, not the torch ----------------

def test_object_collective_in_a_group_wrapper_is_still_reported(lint):
    source = (
        "import torch.distributed as dist\n"
        "class Wrapper:\n"
        "    def broadcast_object_list(self, objs, src=0):\n"
        "        if self.pg is None:\n"
        "            return\n"
        "        dist.broadcast_object_list(objs, src=src, group=self.pg)\n"
    )
    findings = findings_of(lint, source, "TP310", target="2.15", min_torch="2.4")
    assert [f.row for f in findings] == [6]
    assert "2.14" in findings[0].message and findings[0].fix is None
