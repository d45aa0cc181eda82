"""TorchFix parity: every TorchFix 0.7 code is answered by a rule or listed in NOT_COVERED, the parity rules
(TP130, TP250-TP254, TP500, TP600, TP601, TP900, TP901 and the functorch/ger/assert_allclose rows of the API
table) find what they should, and each claim is checked against real torch (CI installs 2.13.0 CPU).

Facts about other releases come from wheels, not from this test run: the 2.4.1 wheel (torch/_linalg_utils.py
stubs, torch/functional.py `norm` calling `linalg.vector_norm`, torch/_functorch/deprecated.py, the
"torch.cholesky/qr/chain_matmul/lu/lu_solve/triangular_solve is deprecated" strings in libtorch_cpu.so and
"torch.range is deprecated" in libtorch_python.so), the 1.13.1 and 2.0.1 wheels (when the linalg stubs
appeared), and the torchvision 0.19.1 and 0.29.1 wheels (pretrained= and v2.ToTensor warnings).
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import textwrap
import warnings

import pytest

from torchpatch.engine.settings import torchfix_redirects
from torchpatch.rules import all_rules
from torchpatch.rules.torchvision_pretrained import MODELS, QUALNAMES

#: Every error code of TorchFix 0.7.0 (torchfix/visitors/**: the ERRORS of each visitor).
TORCHFIX_CODES = frozenset({
    "TOR001", "TOR002", "TOR003", "TOR004", "TOR101", "TOR102", "TOR103", "TOR104", "TOR105", "TOR106",
    "TOR107", "TOR201", "TOR202", "TOR203", "TOR401", "TOR901",
}) | {"TOR108", "TOR402"}  # the last two: TorchFix's main branch after 0.7.0 (logsumexp, zero_grad set_to_none)
TORCHFIX_MAIN_ONLY = frozenset({"TOR108", "TOR402"})

#: TorchFix codes no torchpatch rule answers to, and why.
NOT_COVERED = {
    "TOR901": "TorchFix-internal: `torch.library._scoped_library` in PyTorch's own test suite",
}

RULES = {rule.code: rule for rule in all_rules()}


# -- the TorchFix code map ---------------------------------------------------------------------------------------

def test_every_torchfix_code_is_answered_or_documented():
    mapped = {code for rule in RULES.values() for code in rule.torchfix_codes}
    assert not (mapped & set(NOT_COVERED)), "a code is both mapped and listed as not covered"
    missing = TORCHFIX_CODES - mapped - set(NOT_COVERED)
    assert not missing, f"TorchFix codes neither mapped by a rule's torchfix_codes nor in NOT_COVERED: {missing}"
    assert set(NOT_COVERED) <= TORCHFIX_CODES
    assert all(reason and "\n" not in reason for reason in NOT_COVERED.values())


def test_torchfix_code_list_matches_torchfix():
    # torchfix is in the test extra: this runs in CI and fails if it is missing.
    from torchfix.torchfix import GET_ALL_ERROR_CODES

    assert set(GET_ALL_ERROR_CODES()) | TORCHFIX_MAIN_ONLY == TORCHFIX_CODES


@pytest.mark.parametrize("tor, ours", [
    ("TOR001", {"TP130"}), ("TOR004", {"TP130"}), ("TOR101", {"TP250", "TP251", "TP252", "TP253"}),
    ("TOR103", {"TP250", "TP251", "TP252", "TP253"}), ("TOR104", {"TP254"}), ("TOR105", {"TP254"}),
    ("TOR106", {"TP900"}), ("TOR107", {"TP901"}), ("TOR201", {"TP600"}), ("TOR202", {"TP601"}),
    ("TOR401", {"TP500"}), ("TOR108", {"TP903"}), ("TOR402", {"TP904"}), ("TOR203", {"TP905"}), ("TOR002", {"TP520"}),
])
def test_redirects(tor, ours):
    assert ours <= set(torchfix_redirects()[tor])


def test_select_and_noqa_with_torchfix_codes(lint):
    code = "from torch.utils.data import DataLoader\nloader = DataLoader(ds)\n"
    assert "TP500" not in [f.code for f in lint(code).findings]
    assert [f.code for f in lint(code, select=["TOR401"]).findings] == ["TP500"]
    quiet = "from torch.utils.data import DataLoader\nloader = DataLoader(ds)  # noqa: TOR401\n"
    assert lint(quiet, select=["TOR401"]).findings == []
    range_code = "import torch\nx = torch.range(1, 4)  # noqa: TOR101\n"
    assert "TP250" not in [f.code for f in lint(range_code).findings]


def test_performance_hints_are_opt_in():
    for code in ("TP500", "TP900", "TP901", "TP903", "TP904", "TP905"):
        assert RULES[code].opt_in, code
    for code in ("TP130", "TP250", "TP251", "TP252", "TP253", "TP254", "TP600", "TP601"):
        assert not RULES[code].opt_in, code


# -- detection: aliases, from-imports, look-alikes ---------------------------------------------------------------

FLAGGED = [
    ("import torch as th\nx = th.solve(b, a)\n", "TP130"),
    ("from torch import lstsq as ls\nx = ls(b, a)\n", "TP130"),
    ("import torch\nf = torch.matrix_rank\n", "TP130"),
    ("def f():\n    import torch\n    return torch.range(0, 3)\n", "TP250"),
    ("import torch\nr = torch.range(a, b, 0.5)\n", "TP250"),
    ("from torch import cholesky as chol\nL = chol(A)\n", "TP251"),
    ("import torch\nv = torch.svd(A, some=False)\n", "TP251"),
    ("import torch\nX = torch.lu_solve(b(), LU, piv)\n", "TP251"),
    ("from torch import norm\nn = norm(x, 'nuc')\n", "TP252"),
    ("from torch import nn\nup = nn.UpsamplingBilinear2d(scale_factor=2)\n", "TP253"),
    ("from torch.utils.data._utils import collate\nb = collate.default_collate(items)\n", "TP254"),
    ("import torch.utils.data as tud\nloader = tud.DataLoader(ds, 8)\n", "TP500"),
    ("import torch\ny = torch.log(x + 1)\n", "TP900"),
    ("import torch\ny = torch.exp(x) - 1.0\n", "TP901"),
    ("from torchvision.models import resnet\nm = resnet.resnet50(pretrained=True)\n", "TP600"),
    ("import torchvision\nm = torchvision.models.segmentation.fcn_resnet50(pretrained_backbone=False)\n", "TP600"),
    ("import torchvision.transforms.v2 as T\nt = T.Compose([T.ToTensor()])\n", "TP601"),
    ("from functorch import vmap, grad\nf = vmap(g)\n", "TP201"),
    ("import torch\nm = torch.ger(a, b)\n", "TP201"),
]

CLEAN = [
    "import torch\nx = torch.linalg.solve(A, B)\nr = torch.linalg.matrix_rank(A)\n",
    "import torch\nx = torch.arange(0, 10)\ny = list(range(3))\n",
    "import torch\nn = torch.linalg.vector_norm(x)\nm = x.norm()\n",
    "import torch\nup = torch.nn.Upsample(scale_factor=2)\n",
    "from torch.utils.data import default_collate\nb = default_collate(items)\n",
    "import torch\ny = torch.log(x) + 1\nz = torch.exp(x - 1)\nw = torch.exp(x) + 1\n",
    "import torch\ny = torch.log(1 + x, out=o)\n",
    "import torch\nq = torch.linalg.qr(A)\n",
    "import torch\ndef f(torch):\n    return torch.range(1, 2)\n",  # the parameter shadows the module
    "import torch\nclass A:\n    def g(self):\n        return self.torch.norm(x)\n",
    "from torchvision import transforms\nt = transforms.ToTensor()\n",
    "import torchvision\nm = torchvision.models.resnet50(weights='DEFAULT')\n",
    "from torch.func import vmap\nf = vmap(g)\n",
]


@pytest.mark.parametrize("code, expected", FLAGGED, ids=[f"{c}-{i}" for i, (_, c) in enumerate(FLAGGED)])
def test_flagged(lint, code, expected):
    result = lint(code, select=["ALL"])
    assert result.error is None
    assert expected in [f.code for f in result.findings]


@pytest.mark.parametrize("code", CLEAN, ids=range(len(CLEAN)))
def test_clean(lint, code):
    result = lint(code, select=["ALL"])
    assert result.error is None
    assert [(f.code, f.message) for f in result.findings] == []


def test_messages_name_a_version(lint):
    code = ("import torch\nimport torchvision\nfrom torch.utils.data import DataLoader\n"
            "a = torch.solve(b, A)\nb = torch.range(1, 2)\nc = torch.qr(A)\nd = torch.norm(x)\n"
            "e = torch.nn.UpsamplingNearest2d(scale_factor=2)\nf = torch.utils.data._utils.collate.default_convert(x)\n"
            "g = DataLoader(ds)\nh = torch.log(1 + x)\ni = torch.exp(x) - 1\n"
            "j = torchvision.models.vgg11(pretrained=True)\nk = torchvision.transforms.v2.ToTensor()\n")
    findings = lint(code, select=["ALL"]).findings
    codes = {f.code for f in findings}
    assert {"TP130", "TP250", "TP251", "TP252", "TP253", "TP254", "TP500", "TP900", "TP901", "TP600", "TP601"} <= codes
    for finding in findings:
        assert any(token in finding.message for token in ("PyTorch", "torch 2.", "torchvision 0.")), finding.message


# -- fixes: edge cases -------------------------------------------------------------------------------------------

def _fixed(lint, code, **options):
    result = lint(code, fix=True, unsafe_fixes=True, select=["ALL"], **options)
    assert result.error is None
    return result.fixed_text


@pytest.mark.parametrize("call, fixed", [
    ("torch.range(1, 10, 2)", "torch.arange(1, 11.0, 2)"),   # TorchFix writes arange(1, 12, 2): one element too many
    ("torch.range(0, 0)", "torch.arange(0, 1.0)"),
    ("torch.range(5, -5, -2)", "torch.arange(5, -6.0, -2)"),
    ("torch.range(-3, 3, 3, dtype=torch.int32)", "torch.arange(-3, 4, 3, dtype=torch.int32)"),
    ("torch.range(1, 10, 2, device='cpu')", "torch.arange(1, 11.0, 2, device='cpu')"),
])
def test_range_fix_moves_end_by_one(lint, call, fixed):
    assert _fixed(lint, f"import torch\nx = {call}\n") == f"import torch\nx = {fixed}\n"


@pytest.mark.parametrize("call", ["torch.range(0, 1, 0.25)", "torch.range(0, n)", "torch.range(start=0, end=3)",
                                  "torch.range(*bounds)", "torch.range(0, 2 ** 30)", "torch.range(0.0, 3.0)"])
def test_range_without_an_exact_rewrite_is_not_fixed(lint, call):
    code = f"import torch\nx = {call}\n"
    result = lint(code, select=["TP250"])
    assert [f.code for f in result.findings] == ["TP250"]
    assert _fixed(lint, code) == code


def test_linalg_fixes_skip_what_they_cannot_map(lint):
    for code in ("import torch\nX = torch.lu_solve(b(), LU, piv)\n",          # reordering would reorder the call
                 "import torch\nX = torch.lu_solve(b, LU_data=LU, LU_pivots=piv)\n",
                 "import torch\nQ, R = torch.qr(A, some=flag)\n",
                 "import torch\nm = torch.chain_matmul(a)\n",                  # multi_dot needs two matrices
                 "import torch\nLU, p = torch.lu(A, get_infos=flag)\n",
                 "import torch\nn = torch.norm(x, p='nuc')\n",
                 "import torch\nn = torch.norm(x, 'fro', (0, 1, 2))\n",      # 'fro' over 3 dims raised; vector_norm would not
                 "import torch\nn = torch.norm(x, p=float('inf'))\n",
                 "import torch\nup = torch.nn.UpsamplingNearest2d(size, scale, extra)\n"):
        assert _fixed(lint, code) == code, code


def test_safety_of_each_fix(lint):
    def applicabilities(code):
        return {f.code: (f.fix.applicability if f.fix else None) for f in lint(code, select=["ALL"]).findings}

    assert applicabilities("import torch\nx = torch.range(1, 3)\n") == {"TP250": "safe"}
    assert applicabilities("import torch\nL = torch.cholesky(A)\n") == {"TP251": "safe"}
    assert applicabilities("import torch\nn = torch.norm(x)\n") == {"TP252": "unsafe"}
    assert applicabilities("import torch\nup = torch.nn.UpsamplingNearest2d(scale_factor=2)\n") == {"TP253": "safe"}
    assert applicabilities("import torch\ny = torch.log(1 + x)\n") == {"TP900": "unsafe"}
    assert applicabilities("import torch\nfrom functorch import vmap\n") == {"TP201": "safe"}
    assert applicabilities("import torch\ntorch.testing.assert_allclose(a, b)\n") == {"TP201": "unsafe"}


def test_functorch_fallback_under_except_import_error_is_not_flagged(lint):
    """TorchFix flags the fallback import; the engine treats an ``except ImportError`` body as old-release code."""
    code = ("try:\n    from torch.func import vmap\nexcept ImportError:\n    from functorch import vmap\n"
            "try:\n    import functorch\n    f = functorch.vmap(g)\nexcept ImportError:\n    f = None\n")
    findings = lint(code, select=["ALL"]).findings
    assert [(f.code, f.message.split("`")[1]) for f in findings] == [("TP201", "functorch.vmap")]
    assert findings[0].row == 7  # the primary code in ``try`` is flagged


def test_expm1_only_matches_its_own_subtraction(lint):
    code = "import torch\ny = torch.exp(a) * torch.exp(b) - 1\nz = (torch.exp(a), torch.exp(b) - 1)\n"
    assert _fixed(lint, code) == "import torch\ny = torch.exp(a) * torch.exp(b) - 1\nz = (torch.exp(a), torch.expm1(b))\n"


def test_pretrained_positional_and_non_literal(lint):
    assert _fixed(lint, "from torchvision.models import vgg16\nm = vgg16(True)\n") == (
        "from torchvision.models import vgg16\nfrom torchvision.models import VGG16_Weights\n"
        "m = vgg16(weights=VGG16_Weights.IMAGENET1K_V1)\n")
    unchanged = ["from torchvision.models import vgg16\nm = vgg16(True, False)\n",
                 "from torchvision.models import vit_h_14\nm = vit_h_14(pretrained=True)\n"]  # no legacy weights
    for code in unchanged:
        assert [f.code for f in lint(code, select=["TP600"]).findings] == ["TP600"]
        assert _fixed(lint, code) == code


def test_pretrained_table_covers_every_module_path():
    assert len(MODELS) == 108  # TorchFix 0.7 lists 125 (model, flag) pairs for 108 builders
    assert QUALNAMES["torchvision.models.resnet50"] == "resnet50"
    assert QUALNAMES["torchvision.models.resnet.resnet50"] == "resnet50"
    assert QUALNAMES["torchvision.models.detection.faster_rcnn.fasterrcnn_resnet50_fpn"] == "detection.fasterrcnn_resnet50_fpn"
    assert QUALNAMES["torchvision.models.video.resnet.r3d_18"] == "video.r3d_18"


# -- claims against real torch -----------------------------------------------------------------------------------

def _warnings_in_subprocess(body: str) -> str:
    """Run ``body`` in a fresh interpreter (TORCH_WARN_ONCE warns once per process) and return its stderr."""
    script = "import warnings\nwarnings.simplefilter('always')\nimport torch\n" + textwrap.dedent(body)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stderr


def _spd(torch):
    return torch.tensor([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]], dtype=torch.float64)


@pytest.mark.torch
def test_removed_linalg_functions_raise_and_the_replacements_run():
    torch = pytest.importorskip("torch")
    A = _spd(torch)
    B = torch.ones(3, 1, dtype=torch.float64)
    for name, args in {"solve": (B, A), "symeig": (A,), "eig": (A,), "lstsq": (B, A), "matrix_rank": (A,)}.items():
        with pytest.raises(RuntimeError, match="deprecated since version 1.9 and is now removed"):
            getattr(torch, name)(*args)
    x = torch.linalg.solve(A, B)
    assert torch.allclose(A @ x, B)
    assert torch.allclose(torch.linalg.lstsq(A, B).solution, x)
    assert torch.linalg.eigvalsh(A).shape == (3,) and torch.linalg.eigvals(A).is_complex()
    assert int(torch.linalg.matrix_rank(A, hermitian=True)) == 3


@pytest.mark.torch
def test_deprecated_functions_warn_in_a_fresh_process():
    pytest.importorskip("torch")
    stderr = _warnings_in_subprocess("""
        A = torch.tensor([[4.0, 1.0], [1.0, 3.0]])
        torch.range(1, 3)
        torch.cholesky(A)
        torch.qr(A)
        torch.chain_matmul(A, A)
        LU, piv = torch.lu(A)
        torch.lu_solve(torch.ones(2, 1), LU, piv)
        torch.triangular_solve(torch.ones(2, 1), A)
        torch.testing.assert_allclose(A, A)
        import functorch
        functorch.vmap(torch.sin)(A)
        functorch.grad(lambda t: t.sum())(A)
    """)
    for text in ("torch.range is deprecated", "torch.cholesky is deprecated", "torch.qr is deprecated",
                 "torch.chain_matmul is deprecated", "torch.lu is deprecated", "torch.lu_solve is deprecated",
                 "torch.triangular_solve is deprecated", "assert_allclose()` is deprecated since 1.12",
                 "`functorch.vmap` is deprecated as of PyTorch 2.0", "`functorch.grad` is deprecated as of PyTorch 2.0"):
        assert text in stderr, text


@pytest.mark.torch
def test_documented_only_deprecations_do_not_warn():
    """torch.norm, torch.svd, torch.ger and the Upsampling modules are deprecated in their docs only."""
    torch = pytest.importorskip("torch")
    A = torch.tensor([[4.0, 1.0], [1.0, 3.0]])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.norm(A)
        torch.svd(A)
        torch.ger(torch.ones(2), torch.ones(2))
        torch.nn.UpsamplingNearest2d(scale_factor=2)(torch.ones(1, 1, 2, 2))
        torch.nn.UpsamplingBilinear2d(scale_factor=2)(torch.ones(1, 1, 2, 2))
    assert not [w for w in caught if "deprecat" in str(w.message).lower()]
    assert "torch.norm is deprecated" in torch.norm.__doc__
    assert "deprecated" in torch.nn.UpsamplingNearest2d.__doc__ and "deprecated" in torch.nn.UpsamplingBilinear2d.__doc__


def _run(text: str, namespace: dict) -> dict:
    exec(compile(text, "<fixed>", "exec"), namespace)  # noqa: S102 - our own generated test code
    return namespace


@pytest.mark.torch
@pytest.mark.parametrize("call", ["torch.range(1, 10, 2)", "torch.range(0, 0)", "torch.range(5, -5, -2)",
                                  "torch.range(-3, 3, 3, dtype=torch.int32)", "torch.range(0, 7)",
                                  "torch.range(2, 9, 3, dtype=torch.float64)"])
def test_fixed_range_returns_the_same_tensor(lint, call):
    torch = pytest.importorskip("torch")
    code = f"import torch\nx = {call}\n"
    fixed = _fixed(lint, code)
    assert "arange" in fixed
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        old = _run(code, {})["x"]
        new = _run(fixed, {})["x"]
    assert old.dtype == new.dtype and torch.equal(old, new), (call, old, new)
    assert sum("torch.range is deprecated" in str(w.message) for w in caught) == 1  # only the old code warned
    if call == "torch.range(1, 10, 2)":  # TorchFix's rewrite, arange(1, 10 + 2, 2), has one element more
        assert torch.arange(1, 12, 2).numel() == old.numel() + 1


@pytest.mark.torch
@pytest.mark.parametrize("code", [
    "L = torch.cholesky(A)", "U = torch.cholesky(A, True)", "U = torch.cholesky(A, upper=True)",
    "Q, R = torch.qr(A)", "Q, R = torch.qr(A, some=False)", "Q, R = torch.qr(A, True)",
    "M = torch.chain_matmul(A, B, A)", "LU, pivots = torch.lu(A)", "LU, pivots, info = torch.lu(A, get_infos=True)",
    "LU, pivots = torch.lu(A, pivot=True)", "X = torch.lu_solve(b, LUd, piv)",
])
def test_fixed_linalg_code_gives_the_same_result(lint, code):
    torch = pytest.importorskip("torch")
    text = f"import torch\n{code}\n"
    fixed = _fixed(lint, text)
    assert "torch.linalg." in fixed, fixed
    A = _spd(torch)
    LUd, piv = torch.linalg.lu_factor(A)
    env = {"A": A, "B": torch.eye(3, dtype=torch.float64) * 2, "b": torch.ones(3, 2, dtype=torch.float64),
           "LUd": LUd, "piv": piv}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        old = _run(text, dict(env))
    new = _run(fixed, dict(env))
    for name in [n for n in old if n not in env and n != "torch" and not n.startswith("__")]:
        assert torch.allclose(torch.as_tensor(old[name]).double(), torch.as_tensor(new[name]).double()), (code, name)


@pytest.mark.torch
@pytest.mark.parametrize("call", ["torch.norm(x)", "torch.norm(x, dim=1, keepdim=True)", "torch.norm(x, p=1, dim=-1)",
                                  "torch.norm(x, 2, 1)", "torch.norm(x, 'fro', (0, 1))", "torch.norm(x, p=3.5)",
                                  "torch.norm(x, p=None, dim=0)", "torch.norm(x, dtype=torch.float64)",
                                  "torch.norm(x, 0)", "torch.norm(x, float('inf'), 1)"])
def test_fixed_norm_gives_the_same_result(lint, call):
    torch = pytest.importorskip("torch")
    code = f"import torch\nn = {call}\n"
    fixed = _fixed(lint, code)
    x = torch.tensor([[1.0, -2.0, 3.0], [0.5, 0.0, -4.0]])
    old = _run(code, {"x": x})["n"]
    new = _run(fixed, {"x": x})["n"]
    assert old.dtype == new.dtype and old.shape == new.shape and torch.equal(old, new), (call, fixed)


@pytest.mark.torch
@pytest.mark.parametrize("code", ["nn.UpsamplingNearest2d(scale_factor=2)", "nn.UpsamplingNearest2d((5, 3))",
                                  "nn.UpsamplingBilinear2d(scale_factor=3)", "nn.UpsamplingBilinear2d(None, 2)"])
def test_fixed_upsampling_gives_the_same_output(lint, code):
    torch = pytest.importorskip("torch")
    text = f"import torch.nn as nn\nm = {code}\n"
    fixed = _fixed(lint, text)
    assert "nn.Upsample(" in fixed
    x = torch.arange(24, dtype=torch.float32).reshape(1, 2, 3, 4)
    old, new = _run(text, {})["m"], _run(fixed, {})["m"]
    assert isinstance(new, torch.nn.Upsample) and torch.equal(old(x), new(x))


@pytest.mark.torch
@pytest.mark.parametrize("call", ["F.upsample(x, scale_factor=2)", "F.upsample(x, None, 2, 'bilinear', True)",
                                  "F.upsample(x, size=(5, 7), mode='bicubic', align_corners=False)",
                                  "F.upsample_nearest(x, scale_factor=3)", "F.upsample_nearest(x, (4, 5))",
                                  "F.upsample_bilinear(x, scale_factor=2)", "F.upsample_bilinear(x, None, 1.5)"])
def test_fixed_functional_upsample_gives_the_same_output_without_the_warning(lint, call):
    torch = pytest.importorskip("torch")
    text = f"import torch.nn.functional as F\ny = {call}\n"
    fixed = _fixed(lint, text)
    assert "F.interpolate(" in fixed and "upsample" not in fixed
    x = torch.arange(24, dtype=torch.float32).reshape(1, 2, 3, 4)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        old = _run(text, {"x": x})["y"]
    assert any("is deprecated. Use `nn.functional.interpolate` instead" in str(w.message) for w in caught)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        new = _run(fixed, {"x": x})["y"]
    assert not [w for w in caught if "deprecated" in str(w.message)]
    assert torch.equal(old, new)


@pytest.mark.torch
def test_public_collate_functions_are_the_private_ones():
    torch = pytest.importorskip("torch")
    import torch.utils.data._utils.collate as private

    assert torch.utils.data.default_collate is private.default_collate
    assert torch.utils.data.default_convert is private.default_convert
    assert {"default_collate", "default_convert"} <= set(torch.utils.data.__all__)


@pytest.mark.torch
def test_dataloader_num_workers_position_and_default():
    torch = pytest.importorskip("torch")
    import inspect

    parameters = list(inspect.signature(torch.utils.data.DataLoader.__init__).parameters.values())[1:]
    assert parameters[5].name == "num_workers" and parameters[5].default == 0
    assert torch.utils.data.dataloader.DataLoader is torch.utils.data.DataLoader


@pytest.mark.torch
def test_log1p_and_expm1_fixes_are_the_accurate_versions(lint):
    torch = pytest.importorskip("torch")
    x = torch.tensor([1e-8, 1e-3, 0.5, 3.0])
    old_log = _run("import torch\ny = torch.log(1 + x)\n", {"x": x})["y"]
    new_log = _run(_fixed(lint, "import torch\ny = torch.log(1 + x)\n"), {"x": x})["y"]
    old_exp = _run("import torch\ny = torch.exp(x) - 1\n", {"x": x})["y"]
    new_exp = _run(_fixed(lint, "import torch\ny = torch.exp(x) - 1\n"), {"x": x})["y"]
    assert torch.allclose(old_log[1:], new_log[1:], rtol=1e-4) and torch.allclose(old_exp[1:], new_exp[1:], rtol=1e-4)
    # For tiny x the old forms lose everything; the replacements keep it.
    assert old_log[0] == 0 and old_exp[0] == 0
    assert torch.isclose(new_log[0], torch.tensor(1e-8)) and torch.isclose(new_exp[0], torch.tensor(1e-8))


@pytest.mark.torch
def test_functorch_rows_match_torch_func():
    torch = pytest.importorskip("torch")
    import functorch

    A = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        results = {
            "vmap": (functorch.vmap(torch.sin)(A), torch.func.vmap(torch.sin)(A)),
            "grad": (functorch.grad(lambda t: (t ** 2).sum())(A), torch.func.grad(lambda t: (t ** 2).sum())(A)),
            "jacrev": (functorch.jacrev(torch.sin)(A[0]), torch.func.jacrev(torch.sin)(A[0])),
            "jacfwd": (functorch.jacfwd(torch.sin)(A[0]), torch.func.jacfwd(torch.sin)(A[0])),
            "hessian": (functorch.hessian(lambda t: (t ** 3).sum())(A[0]),
                        torch.func.hessian(lambda t: (t ** 3).sum())(A[0])),
        }
    for name, (old, new) in results.items():
        assert torch.equal(old, new), name
    assert all(issubclass(w.category, FutureWarning) for w in caught if "functorch" in str(w.message))
    assert {"vmap", "grad", "jacrev", "jacfwd", "hessian"} <= {
        name for name in results if any(f"functorch.{name}`" in str(w.message) for w in caught)}
    for name in ("grad_and_value", "vjp", "jvp", "functionalize"):
        assert getattr(functorch, name).__module__ == "torch._functorch.deprecated" and hasattr(torch.func, name)
    for name in ("make_functional", "make_functional_with_buffers", "combine_state_for_ensemble"):
        assert hasattr(functorch, name) and not hasattr(torch.func, name)
    assert hasattr(torch.func, "functional_call") and hasattr(torch.func, "stack_module_state")


@pytest.mark.torch
def test_ger_is_outer_and_assert_close_is_stricter():
    torch = pytest.importorskip("torch")
    u, w = torch.tensor([1.0, 2.0]), torch.tensor([3.0, 4.0, 5.0])
    assert torch.equal(torch.ger(u, w), torch.outer(u, w))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.testing.assert_allclose(torch.ones(2), torch.ones(2, dtype=torch.float64))  # dtypes differ: passes
    with pytest.raises(AssertionError):
        torch.testing.assert_close(torch.ones(2), torch.ones(2, dtype=torch.float64))      # hence the unsafe fix
    torch.testing.assert_close(torch.ones(2), torch.ones(2))


#: The torchvision release built for the test torch (2.13.0): PyPI's wheel cannot be imported beside
#: the CPU build of torch here (its C extension is built against the CUDA one), so its Python
#: sources are read from the wheel instead; they are what the claims are about.
TORCHVISION_FOR_TEST_TORCH = "torchvision==0.28.0"


def _torchvision_wheel():
    """The wheel of TORCHVISION_FOR_TEST_TORCH, downloaded once (PyPI, no dependencies)."""
    import os
    import zipfile
    from pathlib import Path

    cache = Path(os.environ.get("TORCHPATCH_TEST_CACHE", Path.home() / ".cache" / "torchpatch-tests"))
    cache.mkdir(parents=True, exist_ok=True)
    found = sorted(cache.glob("torchvision-0.28.0-*.whl"))
    if not found:
        if os.environ.get("TORCHPATCH_OFFLINE"):
            pytest.skip("TORCHPATCH_OFFLINE is set: the torchvision wheel cannot be fetched")
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:",
                        "--python-version", "3.11", "--platform", "manylinux_2_28_x86_64",
                        "-d", str(cache), TORCHVISION_FOR_TEST_TORCH], check=True)
        found = sorted(cache.glob("torchvision-0.28.0-*.whl"))
    return zipfile.ZipFile(found[0])


def _weights_members(wheel) -> dict[tuple[str, str], set[str]]:
    """(models subpackage, weights enum class) -> its members, read from torchvision/models/**/*.py."""
    import ast

    members: dict[tuple[str, str], set[str]] = {}
    for name in wheel.namelist():
        if not (name.startswith("torchvision/models/") and name.endswith(".py")):
            continue
        package = "/".join(name.split("/")[2:-1]).replace("/", ".")
        for node in ast.parse(wheel.read(name)).body:
            if isinstance(node, ast.ClassDef) and node.name.endswith("_Weights"):
                members.setdefault((package, node.name), set()).update(
                    target.id for statement in node.body if isinstance(statement, ast.Assign)
                    for target in statement.targets if isinstance(target, ast.Name))
    return members


def test_torchvision_claims_from_the_wheel_sources():
    """TP600: every weights enum member the rule writes exists in torchvision 0.28 (the release for torch
    2.13); TP601: ``v2.ToTensor`` is documented as deprecated there."""
    wheel = _torchvision_wheel()
    members = _weights_members(wheel)
    for model, (weights, backbone, _) in MODELS.items():
        for enum in (weights, backbone):
            if enum is None:
                continue
            package = model.rpartition(".")[0] if enum is weights else ""
            enum_class, _, member = enum.partition(".")
            assert member in members.get((package, enum_class), set()), f"{enum} (in torchvision.models.{package})"
    deprecated = wheel.read("torchvision/transforms/v2/_deprecated.py").decode()
    body = deprecated[deprecated.index("class ToTensor"):]
    assert "is deprecated and will be removed" in body[:body.index("\nclass ") if "\nclass " in body else None]


@pytest.mark.torch
def test_torchvision_claims_when_importable():
    """Where torchvision imports (a torch build it was made for), the same claims at run time."""
    pytest.importorskip("torch")
    if importlib.util.find_spec("torchvision") is None:
        pytest.skip("torchvision is not installed: test_torchvision_claims_from_the_wheel_sources checks its sources")
    import torchvision
    from torchvision.transforms import v2
    import torchvision.models as models

    for model, (weights, backbone, _) in MODELS.items():
        for enum in (weights, backbone):
            if enum is None:
                continue
            package = model.rpartition(".")[0] if enum is weights else ""
            namespace = getattr(models, package) if package else models
            enum_class, _, member = enum.partition(".")
            assert hasattr(getattr(namespace, enum_class), member), enum
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        v2.ToTensor()
    assert any("deprecated" in str(w.message) for w in caught), torchvision.__version__


# -- found on real code: transformers 4.48 modeling_clvp.py:1349 torch.range (TorchFix reports it too) ----------

def test_hasattr_on_a_non_torch_object_is_not_a_version_guard(lint):
    code = ("import torch\nif hasattr(kwargs, 'attention_mask'):\n    ids = kwargs['attention_mask'].cumsum(-1)\n"
            "else:\n    ids = torch.range(0, n - 1)\n")
    assert [f.code for f in lint(code, select=["TP250"]).findings] == ["TP250"]


# -- TP520 require-grad-typo (TOR002) ------------------------------------------------------------------------

@pytest.mark.parametrize("code, rows", [
    ("import torch\na.require_grad = b.require_grad = False\n", [2, 2]),
    ("import torch\nfor p in ps:\n    p.require_grad: bool = False\n", [3]),
    ("import torch\np.require_grad |= flag\n", [2]),
    ("import torch\n(x.require_grad, *rest), y = value\n", [2]),
    ("import torch\nsetattr(p, \"require_grad\", False)\n", [2]),
    ("import torch\ndef freeze(m):\n    for p in m.parameters():\n        p.require_grad = False\n", [4]),
])
def test_require_grad_typo_spellings(lint, code, rows):
    assert [(f.code, f.row) for f in lint(code).findings] == [("TP520", row) for row in rows]


@pytest.mark.parametrize("code", [
    "import torch\ndef setattr(*a):\n    pass\nsetattr(p, 'require_grad', False)\n",  # not the builtin
    "import torch\nsetattr(p, 'require_grad', False, extra)\n",
    "import torch\np.requires_grad = False\nrequire_grad = False\nprint(require_grad)\n",
    "import torch\np.require_grad_ = False\n",
    "import torch\nif p.require_grad:\n    p.require_grad = False\n",  # read on purpose: the file's own attribute
])
def test_require_grad_typo_clean(lint, code):
    assert [f.code for f in lint(code).findings] == []


def test_require_grad_typo_is_on_by_default_and_answers_tor002(lint):
    code = "import torch\np.require_grad = False  # noqa: TOR002\nq.require_grad = False\n"
    assert [f.code for f in lint(code).findings] == ["TP520"]
    assert [f.code for f in lint(code, select=["TOR002"]).findings] == ["TP520"]


@pytest.mark.torch
def test_require_grad_typo_is_silent_and_the_fix_takes_effect():
    torch = pytest.importorskip("torch")
    assert not hasattr(torch.Tensor, "require_grad")
    param = torch.nn.Parameter(torch.zeros(2))
    param.require_grad = False  # the typo: no error, no effect
    assert param.requires_grad is True
    module = torch.nn.Linear(2, 2)
    module.require_grad = False
    assert all(p.requires_grad for p in module.parameters())
    param.requires_grad = False  # the fixed spelling
    assert param.requires_grad is False
    non_leaf = torch.zeros(2, requires_grad=True) * 2
    non_leaf.require_grad = False
    with pytest.raises(RuntimeError):
        non_leaf.requires_grad = False  # why the fix is unsafe


def test_pretrained_message_names_the_torchvision_release_it_was_read_in(lint):
    """Issue 8 §2: a message names one upper release. torchvision has no release paired with 2.15 (0.29,
    for 2.14, is the newest on PyPI), so TP600 names the torchvision release whose source still warns."""
    (finding,) = lint("import torchvision\nm = torchvision.models.resnet50(pretrained=True)\n", select=["TP600"]).findings
    assert "still warning in torchvision 0.29 (the newest release, paired with PyTorch 2.14)" in finding.message
    assert "still warning with PyTorch 2.14" not in finding.message


def test_logsumexp_message_fits_a_hand_shifted_exponent(lint):
    """A hand-shifted ``log(sum(exp(x - x_max)))``: "overflows for large x" is false there; the message
    speaks of the shift instead (a global maximum can underflow a slice). With the shift added back
    (``... + x_max``, modelscope's retinaface box_utils, stanza's crf) it is the stable form: not reported."""
    assert lint("import torch\ny = torch.log(torch.sum(torch.exp(x - x_max), 1)) + x_max\n",
                select=["TP903"]).findings == []
    shifted = "import torch\ny = torch.log(torch.sum(torch.exp(x - x_max), 1))\n"
    (finding,) = lint(shifted, select=["TP903"]).findings
    assert "overflows" not in finding.message and "hand-shifted" in finding.message
    (plain,) = lint("import torch\ny = torch.log(torch.sum(torch.exp(x), 1))\n", select=["TP903"]).findings
    assert "overflows for large x" in plain.message
