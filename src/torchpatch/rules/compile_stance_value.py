"""TP434: `torch.compiler.set_stance(...)` with a stance that a supported release does not know."""

from __future__ import annotations

from torchpatch.rules._helpers import argument, literal
from torchpatch.rules.base import Invalid, Rule, Valid
from torchpatch.versions import Version, v

#: Stance -> the first release that accepts it: `_callback_from_stance` in torch/_dynamo/eval_frame.py of the
#: 2.6.0 … 2.15.0 wheels (2.15 spells the same six as the `StanceStr` Literal); any other string raises
#: `RuntimeError: invalid torch.compile stance` when a compiled function next runs.
STANCES: dict[str, Version] = {
    "default": v("2.6"), "force_eager": v("2.6"), "eager_on_recompile": v("2.6"), "fail_on_recompile": v("2.6"),
    "eager_then_compile": v("2.7"), "aot_eager_then_compile": v("2.7"),
}


class CompileStanceValue(Rule):
    """
    ## What it does
    Flags `torch.compiler.set_stance("...")` (as a call, context manager or decorator) whose literal
    stance is not one PyTorch accepts, or is newer than the oldest release you support.

    ## Why is this bad?
    `set_stance` (new in 2.6) stores the string without checking it; the compiled function's next
    call raises `RuntimeError: invalid torch.compile stance '...'`. PyTorch 2.6 knows `default`,
    `force_eager`, `eager_on_recompile` and `fail_on_recompile`; 2.7 added `eager_then_compile`
    and `aot_eager_then_compile` (the 2.6.0 … 2.15.0 wheels' `_callback_from_stance`). A typo, or
    `eager_then_compile` on 2.6, fails only at run time, after the first compiled call.
    """

    code = "TP434"
    name = "compile-stance-value"
    summary = "`torch.compiler.set_stance(\"...\")` with a stance the release does not know (RuntimeError)"
    changed_in = v("2.6")
    fix_safety_note = "No fix: which stance was meant is yours to say."
    references = ("https://docs.pytorch.org/docs/stable/generated/torch.compiler.set_stance.html",)
    catalog_ids = ("compile.set-stance",)
    calls = frozenset({"torch.compiler.set_stance", "torch._dynamo.set_stance"})

    VALID = [
        "import torch\ntorch.compiler.set_stance(\"eager_on_recompile\")\n",
        "import torch\n@torch.compiler.set_stance(\"force_eager\")\ndef f(x):\n    return x\n",
        Valid("import torch\nwith torch.compiler.set_stance(\"eager_then_compile\"):\n    out = fn(x)\n", min_torch="2.7"),
        "import torch\ntorch.compiler.set_stance(stance)\n",
    ]
    INVALID = [
        Invalid("import torch\ntorch.compiler.set_stance(\"eager_on_recompiles\")\n"),
        Invalid("import torch\nwith torch.compiler.set_stance(stance=\"eager_then_compile\"):\n    out = fn(x)\n",
                min_torch="2.6"),
    ]

    def check_call(self, ctx, call, qualname):
        found = argument(call, "stance", 0)
        if found is None:
            return
        node, value = found
        try:
            stance = literal(value)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return
        if not isinstance(stance, str):
            return
        since = STANCES.get(stance)
        if since is None:
            known = ", ".join(f'"{name}"' for name, first in STANCES.items() if first <= ctx.target)
            yield ctx.diagnostic(node, (
                f"`set_stance({stance!r})`: no PyTorch release 2.6 through {ctx.target} knows this stance "
                f"(RuntimeError when a compiled function runs); use one of {known}"))
        elif since > ctx.min_torch and since > v("2.6"):
            yield ctx.diagnostic(node, (
                f"`set_stance({stance!r})` needs PyTorch >= {since}; your minimum is {ctx.min_torch} "
                "(RuntimeError there when a compiled function runs)"))
