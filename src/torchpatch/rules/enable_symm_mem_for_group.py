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

    The warning overstates it before 2.15: in 2.11 through 2.14, `is_symm_mem_enabled_for_group`
    still returns True only for groups registered by this call, and Inductor's async tensor
    parallelism (`_inductor/fx_passes/micro_pipeline_tp.py`) and `comm_lowering.py` check it, so
    deleting the call silently turns those optimisations off. Only 2.15 answers from the allocator
    instead (checked in the 2.13, 2.14.1 and 2.15.0 wheels).

    The fix deletes the call (or replaces it with `pass` when it is the only statement of its
    block), and is offered only when the minimum torch is 2.15 or newer. It stays unsafe: the call
    also registers the group's store eagerly, which later code may rely on. It is offered only when
    the call is a whole statement on its own lines.
    """

    code = "TP214"
    name = "enable-symm-mem-for-group"
    summary = "`enable_symm_mem_for_group(...)` is deprecated in 2.11 (still needed for async TP through 2.14)"
    deprecated_in = v("2.11")
    fix_safety = UNSAFE
    fix_safety_note = ("Deleting the call is right only on 2.15+, where symmetric memory sets the group up itself; "
                       "through 2.14 Inductor's async TP still checks the registration, so no fix is offered "
                       "unless the minimum torch is 2.15.")
    #: The first release whose ``is_symm_mem_enabled_for_group`` no longer needs the registration.
    not_needed_since = v("2.15")
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
                fixed='import torch.distributed._symmetric_memory as symm_mem\n\nbuf = symm_mem.empty(1024, device="cuda")\n',
                min_torch="2.15"),
        # Through 2.14 Inductor's async TP checks the registration: reported, never deleted.
        Invalid('import torch.distributed._symmetric_memory as symm_mem\n\nsymm_mem.enable_symm_mem_for_group(group.group_name)\n',
                min_torch="2.11"),
        Invalid('import torch\nfrom torch.distributed._symmetric_memory import enable_symm_mem_for_group\n\n\n'
                'def setup(group):\n    enable_symm_mem_for_group(group.group_name)  # needed before rendezvous\n',
                fixed='import torch\n\n\ndef setup(group):\n    pass  # needed before rendezvous\n', min_torch="2.15"),
        Invalid('import torch\nif use_symm_mem:\n    torch.distributed._symmetric_memory.enable_symm_mem_for_group(name)\n'
                '    torch.cuda.synchronize()\n',
                fixed='import torch\nif use_symm_mem:\n    torch.cuda.synchronize()\n', min_torch="2.15"),
        Invalid('import torch.distributed._symmetric_memory as symm_mem\nok = symm_mem.enable_symm_mem_for_group(name)\n'),
    ]

    def check_call(self, ctx, call, qualname):
        if ctx.min_torch >= self.not_needed_since:
            tail = "and no longer needed on 2.15+, where symmetric memory sets up the group itself"
        else:
            tail = ("but still needed through PyTorch 2.14: Inductor's async TP only uses symmetric memory for "
                    "groups registered by it; drop it once your minimum torch is 2.15")
        message = f"`enable_symm_mem_for_group` is {self.version_phrase(ctx.target)} (FutureWarning), {tail}"
        yield ctx.diagnostic(call, message, self._fix(ctx, call))

    def _fix(self, ctx, call):
        if ctx.min_torch < self.not_needed_since:
            return None
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
        return Fix(message="Delete the call", edits=[edit],
                   applicability=UNSAFE, obsolete_names=obsolete)
