"""TP905 (opt-in): `import torchvision.models as models` -> `from torchvision import models`."""

from __future__ import annotations

import ast

from torchpatch.rules.base import SAFE, Edit, Fix, Invalid, Rule
from torchpatch.versions import v

_MODULES = ("datasets", "models", "transforms")


class TorchvisionSingletonImport(Rule):
    """
    ## What it does
    Flags `import torchvision.models as models` (and `datasets`, `transforms`) and rewrites it to
    `from torchvision import models`. Opt-in (style only, like TorchFix's TOR203): enable it with
    `--extend-select TP905` (or `--select TOR203`).

    ## Why is this bad?
    Both bind the same module object; the `from` form says so in fewer words. Nothing changes at
    run time, so the fix is safe.
    """

    code = "TP905"
    name = "torchvision-singleton-import"
    summary = "`import torchvision.models as models` -> `from torchvision import models` (style)"
    changed_in = v("2.4")  # not a release change: a style rule
    opt_in = True
    fix_safety = SAFE
    references = ("https://github.com/pytorch-labs/torchfix#tor203",)
    torchfix_codes = ("TOR203",)
    references_to = frozenset(f"torchvision.{name}" for name in _MODULES)

    VALID = [
        "from torchvision import models\n",
        "import torchvision.models as cnn\n",
        "import torchvision.models\n",
        "from torchvision.models import resnet50\n",
    ]
    INVALID = [
        Invalid("import torchvision.models as models\n", fixed="from torchvision import models\n"),
        Invalid("import torchvision.transforms as transforms, torch\n"),
    ]

    def check_reference(self, ctx, reference):
        statement = reference.statement
        alias = reference.node
        if not reference.in_import or not isinstance(statement, ast.Import) or not isinstance(alias, ast.alias):
            return
        leaf = alias.name.rpartition(".")[2]
        if alias.name != f"torchvision.{leaf}" or alias.asname != leaf:
            return
        fix = None
        if len(statement.names) == 1:
            fix = Fix(f"Replace with `from torchvision import {leaf}`",
                      [Edit(ctx.start(statement), ctx.end(statement), f"from torchvision import {leaf}")], SAFE)
        yield ctx.diagnostic(statement, f"`import torchvision.{leaf} as {leaf}` is `from torchvision import {leaf}` (the same "
                                        "module in every torchvision for PyTorch 2.4 through 2.15)",
                             fix)
