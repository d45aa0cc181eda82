"""TP259: `@torch.no_grad()` / `enable_grad` / `inference_mode` / `set_grad_enabled` on a class (deprecated)."""

from __future__ import annotations

import ast

from torchpatch.rules.base import Invalid, Rule, Valid
from torchpatch.versions import v

_NAMES = ("no_grad", "enable_grad", "inference_mode", "set_grad_enabled")
#: The grad-mode context managers built on ``torch.utils._contextlib._DecoratorContextManager``, whose
#: ``__call__`` warns "Decorating classes is deprecated" for a class (2.4.1 … 2.15.0 _contextlib.py).
DECORATORS = frozenset(f"{module}.{name}" for module in ("torch", "torch.autograd", "torch.autograd.grad_mode")
                       for name in _NAMES)


class GradModeClassDecorator(Rule):
    """
    ## What it does
    Flags `@torch.no_grad()`, `@torch.enable_grad()`, `@torch.inference_mode()` and
    `@torch.set_grad_enabled(...)` (with or without the parentheses) written above a `class`.

    ## Why is this bad?
    These context managers decorate functions. On a class, every release 2.4 … 2.15 warns
    `FutureWarning: Decorating classes is deprecated and will be disabled in future versions` and
    replaces the class with a function that builds it under the mode: the name is no longer a
    class (`isinstance(obj, Model)` raises `TypeError`, subclassing fails), and only the
    constructor runs under the mode, not the methods. Decorate `__init__` (torch's own advice, which
    keeps today's behaviour) or the methods that should run without gradients. No fix: which one was
    meant is a judgment.
    """

    code = "TP259"
    name = "grad-mode-class-decorator"
    summary = "`@torch.no_grad()` (or `enable_grad`/`inference_mode`/`set_grad_enabled`) on a class (deprecated)"
    deprecated_in = v("2.0")
    references = ("https://docs.pytorch.org/docs/stable/generated/torch.no_grad.html",)
    catalog_ids = ("ag.grad-mode",)
    references_to = DECORATORS
    decorators_only = DECORATORS  # check_reference reports a reference that is a class's decorator, nothing else
    class_decorators_only = DECORATORS

    VALID = [
        Valid("import torch\nclass Evaluator:\n    @torch.no_grad()\n    def __init__(self):\n"
              "        self.w = torch.ones(2) * 2\nEvaluator()\n", torch_runs_clean=True),
        Valid("import torch\n@torch.inference_mode()\ndef predict(model, x):\n    return model(x)\n"
              "predict(torch.nn.Linear(2, 2), torch.ones(1, 2))\n", torch_runs_clean=True),
        "import torch\nwith torch.no_grad():\n    y = model(x)\n",
    ]
    INVALID = [
        Invalid("import torch\n@torch.no_grad()\nclass Evaluator:\n    def __init__(self):\n"
                "        self.w = torch.ones(2) * 2\nEvaluator()\n",
                torch_warns="Decorating classes is deprecated"),
        Invalid("from torch import inference_mode\n@inference_mode\nclass Predictor:\n    pass\nPredictor()\n",
                torch_warns="Decorating classes is deprecated"),
        Invalid("import torch\n@torch.set_grad_enabled(False)\nclass Frozen:\n    pass\n"),
    ]

    def check_reference(self, ctx, reference):
        node = reference.node
        if not isinstance(node, (ast.Name, ast.Attribute)):
            return
        # A class's decorators are walked as the header of its statement: no parent links needed (the file's
        # every ``torch.no_grad`` reaches here).
        parent = reference.statement
        if not isinstance(parent, ast.ClassDef):
            return
        decorator = next((d for d in parent.decorator_list
                          if d is node or isinstance(d, ast.Call) and d.func is node), None)
        if decorator is None:
            return
        name = reference.qualname.rpartition(".")[2]
        yield ctx.diagnostic(decorator, f"`@{name}` on class `{parent.name}` is deprecated (FutureWarning in PyTorch 2.4 "
                                        f"through 2.15) and turns the class into a function; decorate `__init__` "
                                        f"or the methods instead")
