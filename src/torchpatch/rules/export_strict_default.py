"""TP430: torch.export.export without strict= (the default became non-strict tracing in 2.8)."""

from __future__ import annotations

from torchpatch.rules._helpers import add_keyword, has_double_star, keyword
from torchpatch.rules.base import UNSAFE, Fix, Invalid, Rule, Valid
from torchpatch.versions import v


#: ``export``/``export_for_training`` keywords that 2.8.0 does not have and 2.9.1 has (the wheels'
#: torch/export/__init__.py): a call passing one only runs where ``strict=False`` is the default.
_KEYWORDS_SINCE_2_9 = ("prefer_deferred_runtime_asserts_over_guards",)

#: The first release of each function, from the wheels' torch/export/__init__.py: 2.4.1 has no
#: ``export_for_training`` (2.5.1 adds it with ``strict: bool = True``); ``export`` predates the floor.
_FIRST_RELEASE = {"export": v("2.4"), "export_for_training": v("2.5")}


class ExportStrictDefault(Rule):
    """
    ## What it does
    Flags `torch.export.export(...)` calls that do not pass `strict=`, when the code must also run
    on releases before 2.8 (your minimum torch is below 2.8).

    ## Why is this bad?
    PyTorch 2.8 changed the default of `torch.export.export` from `strict=True` to `strict=False`
    (2.4–2.7 declare `strict: bool = True`, 2.8–2.15 `strict: bool = False`). Strict mode traces
    the program with TorchDynamo, which analyses the Python bytecode and reports what it cannot
    capture; non-strict mode runs the Python code for real with fake tensors and records the
    tensor operations, so Python-level values (globals, attributes, non-tensor inputs) are burned
    into the graph as constants without an error. The same call can therefore export a
    different graph, or fail, depending on the installed release. `torch.export.export_for_training`
    (2.5–2.10) changed the same way: `strict: bool = True` in 2.5–2.7, `False` in 2.8–2.10.

    The fix adds `strict=True`, which keeps the tracing your code got on 2.4–2.7 on every
    release (the keyword exists since 2.4). It is unsafe: on 2.8+ it opts out of the new
    default, which PyTorch now recommends; pass `strict=False` instead if you want the new
    behaviour everywhere.

    ## Which working code changes behaviour
    Every `torch.export.export(...)` call without `strict=` that ran on 2.4–2.7: on 2.8+ the same
    call traces non-strictly, burning Python values into the graph as constants and exporting a
    different graph, or failing. Reported when the code must run on both sides of 2.8.
    """

    code = "TP430"
    name = "export-strict-default"
    summary = "`torch.export.export` without `strict=` (default became non-strict in 2.8)"
    changed_in = v("2.8")
    replacement_since = v("2.4")
    fix_safety = UNSAFE
    fix_safety_note = (
        "`strict=True` keeps the TorchDynamo-based tracing of 2.4–2.7 everywhere, which on 2.8+ is no longer the "
        "default; `strict=False` would instead give the 2.8+ behaviour on every release. Pick the one your tests use."
    )
    references = (
        "https://docs.pytorch.org/docs/stable/export.html",
        "https://docs.pytorch.org/docs/stable/export/programming_model.html",
    )
    catalog_ids = ("export.strict-default",)
    calls = frozenset({"torch.export.export", "torch.export.export_for_training"})  # both: True in 2.5-2.7, False 2.8+

    VALID = [
        # transformers exporters/exporter_dynamo.py: a 2.9-only keyword, so no release it runs on is strict.
        "import torch\nep = torch.export.export(m, (), kwargs=kw, prefer_deferred_runtime_asserts_over_guards=True)\n",
        "import torch\nep = torch.export.export(model, (x,), strict=False)\n",
        "from torch.export import export\nep = export(model, (x,), strict=True)\n",
        "import torch\nep = torch.export.export(model, (x,), **export_options)\n",
        Valid("import torch\nep = torch.export.export(model, (x,))\n", min_torch="2.8"),
        # Look-alikes: another library's export, a method.
        "import torch\nfrom keras import export\nexport(model, 'saved')\n",
        "import torch\nclass Exporter:\n    def run(self):\n        return self.export.export(self.model, (1,))\n",
    ]
    INVALID = [
        Invalid("import torch\nep = torch.export.export(model, (x,))\n",
                fixed="import torch\nep = torch.export.export(model, (x,), strict=True)\n"),
        Invalid("from torch.export import export\n\nep = export(\n    model,\n    args,\n    dynamic_shapes=shapes,\n)\n",
                fixed="from torch.export import export\n\nep = export(\n    model,\n    args,\n    dynamic_shapes=shapes,\n    strict=True,\n)\n"),
    ]

    def check_call(self, ctx, call, qualname):
        if ctx.min_torch >= self.changed_in:
            return  # the code only runs where non-strict is the default
        if keyword(call, "strict") is not None or has_double_star(call):
            return  # keyword-only in every release 2.4–2.15
        if any(keyword(call, name) is not None for name in _KEYWORDS_SINCE_2_9):
            return  # the call cannot run before 2.9, where non-strict is already the default
        function = qualname.rpartition(".")[2]
        first = _FIRST_RELEASE[function]
        message = (f"`torch.export.{function}` without `strict=`: the default became `strict=False` (non-strict tracing) "
                   f"in PyTorch {self.changed_in}; ")
        if ctx.min_torch < first:
            message += f"it is strict from its first release, {first}, to 2.7 (your minimum is {ctx.min_torch})"
        else:
            message += f"your minimum is {ctx.min_torch}, where it is strict"
        strict_from = max(first, ctx.min_torch)
        fix = Fix(message=f"Pass `strict=True` to keep the {strict_from}–2.7 tracing (or `strict=False` for the 2.8+ one)",
                  edits=[add_keyword(ctx, call, "strict=True")], applicability=UNSAFE)
        yield ctx.diagnostic(call.func, message, fix)
