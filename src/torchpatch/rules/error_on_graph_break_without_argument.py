"""TP420: torch._dynamo.error_on_graph_break() without its required bool."""

from __future__ import annotations

from torchpatch.rules._helpers import add_first_argument, has_star_args
from torchpatch.rules.base import SAFE, Edit, Fix, Invalid, Rule
from torchpatch.versions import v


class ErrorOnGraphBreakWithoutArgument(Rule):
    """
    ## What it does
    Flags `torch._dynamo.error_on_graph_break()` called without an argument, and fixes it to
    `torch._dynamo.error_on_graph_break(True)`.

    ## Why is this bad?
    `error_on_graph_break(error_on_graph_break: bool)` appeared in PyTorch 2.9 as a context manager
    and decorator that toggles, at compile time, whether a graph break inside the region raises
    (`True`) or is allowed (`False`); `fullgraph=True` takes precedence over it. Its bool is a required
    positional argument on every release that has it (2.9 through 2.15), so the bare form, which some
    guides show (`with torch._dynamo.error_on_graph_break():`), raises `TypeError: missing 1 required
    positional argument` as soon as it runs. The fix passes `True`, which is what the bare form means.

    ## Which working code changes behaviour
    None changes: the bare form never worked, it raises `TypeError` on every release that has the
    function (2.9–2.15). It is reported because it is broken everywhere, not because a default
    moved.
    """

    code = "TP420"
    name = "error-on-graph-break-without-argument"
    summary = "`torch._dynamo.error_on_graph_break()` needs its bool argument (TypeError without it)"
    changed_in = v("2.9")
    replacement_since = v("2.9")
    fix_safety = SAFE
    fix_safety_note = (
        "The bare call raises `TypeError` on every release that has the function, so passing `True` "
        "only turns a crash into the intended behaviour."
    )
    references = (
        "https://docs.pytorch.org/docs/stable/generated/torch._dynamo.error_on_graph_break.html",
    )
    catalog_ids = ("compile.error-on-graph-break",)
    calls = frozenset({"torch._dynamo.error_on_graph_break", "torch._dynamo.decorators.error_on_graph_break"})

    VALID = [
        "import torch\nwith torch._dynamo.error_on_graph_break(True):\n    y = f(x)\n",
        "import torch._dynamo\n@torch._dynamo.error_on_graph_break(False)\ndef f(x):\n    return x\n",
        "import torch\nwith torch._dynamo.error_on_graph_break(error_on_graph_break=True):\n    y = f(x)\n",
        "import torch\nflags = [True]\nwith torch._dynamo.error_on_graph_break(*flags):\n    y = f(x)\n",
        # Look-alikes: a local function and an unrelated object's method.
        "import torch\ndef error_on_graph_break():\n    return None\nwith error_on_graph_break():\n    pass\n",
        "import torch\nwith self.error_on_graph_break():\n    pass\n",
    ]
    INVALID = [
        Invalid("import torch\nwith torch._dynamo.error_on_graph_break():\n    y = f(x)\n",
                fixed="import torch\nwith torch._dynamo.error_on_graph_break(True):\n    y = f(x)\n"),
        Invalid("import torch._dynamo as dynamo\n@dynamo.error_on_graph_break()\ndef f(x):\n    return x\n",
                fixed="import torch._dynamo as dynamo\n@dynamo.error_on_graph_break(True)\ndef f(x):\n    return x\n"),
        Invalid("from torch._dynamo import error_on_graph_break as strict\nwith strict(  ):\n    pass\n",
                fixed="from torch._dynamo import error_on_graph_break as strict\nwith strict(True):\n    pass\n"),
    ]

    def check_call(self, ctx, call, qualname):
        if call.args or call.keywords or has_star_args(call):
            return
        message = (
            f"`error_on_graph_break()` without its required bool raises TypeError (the argument is "
            f"required since the function appeared in PyTorch {self.changed_in}); pass `True`"
        )
        inside_start, inside_end = ctx.end(call.func), ctx.end(call) - 1
        inside = ctx.text[inside_start:inside_end]
        if inside.lstrip().startswith("(") and not inside.lstrip()[1:].strip():
            edit = Edit(inside_start + inside.index("(") + 1, inside_end, "True")
        else:  # a comment between the parentheses: keep it
            edit = add_first_argument(ctx, call, "True")
        fix = Fix(
            message="Pass `True` (raise on graph breaks in this region)",
            edits=[edit],
            applicability=SAFE,
        )
        yield ctx.diagnostic(call, message, fix)
