"""TP204: torch.backends.cuda.sdp_kernel(enable_*=...) → torch.nn.attention.sdpa_kernel([SDPBackend...])."""

from __future__ import annotations

from torchpatch.rules._call_sites import CALLEE, IMPORT, is_assignment_target, reference_role, root_name
from torchpatch.rules._helpers import has_star_args, literal
from torchpatch.rules.base import SAFE, Edit, Fix, Invalid, Rule
from torchpatch.versions import v

#: The old flags in positional order (torch 2.3-2.13 torch/backends/cuda/__init__.py), each with the
#: backend it enables, listed in the order the old function builds its list.
_FLAGS = ("enable_flash", "enable_math", "enable_mem_efficient", "enable_cudnn")
_BACKENDS = (
    ("enable_flash", "FLASH_ATTENTION"),
    ("enable_mem_efficient", "EFFICIENT_ATTENTION"),
    ("enable_math", "MATH"),
    ("enable_cudnn", "CUDNN_ATTENTION"),
)


class SdpKernel(Rule):
    """
    ## What it does
    Flags `torch.backends.cuda.sdp_kernel(...)` and rewrites it to
    `torch.nn.attention.sdpa_kernel([...])` with the list of backends its flags enabled.

    ## Why is this bad?
    `torch.backends.cuda.sdp_kernel` has been deprecated since PyTorch 2.3 (a `FutureWarning` on each
    use) and is to be removed. Its replacement takes the backends to allow instead of four on/off
    flags: every flag that is `True` — and every flag that is omitted, since they all default to
    `True` — becomes one entry: `enable_flash` → `SDPBackend.FLASH_ATTENTION`, `enable_mem_efficient`
    → `SDPBackend.EFFICIENT_ATTENTION`, `enable_math` → `SDPBackend.MATH`, `enable_cudnn` →
    `SDPBackend.CUDNN_ATTENTION`. The old function builds exactly this list and calls
    `sdpa_kernel` with it, so the rewrite keeps the behaviour.

    Flags that are not literal `True`/`False` (a variable, an expression) cannot be turned into a
    list without knowing their values: such calls are reported without a fix. Since 2.6,
    `sdpa_kernel(..., set_priority=True)` can also make the list order a priority order.
    """

    code = "TP204"
    name = "sdp-kernel"
    summary = "`torch.backends.cuda.sdp_kernel` is deprecated: use `torch.nn.attention.sdpa_kernel([...])`"
    deprecated_in = v("2.3")
    replacement_since = v("2.3")
    fix_safety = SAFE
    fix_safety_note = (
        "The old context manager builds the same backend list and enters `sdpa_kernel` with it (2.3 to 2.13), "
        "so the behaviour is unchanged."
    )
    references = (
        "https://pytorch.org/docs/stable/generated/torch.nn.attention.sdpa_kernel.html",
        "https://github.com/pytorch/pytorch/pull/114689",
    )
    torchfix_codes = ("TOR101",)
    catalog_ids = ("attn.sdp-kernel",)
    calls = frozenset({"torch.backends.cuda.sdp_kernel"})
    references_to = calls

    VALID = [
        'import torch\nfrom torch.nn.attention import SDPBackend, sdpa_kernel\nwith sdpa_kernel([SDPBackend.MATH]):\n    y = attn(q, k, v)\n',
        'import torch\nwith torch.nn.attention.sdpa_kernel(torch.nn.attention.SDPBackend.FLASH_ATTENTION):\n    pass\n',
        'import torch\ntorch.backends.cuda.enable_flash_sdp(False)\n',
        'import torch\nclass Backends:\n    def sdp_kernel(self, **flags):\n        return flags\nwith Backends().sdp_kernel(enable_math=False):\n    pass\n',
        # Replacing torch's context manager (a monkeypatch) does not use it.
        'import torch\nimport contextlib\ntorch.backends.cuda.sdp_kernel = contextlib.nullcontext\n',
    ]
    INVALID = [
        Invalid('import torch\nwith torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False, enable_mem_efficient=False):\n'
                '    y = attn(q, k, v)\n',
                fixed='import torch\nwith torch.nn.attention.sdpa_kernel([torch.nn.attention.SDPBackend.FLASH_ATTENTION, '
                'torch.nn.attention.SDPBackend.CUDNN_ATTENTION]):\n    y = attn(q, k, v)\n'),
        Invalid('from torch.backends.cuda import sdp_kernel\nfrom torch.nn.attention import SDPBackend\n\n'
                'with sdp_kernel(enable_flash=False, enable_mem_efficient=False, enable_cudnn=False):\n    pass\n',
                fixed='from torch.nn.attention import SDPBackend\nimport torch\n\n'
                'with torch.nn.attention.sdpa_kernel([SDPBackend.MATH]):\n    pass\n'),
        Invalid('from torch.backends.cuda import sdp_kernel\nfrom torch.nn.attention import SDPBackend, sdpa_kernel\n\n'
                'with sdp_kernel(False, True, False, False):\n    pass\n',
                fixed='from torch.nn.attention import SDPBackend, sdpa_kernel\n\n'
                'with sdpa_kernel([SDPBackend.MATH]):\n    pass\n'),
        # All flags default to True; ``th`` is dropped once nothing uses it.
        Invalid('import torch as th\nfrom torch.nn import attention\nwith th.backends.cuda.sdp_kernel():\n    pass\n',
                fixed='from torch.nn import attention\nwith attention.sdpa_kernel([attention.SDPBackend.FLASH_ATTENTION, '
                'attention.SDPBackend.EFFICIENT_ATTENTION, attention.SDPBackend.MATH, attention.SDPBackend.CUDNN_ATTENTION]):\n'
                '    pass\n'),
        # Not literal: the list depends on values known only at run time.
        Invalid('import torch\nwith torch.backends.cuda.sdp_kernel(enable_flash=use_flash, enable_math=not use_flash):\n    pass\n'),
        Invalid('import torch\nwith torch.backends.cuda.sdp_kernel(**flags):\n    pass\n'),
        Invalid('import torch\nkernel = torch.backends.cuda.sdp_kernel\n'),
    ]

    def check_call(self, ctx, call, qualname):
        flags = self._flags(call)
        fix = self._fix(ctx, call, flags) if flags is not None else None
        message = f"`torch.backends.cuda.sdp_kernel` is {self.version_phrase(ctx.target)}; use " \
                  "`torch.nn.attention.sdpa_kernel([SDPBackend...])` with the backends to allow"
        if fix is None:
            message += " (its flags are not all literal True/False: write the list by hand)"
        yield ctx.diagnostic(call.func, message, fix)

    def check_reference(self, ctx, reference):
        if reference_role(reference) in (CALLEE, IMPORT) or is_assignment_target(reference):
            return  # assigning to the name replaces torch's context manager: the old one is not used there
        yield ctx.diagnostic(
            reference.node,
            f"`torch.backends.cuda.sdp_kernel` is {self.version_phrase(ctx.target)}; use "
            "`torch.nn.attention.sdpa_kernel([SDPBackend...])` (it takes a list of backends, not flags)",
        )

    @staticmethod
    def _flags(call) -> dict[str, bool] | None:
        """Each flag's literal value (omitted ones are True), or None when one is not a literal bool."""
        if has_star_args(call) or len(call.args) > len(_FLAGS):
            return None
        given = dict(zip(_FLAGS, call.args))
        for item in call.keywords:
            if item.arg not in _FLAGS or item.arg in given:
                return None
            given[item.arg] = item.value
        flags = {}
        for name in _FLAGS:
            if name not in given:
                flags[name] = True
                continue
            try:
                value = literal(given[name])
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                return None
            if not isinstance(value, bool):
                return None
            flags[name] = value
        return flags

    def _fix(self, ctx, call, flags: dict[str, bool]) -> Fix:
        function, import_edits = ctx.name_for("torch.nn.attention.sdpa_kernel")
        backend, more_edits = ctx.name_for("torch.nn.attention.SDPBackend")
        entries = ", ".join(f"{backend}.{member}" for flag, member in _BACKENDS if flags[flag])
        edits = [*import_edits, *more_edits, Edit(ctx.start(call), ctx.end(call), f"{function}([{entries}])")]
        return Fix(
            message=f"Replace with `sdpa_kernel([{entries}])`{ctx.needs_note(self.replacement_since)}",
            edits=edits,
            applicability=ctx.applicability(needs=self.replacement_since),
            obsolete_names=root_name(call.func),
        )
