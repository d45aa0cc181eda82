"""What `torch.onnx.export` calls share: which exporter a call takes on a release."""

from __future__ import annotations

import ast

from torchpatch.rules._helpers import keyword
from torchpatch.versions import Version, v

EXPORT = frozenset({"torch.onnx.export"})

#: `dynamo=True` became the default in 2.9 (torch/onnx/__init__.py of the 2.9.1 wheel; False in 2.4.1 … 2.8.0).
DYNAMO_DEFAULT_SINCE = v("2.9")

#: Calls that return an ``ExportedProgram``. ``torch.onnx.export`` sends one to the torch.export-based
#: exporter whatever ``dynamo`` says (``if dynamo is True or isinstance(model, ExportedProgram)`` in the
#: 2.5.1 … 2.15.0 wheels), so the 2.9 default flip does not change what such a call does.
EXPORTED_PROGRAM_MAKERS = frozenset({
    "torch.export.export", "torch.export.load", "torch.export.export_for_training", "torch.export.draft_export",
})


def takes_new_exporter(ctx, call: ast.Call, release: Version) -> bool | None:
    """Whether the call runs the torch.export-based exporter on ``release``; None when it cannot be told."""
    if call.args and is_exported_program(ctx, call.args[0], call):
        return True
    dynamo = keyword(call, "dynamo")
    if dynamo is None:
        if any(item.arg is None for item in call.keywords):
            return None
        return release >= DYNAMO_DEFAULT_SINCE
    if isinstance(dynamo.value, ast.Constant) and isinstance(dynamo.value.value, bool):
        return dynamo.value.value
    return None


def is_exported_program(ctx, model: ast.expr, call: ast.Call) -> bool:
    """``torch.export.export(...)`` itself, or a name whose every assignment in the enclosing function (or
    module) is one: the same object whichever release runs it."""
    if isinstance(model, ast.Call):
        return ctx.resolves_to(model.func) in EXPORTED_PROGRAM_MAKERS
    if not isinstance(model, ast.Name):
        return False
    scope = ctx.parent_of(call)
    while scope is not None and not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)):
        scope = ctx.parent_of(scope)
    values = [node.value for node in ast.walk(scope or ctx.tree)
              if isinstance(node, (ast.Assign, ast.AnnAssign))
              and any(isinstance(target, ast.Name) and target.id == model.id
                      for target in (node.targets if isinstance(node, ast.Assign) else [node.target]))]
    return bool(values) and all(isinstance(value, ast.Call) and ctx.resolves_to(value.func) in EXPORTED_PROGRAM_MAKERS
                                for value in values)
