"""TP214: torch.distributed._symmetric_memory.enable_symm_mem_for_group, deprecated in 2.11."""

from __future__ import annotations

import ast

from torchpatch.rules._statements import delete_statement, standalone_call_statement
from torchpatch.rules.base import UNSAFE, Fix, Invalid, Rule, Valid
from torchpatch.versions import v


class EnableSymmMemForGroup(Rule):
    """
    ## What it does
    Flags calls to `torch.distributed._symmetric_memory.enable_symm_mem_for_group(group_name)`.

    ## Why is this bad?
    Before PyTorch 2.11, symmetric memory had to be enabled for a process group by hand before
    `symm_mem.empty(...)`/`rendezvous(...)`. Since 2.11 the function is marked
    `@deprecated` (`FutureWarning`: "`enable_symm_mem_for_group` is deprecated. There is no need to
    call this function anymore."); it still exists in 2.15. Note that the module is the private
    `torch.distributed._symmetric_memory`: there is no `torch.distributed.symmetric_memory` in any
    release.

    The fix deletes the call (or replaces it with `pass` when it is the only statement of its
    block). It is unsafe: on releases before 2.11 the call is still required, and even on 2.11+
    it registers the group's store eagerly, which later code may rely on. It is offered only when
    the call is a whole statement on its own lines.
    """

    code = "TP214"
    name = "enable-symm-mem-for-group"
    summary = "`enable_symm_mem_for_group(...)` is no longer needed (deprecated in 2.11)"
    deprecated_in = v("2.11")
    fix_safety = UNSAFE
    fix_safety_note = ("Deleting the call is right on 2.11+, where symmetric memory sets the group up itself; "
                       "releases before 2.11 still need it.")
    references = (
        "https://docs.pytorch.org/docs/stable/symmetric_memory.html",
    )
    catalog_ids = ("dist.symm-mem-enable",)
    calls = frozenset({"torch.distributed._symmetric_memory.enable_symm_mem_for_group"})

    VALID = [
        'import torch.distributed._symmetric_memory as symm_mem\nbuf = symm_mem.empty(1024, device="cuda")\n',
        'def enable_symm_mem_for_group(name):\n    return name\nenable_symm_mem_for_group("g")\n',
        'class Setup:\n    def run(self):\n        self.symm.enable_symm_mem_for_group(self.group_name)\n',
        Valid('import torch.distributed._symmetric_memory as symm_mem\nsymm_mem.enable_symm_mem_for_group(group.group_name)\n',
              target_torch="2.10"),
    ]
    INVALID = [
        Invalid('import torch.distributed._symmetric_memory as symm_mem\n\nsymm_mem.enable_symm_mem_for_group(group.group_name)\n'
                'buf = symm_mem.empty(1024, device="cuda")\n',
                fixed='import torch.distributed._symmetric_memory as symm_mem\n\nbuf = symm_mem.empty(1024, device="cuda")\n'),
        Invalid('import torch\nfrom torch.distributed._symmetric_memory import enable_symm_mem_for_group\n\n\n'
                'def setup(group):\n    enable_symm_mem_for_group(group.group_name)  # needed before rendezvous\n',
                fixed='import torch\n\n\ndef setup(group):\n    pass  # needed before rendezvous\n'),
        Invalid('import torch\nif use_symm_mem:\n    torch.distributed._symmetric_memory.enable_symm_mem_for_group(name)\n'
                '    torch.cuda.synchronize()\n',
                fixed='import torch\nif use_symm_mem:\n    torch.cuda.synchronize()\n'),
        Invalid('import torch.distributed._symmetric_memory as symm_mem\nok = symm_mem.enable_symm_mem_for_group(name)\n'),
    ]

    def check_call(self, ctx, call, qualname):
        message = (f"`enable_symm_mem_for_group` is {self.version_phrase(ctx.target)} (FutureWarning) and no longer "
                   "needed: symmetric memory sets up the group itself (the function is not removed as of 2.15)")
        yield ctx.diagnostic(call, message, self._fix(ctx, call))

    def _fix(self, ctx, call):
        statement = standalone_call_statement(ctx, call)
        if statement is None:
            return None
        edit = delete_statement(ctx, statement)
        if edit is None:
            return None
        root = call.func
        while isinstance(root, ast.Attribute):
            root = root.value
        obsolete = (root.id,) if isinstance(root, ast.Name) else ()
        return Fix(message=f"Delete the call{ctx.needs_note(self.deprecated_in)}", edits=[edit],
                   applicability=UNSAFE, obsolete_names=obsolete)
