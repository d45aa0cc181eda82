"""Hand-read precision cases for TP202 cuda-amp-api: each false finding, wrong message or wrong fix
read on real code in the pre-registered rounds (bench/trust_samples/), as a synthetic case of the same
shape (no package code), grouped here by rule; the comment above each group names its round."""

from __future__ import annotations

import importlib.util
import warnings

import pytest

from precision_helpers import findings_of


# ---- round 7a -----------------------------------------------------------------------------------
# Round 7, part a of issue #8's precision sample: each false finding (or wrong message, or missed finding) read
# on real packages, as a synthetic case of the same shape (no package code).


# -- a fix lists each edit once (Mask2Former demo_video/demo.py: `import torch` was listed twice) ------

def test_fix_lists_the_import_it_adds_once(lint):
    source = ("import os\nfrom torch.cuda.amp import autocast\n\n"
              "def run(model, frames):\n    with autocast():\n        return model(frames)\n")
    [finding] = findings_of(lint, source, "TP202")
    edits = [(edit.start, edit.end, edit.content) for edit in finding.fix.edits]
    assert len(edits) == len(set(edits)), edits


# ---- round 8a -----------------------------------------------------------------------------------
# Round 8, part a of issue #8's precision sample: each false finding (or wrong message, or missed finding) read
# on real packages, as a synthetic case of the same shape (no package code).


# -- `name is None` after a guarded import probes availability; it does not use the deprecated API -----
# (sparseml 1.8 pytorch/utils/module.py: amp names imported in try/except, tested for None before use)

_GUARDED_AMP = ("try:\n    from torch.cuda.amp import GradScaler, autocast\nexcept ImportError:\n"
                "    GradScaler = None\n    autocast = None\n")


@pytest.mark.parametrize(("source", "code"), [
    (_GUARDED_AMP + "def check():\n    if autocast is None or GradScaler is None:\n        raise RuntimeError\n",
     "TP202"),
    (_GUARDED_AMP + "AMP = GradScaler is not None\n", "TP202"),
    ("import torch\nif None is torch.cuda.amp.autocast:\n    pass\n", "TP202"),
    ("try:\n    from torch.cpu.amp import autocast\nexcept ImportError:\n    autocast = None\n"
     "HAS = autocast is not None\n", "TP203"),
    ("try:\n    from torch.utils._pytree import _register_pytree_node\nexcept ImportError:\n"
     "    _register_pytree_node = None\nif _register_pytree_node is not None:\n    pass\n", "TP205"),
    ("import torch\nif torch.jit.script is None:\n    pass\n", "TP210"),
])
def test_a_none_test_of_a_deprecated_name_is_not_reported(lint, source, code):
    assert findings_of(lint, source, code) == []


@pytest.mark.parametrize(("source", "code", "count"), [
    # the uses next to the probe are still reported
    (_GUARDED_AMP + "def run(use):\n    if autocast is None:\n        raise RuntimeError\n"
     "    scaler = GradScaler()\n    ctx = autocast if use else None\n", "TP202", 2),
    # compared with something else than None: a use
    ("import torch\nSAME = torch.cuda.amp.autocast is torch.amp.autocast\n", "TP202", 1),
    ("import torch\nkeep = torch.jit.script\nif keep is None:\n    pass\n", "TP210", 1),
    # a None test of a call's result still has the call
    ("import torch\nif torch.jit.script(f) is None:\n    pass\n", "TP210", 1),
])
def test_uses_beside_a_none_test_are_still_reported(lint, source, code, count):
    assert len(findings_of(lint, source, code)) == count


# ---- round 9a -----------------------------------------------------------------------------------
# Round 9, part a of issue #8's precision sample: each false finding (or wrong message, or missed finding) read
# on real packages, as a synthetic case of the same shape (no package code).


# -- a version check on a name the function itself computes from the torch version ------------------
# (captum 0.9 influence/_utils/common.py: ``version = parse_version(torch.__version__)`` in the function,
# then ``if version < (1, 12, 0): ... elif version >= (1, 12, 0) and version < (2, 0, 0):
# torch.nn.utils.stateless.functional_call(...) else: torch.func.functional_call(...)``; the middle
# branch runs only before 2.0, where the stateless function is not deprecated.)

_RANGES = ("import torch\nfrom mylib.versions import parse_version\n\n"
           "def call(model, params, args):\n"
           "    version = parse_version(torch.__version__)\n"
           "    if version < (1, 12, 0):\n"
           "        return model(*args)\n"
           "    elif version >= (1, 12, 0) and version < (2, 0, 0):\n"
           "        return torch.nn.utils.stateless.functional_call(model, params, args)\n"
           "    else:\n"
           "        return torch.func.functional_call(model, params, args)\n")


@pytest.mark.parametrize(("source", "code"), [
    (_RANGES, "TP201"),
    # one plain test, the old call in the body
    ("import torch\nfrom packaging.version import Version\n\ndef make():\n"
     "    torch_version = Version(torch.__version__)\n"
     "    if torch_version < Version('2.3'):\n        return torch.cuda.amp.GradScaler()\n"
     "    return torch.amp.GradScaler('cuda')\n", "TP202"),
    # the old call in the else of a test for the new releases
    ("import torch\n\ndef make():\n    major = int(torch.__version__.split('.')[0])\n"
     "    if major >= 3:\n        return None\n    else:\n        return torch.cuda.amp.GradScaler()\n", "TP202"),
    # a local flag computed from the torch version
    ("import torch\nfrom packaging import version\n\ndef make():\n"
     "    old_torch = version.parse(torch.__version__) < version.parse('2.3')\n"
     "    if old_torch:\n        return torch.cuda.amp.GradScaler()\n    return torch.amp.GradScaler('cuda')\n",
     "TP202"),
])
def test_a_function_local_torch_version_makes_a_version_check(lint, source, code):
    assert findings_of(lint, source, code) == []


@pytest.mark.parametrize("source", [
    # the new-release branch of the same local check is ordinary code
    "import torch\nfrom packaging.version import Version\n\ndef make():\n"
    "    torch_version = Version(torch.__version__)\n"
    "    if torch_version >= Version('2.3'):\n        return torch.cuda.amp.GradScaler()\n    return None\n",
    # a local called version that is not the torch version (a config field) is no check
    "import torch\n\ndef make(config):\n    version = config.version\n"
    "    if version < (2, 0):\n        return torch.cuda.amp.GradScaler()\n",
    # a parameter called version is not followed
    "import torch\n\ndef make(version):\n    if version < (2, 0):\n        return torch.cuda.amp.GradScaler()\n",
    # the local is the torch version in another function only
    "import torch\n\ndef other():\n    version = torch.__version__\n    return version\n\n"
    "def make(version):\n    if version < '2.0':\n        return torch.cuda.amp.GradScaler()\n",
    # a local that shadows a module-level version name with something else
    "import torch\nVERSION = torch.__version__\n\ndef make(config):\n    VERSION = config.version\n"
    "    if VERSION < (2, 0):\n        return torch.cuda.amp.GradScaler()\n",
])
def test_other_locals_are_no_version_check(lint, source):
    assert len(findings_of(lint, source, "TP202")) == 1


def test_a_local_that_reads_itself_or_another_local_version(lint):
    # ``v = torch.__version__`` then ``parsed = parse(v)``: followed through the second local
    chained = ("import torch\nfrom packaging.version import parse\n\ndef make():\n    v = torch.__version__\n"
               "    parsed = parse(v)\n    if parsed < parse('2.3'):\n        return torch.cuda.amp.GradScaler()\n")
    assert findings_of(lint, chained, "TP202") == []
    # ``flag = flag and ...`` is not followed (which binding it reads is not known): the name decides
    looped = ("import torch\n\ndef make(flag):\n    flag = flag and torch.cuda.is_available()\n"
              "    if flag:\n        return torch.cuda.amp.GradScaler()\n")
    assert len(findings_of(lint, looped, "TP202")) == 1


# ---- round 10b ----------------------------------------------------------------------------------
# Round 10, part b of issue #8's precision sample: what reading real packages showed, as synthetic cases of the
# same shape (no package code).


# -- a type test against the old GradScaler subclass ------------------------------------------------------
# (mmf: the trainer builds `torch.cuda.amp.GradScaler(enabled=...)`, which TP202 safely rewrites to
# `torch.amp.GradScaler("cuda", ...)`, and two CUDA tests in other modules assert
# `isinstance(trainer.scaler, torch.cuda.amp.GradScaler)`.) The rewritten scaler is an instance of the
# base class only (2.4.1-2.15.0 torch/cuda/amp/grad_scaler.py subclasses torch.amp.GradScaler), so after
# `--fix` those tests fail; the finding on the type test must say so instead of only "the signature differs".

@pytest.mark.parametrize("test", [
    "isinstance(trainer.scaler, torch.cuda.amp.GradScaler)",
    "isinstance(trainer.scaler, (ShardedGradScaler, torch.cuda.amp.GradScaler))",
    "issubclass(type(trainer.scaler), torch.cuda.amp.GradScaler)",
])
def test_a_gradscaler_type_test_says_the_fixed_construction_no_longer_passes_it(lint, test):
    findings = findings_of(lint, f"import torch\nassert {test}\n", "TP202")
    assert len(findings) == 1
    message = findings[0].message
    assert 'a scaler built with `torch.amp.GradScaler("cuda", ...)`' in message
    assert "is not an instance of `torch.cuda.amp.GradScaler`" in message
    assert "the new signature differs" not in message
    assert findings[0].fix is None


@pytest.mark.parametrize("code", [
    "import torch\nmake_scaler = torch.cuda.amp.GradScaler\n",  # a factory reference, not a type test
    "import torch\nok = isinstance(torch.cuda.amp.GradScaler, type)\n",  # the object, not the class argument
])
def test_other_gradscaler_references_keep_the_signature_note(lint, code):
    findings = findings_of(lint, code, "TP202")
    assert len(findings) == 1
    assert "the new signature differs" in findings[0].message
    assert "is not an instance of" not in findings[0].message


def test_the_construction_fix_is_unsafe(lint):
    # Decided in session 6: the fixed object is the base class, and mmf's type tests live in other files,
    # which a per-file linter cannot see, so blind `--fix` must not rewrite the construction.
    source = "import torch\nscaler = torch.cuda.amp.GradScaler(enabled=use_amp)\n"
    (finding,) = lint(source, min_torch="2.4").findings
    assert finding.fix.applicability == "unsafe"
    assert "isinstance(scaler, torch.cuda.amp.GradScaler)" in finding.fix.message
    assert lint(source, fix=True, min_torch="2.4").fixed_text == source
    fixed = lint(source, fix=True, unsafe_fixes=True, min_torch="2.4").fixed_text
    assert fixed == 'import torch\nscaler = torch.amp.GradScaler("cuda", enabled=use_amp)\n'


@pytest.mark.torch
def test_the_fixed_construction_is_not_an_instance_of_the_old_class():
    torch = pytest.importorskip("torch")
    scaler = torch.amp.GradScaler("cuda", enabled=False)
    assert isinstance(scaler, torch.amp.GradScaler)
    assert not isinstance(scaler, torch.cuda.amp.GradScaler)


# ---- round 10c ----------------------------------------------------------------------------------
# Round 10, part c of issue #8's precision sample: all 114 findings read were true, so these are the shapes that
# needed the most care, as synthetic code (no package code): each must stay reported, and each safe fix read
# must keep its exact text. They guard the guard classifier against learning to skip them.


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


# ---- round 11b ----------------------------------------------------------------------------------
# Round 11, part b of issue #8's precision sample: 111 findings read, all true; eight had a message that named
# the gcc/nvcc spelling `-std=c++20` for an MSVC flag `/std:c++17` (fixed in TP435). These are that fix and the
# shapes that needed the most care, as synthetic code (no package code): each must stay reported, and each safe
# fix read must keep its exact text.


# -- TP202: a hasattr probe that every release passes is no guard ------------------------------------
# (a module picks bfloat16 autocast when `torch.cuda.amp` still has `autocast`: it has, deprecated, on 2.4-2.15.)

def test_a_hasattr_probe_for_the_old_autocast_keeps_the_finding(lint):
    source = (
        "import contextlib\n"
        "import functools\n"
        "import torch\n"
        "if torch.cuda.is_available() and hasattr(torch.cuda, 'amp') and hasattr(torch.cuda.amp, 'autocast'):\n"
        "    autocast = functools.partial(torch.cuda.amp.autocast, dtype=torch.bfloat16)\n"
        "else:\n"
        "    @contextlib.contextmanager\n"
        "    def autocast():\n"
        "        yield\n"
    )
    assert len(findings_of(lint, source, "TP202", min_torch="2.4")) == 1


def test_a_bare_custom_fwd_decorator_gets_the_device_type_call(lint):
    source = (
        "import torch\n"
        "from torch.autograd import Function\n"
        "from torch.cuda.amp import custom_bwd, custom_fwd\n"
        "\n"
        "class Encode(Function):\n"
        "    @staticmethod\n"
        "    @custom_fwd\n"
        "    def forward(ctx, x):\n"
        "        return x * 2\n"
        "\n"
        "    @staticmethod\n"
        "    @custom_bwd\n"
        "    def backward(ctx, g):\n"
        "        return g * 2\n"
    )
    assert len(findings_of(lint, source, "TP202", min_torch="2.4")) == 2
    fixed = lint(source, fix=True, min_torch="2.4").fixed_text
    assert '@torch.amp.custom_fwd(device_type="cuda")' in fixed
    assert '@torch.amp.custom_bwd(device_type="cuda")' in fixed
    assert "from torch.cuda.amp import" not in fixed


# ---- round 13a ----------------------------------------------------------------------------------
# Round 13, part a of issue #8's precision sample (git snapshots of fairscale, pytorch_scatter and
# pytorch/data): each false finding (or wrong message) read on real code, as a synthetic case of the same shape
# (no package code).


# -- TP202/TP203 on a subclass of the deprecated GradScaler ---------------------------------------------
# (fairscale's grad scalers subclass `torch.cuda.amp.grad_scaler.GradScaler`, one without an `__init__`,
# one whose `__init__` calls `super().__init__` by keywords: both reach the old class's deprecated
# `__init__`, so the finding is right. The message advised `functools.partial(torch.amp.GradScaler,
# "cuda")`, which cannot be a base class (`class S(functools.partial(...))` raises TypeError). The base to
# name is `torch.amp.GradScaler`, whose first parameter is `device` (2.4.1-2.15.0 torch/amp/grad_scaler.py).)

@pytest.mark.parametrize("source", [
    "from torch.cuda.amp.grad_scaler import GradScaler as Base\nclass Scaler(Base):\n    pass\n",
    "import torch\nclass Scaler(torch.cuda.amp.GradScaler):\n"
    "    def __init__(self, init_scale=2.0):\n        super().__init__(init_scale=init_scale)\n",
])
def test_a_gradscaler_base_class_is_told_to_subclass_the_new_class(lint, source):
    findings = findings_of(lint, source, "TP202", target="2.15", min_torch="2.4")
    base_findings = [f for f in findings if f.row == 2]
    assert len(base_findings) == 1
    message = base_findings[0].message
    assert "functools.partial" not in message
    assert "as a base class" in message and "`torch.amp.GradScaler`" in message
    assert '`"cuda"`' in message and "device" in message
    assert base_findings[0].fix is None


def test_a_gradscaler_passed_as_a_value_keeps_the_partial_advice(lint):
    source = "import torch\nscaler = make(torch.cuda.amp.GradScaler)\n"
    findings = findings_of(lint, source, "TP202", target="2.15", min_torch="2.4")
    assert [f.row for f in findings] == [2]
    assert "functools.partial" in findings[0].message


# ---- round 14b ----------------------------------------------------------------------------------
# Round 14, part b of issue #8's precision sample (90 of icefall's findings drawn at random): all 90 were right,
# so there is no false positive to turn into a test. What the round checked on real torch beyond the messages is
# pinned here, on synthetic code of the same shapes (no package code): - icefall's models run
# `torch.cuda.amp.autocast(enabled=False)` inside `forward` methods that its export scripts compile with
# `torch.jit.script`; the safe fix must keep such a module scriptable and its output. - icefall's autograd
# Functions use bare `@custom_fwd` / `@custom_bwd` imported from `torch.cuda.amp`; the safe fix of the last use
# also drops the import, and the Function must compute the same values.


SCRIPTED_FORWARD = (
    "import torch\n"
    "class Balancer(torch.nn.Module):\n"
    "    def forward(self, x: torch.Tensor) -> torch.Tensor:\n"
    "        if torch.jit.is_scripting() or torch.jit.is_tracing():\n"
    "            return x\n"
    "        with torch.cuda.amp.autocast(enabled=False):\n"
    "            y = x.to(torch.float32) * 2.0\n"
    "        return y\n"
    "class Model(torch.nn.Module):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        self.balancer = Balancer()\n"
    "    def forward(self, x: torch.Tensor) -> torch.Tensor:\n"
    "        with torch.cuda.amp.autocast(enabled=False):\n"
    "            x = x + 1.0\n"
    "        return self.balancer(x)\n"
)


BARE_DECORATORS = (
    "import torch\n"
    "from torch.cuda.amp import custom_bwd, custom_fwd\n"
    "class Scale(torch.autograd.Function):\n"
    "    @staticmethod\n"
    "    @custom_fwd\n"
    "    def forward(ctx, x, factor: float):\n"
    "        ctx.factor = factor\n"
    "        return x * factor\n"
    "    @staticmethod\n"
    "    @custom_bwd\n"
    "    def backward(ctx, grad):\n"
    "        return grad * ctx.factor, None\n"
)


def _import_module(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        spec.loader.exec_module(module)
    return module


def _fixed(lint, tmp_path, source, name):
    """The safe fixes' result, written to ``tmp_path / name`` so that it can be imported."""
    result = lint(source, name=name, fix=True, target="2.15", min_torch="2.4")
    assert result.error is None, result.error
    assert result.fixed_text is not None
    (tmp_path / name).write_text(result.fixed_text, encoding="utf-8")
    return result.fixed_text


def test_b_autocast_fix_in_a_scripted_forward_is_safe_and_written(lint, tmp_path):
    findings = findings_of(lint, SCRIPTED_FORWARD, "TP202", target="2.15", min_torch="2.4")
    assert len(findings) == 2
    assert all(f.fix is not None and f.fix.applicability == "safe" for f in findings)
    fixed = _fixed(lint, tmp_path, SCRIPTED_FORWARD, "scripted_forward.py")
    assert "torch.cuda.amp" not in fixed
    assert fixed.count('torch.amp.autocast("cuda", enabled=False, dtype=torch.float16)') == 2


@pytest.mark.torch
def test_b_autocast_fix_keeps_a_module_scriptable_with_the_same_output(lint, tmp_path):
    torch = pytest.importorskip("torch")
    (tmp_path / "original_forward.py").write_text(SCRIPTED_FORWARD, encoding="utf-8")
    _fixed(lint, tmp_path, SCRIPTED_FORWARD, "scripted_forward.py")
    original = _import_module(tmp_path / "original_forward.py", "original_forward_14b")
    fixed = _import_module(tmp_path / "scripted_forward.py", "fixed_forward_14b")
    x = torch.arange(4, dtype=torch.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = torch.jit.script(original.Model())(x)
        got = torch.jit.script(fixed.Model())(x)
        assert torch.equal(fixed.Model()(x), original.Model()(x))
    assert torch.equal(got, expected)


@pytest.mark.torch
def test_b_bare_custom_fwd_bwd_fix_drops_the_import_and_keeps_the_gradient(lint, tmp_path):
    torch = pytest.importorskip("torch")
    fixed_source = _fixed(lint, tmp_path, BARE_DECORATORS, "bare_decorators.py")
    assert "torch.cuda.amp" not in fixed_source
    assert '@torch.amp.custom_fwd(device_type="cuda")' in fixed_source
    assert '@torch.amp.custom_bwd(device_type="cuda")' in fixed_source
    (tmp_path / "original_decorators.py").write_text(BARE_DECORATORS, encoding="utf-8")
    results = []
    for name in ("original_decorators", "bare_decorators"):
        module = _import_module(tmp_path / f"{name}.py", f"{name}_14b")
        x = torch.arange(3, dtype=torch.float32, requires_grad=True)
        module.Scale.apply(x, 3.0).sum().backward()
        results.append(x.grad)
    assert torch.equal(results[0], results[1])
    assert torch.equal(results[1], torch.full((3,), 3.0))


# ---- round 14c ----------------------------------------------------------------------------------
# Round 14, part c of issue #8's precision sample: what reading real packages showed, as synthetic cases of the
# same shape (no package code). All 81 findings of the round were true, so nothing here pins a fix: these cases
# keep the shapes read in text-generation-inference, torcheval, higher and Pearl reported (and their fixes as
# read), so that a later precision fix elsewhere that grows too wide shows up here. Each claim was checked
# against the real wheels (see bench/trust_samples/README.md, sample14c).


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
