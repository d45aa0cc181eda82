"""Hand-read precision cases for TP210: each false finding, wrong message or wrong fix
read on real code in the pre-registered rounds (bench/trust_samples/), as a synthetic case of the same
shape (no package code), grouped here by rule; the comment above each group names its round."""

from __future__ import annotations

import pytest

from precision_helpers import findings_of


# ---- round 10c ----------------------------------------------------------------------------------
# Round 10, part c of issue #8's precision sample: all 114 findings read were true, so these are the shapes that
# needed the most care, as synthetic code (no package code): each must stay reported, and each safe fix read
# must keep its exact text. They guard the guard classifier against learning to skip them.


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


# ---- round 12a ----------------------------------------------------------------------------------
# Round 12, part a of issue #8's precision sample (git snapshots of MONAI and pyro): each false finding (or
# wrong message) read on real code, as a synthetic case of the same shape (no package code).


# -- TP210 on the fallback default of a getattr probe of torch -----------------------------------------
# (pyro's distribution utils take `getattr(torch.jit, "script_if_tracing", getattr(torch.jit,
# "_script_if_tracing", torch.jit.script))`: `torch.jit.script` is only the value used on a torch that has
# neither name; `script_if_tracing` is in torch/jit/__init__.py of every wheel 2.4.1-2.15.0, and naming
# `torch.jit.script` without calling it warns nothing.)

@pytest.mark.parametrize("expression", [
    'getattr(torch.jit, "script_if_tracing", getattr(torch.jit, "_script_if_tracing", torch.jit.script))',
    'getattr(torch.jit, "script_if_tracing", torch.jit.script)',
])
def test_the_default_of_a_torch_getattr_probe_is_compatibility_code(lint, expression):
    source = f"import torch\nlazy_script = {expression}\n"
    assert findings_of(lint, source, "TP210", target="2.15", min_torch="2.4") == []


@pytest.mark.parametrize("expression", [
    # the default is called on every release (getattr evaluates it first)
    'getattr(torch.jit, "script_if_tracing", torch.jit.script(fn))',
    # not a probe of torch: the default may be what is used
    'getattr(helpers, "script_if_tracing", torch.jit.script)',
])
def test_other_getattr_shapes_are_still_reported(lint, expression):
    source = f"import torch\nlazy_script = {expression}\n"
    assert len(findings_of(lint, source, "TP210", target="2.15", min_torch="2.4")) == 1


# ---- round 12c ----------------------------------------------------------------------------------
# Round 12, part c of issue #8's precision sample (executorch, botorch, GroundingDINO,
# segmentation_models.pytorch and gpytorch snapshots): 128 findings read, none false. These tests keep the
# shapes read there that sit next to compatibility-code detection reported: each is a true finding whose
# surrounding ``try``/``if``/``with`` is *not* a torch version check or feature probe, so a guard that hid it
# would hide a real problem. Synthetic code of the same shape (no package code).


# -- deprecated calls under tests and flags that are not version checks -----------------------------------

def test_jit_script_expected_to_fail_inside_assert_raises_is_reported(lint):
    # (smp tests: ``with self.assertRaises(RuntimeError): torch.jit.script(model)`` for models that are not
    # scriptable: still a call of the TorchScript entry point deprecated from 2.10.)
    source = (
        "import torch\n"
        "class T:\n"
        "    def test_script(self, model):\n"
        "        if not model.scriptable:\n"
        "            with self.assertRaises(RuntimeError):\n"
        "                torch.jit.script(model)\n"
        "            return\n"
        "        torch.jit.script(model)\n"
    )
    assert [f.row for f in findings_of(lint, source, "TP210", target="2.15", min_torch="2.4")] == [6, 8]


# ---- round 13c ----------------------------------------------------------------------------------
# Round 13, part c of issue #8's precision sample (ogb, openai jukebox with its vendored apex and tensorboardX,
# and co-tracker snapshots): 119 findings read, none false, no wrong safe fix. These tests keep shapes read
# there that sit next to compatibility-code detection or an unusual argument layout: each is a true finding (or
# a fix) whose surroundings are *not* a torch version check, so a guard that hid it, or a fix that moved an
# argument, would be a regression. Synthetic code of the same shape (no package code).


# -- a TorchScript call inside a with-block that is not a version check -------------------------------
# (tensorboardX graph(): the with uses a long-removed torch.onnx helper and a try/except RuntimeError that
# re-raises; neither selects a torch release, so torch.jit.trace inside is reported.)

def test_jit_trace_inside_a_with_and_reraising_try_is_reported(lint):
    source = (
        "import torch\n"
        "def graph(model, args):\n"
        "    with torch.onnx.select_model_mode_for_export(model, None):\n"
        "        try:\n"
        "            trace = torch.jit.trace(model, args)\n"
        "        except RuntimeError as e:\n"
        "            print(e)\n"
        "            raise e\n"
        "    return trace.graph\n"
    )
    found = findings_of(lint, source, "TP210", target="2.15", min_torch="2.4")
    assert [f.row for f in found] == [5] and "2.10" in found[0].message
