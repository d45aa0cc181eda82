"""Claims of the engine and the torch.load rules, checked against real torch (CI installs 2.13.0 CPU)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from torchpatch.engine.checker import EAGER_SUBMODULES

pytestmark = pytest.mark.torch


def run_python(code: str, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-W", "default", "-c", textwrap.dedent(code)], cwd=cwd,
                          capture_output=True, text=True, timeout=300)


def test_eager_submodules_are_reachable_after_import_torch(tmp_path):
    pytest.importorskip("torch")
    result = run_python(
        "import functools, torch\n"
        "def reachable(name):\n"
        "    try:\n"
        "        functools.reduce(getattr, name.split('.')[1:], torch)\n"
        "    except AttributeError:\n"
        "        return False\n"
        "    return True\n"
        f"print([m for m in {sorted(EAGER_SUBMODULES)!r} if not reachable(m)])\n", tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]", "fixes write torch.x.y with only `import torch` for these modules"


def test_torch_load_default_is_weights_only_and_the_fix_keeps_state_dicts_loading(tmp_path):
    torch = pytest.importorskip("torch")
    from packaging.version import Version

    assert Version(torch.__version__.split("+")[0]) >= Version("2.6")
    result = run_python("""
        import pickle, torch
        class Custom:
            pass
        torch.save({"w": torch.ones(2)}, "state.pt")
        torch.save({"obj": Custom()}, "custom.pt")
        # The fixed form of TP301's example: a state dict still loads.
        assert torch.load("state.pt", weights_only=True)["w"].sum().item() == 2.0
        # The default is weights_only=True since 2.6: a pickled custom object is refused ...
        try:
            torch.load("custom.pt")
        except pickle.UnpicklingError:
            print("refused")
        # ... and weights_only=False (TP302) runs the full unpickler.
        print(type(torch.load("custom.pt", weights_only=False)["obj"]).__name__)
        # pickle_module= keeps the old default (TP301 reports it without a fix).
        print(type(torch.load("custom.pt", pickle_module=pickle)["obj"]).__name__)
    """, tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["refused", "Custom", "Custom"]


def test_export_for_training_is_gone_and_export_runs(tmp_path):
    torch = pytest.importorskip("torch")
    assert not hasattr(torch.export, "export_for_training")  # removed in 2.11 (TP101 row)
    result = run_python("""
        import torch
        class M(torch.nn.Module):
            def forward(self, x):
                return x.sin() + 1
        ep = torch.export.export(M(), (torch.ones(3),))  # the fixed form
        print(type(ep).__name__)
    """, tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ExportedProgram"


def test_export_is_non_strict_by_default_and_strict_true_still_works(tmp_path):
    """TP430: 2.8 changed torch.export.export's default to strict=False; the fix passes strict=True."""
    torch = pytest.importorskip("torch")
    import inspect

    assert inspect.signature(torch.export.export).parameters["strict"].default is False
    result = run_python("""
        import torch
        class M(torch.nn.Module):
            def forward(self, x):
                return x.cos() * 2
        for strict in (True, False):
            ep = torch.export.export(M(), (torch.ones(3),), strict=strict)
            print(strict, ep.module()(torch.zeros(3)).tolist())
    """, tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split("\n")[:2] == ["True [2.0, 2.0, 2.0]", "False [2.0, 2.0, 2.0]"]
