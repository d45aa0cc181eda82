"""TP104: a module, function, class or class member that the target release's wheel no longer has."""

from __future__ import annotations

import ast

from torchpatch.rules import _api_db
from torchpatch.rules._wheel_rules import LazyNames, covered
from torchpatch.rules.base import Invalid, Rule, Valid
from torchpatch.versions import v


def _watched() -> set[str]:
    return {name for name in _api_db.removed_names() if not covered(name)}


class WheelRemovedApi(Rule):
    """
    ## What it does
    Flags imports and uses of PyTorch modules, functions, classes and class attributes that were in an
    earlier release (2.4 or later) and are not in the target release, as read from the real wheels'
    sources by `scripts/build_api_db.py` (`rules/data/api_db.json.gz`). The message names the first
    release without the name and, when the older release imported it from a place the target still
    has, that replacement.

    A name counts as gone only when its module is *closed* in the target: no module `__getattr__`, no
    `sys.modules` replacement and no `globals()` writes, so a name that moved behind a lazy shim
    (`torch.utils.mkldnn.MkldnnLinear` in 2.14) is never reported. Names a hand-written rule or an API
    table row (TP101) watches are left to that rule, which has the fix.

    Not inferred: attributes of *instances* (`model.some_removed_method()`), names reached through
    `getattr` with a string, and modules implemented in C without a `.pyi` stub.

    ## Why is this bad?
    The code fails with `ImportError`, `ModuleNotFoundError` or `AttributeError` on the target release.
    """

    code = "TP104"
    name = "wheel-removed-api"
    summary = "A PyTorch name the target release's wheel no longer has (read from the real wheels)"
    removed_in = v("2.5")
    references = ("https://github.com/pytorch/pytorch/releases",)
    references_to = LazyNames(_watched)

    VALID = [
        "import torch\nx = torch.cat([a, b])\n",
        # Served lazily by the module's __getattr__ in 2.14: not removed.
        Valid("from torch.utils.mkldnn import MkldnnLinear\n", target_torch="2.14"),
        # Gone in 2.6, but the target is 2.5.
        Valid("from torch.distributed._tensor.api import DTensor\n", target_torch="2.4"),
        # Read only where the release still has it (FILE_LIKE went in 2.7): a feature probe of the name itself.
        Valid("import torch\nif hasattr(torch.serialization, 'FILE_LIKE'):\n    F = torch.serialization.FILE_LIKE\n",
              target_torch="2.15"),
    ]
    INVALID = [
        Invalid("import torch\ntorch.align_tensors(a, b)\n", target_torch="2.15"),
        Invalid("from torch.export.dynamic_shapes import dynamic_dim\n", target_torch="2.15"),
    ]

    def check_reference(self, ctx, reference):
        removal = _api_db.removed_names().get(reference.qualname)
        if removal is None or removal.removed_in > ctx.target:
            return
        if removal.back_in is not None and removal.back_in <= ctx.target:
            return
        if _inside_own_probe(ctx, reference.node, removal.qualname):
            return
        kind = "module" if removal.is_module else "name"
        message = f"`{removal.qualname}` is not in PyTorch {ctx.target} (the {kind} was removed in {removal.removed_in})"
        if removal.replacement:
            message += f"; use `{removal.replacement}`"
        yield ctx.diagnostic(reference.node if reference.module_node is None else reference.module_node, message)


def _probed_name(test: ast.expr, ctx) -> set[str]:
    """The names ``hasattr(<torch object>, "name")`` conjuncts of ``test`` make sure exist."""
    conjuncts = test.values if type(test) is ast.BoolOp and type(test.op) is ast.And else [test]
    probed = set()
    for part in conjuncts:
        if (type(part) is ast.Call and type(part.func) is ast.Name and part.func.id == "hasattr"
                and len(part.args) == 2 and type(part.args[1]) is ast.Constant and type(part.args[1].value) is str):
            owner = ctx.resolves_to(part.args[0])
            if owner:
                probed.add(f"{owner}.{part.args[1].value}")
    return probed


def _inside_own_probe(ctx, node: ast.AST, qualname: str) -> bool:
    """``if hasattr(torch.serialization, "FILE_LIKE"): ... torch.serialization.FILE_LIKE`` (ChatTTS): the
    body runs only on releases that still have the name, so the removal cannot break it there."""
    child, parent = node, ctx.parent_of(node)
    while parent is not None:
        if type(parent) in (ast.If, ast.IfExp) and child is not parent.test and (
                child in parent.body if type(parent) is ast.If else child is parent.body):
            if any(qualname == name or qualname.startswith(name + ".") for name in _probed_name(parent.test, ctx)):
                return True
        child, parent = parent, ctx.parent_of(parent)
    return False
