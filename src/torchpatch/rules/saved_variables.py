"""TP228: ``ctx.saved_variables`` in an ``autograd.Function`` is deprecated; ``ctx.saved_tensors`` is the same."""

from __future__ import annotations

import ast

from torchpatch.rules.base import SAFE, Edit, Fix, Invalid, Rule, Valid
from torchpatch.rules.legacy_autograd_function import FUNCTION, subclass_of
from torchpatch.versions import v


class SavedVariables(Rule):
    """
    ## What it does
    Flags reads of `ctx.saved_variables` (the first parameter of any method, `self` in the legacy
    style) in a class that derives from `torch.autograd.Function`, and renames them to `saved_tensors`.

    ## Why is this bad?
    `saved_variables` is the name from the days of `Variable`; the C++ getter warns on each read in every
    release 2.4 through 2.15 (`DeprecationWarning: 'saved_variables' is deprecated; use 'saved_tensors'`,
    from `libtorch_python.so`; torch 2.13 and 2.15 print it on CPU) and then returns what `saved_tensors`
    returns.

    ## Example
    ```python
    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_variables
    ```
    Use instead:
    ```python
    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
    ```

    ## Fix safety
    Safe: both getters unpack the same saved tensors; on torch 2.4, 2.13 and 2.15 they return the very
    same tensor objects (`a is b` for each pair; 2.4.1 checked on its CUDA wheel, run on CPU).
    """

    code = "TP228"
    name = "saved-variables"
    summary = "`ctx.saved_variables` in an `autograd.Function` is deprecated: use `ctx.saved_tensors`"
    deprecated_in = v("0.4")
    replacement_since = v("0.4")
    fix_safety = SAFE
    torch_message = "'saved_variables' is deprecated; use 'saved_tensors'"
    references = ("https://docs.pytorch.org/docs/stable/generated/torch.autograd.function.FunctionCtx.save_for_backward.html",)
    references_to = FUNCTION

    VALID = [
        Valid("import torch\n\nclass Square(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n"
              "        ctx.save_for_backward(x)\n        return x * x\n\n    @staticmethod\n    def backward(ctx, grad):\n"
              "        x, = ctx.saved_tensors\n        return 2 * x * grad\n\n"
              "Square.apply(torch.ones(2, requires_grad=True)).sum().backward()\n", torch_runs_clean=True),
        # Not an autograd.Function: another object's attribute of that name.
        "import torch\n\nclass Cache:\n    def get(self):\n        return self.saved_variables\n",
        # Not the ctx parameter.
        "import torch\n\nclass F(torch.autograd.Function):\n    @staticmethod\n    def backward(ctx, grad):\n"
        "        return registry.saved_variables\n",
    ]
    INVALID = [
        Invalid("import torch\n\nclass Square(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n"
                "        ctx.save_for_backward(x)\n        return x * x\n\n    @staticmethod\n    def backward(ctx, grad):\n"
                "        x, = ctx.saved_variables\n        return 2 * x * grad\n\n"
                "Square.apply(torch.ones(2, requires_grad=True)).sum().backward()\n",
                fixed="import torch\n\nclass Square(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n"
                      "        ctx.save_for_backward(x)\n        return x * x\n\n    @staticmethod\n    def backward(ctx, grad):\n"
                      "        x, = ctx.saved_tensors\n        return 2 * x * grad\n\n"
                      "Square.apply(torch.ones(2, requires_grad=True)).sum().backward()\n",
                torch_warns="'saved_variables' is deprecated; use 'saved_tensors'"),
        Invalid("from torch.autograd import Function\n\nclass Mul(Function):\n    @staticmethod\n"
                "    def backward(context, grad):\n        a, b = context.saved_variables\n        return grad * b, grad * a\n",
                fixed="from torch.autograd import Function\n\nclass Mul(Function):\n    @staticmethod\n"
                      "    def backward(context, grad):\n        a, b = context.saved_tensors\n        return grad * b, grad * a\n"),
    ]

    def check_reference(self, ctx, reference):
        if "saved_variables" not in ctx.text:
            return  # most Function subclasses: nothing to look for in their methods
        cls = subclass_of(ctx, reference.node)
        if cls is None:
            return
        for statement in cls.body:
            if not isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            parameters = [*statement.args.posonlyargs, *statement.args.args]
            if not parameters:
                continue
            owner = parameters[0].arg
            for inner in ast.walk(statement):
                if isinstance(inner, ast.Attribute) and inner.attr == "saved_variables" \
                        and isinstance(inner.ctx, ast.Load) and isinstance(inner.value, ast.Name) \
                        and inner.value.id == owner:
                    end = ctx.end(inner)
                    fix = Fix(message="Use `saved_tensors` (the same tensors)",
                              edits=[Edit(end - len("saved_variables"), end, "saved_tensors")], applicability=SAFE)
                    yield ctx.diagnostic(inner, f"`{owner}.saved_variables` is deprecated (torch warns \"'saved_variables' "
                                                f"is deprecated; use 'saved_tensors'\" in 2.4 through {ctx.target}); "
                                                f"use `{owner}.saved_tensors`", fix)
