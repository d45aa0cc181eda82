"""Round 6, part a of issue 8's hand-read sample: each case is a finding that was wrong on real code.

The code here is written for the test (same shape as the real code, not a copy of it).
"""

from __future__ import annotations

import pytest


def _fix(lint, code, unsafe=False, **options):
    result = lint(code, fix=True, unsafe_fixes=unsafe, **options)
    assert result.error is None, result.error
    return result


# -- TP201: weight_norm's migration where the file reads the old parameters -------------------------

@pytest.mark.parametrize("code", [
    # the head reads the magnitude parameter that only the old hook-based weight_norm creates
    ("import torch.nn as nn\n\nclass Head(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
     "        self.last = nn.utils.weight_norm(nn.Linear(8, 4, bias=False))\n"
     "        self.last.weight_g.data.fill_(1)\n"),
    # the same through `from torch.nn.utils import weight_norm` (the fix is at the import)
    ("import torch.nn as nn\nfrom torch.nn.utils import weight_norm\n\n"
     "def head():\n    layer = weight_norm(nn.Linear(8, 4))\n    layer.weight_v.requires_grad = False\n"
     "    return layer\n"),
])
def test_weight_norm_is_not_migrated_where_weight_g_or_weight_v_is_read(lint, code):
    result = _fix(lint, code, unsafe=True, select=["TP201"])
    assert result.fixed_text == code
    finding = next(f for f in result.findings if "weight_norm" in f.message)
    assert finding.fix is None
    used = "`weight_g`" if "weight_g" in code else "`weight_v`"
    assert f"this file also uses {used}, which the move breaks" in finding.message
    assert "remove_weight_norm" not in finding.message.split("not fixed automatically")[1]


@pytest.mark.torch
def test_parametrized_weight_norm_has_no_weight_g():
    torch = pytest.importorskip("torch")
    module = torch.nn.utils.parametrizations.weight_norm(torch.nn.Linear(2, 2))
    with pytest.raises(AttributeError):
        module.weight_g  # noqa: B018


# -- TP251: one upper release in the message ---------------------------------------------------------

def test_svd_message_names_the_newest_release(lint):
    # torch.svd has no runtime warning in the 2.15.0 wheel either (libtorch_cpu.so holds "torch.lu is
    # deprecated" but no such string for svd); the message named 2.13 as the last release checked.
    result = lint("import torch\nu, s, v = torch.svd(a, some=False)\n", select=["TP251"])
    (finding,) = result.findings
    assert "no runtime warning in 2.4 through 2.15" in finding.message
