"""TP520: `x.require_grad = ...`, the typo of `requires_grad` that freezes (or unfreezes) nothing."""

from __future__ import annotations

import ast

from torchpatch.rules.base import UNSAFE, Edit, Fix, Invalid, Rule
from torchpatch.versions import v

_TYPO = "require_grad"
_MEANT = "requires_grad"


class RequireGradTypo(Rule):
    """
    ## What it does
    Flags assignments to an attribute named `require_grad` — `param.require_grad = False`, also as one
    of several targets (`a.require_grad = b.require_grad = False`, `x.require_grad, y.require_grad = ...`),
    annotated or augmented, and `setattr(obj, "require_grad", ...)` — in files that use torch, where
    `requires_grad` is meant. A file that reads `.require_grad` somewhere or defines its own
    `require_grad` (a property, a method, a class attribute) has an attribute of that name on purpose,
    and is left alone.

    ## Why is this bad?
    A tensor accepts any new Python attribute, so `param.require_grad = False` raises nothing on any
    release (checked on 2.4 through 2.15: `torch.Tensor` has no `require_grad`): it adds an unused
    attribute and leaves `param.requires_grad` as it was. The parameters meant to be frozen keep
    training — more memory and compute, and a different model — with no error to say so. The same
    holds for `nn.Module`, whose `__setattr__` stores unknown names as plain attributes.

    The fix renames the attribute to `requires_grad`. It is unsafe because it changes what runs: the
    flag now takes effect, and setting `requires_grad` on a tensor that is not a leaf raises
    `RuntimeError` where the typo was silently ignored. TorchFix reports this as TOR002 (on by
    default there too, and fixed by its codemod); torchpatch also reports the tuple, chained,
    augmented and `setattr` spellings, and skips files that use an attribute of that name on purpose.
    """

    code = "TP520"
    name = "require-grad-typo"
    summary = "`x.require_grad = ...`: a typo of `requires_grad` that silently changes nothing"
    changed_in = v("2.4")  # not a release change: 2.4 is the oldest release this check is verified on
    fix_safety = UNSAFE
    fix_safety_note = ("Renaming to `requires_grad` makes the flag take effect (that is the point), and raises "
                       "`RuntimeError` for a tensor that is not a leaf.")
    references = ("https://docs.pytorch.org/docs/stable/generated/torch.Tensor.requires_grad_.html",)
    torchfix_codes = ("TOR002",)
    attributes_assigned = frozenset({_TYPO})

    VALID = [
        "import torch\nx = torch.zeros(1)\nx.requires_grad = False\nrequire_grad = False\n",
        # No torch in the file.
        "x.require_grad = True\n",
        # An attribute of that name used on purpose: read elsewhere in the file, or defined by a class.
        "import torch\nclass Config:\n    def __init__(self, require_grad):\n        self.require_grad = require_grad\n"
        "    def build(self):\n        return torch.zeros(1, requires_grad=self.require_grad)\n",
        "import torch\nclass Block(torch.nn.Module):\n    @property\n    def require_grad(self):\n        return self._rg\n"
        "    @require_grad.setter\n    def require_grad(self, value):\n        self._rg = value\nblock.require_grad = False\n",
        "import torch\nsetattr(obj, name, True)\n",
    ]
    INVALID = [
        Invalid("import torch\nx = torch.zeros(1)\nx.require_grad = True\n",
                fixed="import torch\nx = torch.zeros(1)\nx.requires_grad = True\n"),
        Invalid("import torch.nn as nn\nmodel = nn.Module()\nfor name, param in model.named_parameters():\n"
                "    param.require_grad = 'specific_layer' in name\n",
                fixed="import torch.nn as nn\nmodel = nn.Module()\nfor name, param in model.named_parameters():\n"
                "    param.requires_grad = 'specific_layer' in name\n"),
        Invalid("import torch\nfor p in model.encoder.parameters():\n    p.require_grad, p.grad = False, None\n",
                fixed="import torch\nfor p in model.encoder.parameters():\n    p.requires_grad, p.grad = False, None\n",
                ),
        Invalid("import torch\nsetattr(model.head.weight, 'require_grad', False)\n",
                fixed="import torch\nsetattr(model.head.weight, 'requires_grad', False)\n"),
    ]

    def check_attribute_assignment(self, ctx, target, value):
        if _used_on_purpose(ctx):
            return
        message = (f"`{_TYPO}` is likely a typo of `{_MEANT}`: a tensor or module takes any new attribute, so this "
                   f"changes nothing and raises nothing (PyTorch 2.4 through {ctx.target})")
        end = ctx.end(target)
        if isinstance(target, ast.Attribute):
            edit = Edit(end - len(_TYPO), end, _MEANT)
        else:  # setattr(obj, "require_grad", ...): the string literal
            text = ctx.source(target)
            if text[1:-1] != _TYPO:
                yield ctx.diagnostic(target, message)
                return
            edit = Edit(ctx.start(target) + 1, end - 1, _MEANT)
        yield ctx.diagnostic(target, message, Fix(f"Use `{_MEANT}`", edits=[edit], applicability=UNSAFE))


def _used_on_purpose(ctx) -> bool:
    """Whether the file reads ``.require_grad`` (a tensor has none: that read would raise) or defines the name
    in a class body (a method, property or class attribute)."""
    for node in ast.walk(ctx.tree):
        if type(node) is ast.Attribute and node.attr == _TYPO and type(node.ctx) is ast.Load:
            return True
        if type(node) is ast.ClassDef:
            for statement in node.body:
                if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)) and statement.name == _TYPO:
                    return True
                if isinstance(statement, (ast.Assign, ast.AnnAssign)) and any(
                        type(t) is ast.Name and t.id == _TYPO
                        for t in (statement.targets if type(statement) is ast.Assign else [statement.target])):
                    return True
    return False
