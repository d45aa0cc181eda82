"""TP216: a loss's legacy ``size_average=`` / ``reduce=`` or ``reduction="elementwise_mean"``."""

from __future__ import annotations

import ast

from torchpatch.rules import _warning_sites
from torchpatch.rules._helpers import literal
from torchpatch.rules._wheel_rules import LazyNames
from torchpatch.rules.base import SAFE, CallNeed, Edit, Fix, Invalid, Rule, Valid
from torchpatch.versions import v

_LEGACY = ("size_average", "reduce")
_MISSING = object()


def is_legacy_reduction_warning(warning: dict, site: dict) -> bool:
    """A warning this rule reports: a loss's legacy pair passed, or ``reduction="elementwise_mean"``."""
    # A loss without the legacy pair (F.huber_loss) still warns on "elementwise_mean"; Tensor.scatter's
    # reduce= is another argument, so the pair counts only where the callable has size_average=.
    has_pair = "size_average" in (*site["positional"], *site["keyword_only"], *site.get("defaults", {}))
    return any(kind == "passed" and parameter in _LEGACY and has_pair
               or kind == "equals" and parameter == "reduction" and "elementwise_mean" in values[0]
               for kind, parameter, *values in warning["when"])


def _losses() -> set[str]:
    return {name for name, site in _warning_sites.callables().items()
            if not site["method"] and any(is_legacy_reduction_warning(w, site) for w in site["warnings"])}


def _method_names() -> set[str]:
    return set()


_answers = is_legacy_reduction_warning


def _need(site: dict) -> CallNeed:
    """What check_call reports on: a legacy keyword given (by name or position), or the literal "elementwise_mean"."""
    positional = site["positional"]
    return CallNeed(words=frozenset({"elementwise_mean"}),
                    passed=tuple((name, positional.index(name) if name in positional else None) for name in _LEGACY))


def legacy_reduction(size_average, reduce) -> str:
    """torch.nn._reduction.legacy_get_string, the same from 2.4 to 2.15: None counts as True."""
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    if size_average and reduce:
        return "mean"
    return "sum" if reduce else "none"


class LegacyLossReduction(Rule):
    """
    ## What it does
    Flags `size_average=` and `reduce=` in calls to the losses of `torch.nn` and `torch.nn.functional`,
    and `reduction="elementwise_mean"`, and rewrites them to the equivalent `reduction=`: torch maps the
    legacy pair with `torch.nn._reduction.legacy_get_string` (`None` counts as `True`; both true →
    `"mean"`, `reduce` alone → `"sum"`, otherwise `"none"`) and ignores `reduction=` when either is
    given; `"elementwise_mean"` is read as `"mean"`.

    ## Why is this bad?
    torch warns on every call ("size_average and reduce args will be deprecated, please use
    reduction='sum' instead."), and the pair is harder to read than the one argument that replaced it.
    """

    code = "TP216"
    name = "legacy-loss-reduction"
    summary = "A loss's `size_average=` / `reduce=` or `reduction='elementwise_mean'` (use `reduction=`)"
    deprecated_in = v("2.4")
    replacement_since = v("2.4")
    fix_safety = SAFE
    fix_safety_note = ("The same `reduction=` that torch computes from the pair on every release from 2.4 "
                       "to 2.15; only literal values are rewritten, and only when the arguments are keywords "
                       "next to each other.")
    references = ("https://pytorch.org/docs/stable/nn.html#loss-functions",)
    calls = LazyNames(_losses)
    call_needs = LazyNames(lambda: {name: _need(_warning_sites.callables()[name]) for name in _losses()}, kind=dict)

    VALID = [
        Valid("import torch\nimport torch.nn.functional as F\nx = torch.randn(4, 3)\ny = torch.randn(4, 3)\n"
              "loss = F.mse_loss(x, y, reduction='sum')\ncriterion = torch.nn.MSELoss(reduction='none')\n",
              torch_runs_clean=True),
        # Another library's reduce= is not torch's.
        "import torch\nfrom functools import reduce\ntotal = reduce(lambda a, b: a + b, [1, 2])\n",
        # Positional None for both (fairseq's r3f losses): torch only warns when one is not None.
        Valid("import torch\nimport torch.nn.functional as F\na = torch.randn(2, 3).log_softmax(-1)\n"
              "b = torch.randn(2, 3).softmax(-1)\nloss = F.kl_div(a, b, None, None, 'sum')\n", torch_runs_clean=True),
    ]
    INVALID = [
        Invalid("import torch\ncriterion = torch.nn.MSELoss(size_average=False)\nx = torch.randn(4, 3)\n"
                "loss = criterion(x, x)\n",
                fixed="import torch\ncriterion = torch.nn.MSELoss(reduction='sum')\nx = torch.randn(4, 3)\n"
                      "loss = criterion(x, x)\n",
                torch_warns=r"size_average and reduce args will be deprecated, please use reduction='sum'"),
        Invalid("import torch\nimport torch.nn.functional as F\nx = torch.randn(4, 3)\n"
                "loss = F.l1_loss(x, x, size_average=True, reduce=False)\n",
                fixed="import torch\nimport torch.nn.functional as F\nx = torch.randn(4, 3)\n"
                      "loss = F.l1_loss(x, x, reduction='none')\n",
                torch_warns=r"please use reduction='none' instead"),
        Invalid("import torch\nimport torch.nn as nn\ncriterion = nn.CrossEntropyLoss(reduce=False, reduction='mean')\n",
                fixed="import torch\nimport torch.nn as nn\ncriterion = nn.CrossEntropyLoss(reduction='none')\n",
                torch_warns=r"please use reduction='none' instead"),
        Invalid("import torch\nimport torch.nn.functional as F\nx = torch.randn(4, 3)\n"
                "loss = F.mse_loss(x, x, reduction=\"elementwise_mean\")\n",
                fixed="import torch\nimport torch.nn.functional as F\nx = torch.randn(4, 3)\n"
                      "loss = F.mse_loss(x, x, reduction=\"mean\")\n",
                torch_warns=r"reduction='elementwise_mean' is deprecated"),
        # A variable: reported, not rewritten.
        Invalid("import torch\ncriterion = torch.nn.NLLLoss(size_average=average)\n"),
    ]

    @classmethod
    def torch_messages(cls) -> tuple[str, ...]:
        return _warning_sites.messages(cls.calls | _method_names(), _answers)

    def check_call(self, ctx, call, qualname):
        site = _warning_sites.callables().get(qualname)
        bound = _warning_sites.bind(call, site) if site else None
        if bound is None:
            return
        # torch warns when either is not None (`if size_average is not None or reduce is not None`): a literal
        # None, as positional calls such as `F.kl_div(a, b, None, None, "sum")` pass it, is silent.
        legacy = [name for name in _LEGACY if name in bound and not _is_none(bound[name])]
        if legacy:
            yield self._legacy(ctx, call, qualname, bound, legacy)
            return
        reduction = bound.get("reduction")
        if isinstance(reduction, ast.Constant) and reduction.value == "elementwise_mean":
            quote = ctx.source(reduction)[0]
            fix = Fix("Use `reduction='mean'` (what torch reads `elementwise_mean` as)",
                      edits=[Edit(ctx.start(reduction), ctx.end(reduction), f"{quote}mean{quote}")],
                      applicability=SAFE)
            yield ctx.diagnostic(reduction, f"`reduction=\"elementwise_mean\"` of `{qualname}` is deprecated (warns "
                                            f"in PyTorch {ctx.target}): use `reduction=\"mean\"`", fix)

    def _legacy(self, ctx, call, qualname, bound, legacy):
        values = {name: _value(bound[name]) if name in bound else None for name in _LEGACY}
        names = " and ".join(f"`{name}=`" for name in legacy)
        fix = None
        if all(value is None or isinstance(value, (bool, int)) for value in values.values()):
            reduction = legacy_reduction(values["size_average"], values["reduce"])
            fix = self._rewrite(ctx, call, bound, reduction)
            hint = f"use `reduction='{reduction}'`"
        else:
            hint = "use `reduction=`"
        verb = "is deprecated (warns" if len(legacy) == 1 else "are deprecated (warn"
        return ctx.diagnostic(bound[legacy[0]], f"{names} of `{qualname}` {verb} in PyTorch {ctx.target}): {hint}",
                              fix)

    @staticmethod
    def _rewrite(ctx, call, bound, reduction):
        """One edit over the legacy keywords (and ``reduction=``), when they sit next to each other."""
        keywords = [k for k in call.keywords if k.arg in (*_LEGACY, "reduction")]
        if len(keywords) != sum(1 for name in (*_LEGACY, "reduction") if name in bound):
            return None  # one of them is positional
        positions = [call.keywords.index(k) for k in keywords]
        if positions != list(range(positions[0], positions[0] + len(positions))):
            return None
        start, end = ctx.start(keywords[0]), ctx.end(keywords[-1])
        if "#" in ctx.text[start:end]:
            return None
        return Fix(f"Use `reduction='{reduction}'`", edits=[Edit(start, end, f"reduction='{reduction}'")],
                   applicability=SAFE)


def _is_none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _value(node: ast.expr):
    """A literal True / False / None / number, else _MISSING."""
    try:
        value = literal(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _MISSING
    return value if value is None or isinstance(value, (bool, int)) else _MISSING
