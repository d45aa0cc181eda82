"""TP446: a Python branch on a tensor's value in code that is exported or compiled with fullgraph=True."""

from __future__ import annotations

import ast

from torchpatch.rules._helpers import is_literal, keyword
from torchpatch.rules.base import CallNeed, Invalid, Rule
from torchpatch.versions import v

_COMPILE = "torch.compile"
_EXPORTS = frozenset({"torch.export.export", "torch.export.export_for_training"})
#: Reading a tensor's value: ``.item()``, ``.any()``, ``.all()``, ``torch.any(...)``, ...
_VALUE_METHODS = frozenset({"item", "any", "all"})
_VALUE_FUNCTIONS = frozenset({"torch.any", "torch.all", "torch.equal", "torch.is_nonzero"})
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def _value_reads(ctx, test: ast.expr) -> ast.Call | None:
    for node in ast.walk(test):
        if not isinstance(node, ast.Call):
            continue
        if isinstance(node.func, ast.Attribute) and node.func.attr in _VALUE_METHODS:
            receiver = node.func.value
            if not (isinstance(receiver, ast.Name) and ctx.resolves_to(receiver) is not None):
                return node  # a method of a value; ``np.any(x)`` / ``torch.all(x)`` go through a module name
        if ctx.resolves_to(node.func) in _VALUE_FUNCTIONS:
            return node
    return None


def _branches(ctx, function: ast.AST):
    """(branch node, value read) for each ``if``/``while``/conditional expression of the function's own body."""
    pending = list(function.body)
    while pending:
        node = pending.pop()
        if isinstance(node, _DEFINITIONS):
            continue
        if isinstance(node, (ast.If, ast.While, ast.IfExp)):
            read = _value_reads(ctx, node.test)
            if read is not None:
                yield node, read
        pending.extend(ast.iter_child_nodes(node))


def _local_definition(ctx, name: str, kinds) -> ast.AST | None:
    found = [node for node in ctx.tree.body if isinstance(node, kinds) and node.name == name]
    return found[0] if len(found) == 1 else None


class DataDependentBranch(Rule):
    """
    ## What it does
    Flags `if`/`while` statements and conditional expressions that read a tensor's value
    (`x.item()`, `x.any()`, `x.all()`, `torch.any(x)`, `torch.equal(a, b)`) in code that must be one
    graph: a function decorated with `@torch.compile(fullgraph=True)` or passed to
    `torch.compile(fn, fullgraph=True)`, and the `forward` of a module class that the same file
    exports with `torch.export.export(Model(...), ...)`.

    ## Why is this bad?
    A Python branch on a tensor's value cannot be traced: export fails with
    `GuardOnDataDependentSymNode: Could not guard on data-dependent expression`, and
    `fullgraph=True` fails with "Data-dependent branching" (both checked on 2.13). Express the
    branch with `torch.cond(pred, true_fn, false_fn, operands)`, available as `torch.cond` since
    PyTorch 2.4 and still a prototype in 2.15: both branches take the operands, must return
    tensors with the same metadata, and must not mutate their inputs. `torch.while_loop` (2.5+)
    covers loops; `scan`, `associative_scan` and `map` are in `torch._higher_order_ops` from 2.8.
    """

    code = "TP446"
    name = "data-dependent-branch"
    summary = "Python `if` on a tensor value in exported / `fullgraph=True` code (use `torch.cond`)"
    changed_in = v("2.4")
    references = (
        "https://docs.pytorch.org/docs/stable/cond.html",
        "https://docs.pytorch.org/docs/stable/export.html",
    )
    catalog_ids = ("compile.cond",)
    calls = frozenset({_COMPILE, *_EXPORTS})
    call_needs = {_COMPILE: CallNeed(passed=(("fullgraph", None),))}  # check_call: torch.compile(fullgraph=True) only

    VALID = [
        "import torch\n\n@torch.compile(fullgraph=True)\ndef step(x):\n"
        "    return torch.cond(x.any(), lambda x: x + 1, lambda x: x - 1, (x,))\n",
        # Not one graph: a graph break is allowed.
        "import torch\n\n@torch.compile\ndef step(x):\n    if x.any():\n        return x + 1\n    return x\n",
        # A branch on a shape is fine.
        "import torch\n\nclass M(torch.nn.Module):\n    def forward(self, x):\n"
        "        return x + 1 if x.shape[0] > 1 else x\n\n"
        "ep = torch.export.export(M(), (torch.randn(4),), strict=False)\n",
    ]
    INVALID = [
        Invalid("import torch\n\n@torch.compile(fullgraph=True)\ndef step(x):\n    if x.sum().item() > 0:\n"
                "        return x + 1\n    return x - 1\n"),
        Invalid("import torch\n\nclass Gate(torch.nn.Module):\n    def forward(self, x, mask):\n"
                "        if torch.any(mask):\n            x = x * mask\n        return x\n\n"
                "ep = torch.export.export(Gate(), (x, mask), strict=False)\n"),
        Invalid("import torch\n\ndef body(x):\n    while (x > 0).all():\n        x = x - 1\n    return x\n\n"
                "fast = torch.compile(body, fullgraph=True)\n"),
    ]

    def check_call(self, ctx, call, qualname):
        function = None
        if qualname == _COMPILE:
            fullgraph = keyword(call, "fullgraph")
            if fullgraph is None or not is_literal(fullgraph.value, True):
                return
            statement = ctx.statement
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)) \
                    and any(d is call for d in statement.decorator_list):
                function = statement
            elif call.args and isinstance(call.args[0], ast.Name):
                function = _local_definition(ctx, call.args[0].id, (ast.FunctionDef,))
            where = "`torch.compile(fullgraph=True)`"
        else:
            model = call.args[0] if call.args else None
            if isinstance(model, ast.Call) and isinstance(model.func, ast.Name):
                cls = _local_definition(ctx, model.func.id, (ast.ClassDef,))
                if cls is not None:
                    function = next((n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "forward"), None)
            where = "`torch.export`"
        if function is None:
            return
        for branch, read in _branches(ctx, function):
            kind = {ast.If: "`if`", ast.While: "`while`"}.get(type(branch), "a conditional expression")
            message = (f"{kind} on a tensor value (`{ctx.source(read)}`) in code traced by {where}: it cannot be "
                       f"traced (data-dependent branch); use `torch.cond(pred, true_fn, false_fn, operands)` "
                       f"(PyTorch {self.changed_in}+, prototype)")
            yield ctx.diagnostic(branch.test, message)
