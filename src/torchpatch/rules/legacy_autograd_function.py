"""TP131: a torch.autograd.Function subclass with an instance-method forward (the pre-1.3 style, which raises)."""

from __future__ import annotations

import ast

from torchpatch.rules.base import Invalid, Rule, Valid
from torchpatch.versions import v

#: ``torch.autograd.Function`` and the module it is defined in (``from torch.autograd.function import Function``).
FUNCTION = frozenset({"torch.autograd.Function", "torch.autograd.function.Function"})
_STATIC = frozenset({"staticmethod", "classmethod"})


def _first_parameter(function: ast.FunctionDef) -> str | None:
    parameters = [*function.args.posonlyargs, *function.args.args]
    return parameters[0].arg if parameters else None


class LegacyAutogradFunction(Rule):
    """
    ## What it does
    Flags a class that derives from `torch.autograd.Function` and defines `forward` as a plain
    (instance) method, the legacy style of the detection and ROI-pooling code written for PyTorch 0.x:
    settings stored by `__init__`, an instance built once and then called, `Detect(...)(loc, conf)`.
    Only the legacy shape is reported: the class defines `__init__`, or `forward`'s first parameter is
    `self`. A `forward(ctx, ...)` that merely lacks `@staticmethod` still works through `apply` (2.13).

    ## Why is this bad?
    In every release 2.4 … 2.15 (torch/autograd/function.py of the 2.4.1, 2.13.0 and 2.15.0 wheels)
    building such an object warns `DeprecationWarning: ... should not be instantiated. Methods on autograd
    functions are all static`, and calling it raises `RuntimeError: Legacy autograd function with
    non-static forward method is deprecated. Please use new-style autograd function with static forward
    method.` The code cannot run. Make `forward` and `backward` `@staticmethod`s that take `ctx` first
    (keep the settings on `ctx`, or pass them as arguments) and call `MyFunction.apply(...)`.

    No fix: the settings held on `self` have to move, and every call site changes.
    """

    code = "TP131"
    name = "legacy-autograd-function"
    summary = "`autograd.Function` subclass with an instance-method `forward`: calling it raises (legacy style)"
    deprecated_in = v("1.3")
    removed_in = v("1.5")
    references = ("https://docs.pytorch.org/docs/stable/notes/extending.html#extending-torch-autograd",)
    references_to = FUNCTION

    VALID = [
        Valid("import torch\n\nclass Double(torch.autograd.Function):\n    @staticmethod\n"
              "    def forward(ctx, x):\n        return x * 2\n\n    @staticmethod\n"
              "    def backward(ctx, grad):\n        return grad * 2\n\ny = Double.apply(torch.ones(2))\n",
              torch_runs_clean=True),
        # A classmethod forward is accepted by apply (HRNet's InPlaceABNSync).
        "import torch\nfrom torch import autograd\n\nclass Sync(autograd.Function):\n    @classmethod\n"
        "    def forward(cls, ctx, x):\n        return x\n",
        # Another library's Function (Chainer), and a subclass without a forward of its own.
        "import torch\nfrom chainer import Function\n\nclass Detect(Function):\n    def forward(self, inputs):\n"
        "        return inputs\n",
        "import torch\n\nclass Base(torch.autograd.Function):\n    pass\n",
        # forward(ctx, ...) without @staticmethod and no __init__: apply() calls it as a plain function (works).
        Valid("import torch\n\nclass Twice(torch.autograd.Function):\n    def forward(ctx, x):\n        return x * 2\n\n"
              "    def backward(ctx, grad):\n        return grad * 2\n\ny = Twice.apply(torch.ones(2))\n",
              torch_runs_clean=True),
    ]
    INVALID = [
        Invalid("import torch\nfrom torch.autograd import Function\n\nclass Detect(Function):\n"
                "    def __init__(self, top_k):\n        self.top_k = top_k\n\n"
                "    def forward(self, scores):\n        return scores.topk(self.top_k)[0]\n\n"
                "out = Detect(2)(torch.arange(5.0))\n",
                torch_warns=r"Legacy autograd function with non-static forward method is deprecated"),
        Invalid("import torch\n\nclass RoIPool(torch.autograd.Function):\n    def __init__(self, size):\n"
                "        self.size = size\n\n    def forward(ctx, features, rois):\n"
                "        return features\n\n    def backward(ctx, grad):\n        return grad, None\n"),
        Invalid("import torch\n\nclass RoICrop(torch.autograd.Function):\n    def forward(self, input1, input2):\n"
                "        return input1\n"),
    ]

    def check_reference(self, ctx, reference):
        node = reference.node
        cls = subclass_of(ctx, node)
        if cls is None:
            return
        has_init = any(isinstance(s, ast.FunctionDef) and s.name == "__init__" for s in cls.body)
        for statement in cls.body:
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)) and statement.name == "forward" \
                    and not any(isinstance(d, ast.Name) and d.id in _STATIC for d in statement.decorator_list) \
                    and (has_init or _first_parameter(statement) == "self"):
                yield ctx.diagnostic(node, (
                    f"`{cls.name}` is a legacy `autograd.Function`: its `forward` is an instance method, so calling an "
                    f"instance raises RuntimeError in PyTorch 2.4 through 2.15 (and building one warns); make "
                    f"`forward`/`backward` `@staticmethod`s taking `ctx` and call `{cls.name}.apply(...)`"))
                return


def subclass_of(ctx, base: ast.AST) -> ast.ClassDef | None:
    """The class whose bases list holds ``base`` (a reference to ``torch.autograd.Function``), or None."""
    cls = ctx.parent_of(base)
    if isinstance(cls, ast.ClassDef) and any(each is base for each in cls.bases):
        return cls
    return None
