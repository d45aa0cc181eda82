"""TP121: torch.compile(shapes_spec=...) existed only in PyTorch 2.13; 2.14 renamed it dynamic_shapes=."""

from __future__ import annotations

from torchpatch.rules._helpers import keyword
from torchpatch.rules.base import SAFE, CallNeed, Edit, Fix, Invalid, Rule, Valid
from torchpatch.versions import v


class CompileShapesSpec(Rule):
    """
    ## What it does
    Flags `shapes_spec=` in `torch.compile(...)` calls (and in `module.compile(...)`, which passes
    its arguments to `torch.compile`), and renames it to `dynamic_shapes=`.

    ## Why is this bad?
    PyTorch 2.13 added an experimental `shapes_spec=` argument to `torch.compile` (a `ShapesSpec`,
    a `ParamsSpec` or a dict, from `torch.fx.experimental.dynamic_spec`). PyTorch 2.14 renamed it
    `dynamic_shapes=`, with no alias, so code written for 2.13 raises `TypeError: compile() got an
    unexpected keyword argument 'shapes_spec'`. Both accept the same values: a `ParamsSpec` is
    wrapped into a `ShapesSpec` and handed to Dynamo.

    The rename is safe when your minimum is 2.14; with an older minimum it breaks 2.13, the only
    release that accepts `shapes_spec`, so the fix is unsafe there.
    """

    code = "TP121"
    name = "compile-shapes-spec"
    summary = "`torch.compile(shapes_spec=...)` (2.13 only; `dynamic_shapes=` since 2.14)"
    removed_in = v("2.14")
    replacement_since = v("2.14")
    fix_safety = SAFE
    fix_safety_note = "Safe when your minimum is 2.14; otherwise it breaks 2.13, where only `shapes_spec` exists."
    references = (
        "https://docs.pytorch.org/docs/stable/generated/torch.compile.html",
    )
    catalog_ids = ("compile.new-params",)
    calls = frozenset({"torch.compile"})
    methods = frozenset({"compile"})
    call_needs = {"torch.compile": CallNeed(passed=(("shapes_spec", None),))}  # _check reads the keyword only
    method_needs = {"compile": CallNeed(passed=(("shapes_spec", None),))}

    VALID = [
        Valid("import torch\nfn = torch.compile(model, dynamic_shapes=spec)\n", min_torch="2.14"),
        "import torch\nfn = torch.compile(model, dynamic=True)\n",
        # Look-alikes: Keras' compile, re.compile, a local compile.
        "import torch\nmodel.compile(optimizer='adam', loss='mse')\n",
        "import re\nimport torch\npattern = re.compile('x', shapes_spec=1)\n",
        "import torch\ndef compile(f, shapes_spec=None):\n    return f\ncompile(model, shapes_spec=spec)\n",
    ]
    INVALID = [
        Invalid("import torch\nfn = torch.compile(model, shapes_spec=spec)\n",
                fixed="import torch\nfn = torch.compile(model, dynamic_shapes=spec)\n"),
        Invalid("import torch\n\n@torch.compile(fullgraph=True, shapes_spec={\"x\": TensorSpec([batch, None])})\ndef f(x):\n"
                "    return x.sin()\n",
                fixed="import torch\n\n@torch.compile(fullgraph=True, dynamic_shapes={\"x\": TensorSpec([batch, None])})\n"
                      "def f(x):\n    return x.sin()\n",
                min_torch="2.14"),
        Invalid("import torch\nmodel.compile(shapes_spec=ParamsSpec(x=TensorSpec([b])))\n",
                fixed="import torch\nmodel.compile(dynamic_shapes=ParamsSpec(x=TensorSpec([b])))\n"),
    ]

    def check_call(self, ctx, call, qualname):
        yield from self._check(ctx, call, "torch.compile")

    def check_method_call(self, ctx, call):
        yield from self._check(ctx, call, f"{ctx.source(call.func.value)}.compile")

    def _check(self, ctx, call, function):
        argument = keyword(call, "shapes_spec")
        if argument is None:
            return
        message = (f"`{function}(shapes_spec=...)` existed only in PyTorch 2.13 and was renamed in {self.removed_in} "
                   f"(TypeError): use `dynamic_shapes=`")
        fix = None
        if keyword(call, "dynamic_shapes") is None:
            start = ctx.start(argument)
            fix = Fix(message=f"Rename to `dynamic_shapes`{ctx.needs_note(self.replacement_since)}",
                      edits=[Edit(start, start + len("shapes_spec"), "dynamic_shapes")],
                      applicability=ctx.applicability(needs=self.replacement_since))
        yield ctx.diagnostic(argument, message, fix)
