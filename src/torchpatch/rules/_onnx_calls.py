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


#: ExportedProgram methods that return an ExportedProgram (torch/export/exported_program.py, 2.5 … 2.15).
_PROGRAM_METHODS = frozenset({"run_decompositions"})
_PROGRAM_CLASSES = frozenset({"torch.export.ExportedProgram", "torch.export.exported_program.ExportedProgram"})


def model_argument(call: ast.Call) -> ast.expr | None:
    """The ``model`` of a ``torch.onnx.export`` call, by position or keyword."""
    if call.args and not isinstance(call.args[0], ast.Starred):
        return call.args[0]
    found = keyword(call, "model")
    return found.value if found is not None else None


def takes_new_exporter(ctx, call: ast.Call, release: Version) -> bool | None:
    """Whether the call runs the torch.export-based exporter on ``release``; None when it cannot be told."""
    model = model_argument(call)
    if model is not None and is_exported_program(ctx, model, call):
        return True
    dynamo = keyword(call, "dynamo")
    if dynamo is None:
        if any(item.arg is None for item in call.keywords):
            return None
        return release >= DYNAMO_DEFAULT_SINCE
    if isinstance(dynamo.value, ast.Constant) and isinstance(dynamo.value.value, bool):
        return dynamo.value.value
    return None


def is_exported_program(ctx, model: ast.expr, call: ast.Call, _seen: frozenset[str] = frozenset()) -> bool:
    """``torch.export.export(...)`` itself (or its ``.run_decompositions()``), a parameter or variable
    annotated ``ExportedProgram``, or a name whose every assignment in the enclosing function (or module)
    is one of these: the same object whichever release runs it."""
    if isinstance(model, ast.Call):
        if isinstance(model.func, ast.Attribute) and model.func.attr in _PROGRAM_METHODS:
            return is_exported_program(ctx, model.func.value, call, _seen)
        return ctx.resolves_to(model.func) in EXPORTED_PROGRAM_MAKERS
    if not isinstance(model, ast.Name) or model.id in _seen:
        return False
    seen = _seen | {model.id}
    scope = ctx.parent_of(call)
    while scope is not None and not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)):
        scope = ctx.parent_of(scope)
    scope = scope or ctx.tree
    if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
        arguments = scope.args
        for argument in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]:
            if argument.arg == model.id:
                return argument.annotation is not None and _is_program_annotation(ctx, argument.annotation)
    values = []
    for node in ast.walk(scope):
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == model.id \
                and _is_program_annotation(ctx, node.annotation):
            return True
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and any(
                isinstance(target, ast.Name) and target.id == model.id
                for target in (node.targets if isinstance(node, ast.Assign) else [node.target])):
            values.append(node.value)
    # ``ep = ep.run_decompositions()`` refers back to the name: the other assignments decide.
    own = [value for value in values if _refers_to(value, model.id)]
    others = [value for value in values if value not in own]
    return bool(others) and all(isinstance(value, ast.Call) and is_exported_program(ctx, value, call, seen)
                                for value in others) and all(
        isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in _PROGRAM_METHODS
        and isinstance(value.func.value, ast.Name) and value.func.value.id == model.id for value in own)


def _refers_to(value: ast.expr | None, name: str) -> bool:
    return value is not None and any(isinstance(node, ast.Name) and node.id == name for node in ast.walk(value))


def _is_program_annotation(ctx, annotation: ast.expr) -> bool:
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        return annotation.value.rsplit(".", 1)[-1] == "ExportedProgram"
    return ctx.resolves_to(annotation) in _PROGRAM_CLASSES
