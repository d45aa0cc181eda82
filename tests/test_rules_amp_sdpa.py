"""TP202/TP203 (torch.{cuda,cpu}.amp), TP204 (sdp_kernel), TP205 (_register_pytree_node), TP401 (use_reentrant).

Lint cases for aliases, from-imports, decorators and positional arguments, then the claims checked
against the real torch installed here (2.13 CPU in CI): the old call warns, the fixed code runs
without that warning.
"""

from __future__ import annotations

import inspect
import textwrap
import warnings

import pytest

from torchpatch.rules import rule_by_code_or_name
from torchpatch.rules.base import Invalid, example_code


def _fix(lint, code: str, rule: str, **options):
    result = lint(textwrap.dedent(code), fix=True, unsafe_fixes=True, select=[rule], **options)
    assert result.error is None
    return result


def _findings(lint, code: str, rule: str, **options):
    result = lint(textwrap.dedent(code), select=[rule], **options)
    assert result.error is None
    return result.findings


# -- TP202 / TP203: lint cases ----------------------------------------------------------------------

AMP_FIXES = [
    pytest.param(
        "import torch\nwith torch.cuda.amp.autocast(False):\n    pass\n",
        'import torch\nwith torch.amp.autocast("cuda", enabled=False, dtype=torch.float16):\n    pass\n',
        id="positional-enabled-gets-its-name"),
    pytest.param(
        "import torch\nwith torch.cuda.amp.autocast(True, torch.float16, cache_enabled=False):\n    pass\n",
        'import torch\nwith torch.amp.autocast("cuda", enabled=True, dtype=torch.float16, cache_enabled=False):\n    pass\n',
        id="positional-keyword-mix"),
    pytest.param(
        "from torch.cuda import amp\nscaler = amp.GradScaler(65536.0, 2.0, 0.5, 2000, False)\nwith amp.autocast():\n    pass\n",
        'import torch\nscaler = torch.amp.GradScaler("cuda", init_scale=65536.0, growth_factor=2.0, backoff_factor=0.5, '
        'growth_interval=2000, enabled=False)\nwith torch.amp.autocast("cuda", dtype=torch.float16):\n    pass\n',
        id="from-torch-cuda-import-amp"),
    pytest.param(
        "import torch\n\ndef train():\n    from torch.cuda.amp import autocast\n    with autocast():\n        pass\n",
        'import torch\n\ndef train():\n    with torch.amp.autocast("cuda", dtype=torch.float16):\n        pass\n',
        id="function-local-import"),
    pytest.param(
        "import torch.cuda.amp as amp\nimport torch.cpu.amp as cpu_amp\nwith amp.autocast(), cpu_amp.autocast():\n    pass\n",
        'import torch\nwith torch.amp.autocast("cuda", dtype=torch.float16), torch.amp.autocast("cpu", dtype=torch.bfloat16):\n    pass\n',
        id="module-aliases-both-devices"),
    pytest.param(
        "from torch.cuda.amp import autocast, GradScaler\nscaler = GradScaler()\nkeep = GradScaler\nwith autocast():\n    pass\n",
        'from torch.cuda.amp import GradScaler\nimport torch\nscaler = torch.amp.GradScaler("cuda")\nkeep = GradScaler\n'
        'with torch.amp.autocast("cuda", dtype=torch.float16):\n    pass\n',
        id="import-kept-while-still-used"),
    pytest.param(
        "import torch\nfwd = torch.cuda.amp.custom_fwd(forward, cast_inputs=torch.float32)\nbwd = torch.cuda.amp.custom_bwd(backward)\n",
        'import torch\nfwd = torch.amp.custom_fwd(forward, device_type="cuda", cast_inputs=torch.float32)\n'
        'bwd = torch.amp.custom_bwd(backward, device_type="cuda")\n',
        id="custom-fwd-bwd-called"),
    pytest.param(
        "import torch\n@torch.cuda.amp.custom_fwd()\ndef forward(ctx, x):\n    return x\n",
        'import torch\n@torch.amp.custom_fwd(device_type="cuda")\ndef forward(ctx, x):\n    return x\n',
        id="custom-fwd-empty-call"),
    pytest.param(
        "import torch\nwith torch.cuda.amp.autocast_mode.autocast(enabled=False):\n    pass\n",
        'import torch\nwith torch.amp.autocast("cuda", enabled=False, dtype=torch.float16):\n    pass\n',
        id="defining-submodule"),
    pytest.param(
        "import torch\nac = torch.cuda.amp.autocast\nwith ac(True):\n    pass\n",
        # Not fixed: rewriting the call through a local alias would leave ``ac`` dead (and still old).
        "import torch\nac = torch.cuda.amp.autocast\nwith ac(True):\n    pass\n",
        id="call-through-alias"),
    pytest.param(
        "import torch\nwith torch.cuda.amp.autocast(\n    # why\n    False,\n):\n    pass\n"
        "with torch.cuda.amp.autocast(  # note\n    False):\n    pass\n",
        'import torch\nwith torch.amp.autocast(\n    # why\n    "cuda",\n    enabled=False,\n    dtype=torch.float16,\n):\n    pass\n'
        'with torch.amp.autocast(  # note\n    "cuda",\n    enabled=False, dtype=torch.float16):\n    pass\n',
        id="one-argument-a-line-with-comments"),
    pytest.param(
        "import torch\nscalers = [torch.cuda.amp.GradScaler(s) for s in scales]\nf = lambda: torch.cpu.amp.autocast(False)\n",
        'import torch\nscalers = [torch.amp.GradScaler("cuda", init_scale=s) for s in scales]\n'
        'f = lambda: torch.amp.autocast("cpu", enabled=False, dtype=torch.bfloat16)\n',
        id="comprehension-and-lambda"),
]


@pytest.mark.parametrize("code, fixed", AMP_FIXES)
def test_amp_fix(lint, code, fixed):
    rules = ["TP202", "TP203"]
    result = lint(code, fix=True, unsafe_fixes=True, select=rules)
    assert result.error is None
    assert result.fixed_text == fixed
    again = lint(fixed, fix=True, unsafe_fixes=True, select=rules)
    assert again.fixed_count == 0


AMP_REPORTED_WITHOUT_FIX = [
    pytest.param("import torch\nwith torch.cuda.amp.autocast((False)):\n    pass\n", id="parenthesized-positional"),
    pytest.param("import torch\nwith torch.cuda.amp.autocast(True, *rest):\n    pass\n", id="starred-autocast"),
    pytest.param("import torch\nfwd = torch.cuda.amp.custom_fwd(*fns)\n", id="starred-custom-fwd"),
    pytest.param("import torch\nclass S(torch.cuda.amp.GradScaler):\n    pass\n", id="base-class"),
    pytest.param("import torch\n@torch.cuda.amp.autocast\ndef f(x):\n    return x\n", id="autocast-decorator-uncalled"),
    pytest.param("from torch.cuda.amp import autocast\nfactory = autocast\n", id="from-import-reference"),
]


@pytest.mark.parametrize("code", AMP_REPORTED_WITHOUT_FIX)
def test_amp_reported_without_fix(lint, code):
    findings = _findings(lint, code, "TP202")
    assert [f.code for f in findings] == ["TP202"]
    assert findings[0].fix is None
    assert "2.4" in findings[0].message


@pytest.mark.parametrize("code", [
    pytest.param("import torch\nscaler: torch.cuda.amp.GradScaler | None = None\n", id="variable"),
    pytest.param("from typing import Optional\nfrom torch.cuda.amp.grad_scaler import GradScaler\n"
                 "class Callback:\n    grad_scaler: Optional[GradScaler]\n", id="dataclass-field"),
    # apex, allennlp, mmagic: a parameter's or a return's annotation was not looked at at all.
    pytest.param("import torch\ndef step(loss, grad_scaler: torch.cuda.amp.GradScaler = None):\n    pass\n",
                 id="parameter"),
    pytest.param("from torch.cuda.amp import GradScaler\nasync def make() -> GradScaler:\n    pass\n", id="return"),
    pytest.param("import torch\nclass T:\n    def f(self, *, s: 'int | torch.cuda.amp.GradScaler', **kw: torch.cuda.amp.GradScaler):\n"
                 "        pass\n", id="keyword-only-and-kwargs"),
])
def test_gradscaler_in_an_annotation_names_the_base_class(lint, code):
    # audiocraft 1.3.0 / nerfstudio 1.1.5: an annotation is a type, not a call, so "functools.partial" and
    # the signature are no advice there; torch.amp.GradScaler (the base class) is.
    findings = _findings(lint, code, "TP202")
    assert [f.code for f in findings] == ["TP202"]
    assert findings[0].fix is None
    assert "in an annotation use `torch.amp.GradScaler`" in findings[0].message
    assert "functools.partial" not in findings[0].message


def test_amp_import_alone_is_not_reported(lint):
    assert _findings(lint, "from torch.cuda.amp import autocast, GradScaler\n__all__ = ['autocast']\n", "TP202") == []


def test_amp_fix_safety_follows_min_torch(lint):
    code = "import torch\n@torch.cuda.amp.custom_bwd\ndef backward(ctx, g):\n    return g\n"
    assert _findings(lint, code, "TP202", min_torch="2.4")[0].fix.applicability == "safe"
    finding = _findings(lint, code, "TP202", min_torch="2.3")[0]
    assert finding.fix.applicability == "unsafe"
    assert "needs PyTorch >= 2.4" in finding.fix.message
    scaler = _findings(lint, "import torch\ns = torch.cuda.amp.GradScaler()\n", "TP202", min_torch="2.3")[0]
    # torch.amp.GradScaler(device, ...) is in 2.3: only the base-class type makes this fix unsafe
    assert scaler.fix.applicability == "unsafe" and "needs PyTorch" not in scaler.fix.message
    assert "base class" in scaler.fix.message


# -- TP202 / TP203: real torch ----------------------------------------------------------------------

def _record(function):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = function()
    return result, caught


def _deprecations(caught, text="deprecated"):
    return [str(w.message) for w in caught if issubclass(w.category, FutureWarning) and text in str(w.message)]


def _namespace():
    torch = pytest.importorskip("torch")
    return {
        "model": lambda t: t * 2, "x": torch.ones(2, 2), "use_amp": False, "scaler_args": (), "amp_options": {},
        "forward": lambda ctx, t: t, "backward": lambda ctx, g: g,
    }


def _run(code: str):
    namespace = _namespace()
    _, caught = _record(lambda: exec(compile(code, "<example>", "exec"), namespace))
    return namespace, caught


def _fixed_examples(code: str):
    rule = rule_by_code_or_name(code)
    return [pytest.param(e, id=f"{code}-{i}") for i, e in enumerate(rule.INVALID) if isinstance(e, Invalid) and e.fixed]


@pytest.mark.torch
@pytest.mark.parametrize("example", [*_fixed_examples("TP202"), *_fixed_examples("TP203")])
def test_amp_example_warns_and_fixed_example_runs_clean(example):
    """The invalid example warns (FutureWarning, torch.{cuda,cpu}.amp deprecated); its fixed text does not."""
    pytest.importorskip("torch")
    _, caught = _run(example_code(example.code))
    assert _deprecations(caught, ".amp."), [str(w.message) for w in caught]
    _, caught = _run(example_code(example.fixed))
    assert _deprecations(caught) == [], [str(w.message) for w in caught]


@pytest.mark.torch
def test_amp_old_signatures_are_the_ones_the_fix_maps():
    torch = pytest.importorskip("torch")
    from torchpatch.rules._amp_api import OLD_PARAMETERS

    def names(function, skip=("self",)):
        return tuple(p for p in inspect.signature(function).parameters if p not in skip)

    for module in (torch.cuda.amp, torch.cpu.amp):
        assert names(module.autocast.__init__) == OLD_PARAMETERS["autocast"]
        assert names(module.GradScaler.__init__) == OLD_PARAMETERS["GradScaler"]
    assert names(torch.cuda.amp.custom_fwd) == ("fwd", "cast_inputs")
    assert names(torch.cuda.amp.custom_bwd) == OLD_PARAMETERS["custom_bwd"]
    # The new ones: device first, dtype before enabled; device_type a required keyword.
    assert names(torch.amp.autocast.__init__) == ("device_type", "dtype", "enabled", "cache_enabled")
    assert names(torch.amp.GradScaler.__init__) == ("device", *OLD_PARAMETERS["GradScaler"])
    for decorator in (torch.amp.custom_fwd, torch.amp.custom_bwd):
        parameter = inspect.signature(decorator).parameters["device_type"]
        assert parameter.kind is inspect.Parameter.KEYWORD_ONLY and parameter.default is inspect.Parameter.empty


@pytest.mark.torch
def test_cpu_autocast_positional_mapping_matches_the_old_object():
    torch = pytest.importorskip("torch")
    (old, _), (new, caught) = _record(lambda: torch.cpu.amp.autocast(True, torch.float16, False)), _record(
        lambda: torch.amp.autocast("cpu", enabled=True, dtype=torch.float16, cache_enabled=False))
    assert _deprecations(caught) == []
    assert (old.device, old.fast_dtype, old._enabled, old._cache_enabled) == \
        (new.device, new.fast_dtype, new._enabled, new._cache_enabled) == ("cpu", torch.float16, True, False)
    # What a blind rename (TorchFix) writes passes True as the dtype: autocast silently turns itself off.
    blind, caught = _record(lambda: torch.amp.autocast("cpu", True, torch.float16))
    assert blind.fast_dtype is True and blind._enabled is False
    assert any("target dtype is not supported" in str(w.message) for w in caught)


@pytest.mark.torch
def test_cpu_autocast_fixed_form_runs_a_matmul_in_bfloat16():
    torch = pytest.importorskip("torch")

    def run():
        with torch.amp.autocast("cpu", dtype=torch.bfloat16):
            return torch.mm(torch.ones(2, 2), torch.ones(2, 2))

    result, caught = _record(run)
    assert result.dtype == torch.bfloat16
    assert _deprecations(caught) == []


@pytest.mark.torch
def test_cuda_autocast_fixed_form_on_this_build():
    """On a CPU-only build torch.amp.autocast("cuda") constructs, warns that CUDA is missing and disables itself."""
    torch = pytest.importorskip("torch")

    def run():
        with torch.amp.autocast("cuda"):
            return torch.mm(torch.ones(2, 2), torch.ones(2, 2))

    result, caught = _record(run)
    assert _deprecations(caught) == []
    if not torch.cuda.is_available():
        assert result.dtype == torch.float32
        assert any("CUDA is not available" in str(w.message) for w in caught)
    _, caught = _record(lambda: torch.cuda.amp.autocast())
    assert _deprecations(caught, "torch.cuda.amp.autocast")


@pytest.mark.torch
def test_gradscaler_fixed_forms_construct():
    torch = pytest.importorskip("torch")
    scaler, caught = _record(lambda: torch.amp.GradScaler("cuda", init_scale=1024.0, enabled=True))
    assert _deprecations(caught) == []
    if not torch.cuda.is_available():
        assert not scaler.is_enabled()  # "GradScaler is enabled, but CUDA is not available.  Disabling."
    cpu_scaler, caught = _record(lambda: torch.amp.GradScaler("cpu", init_scale=1024.0))
    assert _deprecations(caught) == [] and cpu_scaler.get_scale() == 1024.0
    for old in (torch.cuda.amp.GradScaler, torch.cpu.amp.GradScaler):
        _, caught = _record(old)
        assert _deprecations(caught, "GradScaler")


@pytest.mark.torch
def test_custom_fwd_bwd_fixed_forms_decorate_a_function():
    torch = pytest.importorskip("torch")

    def define():
        class Double(torch.autograd.Function):
            @staticmethod
            @torch.amp.custom_fwd(device_type="cuda", cast_inputs=torch.float32)
            def forward(ctx, x):
                return x * 2

            @staticmethod
            @torch.amp.custom_bwd(device_type="cuda")
            def backward(ctx, grad):
                return grad * 2

        x = torch.ones(3, requires_grad=True)
        Double.apply(x).sum().backward()
        return x.grad

    grad, caught = _record(define)
    assert grad.tolist() == [2.0, 2.0, 2.0]
    assert _deprecations(caught) == []
    _, caught = _record(lambda: torch.cuda.amp.custom_bwd(lambda ctx, g: g))
    assert _deprecations(caught, "custom_bwd")


# -- TP204: sdp_kernel --------------------------------------------------------------------------------

SDP_FIXES = [
    pytest.param(
        "import torch\nwith torch.backends.cuda.sdp_kernel(enable_math=False):\n    pass\n",
        "import torch\nwith torch.nn.attention.sdpa_kernel([torch.nn.attention.SDPBackend.FLASH_ATTENTION, "
        "torch.nn.attention.SDPBackend.EFFICIENT_ATTENTION, torch.nn.attention.SDPBackend.CUDNN_ATTENTION]):\n    pass\n",
        id="omitted-flags-default-true"),
    pytest.param(
        "import torch\nfrom torch.nn.attention import SDPBackend\n"
        "with torch.backends.cuda.sdp_kernel(True, False, enable_cudnn=False, enable_mem_efficient=False):\n    pass\n",
        "import torch\nfrom torch.nn.attention import SDPBackend\n"
        "with torch.nn.attention.sdpa_kernel([SDPBackend.FLASH_ATTENTION]):\n    pass\n",
        id="positional-keyword-mix"),
    pytest.param(
        "from torch.backends import cuda\n\ndef run():\n    with cuda.sdp_kernel(enable_flash=False, enable_mem_efficient=False):\n        pass\n",
        "import torch\n\ndef run():\n    with torch.nn.attention.sdpa_kernel([torch.nn.attention.SDPBackend.MATH, "
        "torch.nn.attention.SDPBackend.CUDNN_ATTENTION]):\n        pass\n",
        id="module-from-import-in-function"),
]


@pytest.mark.parametrize("code, fixed", SDP_FIXES)
def test_sdp_kernel_fix(lint, code, fixed):
    result = _fix(lint, code, "TP204")
    assert result.fixed_text == fixed
    assert _fix(lint, fixed, "TP204").fixed_count == 0


@pytest.mark.parametrize("code", [
    pytest.param("import torch\nwith torch.backends.cuda.sdp_kernel(enable_flash=1):\n    pass\n", id="int-not-bool"),
    pytest.param("import torch\nwith torch.backends.cuda.sdp_kernel(enable_flash=cfg.flash):\n    pass\n", id="attribute"),
    pytest.param("import torch\nwith torch.backends.cuda.sdp_kernel(*flags):\n    pass\n", id="starred"),
    pytest.param("import torch\nwith torch.backends.cuda.sdp_kernel(enable_flash_attention=False):\n    pass\n", id="unknown-keyword"),
])
def test_sdp_kernel_reported_without_fix(lint, code):
    findings = _findings(lint, code, "TP204")
    assert [(f.code, f.fix) for f in findings] == [("TP204", None)]
    assert "2.3" in findings[0].message


FLAG_COMBINATIONS = [
    "", "enable_flash=False", "enable_math=False, enable_cudnn=False",
    "enable_flash=False, enable_mem_efficient=False, enable_cudnn=False", "False, True, True, False",
]


@pytest.mark.torch
@pytest.mark.parametrize("flags", FLAG_COMBINATIONS)
def test_sdp_kernel_fix_enables_the_same_backends(lint, flags):
    """Run the old call and the fixed code in torch 2.13: same backends allowed inside, and no FutureWarning."""
    torch = pytest.importorskip("torch")
    attention = pytest.importorskip("torch.nn.attention")
    current = getattr(attention, "_cur_sdpa_kernel_backends", None)
    if current is None:
        pytest.skip("this torch has no _cur_sdpa_kernel_backends to compare with")
    code = f"import torch\nwith torch.backends.cuda.sdp_kernel({flags}):\n    inside = current()\n"
    fixed = _fix(lint, code, "TP204").fixed_text
    assert "sdpa_kernel([" in fixed
    old, old_caught = _record(lambda: _exec(code, current=current))
    new, new_caught = _record(lambda: _exec(fixed, current=current))
    assert set(old["inside"]) == set(new["inside"])
    assert _deprecations(old_caught, "sdp_kernel")
    assert _deprecations(new_caught) == []


def _exec(code: str, **names):
    namespace = dict(names)
    exec(compile(code, "<example>", "exec"), namespace)
    return namespace


@pytest.mark.torch
def test_sdpa_kernel_math_runs_attention_on_cpu():
    torch = pytest.importorskip("torch")
    from torch.nn.attention import SDPBackend, sdpa_kernel

    q = k = v = torch.randn(1, 2, 4, 8)

    def run():
        with sdpa_kernel([SDPBackend.MATH]):
            return torch.nn.functional.scaled_dot_product_attention(q, k, v)

    out, caught = _record(run)
    assert out.shape == (1, 2, 4, 8)
    assert _deprecations(caught) == []
    assert {"FLASH_ATTENTION", "EFFICIENT_ATTENTION", "MATH", "CUDNN_ATTENTION"} <= set(SDPBackend.__members__)
    assert list(inspect.signature(torch.backends.cuda.sdp_kernel).parameters) == [
        "enable_flash", "enable_math", "enable_mem_efficient", "enable_cudnn"]


@pytest.mark.torch
@pytest.mark.parametrize("example", _fixed_examples("TP204"))
def test_sdp_kernel_fixed_examples_run_clean(example):
    torch = pytest.importorskip("torch")
    q = k = v = torch.randn(1, 2, 4, 8)
    names = {"attn": torch.nn.functional.scaled_dot_product_attention, "q": q, "k": k, "v": v}
    _, caught = _record(lambda: _exec(example_code(example.code), **names))
    assert _deprecations(caught, "sdp_kernel")
    _, caught = _record(lambda: _exec(example_code(example.fixed), **names))
    assert _deprecations(caught) == []


# -- TP401: checkpoint use_reentrant --------------------------------------------------------------------

@pytest.mark.parametrize("code, flagged", [
    pytest.param("from torch.utils.checkpoint import checkpoint_sequential\ny = checkpoint_sequential(m, 2, x, True)\n",
                 False, id="sequential-positional"),
    pytest.param("from torch.utils.checkpoint import checkpoint_sequential\ny = checkpoint_sequential(m, 2, *rest)\n",
                 False, id="sequential-starred-may-pass-it"),
    pytest.param("from torch.utils.checkpoint import checkpoint\ny = checkpoint(f, *inputs)\n", True, id="starred-inputs"),
    pytest.param("import torch\ny = torch.utils.checkpoint.checkpoint(f, x, **extra)\n", False, id="double-star"),
    pytest.param("import torch\ndef run(torch):\n    return torch.utils.checkpoint.checkpoint(f, x)\n", False, id="shadowed"),
    pytest.param("import torch\nrun = lambda f, x: torch.utils.checkpoint.checkpoint(f, x)\n", True, id="lambda"),
])
def test_checkpoint_cases(lint, code, flagged):
    findings = _findings(lint, code, "TP401")
    assert [f.code for f in findings] == (["TP401"] if flagged else [])
    if flagged:
        assert "2.1" in findings[0].message and findings[0].fix.applicability == "unsafe"


def _reentrant_warnings(caught):
    return [str(w.message) for w in caught if "use_reentrant" in str(w.message)]


@pytest.mark.torch
def test_checkpoint_without_use_reentrant_still_warns_and_defaults_to_reentrant():
    torch = pytest.importorskip("torch")
    from torch.utils.checkpoint import checkpoint, checkpoint_sequential

    x = torch.ones(3)  # no input requires grad: only the reentrant variant complains about that
    _, caught = _record(lambda: checkpoint(torch.sin, x))
    assert _reentrant_warnings(caught), "checkpoint without use_reentrant no longer warns"
    assert any("None of the inputs have requires_grad=True" in str(w.message) for w in caught), \
        "the default is no longer the reentrant variant"
    model = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.ReLU())
    _, caught = _record(lambda: checkpoint_sequential(model, 2, torch.ones(1, 3, requires_grad=True)))
    assert _reentrant_warnings(caught)
    assert inspect.signature(checkpoint).parameters["use_reentrant"].kind is inspect.Parameter.KEYWORD_ONLY
    assert list(inspect.signature(checkpoint_sequential).parameters)[3] == "use_reentrant"


@pytest.mark.torch
@pytest.mark.parametrize("example", _fixed_examples("TP401"))
def test_checkpoint_fixed_examples_run_clean(example):
    torch = pytest.importorskip("torch")
    layer = torch.nn.Linear(3, 3)

    class Self:
        pass

    self = Self()
    self.layer = layer
    names = {"block": layer, "layer": layer, "layers": [layer, layer], "x": torch.ones(2, 3, requires_grad=True),
             "inputs": (torch.ones(2, 3, requires_grad=True),), "model": torch.nn.Sequential(layer, torch.nn.ReLU())}
    run_forward = "forward(self, x)\n" if "def forward" in example.code else ""
    _, caught = _record(lambda: _exec(example_code(example.code) + run_forward, self=self, **names))
    assert _reentrant_warnings(caught)
    _, caught = _record(lambda: _exec(example_code(example.fixed) + run_forward, self=self, **names))
    assert _reentrant_warnings(caught) == []


# -- TP205: _register_pytree_node ---------------------------------------------------------------------

def test_pytree_fix_is_unsafe_and_keeps_keywords(lint):
    code = "import torch.utils._pytree as pytree\npytree._register_pytree_node(P, f, u, flatten_with_keys_fn=k)\n"
    findings = _findings(lint, code, "TP205")
    assert findings[0].fix.applicability == "unsafe" and "2.3" in findings[0].message
    assert _fix(lint, code, "TP205").fixed_text == code.replace("._register", ".register")


@pytest.mark.parametrize("code", [
    pytest.param("import torch.utils._pytree as p\np._register_pytree_node(P, f, u, None, maybe_from_str_fn=g)\n", id="keyword-hook"),
    pytest.param("import torch.utils._pytree as p\np._register_pytree_node(*spec)\n", id="starred"),
    pytest.param("import torch.utils._pytree as p\np._register_pytree_node(P, f, u, **opts)\n", id="double-star"),
])
def test_pytree_reported_without_fix(lint, code):
    assert [(f.code, f.fix) for f in _findings(lint, code, "TP205")] == [("TP205", None)]


def _point_class():
    class Point:
        def __init__(self, x, y):
            self.x, self.y = x, y

    return Point


def _pytree_names():
    return {
        "flatten": lambda p: ([p.x, p.y], None),
        "unflatten": lambda values, context: None,
    }


@pytest.mark.torch
@pytest.mark.parametrize("example", _fixed_examples("TP205"))
def test_pytree_example_warns_and_fixed_example_registers_without_warning(example):
    pytest.importorskip("torch")
    import torch.utils._pytree as pytree

    for code, expect_warning in ((example.code, True), (example.fixed, False)):
        point = _point_class()  # a fresh class: the public function refuses a second registration
        _, caught = _record(lambda: _exec(example_code(code), Point=point, **_pytree_names()))
        assert bool(_deprecations(caught, "_register_pytree_node")) is expect_warning, [str(w.message) for w in caught]
        assert point in pytree.SUPPORTED_NODES
        leaves, _ = pytree.tree_flatten(point(1, 2))
        assert leaves == [1, 2]


@pytest.mark.torch
def test_pytree_public_function_differs_as_the_fix_safety_note_says():
    pytest.importorskip("torch")
    import torch.utils._pytree as pytree

    assert list(inspect.signature(pytree.register_pytree_node).parameters)[:4] == [
        "cls", "flatten_fn", "unflatten_fn", "serialized_type_name"]
    assert list(inspect.signature(pytree._register_pytree_node).parameters)[3:5] == list(
        ("to_str_fn", "maybe_from_str_fn"))
    point = _point_class()
    names = _pytree_names()
    pytree.register_pytree_node(point, names["flatten"], names["unflatten"])
    with pytest.raises(ValueError, match="already registered"):
        pytree.register_pytree_node(point, names["flatten"], names["unflatten"])
    _, caught = _record(lambda: pytree._register_pytree_node(point, names["flatten"], names["unflatten"]))
    assert any("already registered" in str(w.message) for w in caught)  # the private one only warns
