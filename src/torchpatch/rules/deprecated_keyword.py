"""TP207: a keyword argument whose non-default value warns as deprecated in the target release."""

from __future__ import annotations

from torchpatch.rules._wheel_rules import LazyNames, callables_with, keyword_changes_by_callable, shorten
from torchpatch.rules.base import Invalid, Rule
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
    ]
    INVALID = [
        Invalid("import torch\ny = torch.nn.functional.gumbel_softmax(logits, tau=0.5, eps=1e-5)\n"),
        Invalid("import torch\ntorch.autograd.backward(loss, grad_variables=grad)\n"),
    ]

    def check_call(self, ctx, call, qualname):
        changes = keyword_changes_by_callable().get(qualname, {})
        for keyword in call.keywords:
            change = changes.get(keyword.arg or "", {})
            record = change.get("deprecated")
            if record is None or "removed" in change and Version.parse(change["removed"][0]) <= ctx.target:
                continue
            release = Version.parse(record[0])
            if release > ctx.target:
                continue
            yield ctx.diagnostic(keyword, f"`{keyword.arg}=` of `{qualname}` is deprecated (warns since PyTorch "
                                          f"{release}): {shorten(record[1])}")
