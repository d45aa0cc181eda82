"""TP207: a keyword argument whose non-default value warns as deprecated in the target release."""

from __future__ import annotations

import ast

from torchpatch.rules import _warning_sites
from torchpatch.rules._wheel_rules import LazyNames, callables_with, keyword_changes_by_callable, shorten
from torchpatch.rules.base import Invalid, Rule, Valid
from torchpatch.versions import Version, v


class DeprecatedKeyword(Rule):
    """
    ## What it does
    Flags a keyword argument passed to a PyTorch function or class when the target release warns as
    deprecated whenever that parameter differs from its default (`if p is not None: warnings.warn(...,
    FutureWarning)`), with torch's message. The sites are read from the real wheels by
    `scripts/build_api_db.py`; only tests of the form `p is not DEFAULT` / `p != DEFAULT` count, so a
    warning that depends on anything else is not attributed to the keyword.

    ## Why is this bad?
    The call warns on every run, and the parameter goes away in a later release.
    """

    code = "TP207"
    name = "deprecated-keyword"
    summary = "A keyword argument that warns as deprecated in the target release (read from the wheels)"
    deprecated_in = v("2.4")
    references = ("https://github.com/pytorch/pytorch/releases",)
    calls = LazyNames(lambda: callables_with("deprecated"))

    VALID = [
        "import torch\nx = torch.ones(3)\n",
        "import torch\ny = torch.nn.functional.gumbel_softmax(logits, tau=0.5)\n",
        # The default value: torch tests `eps != 1e-10` and stays silent.
        Valid("import torch\nimport torch.nn.functional as F\nx = torch.randn(2, 3)\n"
              "y = F.gumbel_softmax(x, tau=1.0, eps=1e-10)\n", torch_runs_clean=True),
    ]
    INVALID = [
        Invalid("import torch\nx = torch.randn(2, 3)\ny = torch.nn.functional.gumbel_softmax(x, tau=0.5, eps=1e-5)\n",
                torch_warns=r"`eps` parameter is deprecated and has no effect"),
        Invalid("import torch\ntorch.autograd.backward(loss, grad_variables=grad)\n"),
    ]

    def check_call(self, ctx, call, qualname):
        changes = keyword_changes_by_callable().get(qualname, {})
        defaults = _warning_sites.callables().get(qualname, {}).get("defaults", {})
        for keyword in call.keywords:
            change = changes.get(keyword.arg or "", {})
            record = change.get("deprecated")
            if record is None or "removed" in change and Version.parse(change["removed"][0]) <= ctx.target:
                continue
            release = Version.parse(record[0])
            if release > ctx.target:
                continue
            if _passes_default(keyword, defaults):
                continue  # torch tests `p is not DEFAULT` / `p != DEFAULT`: the default itself is silent
            yield ctx.diagnostic(keyword, f"`{keyword.arg}=` of `{qualname}` is deprecated (warns since PyTorch "
                                          f"{release}): {shorten(record[1])}")


def _passes_default(keyword: ast.keyword, defaults: dict) -> bool:
    """The keyword's literal value is the parameter's default (of the same type: ``1e-10``, ``None``)."""
    if keyword.arg not in defaults:
        return False
    try:
        value = ast.literal_eval(keyword.value)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False
    default = defaults[keyword.arg]
    return value == default and type(value) is type(default)
