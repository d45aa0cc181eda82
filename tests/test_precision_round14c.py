"""Round 14, part c of issue #8's precision sample: what reading real packages showed, as synthetic cases of
the same shape (no package code).

All 81 findings of the round were true, so nothing here pins a fix: these cases keep the shapes read in
text-generation-inference, torcheval, higher and Pearl reported (and their fixes as read), so that a later
precision fix elsewhere that grows too wide shows up here. Each claim was checked against the real wheels (see
bench/trust_samples/README.md, sample14c)."""

from __future__ import annotations

import pytest

from precision_helpers import findings_of


def _rows(findings):
    return [f.row for f in findings]


# -- a removed name inside a backend branch -------------------------------------------------------------------
# `torch.cuda.tunable.write_file` is in 2.9.1's torch/cuda/tunable.py and in neither 2.10.0's nor 2.15.0's (the
# module has no `__getattr__`). A branch chosen by the platform (`SYSTEM == "rocm"`) or an environment variable
# is not a torch version check: the call still fails on 2.15.

def test_tunable_write_file_in_a_platform_branch_is_reported(lint):
    code = (
        "import os\nimport torch\n\n"
        "def warmup(system, path, lengths):\n"
        "    if system == \"rocm\":\n"
        "        if os.environ.get(\"TUNABLE\", \"1\") == \"1\":\n"
        "            torch.cuda.tunable.enable()\n"
        "            for n in lengths:\n"
        "                torch.cuda.tunable.write_file(path)\n"
    )
    findings = findings_of(lint, code, "TP104", target="2.15", min_torch="2.4")
    assert _rows(findings) == [9]
    assert "2.10" in findings[0].message
    # The names the 2.15 module still has are not reported.
    assert findings_of(lint, code.replace("write_file", "read_file"), "TP104", target="2.15", min_torch="2.4") == []


# -- a deprecated collective in the non-ipex branch -----------------------------------------------------------
# 2.13.0 and 2.14.1 wrap `all_gather_into_tensor` in `@deprecated(..., FutureWarning)` pointing to
# `all_gather_single` (new in 2.13); a backend check around it is not a version check. The fix is unsafe at a 2.4
# minimum (the new name does not exist there).

def test_all_gather_into_tensor_in_a_backend_branch_is_reported_with_an_unsafe_fix(lint):
    code = (
        "import torch\n\n"
        "def gather(out, inp, group, use_other):\n"
        "    if use_other:\n"
        "        other_backend.all_gather_into_tensor(out, inp, group=group)\n"
        "    else:\n"
        "        torch.distributed.all_gather_into_tensor(out, inp, group=group)\n"
    )
    findings = findings_of(lint, code, "TP201", target="2.15", min_torch="2.4")
    assert _rows(findings) == [7]
    assert "all_gather_single" in findings[0].message
    assert findings[0].fix is not None and findings[0].fix.applicability == "unsafe"


# -- object collectives in a metric sync library --------------------------------------------------------------
# `all_gather_object`, `gather_object` and `broadcast_object_list` have no `weights_only` in 2.13.0 and
# `weights_only: bool = False` in 2.14.1 and 2.15.0: without it the receiving ranks unpickle with full pickle.

def test_object_collectives_of_a_sync_helper_are_reported(lint):
    code = (
        "import torch.distributed as dist\n\n"
        "def sync(state, group, dst):\n"
        "    me = dist.get_rank(group=group)\n"
        "    size = dist.get_world_size(group=group)\n"
        "    receives = dst is None or dst == me\n"
        "    out = [None] * size if receives else None\n"
        "    if dst is None:\n"
        "        dist.all_gather_object(out, state, group=group)\n"
        "    else:\n"
        "        dist.gather_object(state, out, dst=dst, group=group)\n"
        "    picked = [None]\n"
        "    dist.broadcast_object_list(picked, src=max(0, me), group=group)\n"
        "    return out, picked\n"
    )
    findings = findings_of(lint, code, "TP310", target="2.15", min_torch="2.4")
    assert _rows(findings) == [9, 11, 13]
    assert all(f.fix is None for f in findings)  # `weights_only=` does not exist before 2.14


# -- `custom_fwd` imported from torch.cuda.amp ----------------------------------------------------------------
# 2.4.1's `torch.cuda.amp.custom_fwd(fwd=None, *, cast_inputs=None)` is `torch.amp.custom_fwd` with
# `device_type="cuda"`: the safe fix writes exactly that and drops the import it leaves unused.

def test_custom_fwd_decorator_fix_keeps_cast_inputs_and_drops_the_import(lint):
    code = (
        "import torch\n"
        "from torch.cuda.amp import custom_fwd\n\n\n"
        "class Quantized(torch.autograd.Function):\n"
        "    @staticmethod\n"
        "    @custom_fwd(cast_inputs=torch.float16)\n"
        "    def forward(ctx, x, w):\n"
        "        return x @ w\n"
    )
    result = lint(code, fix=True, target="2.15", min_torch="2.4", select=["TP202"])
    assert result.fixed_text == (
        "import torch\n\n\n"
        "class Quantized(torch.autograd.Function):\n"
        "    @staticmethod\n"
        "    @torch.amp.custom_fwd(device_type=\"cuda\", cast_inputs=torch.float16)\n"
        "    def forward(ctx, x, w):\n"
        "        return x @ w\n"
    )


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


# -- explicit `weights_only=False` of an in-memory round trip -------------------------------------------------
# A state dict saved into a BytesIO and loaded back with `weights_only=False` is still full pickle; the rule's
# doc asks for `# noqa: TP302` on loads of files one wrote oneself (the same verdict as samples 12 and 13).

@pytest.mark.parametrize("suffix, expected", [("", [8]), ("  # noqa: TP302", [])])
def test_in_memory_round_trip_with_weights_only_false(lint, suffix, expected):
    code = (
        "import io\nimport torch\n\n"
        "def copy_state(src, dst):\n"
        "    buf = io.BytesIO()\n"
        "    torch.save(src.state_dict(), buf)\n"
        "    buf.seek(0)\n"
        f"    dst.load_state_dict(torch.load(buf, weights_only=False)){suffix}\n"
    )
    assert _rows(findings_of(lint, code, "TP302", target="2.15", min_torch="2.4")) == expected
