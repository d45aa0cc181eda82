"""Round 14, part b of issue #8's precision sample (90 of icefall's findings drawn at random): all 90 were
right, so there is no false positive to turn into a test. What the round checked on real torch beyond the
messages is pinned here, on synthetic code of the same shapes (no package code):

- icefall's models run `torch.cuda.amp.autocast(enabled=False)` inside `forward` methods that its export
  scripts compile with `torch.jit.script`; the safe fix must keep such a module scriptable and its output.
- icefall's autograd Functions use bare `@custom_fwd` / `@custom_bwd` imported from `torch.cuda.amp`; the
  safe fix of the last use also drops the import, and the Function must compute the same values.
"""

from __future__ import annotations

import importlib.util
import warnings

import pytest

from precision_helpers import findings_of

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
