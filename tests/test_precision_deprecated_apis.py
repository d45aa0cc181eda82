"""Hand-read precision cases for the other deprecated-API rules (TP2xx): each false finding, wrong message or wrong fix
read on real code in the pre-registered rounds (bench/trust_samples/), as a synthetic case of the same
shape (no package code), grouped here by rule; the comment above each group names its round."""

from __future__ import annotations

import pytest

from precision_helpers import findings_of


# ---- round 10a ----------------------------------------------------------------------------------
# Round 10, part a of issue #8's precision sample (the ``colossalai/`` library of a ColossalAI snapshot): each
# false finding (or wrong message, or missed finding) read on real code, as a synthetic case of the same shape
# (no package code).


# -- a legacy storage class's private ``_from_buffer``: torch's own non-warning path --------------------
# (ColossalAI utils/safetensors.py copies torch.distributed's ``_object_to_tensor``: pickle into a
# BytesIO, ``torch.ByteStorage._from_buffer(buf.getvalue())``, then ``torch.ByteTensor(storage)``.
# ``_from_buffer`` builds the storage with ``TypedStorage(..., _internal=True)`` in every wheel 2.4.1 …
# 2.15.0, so no deprecation warning is raised, and torch 2.15's own ``_object_to_tensor`` still calls it.)

@pytest.mark.parametrize("source", [
    "import io\nimport torch\n\ndef to_tensor(obj_bytes):\n"
    "    storage = torch.ByteStorage._from_buffer(obj_bytes)\n"
    "    return torch.ByteTensor(storage)\n",
    "import torch\nstorage = torch.TypedStorage._from_buffer(data, dtype=torch.uint8)\n",
    "from torch import ByteStorage\nstorage = ByteStorage._from_buffer(data)\n",
])
def test_the_private_from_buffer_of_a_storage_class_is_not_reported(lint, source):
    assert findings_of(lint, source, "TP223") == []


@pytest.mark.parametrize("source", [
    # the public ``from_buffer`` warns (TypedStorage.from_buffer calls _warn_typed_storage_removal)
    "import torch\nstorage = torch.ByteStorage.from_buffer(data)\n",
    # the class passed on as a value, then used who knows how
    "import torch\nmake = torch.ByteStorage\n",
    "import torch\nsize = torch.ByteStorage(4)._from_buffer\n",
])
def test_other_uses_of_a_storage_class_stay_reported(lint, source):
    assert len(findings_of(lint, source, "TP223")) == 1


@pytest.mark.torch
def test_from_buffer_warns_and_the_private_one_does_not():
    torch = pytest.importorskip("torch")
    import pickle
    import warnings

    data = pickle.dumps({"a": 1})
    torch.storage._reset_warn_typed_storage_removal()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.ByteTensor(torch.ByteStorage._from_buffer(data))
    assert not [w for w in caught if "TypedStorage is deprecated" in str(w.message)]
    torch.storage._reset_warn_typed_storage_removal()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.ByteStorage.from_buffer(data)
    assert [w for w in caught if "TypedStorage is deprecated" in str(w.message)]


# ---- round 10b ----------------------------------------------------------------------------------
# Round 10, part b of issue #8's precision sample: what reading real packages showed, as synthetic cases of the
# same shape (no package code).


def test_the_cpu_gradscaler_type_test_says_the_same(lint):
    findings = findings_of(lint, "import torch\nok = isinstance(s, torch.cpu.amp.GradScaler)\n", "TP203")
    assert len(findings) == 1
    assert "is not an instance of `torch.cpu.amp.GradScaler`" in findings[0].message


# ---- round 10c ----------------------------------------------------------------------------------
# Round 10, part c of issue #8's precision sample: all 114 findings read were true, so these are the shapes that
# needed the most care, as synthetic code (no package code): each must stay reported, and each safe fix read
# must keep its exact text. They guard the guard classifier against learning to skip them.


# -- the deprecated function imported under `torch >= 2.0`, a no-op context manager otherwise -----------

def test_sdp_kernel_imported_under_a_2_0_test_is_still_reported(lint):
    source = (
        "import torch\nimport torch.nn.functional as F\nfrom packaging import version\n"
        "if version.parse(torch.__version__) >= version.parse('2.0.0'):\n"
        "    from torch.backends.cuda import SDPBackend, sdp_kernel\n"
        "    FLAGS = {SDPBackend.MATH: {'enable_math': True, 'enable_flash': False,"
        " 'enable_mem_efficient': False}}\n"
        "else:\n"
        "    from contextlib import nullcontext\n"
        "    sdp_kernel = nullcontext\n"
        "    FLAGS = {}\n"
        "\n"
        "def attend(q, k, v, backend):\n"
        "    with sdp_kernel(**FLAGS[backend]):\n"
        "        return F.scaled_dot_product_attention(q, k, v)\n"
    )
    assert len(findings_of(lint, source, "TP204", min_torch="2.4")) == 1


# -- torch.cross with dim= on the lines before is still reported where dim is missing -----------------------

def test_cross_without_dim_next_to_calls_with_dim(lint):
    source = ("import torch\n\ndef dihedral(a, b, c):\n    n1 = torch.cross(a, b, dim=-1)\n"
              "    n2 = torch.cross(a, c, dim=-1)\n    return torch.cross(n1, n2).norm(dim=-1)\n")
    found = findings_of(lint, source, "TP244", min_torch="2.4")
    assert [f.row for f in found] == [6]


# ---- round 12a ----------------------------------------------------------------------------------
# Round 12, part a of issue #8's precision sample (git snapshots of MONAI and pyro): each false finding (or
# wrong message) read on real code, as a synthetic case of the same shape (no package code).


# -- TP254 at the calls of a variable that holds the imported private-path function -------------------
# (MONAI's data utils import `default_collate` from `torch.utils.data._utils.collate`, then a collate
# helper assigns it to a local and calls the local. The private path is written once, at the import,
# which is reported and fixed; the calls through the local name no private path, and they stop being
# "private" as soon as the import is fixed.)

def test_calls_of_an_assigned_alias_of_the_imported_name_are_not_reported_again(lint):
    source = ("from torch.utils.data._utils.collate import default_collate\n"
              "def collate(batch):\n"
              "    fn = default_collate\n"
              "    return fn(batch), fn(batch[:1])\n")
    findings = findings_of(lint, source, "TP254", target="2.15", min_torch="2.4")
    assert [f.row for f in findings] == [1]
    assert findings[0].fix is not None


def test_an_alias_of_the_private_attribute_chain_is_reported_once_where_the_chain_is(lint):
    source = ("import torch\n"
              "fn = torch.utils.data._utils.collate.default_convert\n"
              "out = fn(sample)\n")
    findings = findings_of(lint, source, "TP254", target="2.15", min_torch="2.4")
    assert [f.row for f in findings] == [2]


# -- TP211's warning category -------------------------------------------------------------------------
# (MONAI's DiNTS decorates its interfaces with `@torch.jit.interface`. The message said DeprecationWarning,
# but 2.14.1 and 2.15.0 raise a FutureWarning (shown by default) for interface, fork, wait, freeze and
# optimize_for_inference; set_fusion_strategy still raises a DeprecationWarning.)

@pytest.mark.parametrize("call", ["torch.jit.interface", "torch.jit.fork", "torch.jit.wait", "torch.jit.freeze",
                                  "torch.jit.optimize_for_inference"])
def test_tp211_says_the_futurewarning_of_2_14(lint, call):
    source = f"import torch\nx = {call}(y)\n"
    [finding] = findings_of(lint, source, "TP211", target="2.15", min_torch="2.4")
    assert "FutureWarning from 2.14" in finding.message


def test_tp211_set_fusion_strategy_stays_a_deprecationwarning(lint):
    source = 'import torch\ntorch.jit.set_fusion_strategy([("STATIC", 2)])\n'
    [finding] = findings_of(lint, source, "TP211", target="2.15", min_torch="2.4")
    assert "(DeprecationWarning)" in finding.message
    assert "FutureWarning" not in finding.message


# ---- round 12c ----------------------------------------------------------------------------------
# Round 12, part c of issue #8's precision sample (executorch, botorch, GroundingDINO,
# segmentation_models.pytorch and gpytorch snapshots): 128 findings read, none false. These tests keep the
# shapes read there that sit next to compatibility-code detection reported: each is a true finding whose
# surrounding ``try``/``if``/``with`` is *not* a torch version check or feature probe, so a guard that hid it
# would hide a real problem. Synthetic code of the same shape (no package code).


def test_check_is_size_under_a_dynamic_shape_flag_is_reported(lint):
    # (executorch llama attention: ``if self.enable_dynamic_shape:`` is a model option, not a version.)
    source = (
        "import torch\n"
        "def update(self, input_pos):\n"
        "    if self.enable_dynamic_shape:\n"
        "        start = input_pos[0].item()\n"
        "        torch._check_is_size(start)\n"
        "        torch._check(start < self.max_len)\n"
    )
    found = findings_of(lint, source, "TP233", target="2.15", min_torch="2.4")
    assert [f.row for f in found] == [5]
    assert found[0].fix is not None and found[0].fix.applicability == "unsafe"


# ---- round 13a ----------------------------------------------------------------------------------
# Round 13, part a of issue #8's precision sample (git snapshots of fairscale, pytorch_scatter and
# pytorch/data): each false finding (or wrong message) read on real code, as a synthetic case of the same shape
# (no package code).


def test_a_cpu_gradscaler_base_class_names_the_cpu_device(lint):
    source = "import torch\nclass Scaler(torch.cpu.amp.GradScaler):\n    pass\n"
    findings = findings_of(lint, source, "TP203", target="2.15", min_torch="2.4")
    assert len(findings) == 1
    assert "as a base class" in findings[0].message and '`"cpu"`' in findings[0].message
    assert "functools.partial" not in findings[0].message


# ---- round 13c ----------------------------------------------------------------------------------
# Round 13, part c of issue #8's precision sample (ogb, openai jukebox with its vendored apex and tensorboardX,
# and co-tracker snapshots): 119 findings read, none false, no wrong safe fix. These tests keep shapes read
# there that sit next to compatibility-code detection or an unusual argument layout: each is a true finding (or
# a fix) whose surroundings are *not* a torch version check, so a guard that hid it, or a fix that moved an
# argument, would be a regression. Synthetic code of the same shape (no package code).


# -- torch.norm in the try of a try/except TypeError fallback -------------------------------------------
# (apex's fp16 optimizer: the try calls torch.norm with dtype=, the except falls back for torch <= 1.0.1.
# The try runs on every 2.4+ release, so it is reported; the except body only runs where the try failed.)

def test_norm_in_the_try_of_an_old_torch_type_error_fallback_is_reported(lint):
    source = (
        "import torch\n"
        "def grad_norm(flat):\n"
        "    try:\n"
        "        n = float(torch.norm(flat, 2.0, dtype=torch.float32))\n"
        "    except TypeError:\n"
        "        n = float(torch.norm(flat.float(), 2.0))\n"
        "    return n\n"
    )
    found = findings_of(lint, source, "TP252", target="2.15", min_torch="2.4")
    assert [f.row for f in found] == [4]
    assert found[0].fix is not None and found[0].fix.applicability == "unsafe"
    fixed = lint(source, fix=True, unsafe_fixes=True, target="2.15", min_torch="2.4", select=["TP252"]).fixed_text
    # The positional order and dtype= are kept: torch.norm makes exactly this call for dense tensors.
    assert "torch.linalg.vector_norm(flat, 2.0, dtype=torch.float32)" in fixed
    assert "torch.norm(flat.float(), 2.0)" in fixed


# ---- round 14a ----------------------------------------------------------------------------------
# Round 14, part a of issue #8's precision sample (git snapshots of torchsnapshot and FBGEMM): no false finding
# among the 106. These pin the shapes read there that sit next to compatibility-looking code but are not guards,
# so a later widening of the guard recognition cannot silently drop them (synthetic code of the same shape, no
# package code).


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
