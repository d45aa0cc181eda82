"""Issue 23: a deprecated name imported with ``from m import old`` warns where it runs, so the table rule reports
each call (no fix: the import's fix renames it) as well as the import (with the fix)."""

from __future__ import annotations

import pytest

from precision_helpers import findings_of


def _lines(findings):
    return [(f.row, f.fix is not None) for f in findings]


@pytest.mark.parametrize("code, name, calls", [
    ("import torch\nfrom torch.nn.utils import clip_grad_norm\nm = torch.nn.Linear(4, 4)\n"
     "clip_grad_norm(m.parameters(), 1.0)\nclip_grad_norm(m.parameters(), 2.0)\n", "clip_grad_norm", [4, 5]),
    ("import torch\nfrom torch.testing import assert_allclose\nassert_allclose(torch.ones(2), torch.ones(2))\n"
     "assert_allclose(torch.zeros(2), torch.zeros(2))\n", "assert_allclose", [3, 4]),
])
def test_each_call_is_reported_and_only_the_import_is_fixed(lint, code, name, calls):
    findings = findings_of(lint, code, "TP201", unsafe_fixes=True)
    assert _lines(findings) == [(2, True), *((row, False) for row in calls)]
    assert len({f.message for f in findings}) == 1  # the same message at the import and at each call
    assert all(name in f.message for f in findings)


def test_weight_norm_import_and_call_share_the_message(lint):
    code = "import torch\nfrom torch.nn.utils import weight_norm\nlayer = weight_norm(torch.nn.Linear(4, 4))\n"
    findings = findings_of(lint, code, "TP201")
    assert [f.row for f in findings] == [2, 3]
    assert findings[0].message == findings[1].message
    assert "PyTorch 2.4" in findings[1].message and findings[1].fix is None


def test_an_aliased_import_is_reported_at_the_alias_call(lint):
    code = "import torch\nfrom torch.nn.utils import clip_grad_norm as clip\nm = torch.nn.Linear(4, 4)\n" \
           "clip(m.parameters(), 1.0)\n"
    assert [f.row for f in findings_of(lint, code, "TP201")] == [2, 4]


def test_a_use_that_does_not_run_the_name_is_not_reported(lint):
    # handing the function around does not warn (torch warns when it is called, inside whatever calls it)
    code = "from torch.nn.utils import clip_grad_norm\nclippers = {'norm': clip_grad_norm}\n"
    assert [f.row for f in findings_of(lint, code, "TP201")] == [1]


def test_the_fixed_file_has_no_finding_left(lint):
    code = "import torch\nfrom torch.nn.utils import clip_grad_norm\nm = torch.nn.Linear(4, 4)\n" \
           "clip_grad_norm(m.parameters(), 1.0)\n"
    result = lint(code, fix=True)
    assert result.error is None
    assert "clip_grad_norm_ as clip_grad_norm" in result.fixed_text
    assert findings_of(lint, result.fixed_text, "TP201") == []


def test_a_module_row_is_reported_at_the_import_only(lint):
    # a moved module warns (if at all) when it is imported; its attribute uses are not calls of the row's name
    code = "from torch.distributed import _tensor\nmesh = _tensor.DeviceMesh('cpu', [0])\n"
    assert all(f.row == 1 for f in findings_of(lint, code, "TP201"))


def test_a_call_in_a_function_is_reported_and_a_shadowing_argument_is_not(lint):
    code = ("from torch.nn.utils import clip_grad_norm\n\ndef step(model):\n    clip_grad_norm(model.parameters(), 1.0)\n\n"
            "def other(clip_grad_norm):\n    clip_grad_norm(1)\n")
    assert [f.row for f in findings_of(lint, code, "TP201")] == [1, 4]


def test_a_guarded_fallback_import_is_not_reported_at_its_calls(lint):
    code = ("try:\n    from torch.nn.utils import clip_grad_norm_ as clip\nexcept ImportError:\n"
            "    from torch.nn.utils import clip_grad_norm as clip\nclip(params, 1.0)\n")
    assert findings_of(lint, code, "TP201") == []
