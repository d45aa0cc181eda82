"""TP206: a PyTorch name that warns as deprecated in the target release's wheel."""

from __future__ import annotations

import ast

from torchpatch.rules import _api_db
from torchpatch.rules._call_sites import is_assignment_target
from torchpatch.rules._wheel_rules import LazyNames, covered, shorten
from torchpatch.rules.base import Invalid, Rule, Valid
from torchpatch.versions import v


def _watched() -> set[str]:
    return {name for name in _api_db.deprecations() if not covered(name)}


class WheelDeprecatedApi(Rule):
    """
    ## What it does
    Flags uses of PyTorch functions, classes, modules, methods and properties that warn as deprecated
    in the target release, with torch's own message (shortened). The sites are read from the real
    wheels' sources by `scripts/build_api_db.py`: `warnings.warn(...)` with `DeprecationWarning` or
    `FutureWarning` (or a `UserWarning` whose text says deprecated) on every call, `@deprecated(...)`
    (`typing_extensions` and `warnings`), a module `__getattr__` that warns for the name, and modules
    that warn when imported. A name that stopped warning in the newest release is not reported.

    Methods and properties are reported where the receiver's type is known: a class attribute spelled
    out (`torch.autograd.profiler_util.FunctionEvent.cuda_time_total`), or an object built by a torch
    call in the same function (see `rules/_receivers.py`). Names that hand-written rules or API table
    rows (TP201) watch are left to them.

    ## Why is this bad?
    The call warns at run time and the name goes away in a later release; torch's message says what
    replaces it.
    """

    code = "TP206"
    name = "wheel-deprecated-api"
    summary = "A PyTorch name that warns as deprecated in the target release (read from the real wheels)"
    deprecated_in = v("2.4")
    references = ("https://github.com/pytorch/pytorch/releases",)
    references_to = LazyNames(_watched)
    catalog_ids = ("dist.nn-functional", "misc.model-dump", "plat.green-contexts")

    VALID = [
        "import torch\ntorch.cuda.memory_reserved()\n",
        # Warns from 2.15 only.
        Valid("from torch.cuda import graph_annotations\ngraph_annotations.clear_kernel_annotations()\n",
              target_torch="2.14"),
        # A class warns when instantiated, not when checked against or imported.
        "import torch\nok = isinstance(m, torch.nn.Container)\n",
        # Assigning to the name replaces torch's function (a monkeypatch for other callers): not a use.
        "import torch\ntorch.cuda.memory_cached = torch.cuda.memory_reserved\n",
    ]
    INVALID = [
        Invalid("import torch\nj = torch.autograd.gradcheck.get_numerical_jacobian(fn, inputs)\n", target_torch="2.15"),
        Invalid("from torch.cuda import graph_annotations\ngraph_annotations.clear_kernel_annotations()\n",
                target_torch="2.15"),
        Invalid("import torch\nloss = torch.nn.NLLLoss2d()\n"),
    ]

    def check_reference(self, ctx, reference):
        deprecation = _api_db.deprecations().get(reference.qualname)
        if deprecation is None or deprecation.deprecated_in > ctx.target:
            return
        if (deprecation.kind == "module") != reference.in_import:
            return  # a module warns when imported; a function or class when it is used, not imported
        if is_assignment_target(reference):
            return  # ``torch.x = f`` replaces torch's function (a monkeypatch): nothing deprecated runs there
        if deprecation.kind == "class" and not _is_called(ctx, reference.node):
            return  # a class warns when instantiated: isinstance checks, subclasses and imports do not
        message = (f"`{deprecation.qualname}` is deprecated since PyTorch {deprecation.deprecated_in} (or earlier): "
                   f"{shorten(deprecation.message)}")
        yield ctx.diagnostic(reference.node if reference.module_node is None else reference.module_node, message)


def _is_called(ctx, node) -> bool:
    statement = ctx.statement
    if statement is None or isinstance(node, ast.alias):
        return False
    parent = ctx.parent_of(node)
    return isinstance(parent, ast.Call) and parent.func is node
