"""TP261: `__torch_function__` defined as a plain method (torch warns that it must be a classmethod)."""

from __future__ import annotations

import ast

from torchpatch.rules import _receivers as receivers
from torchpatch.rules.base import SAFE, Edit, Fix, Invalid, Rule, Valid
from torchpatch.versions import v

_PROTOCOL = "__torch_function__"
_TENSOR_BASES = frozenset({"torch.Tensor", "torch.nn.Parameter", "torch.nn.parameter.Parameter"})


class TorchFunctionPlainMethod(Rule):
    """
    ## What it does
    Flags `def __torch_function__(self, func, types, args=(), kwargs=None)` in a class without
    `@classmethod`, and the calls of torch functions in the same file that hand torch an instance of
    that class (`torch.add(w, 1)`, `F.relu(w)` for `w = Wrapper(...)`; any operation on an instance of
    a `torch.Tensor` subclass), which is where torch warns.

    ## Why is this bad?
    The `__torch_function__` protocol calls the method on the type: torch's dispatcher
    (`torch.overrides.handle_torch_function` and its C++ twin) warns `DeprecationWarning: Defining your
    __torch_function__ as a plain method is deprecated and will be an error in future, please define it
    as a classmethod` each time it calls a plain method (checked on torch 2.13 and 2.15; pytorch/pytorch#63767).
    The fix adds `@classmethod` when the method never reads its first parameter (it is then the same
    call: torch binds it to the instance, a classmethod to its class, and `super()` resolves alike);
    a method that reads `self` needs the state moved elsewhere, so it gets no fix.
    """

    code = "TP261"
    name = "torch-function-plain-method"
    summary = "`__torch_function__` defined as a plain method (deprecated; torch wants a classmethod)"
    deprecated_in = v("1.11")
    fix_safety = SAFE
    fix_safety_note = ("Only offered when the method never reads its first parameter: torch then gets the same "
                       "answer from the classmethod on every release.")
    torch_message = ("Defining your `__torch_function__` as a plain method is deprecated and will be an error in "
                     "future, please define it as a classmethod.")
    references = ("https://docs.pytorch.org/docs/stable/notes/extending.html#extending-torch-python-api",
                  "https://github.com/pytorch/pytorch/issues/63767")
    methods_defined = frozenset({_PROTOCOL})

    VALID = [
        Valid("import torch\nclass W:\n    def __init__(self, v):\n        self.v = v\n    @classmethod\n"
              "    def __torch_function__(cls, func, types, args=(), kwargs=None):\n"
              "        return func(*[a.v if isinstance(a, W) else a for a in args], **(kwargs or {}))\n"
              "r = torch.add(W(torch.ones(2)), 1)\n", torch_runs_clean=True),
        "import torch\nclass T(torch.Tensor):\n    __torch_function__ = torch._C._disabled_torch_function_impl\n",
        "import torch\nclass T(torch.Tensor):\n    @staticmethod\n    def __torch_function__(func, types, args=(), kwargs=None):\n"
        "        return func(*args, **(kwargs or {}))\n",
    ]
    INVALID = [
        Invalid("import torch\nclass W:\n    def __init__(self, v):\n        self.v = v\n"
                "    def __torch_function__(self, func, types, args=(), kwargs=None):\n"
                "        return func(*[a.v if isinstance(a, W) else a for a in args], **(kwargs or {}))\n"
                "r = torch.add(W(torch.ones(2)), 1)\n",
                fixed="import torch\nclass W:\n    def __init__(self, v):\n        self.v = v\n    @classmethod\n"
                      "    def __torch_function__(cls, func, types, args=(), kwargs=None):\n"
                      "        return func(*[a.v if isinstance(a, W) else a for a in args], **(kwargs or {}))\n"
                      "r = torch.add(W(torch.ones(2)), 1)\n",
                torch_warns="__torch_function__.? as a plain method is deprecated"),
        Invalid("import torch\nclass MyTensor(torch.Tensor):\n"
                "    def __torch_function__(self, func, types, args=(), kwargs=None):\n"
                "        return super().__torch_function__(func, types, args, kwargs or {})\n"
                "t = torch.ones(2).as_subclass(MyTensor)\nu = t + 1\n",
                fixed="import torch\nclass MyTensor(torch.Tensor):\n    @classmethod\n"
                      "    def __torch_function__(cls, func, types, args=(), kwargs=None):\n"
                      "        return super().__torch_function__(func, types, args, kwargs or {})\n"
                      "t = torch.ones(2).as_subclass(MyTensor)\nu = t + 1\n",
                torch_warns="__torch_function__.? as a plain method is deprecated"),
        # The method reads `self`: reported, no fix.
        Invalid("import torch\nclass W:\n    def __torch_function__(self, func, types, args=(), kwargs=None):\n"
                "        return self.handle(func, args)\n"),
    ]

    def check_method_definition(self, ctx, owner, function):
        if any(isinstance(d, ast.Name) and d.id in ("classmethod", "staticmethod") for d in function.decorator_list):
            return
        if not isinstance(function, ast.FunctionDef):
            return
        positional = [*function.args.posonlyargs, *function.args.args]
        if not positional:
            return
        first = positional[0].arg
        message = (f"`{owner.name}.__torch_function__` is a plain method: torch warns each time it calls it "
                   f"(DeprecationWarning, PyTorch 2.4 through 2.15, 'will be an error in future'); make it a "
                   f"`@classmethod`")
        fix = None
        if not _reads(function, first):
            fix = Fix("Make `__torch_function__` a classmethod", self._edits(ctx, function, positional[0]), SAFE)
        yield ctx.diagnostic(_name_span(ctx, function), message, fix)
        yield from self._uses(ctx, owner, function)

    @staticmethod
    def _edits(ctx, function: ast.FunctionDef, first: ast.arg) -> list[Edit]:
        top = function.decorator_list[0] if function.decorator_list else function
        start = ctx.start(top) - (1 if function.decorator_list else 0)  # a decorator's offset is after its `@`
        line_start = ctx.text.rfind("\n", 0, start) + 1
        indent = ctx.text[line_start:start]
        edits = [Edit(start, start, f"@classmethod\n{indent}")]
        if first.arg != "cls" and not _reads(function, "cls"):
            begin = ctx.start(first)
            edits.append(Edit(begin, begin + len(first.arg), "cls"))
        return edits

    def _uses(self, ctx, owner: ast.ClassDef, function: ast.FunctionDef):
        """The calls that hand torch an instance of the class: where torch's warning is raised."""
        tensor = any(ctx.scopes.qualname(base, ctx.scopes.module_scope) in _TENSOR_BASES
                     for base in owner.bases if isinstance(base, (ast.Name, ast.Attribute)))
        for scope_node in receivers.scopes_of(ctx.tree):
            names = _instances(scope_node, owner.name)
            if not names:
                continue
            for node in receivers._walk_scope(scope_node):
                if node is function or not isinstance(node, (ast.Call, ast.BinOp)):
                    continue
                if isinstance(node, ast.BinOp):
                    if tensor and any(isinstance(side, ast.Name) and side.id in names for side in (node.left, node.right)):
                        yield ctx.diagnostic(node, self._use_message(owner, function))
                    continue
                func = node.func
                if tensor and isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) \
                        and func.value.id in names:
                    yield ctx.diagnostic(node, self._use_message(owner, function))
                    continue
                qualname = ctx.scopes.qualname(func, ctx.scopes.module_scope) if isinstance(
                    func, (ast.Name, ast.Attribute)) else None
                if not qualname or not qualname.startswith("torch."):
                    continue
                values = [*node.args, *(k.value for k in node.keywords)]
                values += [e for value in values if isinstance(value, (ast.List, ast.Tuple)) for e in value.elts]
                if any(isinstance(value, ast.Name) and value.id in names for value in values):
                    yield ctx.diagnostic(node, self._use_message(owner, function))

    @staticmethod
    def _use_message(owner: ast.ClassDef, function: ast.FunctionDef) -> str:
        return (f"torch calls `{owner.name}.__torch_function__` here, a plain method (line {function.lineno}): "
                f"DeprecationWarning in PyTorch 2.4 through 2.15; make it a `@classmethod`")


def _reads(function: ast.FunctionDef, name: str) -> bool:
    return any(isinstance(node, ast.Name) and node.id == name for statement in function.body
               for node in ast.walk(statement))


def _name_span(ctx, function: ast.FunctionDef) -> tuple[int, int]:
    start = ctx.text.find(function.name, ctx.start(function))
    return (start, start + len(function.name)) if start >= 0 else (ctx.start(function), ctx.start(function))


def _instances(scope_node: ast.AST, class_name: str) -> set[str]:
    """Names bound in the scope only to ``Cls(...)`` or ``x.as_subclass(Cls)``."""
    good: set[str] = set()
    bad: set[str] = set()
    for node in receivers._walk_scope(scope_node):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name):
                        (good if target is name and len(node.targets) == 1 and _builds(node.value, class_name)
                         else bad).add(name.id)
        else:
            for target in receivers._targets(node):
                bad.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
    if isinstance(scope_node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        bad.update(a.arg for a in ast.walk(scope_node.args) if isinstance(a, ast.arg))
    return good - bad


def _builds(value: ast.expr, class_name: str) -> bool:
    if not isinstance(value, ast.Call):
        return False
    if isinstance(value.func, ast.Name) and value.func.id == class_name:
        return True
    return isinstance(value.func, ast.Attribute) and value.func.attr == "as_subclass" and len(value.args) == 1 \
        and isinstance(value.args[0], ast.Name) and value.args[0].id == class_name
