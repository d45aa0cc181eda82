"""TP254: torch.utils.data._utils.collate.default_collate/default_convert -> the public torch.utils.data names."""

from __future__ import annotations

import ast

from torchpatch.rules.base import SAFE, Edit, Fix, Invalid, Rule
from torchpatch.versions import v

_PRIVATE = "torch.utils.data._utils.collate"
PUBLIC = {
    f"{_PRIVATE}.default_collate": "torch.utils.data.default_collate",
    f"{_PRIVATE}.default_convert": "torch.utils.data.default_convert",
}


class PrivateCollateFunction(Rule):
    """
    ## What it does
    Flags uses and imports of `default_collate` and `default_convert` through the private module
    `torch.utils.data._utils.collate`, and switches them to the public `torch.utils.data` names.

    ## Why is this bad?
    PyTorch 1.11 made both functions public as `torch.utils.data.default_collate` and
    `torch.utils.data.default_convert` (pytorch#69862). The `_utils` path is an implementation
    detail that can move without notice. The public names are the very same function objects
    (checked in torch 2.13; in `torch.utils.data.__all__` of the 2.4.1 wheel), so the fix is safe.
    """

    code = "TP254"
    name = "private-collate-function"
    summary = "`torch.utils.data._utils.collate.default_collate`/`default_convert` -> the public names (since 1.11)"
    changed_in = v("1.11")
    fix_safety = SAFE
    fix_safety_note = "The public names are the same function objects as the private ones."
    references = ("https://github.com/pytorch/pytorch/pull/69862",
                  "https://docs.pytorch.org/docs/stable/data.html#torch.utils.data.default_collate")
    torchfix_codes = ("TOR104", "TOR105")
    references_to = frozenset(PUBLIC)

    VALID = [
        "from torch.utils.data import default_collate\nbatch = default_collate(samples)\n",
        "import torch\nbatch = torch.utils.data.default_collate(samples)\n",
        # Look-alike: another library's collate function.
        "import torch\nfrom mylib._utils.collate import default_collate\nbatch = default_collate(samples)\n",
        # A local holding the public function.
        "from torch.utils.data import default_collate\nfn = default_collate\nbatch = fn(samples)\n",
    ]
    INVALID = [
        Invalid("from torch.utils.data._utils.collate import default_collate\nbatch = default_collate(samples)\n",
                fixed="from torch.utils.data import default_collate\nbatch = default_collate(samples)\n"),
        Invalid("import torch\nbatch = torch.utils.data._utils.collate.default_convert(samples)\n",
                fixed="import torch\nbatch = torch.utils.data.default_convert(samples)\n"),
        Invalid("from torch.utils.data._utils.collate import default_collate as collate, default_convert\n"),
    ]

    def check_reference(self, ctx, reference):
        node = reference.node
        if not reference.in_import and isinstance(node, ast.Name):
            binding = ctx.scopes.binding_for(node.id, reference.scope, (node.lineno, node.col_offset))
            if binding is not None and binding.import_alias is not None:
                return  # reported (and fixed) at its import
            if binding is not None and binding.alias_of is not None:
                # ``fn = default_collate`` then ``fn(batch)`` (MONAI): the private path is written where the
                # value is (an import or an attribute chain), reported there; the local names no path.
                return
        public = PUBLIC[reference.qualname]
        message = (f"`{reference.qualname}` is a private path; use `{public}` "
                   f"(public since PyTorch 1.11, the same function)")
        yield ctx.diagnostic(node, message, self._fix(ctx, reference, public))

    def _fix(self, ctx, reference, public):
        node = reference.node
        statement = reference.statement
        if reference.in_import:
            if (isinstance(statement, ast.ImportFrom) and statement.module == _PRIVATE and statement.level == 0
                    and len(statement.names) == 1):
                alias = f" as {node.asname}" if node.asname else ""
                leaf = public.rpartition(".")[2]
                return Fix(message=f"Import `{leaf}` from `torch.utils.data`",
                           edits=[Edit(ctx.start(statement), ctx.end(statement),
                                       f"from torch.utils.data import {leaf}{alias}")],
                           applicability=SAFE)
            return None
        if not isinstance(node, ast.Attribute):
            return None
        text, import_edits = ctx.name_for(public, "torch.utils.data")
        root = node
        while isinstance(root, ast.Attribute):
            root = root.value
        return Fix(message=f"Replace with `{public}`", edits=[*import_edits, Edit(ctx.start(node), ctx.end(node), text)],
                   applicability=SAFE, obsolete_names=(root.id,))
