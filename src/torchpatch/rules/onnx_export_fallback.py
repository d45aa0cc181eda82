"""TP102: torch.onnx.export(..., fallback=...), removed in 2.11."""

from __future__ import annotations

from torchpatch.rules._helpers import is_literal, keyword, remove_argument, replace_node
from torchpatch.rules._statements import (apply_local, has_multiline_string, indentation, newline,
                                          standalone_call_statement)
from torchpatch.rules.base import SAFE, UNSAFE, Fix, Invalid, Rule
from torchpatch.versions import v


class OnnxExportFallback(Rule):
    """
    ## What it does
    Flags `torch.onnx.export(...)` calls that pass `fallback=`.

    ## Why is this bad?
    From PyTorch 2.5 to 2.10, `torch.onnx.export(..., dynamo=True, fallback=True)` retried with the
    TorchScript-based exporter when the `torch.export`-based one failed. PyTorch 2.11 removed the
    argument, so the call raises `TypeError: export() got an unexpected keyword argument
    'fallback'`. Write the fallback out: try `dynamo=True`, and on failure call the legacy exporter
    with `dynamo=False`, which 2.15 still ships.

    With `fallback=False`, or with `dynamo=False` (where `fallback` never had an effect), the fix
    just drops the argument. With `fallback=True` it rewrites the statement into an explicit
    `try`/`except Exception` around the two exporters; this is done only when the call is a whole
    statement on its own lines, and is unsafe because the `except` also catches errors that the
    built-in fallback let through (for example, failures while writing the file).
    """

    code = "TP102"
    name = "onnx-export-fallback"
    summary = "`torch.onnx.export(..., fallback=...)` (removed in 2.11)"
    removed_in = v("2.11")
    fix_safety = UNSAFE
    fix_safety_note = (
        "Dropping `fallback=False` (or `fallback` next to `dynamo=False`) is safe. Rewriting `fallback=True` "
        "into `try: export(..., dynamo=True) except Exception: export(..., dynamo=False)` is unsafe: "
        "the `except` is broader than the old fallback, so review what it should catch."
    )
    references = (
        "https://docs.pytorch.org/docs/stable/onnx_export.html",
    )
    catalog_ids = ("onnx.fallback-removed",)
    calls = frozenset({"torch.onnx.export"})

    VALID = [
        'import torch\ntorch.onnx.export(model, (x,), "m.onnx", dynamo=True, opset_version=18)\n',
        'import torch\ntry:\n    torch.onnx.export(model, (x,), "m.onnx", dynamo=True, opset_version=18)\nexcept Exception:\n'
        '    torch.onnx.export(model, (x,), "m.onnx", dynamo=False, opset_version=18)\n',
        'import tf2onnx\ntf2onnx.convert.from_keras(model, fallback=True)\n',
        'import torch\ndef export(model, fallback=False):\n    return model\nexport(model, fallback=True)\n',
    ]
    INVALID = [
        Invalid('import torch\ntorch.onnx.export(model, (x,), "m.onnx", dynamo=True, fallback=True)\n',
                fixed='import torch\ntry:\n    torch.onnx.export(model, (x,), "m.onnx", dynamo=True)\nexcept Exception:\n'
                      '    torch.onnx.export(model, (x,), "m.onnx", dynamo=False)\n'),
        Invalid('import torch\n\n\ndef save(model, x):\n    torch.onnx.export(\n        model,\n        (x,),\n'
                '        "m.onnx",\n        fallback=True,\n    )\n',
                fixed='import torch\n\n\ndef save(model, x):\n    try:\n        torch.onnx.export(\n            model,\n'
                      '            (x,),\n            "m.onnx",\n            dynamo=True,\n        )\n'
                      '    except Exception:\n        torch.onnx.export(\n            model,\n            (x,),\n'
                      '            "m.onnx",\n            dynamo=False,\n        )\n'),
        Invalid('from torch.onnx import export\nexport(model, (x,), "m.onnx", dynamo=True, fallback=False)\n',
                fixed='from torch.onnx import export\nexport(model, (x,), "m.onnx", dynamo=True)\n'),
        Invalid('import torch\nprogram = torch.onnx.export(model, (x,), dynamo=True, fallback=True)\n'),
        Invalid('import torch\ntorch.onnx.export(model, (x,), "m.onnx", dynamo=True, fallback=use_fallback)\n'),
    ]

    def check_call(self, ctx, call, qualname):
        fallback = keyword(call, "fallback")
        if fallback is None:
            return
        message = (f"`torch.onnx.export(..., fallback=...)`: the argument was removed in PyTorch {self.removed_in} "
                   "(TypeError); call the legacy exporter yourself with `dynamo=False` when `dynamo=True` fails")
        yield ctx.diagnostic(fallback, message, self._fix(ctx, call, fallback))

    def _fix(self, ctx, call, fallback):
        dynamo = keyword(call, "dynamo")
        if is_literal(fallback.value, False) or (dynamo is not None and is_literal(dynamo.value, False)):
            return Fix(message="Remove `fallback=` (it had no effect here)",
                       edits=[remove_argument(ctx, call, fallback)], applicability=SAFE)
        if not is_literal(fallback.value, True):
            return None
        statement = standalone_call_statement(ctx, call)
        if statement is None or has_multiline_string(call):
            return None
        start = ctx.start(call)
        text = ctx.source(call)
        variants = []
        for value in ("True", "False"):
            if dynamo is None:
                edits = [replace_node(ctx, fallback, f"dynamo={value}")]
            else:
                edits = [replace_node(ctx, dynamo.value, value), remove_argument(ctx, call, fallback)]
            variants.append(apply_local(text, start, edits))
        indent = indentation(ctx, statement)
        nl = newline(ctx)
        inner = indent + "    "
        first, second = (variant.replace(nl, nl + "    ") for variant in variants)
        rewritten = f"try:{nl}{inner}{first}{nl}{indent}except Exception:{nl}{inner}{second}"
        return Fix(message="Write the fallback out: try `dynamo=True`, then the legacy exporter with `dynamo=False`",
                   edits=[replace_node(ctx, call, rewritten)], applicability=UNSAFE)
