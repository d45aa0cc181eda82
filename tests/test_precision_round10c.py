"""Round 10, part c of issue #8's precision sample: all 114 findings read were true, so these are the shapes
that needed the most care, as synthetic code (no package code): each must stay reported, and each safe fix
read must keep its exact text. They guard the guard classifier against learning to skip them."""

from __future__ import annotations

import pytest

from precision_helpers import findings_of

# -- a lower-bound version test that every supported release passes is no guard ----------------------
# (a vendored mmcv: the torch.cuda.amp name imported in try/except ImportError and used only under
# `digit_version(TORCH_VERSION) >= digit_version("1.6.0")`, which 2.4-2.15 all pass.)

_VENDORED_AMP = (
    "import torch\n"
    "from .utils import TORCH_VERSION, digit_version\n"
    "try:\n"
    "    from torch.cuda.amp import autocast\n"
    "except ImportError:\n"
    "    pass\n"
    "\n"
    "def run(fn, *args):\n"
    "    if TORCH_VERSION != 'parrots' and digit_version(TORCH_VERSION) >= digit_version('1.6.0'):\n"
    "        with autocast(enabled=False):\n"
    "            return fn(*args)\n"
    "    return fn(*args)\n"
)


def test_an_old_lower_bound_test_keeps_the_autocast_finding_and_its_safe_fix(lint):
    assert len(findings_of(lint, _VENDORED_AMP, "TP202", min_torch="2.4")) == 1
    fixed = lint(_VENDORED_AMP, fix=True, min_torch="2.4").fixed_text
    # torch.cuda.amp.autocast pinned float16; the new spelling must say so
    assert 'with torch.amp.autocast("cuda", enabled=False, dtype=torch.float16):' in fixed
    assert "from torch.cuda.amp import autocast" not in fixed


def test_a_grad_scaler_built_from_a_mapping_gets_the_device_first(lint):
    source = ("try:\n    from torch.cuda.amp import GradScaler\nexcept ImportError:\n    pass\n\n"
              "def make(options):\n    return GradScaler(**options)\n")
    assert len(findings_of(lint, source, "TP202", min_torch="2.4")) == 1
    fixed = lint(source, fix=True, unsafe_fixes=True, min_torch="2.4").fixed_text  # GradScaler: unsafe
    assert 'torch.amp.GradScaler("cuda", **options)' in fixed
    assert "import torch\n" in fixed


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


# -- an error fallback is not a version probe -------------------------------------------------------------

def test_jit_trace_in_a_broad_try_is_still_reported(lint):
    source = ("import logging\nimport torch\n\ndef bench(block, x):\n    try:\n"
              "        traced = torch.jit.trace(block, x, strict=False)\n"
              "    except Exception as e:\n        logging.info('cannot trace: %s', e)\n        return None\n"
              "    return traced\n")
    assert len(findings_of(lint, source, "TP210", min_torch="2.4")) == 1


def test_script_method_on_a_plain_module_is_reported(lint):
    # torch.jit.script_method warns (2.10 wheel, before its `_enabled` test) whatever the class is
    source = ("import torch\n\nclass Move(torch.nn.Module):\n    @torch.jit.script_method\n"
              "    def forward(self, x: torch.Tensor) -> torch.Tensor:\n        return x.permute(1, 2, 0)\n")
    assert len(findings_of(lint, source, "TP210", min_torch="2.4")) == 1


# -- a file-extension or exists() test around torch.load is no guard ---------------------------------------

@pytest.mark.parametrize("test", ["os.path.exists(path)", "path.endswith('ckpt')"])
def test_torch_load_under_a_file_test_is_still_reported(lint, test):
    source = (f"import os\nimport torch\n\ndef load(path):\n    if {test}:\n"
              "        return torch.load(path, map_location='cpu')\n    return None\n")
    assert len(findings_of(lint, source, "TP301", min_torch="2.4")) == 1


# -- torch.cross with dim= on the lines before is still reported where dim is missing -----------------------

def test_cross_without_dim_next_to_calls_with_dim(lint):
    source = ("import torch\n\ndef dihedral(a, b, c):\n    n1 = torch.cross(a, b, dim=-1)\n"
              "    n2 = torch.cross(a, c, dim=-1)\n    return torch.cross(n1, n2).norm(dim=-1)\n")
    found = findings_of(lint, source, "TP244", min_torch="2.4")
    assert [f.row for f in found] == [6]
