"""Round 12, part a of issue #8's precision sample (git snapshots of MONAI and pyro): each false finding
(or wrong message) read on real code, as a synthetic case of the same shape (no package code)."""

from __future__ import annotations

import pytest

from precision_helpers import findings_of


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
