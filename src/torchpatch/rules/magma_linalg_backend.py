"""TP215: torch.backends.cuda.preferred_linalg_library("magma"), deprecated in 2.11."""

from __future__ import annotations

import ast

from torchpatch.rules._helpers import keyword
from torchpatch.rules.base import UNSAFE, Edit, Fix, Invalid, Rule, Valid
from torchpatch.versions import v


def _magma_string(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value == "magma"


class MagmaLinalgBackend(Rule):
    """
    ## What it does
    Flags `torch.backends.cuda.preferred_linalg_library("magma")` (positional or `backend="magma"`).

    ## Why is this bad?
    PyTorch 2.11 deprecated the MAGMA backend for CUDA linear algebra. Selecting it (and using it)
    prints a one-time C++ warning, "The usage of MAGMA backend for linear algebra operations is
    deprecated and will be removed in future releases. cuSOLVER stays as the default backend.", and
    on builds compiled without MAGMA the call raises `RuntimeError: Cannot set preferred backend to
    MAGMA if PyTorch has not been compiled with MAGMA.` cuSOLVER is the default and the supported
    backend; drop the call or ask for `"cusolver"`.

    The fix replaces `"magma"` with `"cusolver"`. It is unsafe: on a CUDA build it switches the
    solver that linear-algebra operations use, which can change speed, numerics and which inputs
    raise errors (the warning itself asks users to report "error messages with cuSOLVER but not
    MAGMA"), and a build without cuSOLVER raises for `"cusolver"` instead.
    """

    code = "TP215"
    name = "magma-linalg-backend"
    summary = "`preferred_linalg_library(\"magma\")` (MAGMA backend deprecated in 2.11; use cuSOLVER)"
    deprecated_in = v("2.11")
    replacement_since = v("2.4")
    fix_safety = UNSAFE
    fix_safety_note = ("`\"cusolver\"` selects a different solver on CUDA builds: results, speed and failures can "
                       "differ from MAGMA; test the affected linear-algebra code.")
    references = (
        "https://docs.pytorch.org/docs/stable/backends.html#torch.backends.cuda.preferred_linalg_library",
    )
    catalog_ids = ("plat.magma-deprecated",)
    calls = frozenset({"torch.backends.cuda.preferred_linalg_library"})

    VALID = [
        'import torch\ntorch.backends.cuda.preferred_linalg_library("cusolver")\n',
        'import torch\nbackend = torch.backends.cuda.preferred_linalg_library()\n',
        'import torch\ntorch.backends.cuda.preferred_blas_library("cublas")\n',
        'def preferred_linalg_library(name):\n    return name\npreferred_linalg_library("magma")\n',
        Valid('import torch\ntorch.backends.cuda.preferred_linalg_library("magma")\n', target_torch="2.10"),
    ]
    INVALID = [
        Invalid('import torch\ntorch.backends.cuda.preferred_linalg_library("magma")\n',
                fixed='import torch\ntorch.backends.cuda.preferred_linalg_library("cusolver")\n'),
        Invalid("from torch.backends.cuda import preferred_linalg_library\npreferred_linalg_library(backend='magma')\n",
                fixed="from torch.backends.cuda import preferred_linalg_library\npreferred_linalg_library(backend='cusolver')\n"),
    ]

    def check_call(self, ctx, call, qualname):
        argument = call.args[0] if call.args else getattr(keyword(call, "backend"), "value", None)
        if not _magma_string(argument):
            return
        source = ctx.source(argument)
        quote = source[-1] if source[-1:] in ("'", '"') else '"'
        prefix = source[:len(source) - len(source.lstrip("rRuU"))] if quote else ""
        fix = Fix(message="Use the cuSOLVER backend (changes the solver on CUDA builds)",
                  edits=[Edit(ctx.start(argument), ctx.end(argument), f"{prefix}{quote}cusolver{quote}")],
                  applicability=UNSAFE)
        message = (f"the MAGMA linear-algebra backend is {self.version_phrase(ctx.target)} (C++ warning; RuntimeError "
                   "on builds without MAGMA): cuSOLVER is the default, use `\"cusolver\"` or drop the call")
        yield ctx.diagnostic(argument, message, fix)
