"""TP251: torch.cholesky/qr/chain_matmul/lu/lu_solve/triangular_solve/svd -> their torch.linalg replacements."""

from __future__ import annotations

import ast

from torchpatch.rules import _receivers as receivers
from torchpatch.rules._helpers import has_star_args, keyword, literal, remove_argument, replace_node
from torchpatch.rules.base import SAFE, Edit, Fix, Invalid, Rule, Valid
from torchpatch.versions import v

#: Old name -> (the release named in the message, what to use). cholesky/qr/chain_matmul were deprecated by
#: pytorch#57725/#57745/#57735 (1.9); lu/lu_solve/triangular_solve warn in the 2.4.1 wheel (libtorch_cpu.so
#: holds "torch.lu is deprecated", ...) and in torch 2.13; svd is deprecated in its docs only (no such string
#: for it in the 2.4.1 or 2.15.0 libtorch_cpu.so).
FUNCTIONS = {
    "torch.cholesky": ("deprecated since PyTorch 1.9 (UserWarning)", "`torch.linalg.cholesky(A, upper=...)`"),
    "torch.qr": ("deprecated since PyTorch 1.9 (UserWarning)", "`torch.linalg.qr(A, mode=...)`"),
    "torch.chain_matmul": ("deprecated since PyTorch 1.9 (UserWarning)", "`torch.linalg.multi_dot([a, b, ...])`"),
    "torch.lu": ("deprecated (UserWarning in 2.4 through 2.15)",
                 "`torch.linalg.lu_factor(A)` (or `lu_factor_ex` for `get_infos=True`)"),
    "torch.lu_solve": ("deprecated (UserWarning in 2.4 through 2.15)",
                       "`torch.linalg.lu_solve(LU, pivots, B)` (arguments reordered)"),
    "torch.triangular_solve": ("deprecated (UserWarning in 2.4 through 2.15)",
                               "`torch.linalg.solve_triangular(A, B, upper=...)`: arguments reversed, `upper` has no "
                               "default, and it returns only the solution"),
    "torch.svd": ("documented as deprecated (no runtime warning in 2.4 through 2.15)",
                  "`torch.linalg.svd(A, full_matrices=not some)`: it returns `Vh`, the conjugate transpose of `V`"),
}

#: ``torch.svd(A, compute_uv=False)`` computes only the singular values: its docstring (2.4.1 and 2.15.0
#: ``_torch_docs.py``) says it "should be replaced with ``S = torch.linalg.svdvals(A)``", not with linalg.svd.
#: The 2.15.0 wheel raises ``RuntimeError: This function was deprecated since version 1.9 and is now removed`` for
#: these (torch 2.13.0 still warns only; 2.14 was not checked), ``Tensor.qr()``/``Tensor.cholesky()`` too.
RAISE_FROM = {"torch.cholesky": v("2.15"), "torch.qr": v("2.15")}

#: The methods that call these functions (``Tensor.qr`` ... in torch/_tensor.py or ATen, 2.4.1-2.15.0) and warn the
#: same on torch 2.13 (``Tensor.svd`` warns nothing, like ``torch.svd``): reported on a known tensor, without a fix.
METHODS = {"cholesky": "torch.cholesky", "qr": "torch.qr", "lu": "torch.lu", "lu_solve": "torch.lu_solve",
           "triangular_solve": "torch.triangular_solve"}

SVD_VALUES_ONLY = "`torch.linalg.svdvals(A)` (the singular values `S`, all that `compute_uv=False` computes)"

_SIMPLE = (ast.Name, ast.Attribute, ast.Constant, ast.Subscript)


def _argument(call: ast.Call, name: str, position: int) -> ast.AST | None:
    found = keyword(call, name)
    if found is not None:
        return found.value
    return call.args[position] if len(call.args) > position else None


def _bool(node: ast.AST | None, default: bool) -> bool | None:
    if node is None:
        return default
    try:
        value = literal(node)
    except (ValueError, TypeError, SyntaxError):
        return None
    return value if type(value) is bool else None


class LegacyLinalgFunction(Rule):
    """
    ## What it does
    Flags the pre-`torch.linalg` linear-algebra functions that still ship with a deprecation:
    `torch.cholesky`, `torch.qr`, `torch.chain_matmul`, `torch.lu`, `torch.lu_solve`,
    `torch.triangular_solve` and `torch.svd`, and rewrites the calls whose `torch.linalg` form is
    the same computation.

    ## Why is this bad?
    PyTorch 1.9 deprecated `cholesky`, `qr` and `chain_matmul` in favour of `torch.linalg`
    (pytorch#57725, #57745, #57735); `lu`, `lu_solve` and `triangular_solve` warn too, and `svd` is
    deprecated in its documentation. Each warns "will be removed in a future PyTorch release" (a
    `UserWarning` on first use) in every release from 2.4 through 2.15 (lu, lu_solve, triangular_solve checked in the 2.15.0 libtorch).

    The fixes follow PyTorch's own instructions in those warnings: `cholesky(A, upper=u)` is
    `linalg.cholesky(A, upper=u)`; `qr(A)` is `linalg.qr(A)` and `qr(A, some=False)` is
    `linalg.qr(A, mode="complete")`; `chain_matmul(a, b, c)` is `linalg.multi_dot([a, b, c])`
    (two or more matrices); `lu(A, get_infos=True)` is `linalg.lu_factor_ex(A)`; `lu(A)` becomes
    `linalg.lu_factor(A)` as an unsafe fix, because `torch.lu` never checked for errors (a singular
    matrix factors quietly on 2.13, and `torch.lu` is the same Python in the 2.4.1-2.15 sources) while
    `linalg.lu_factor` raises on one; `lu_solve(B, LU, pivots)` is `linalg.lu_solve(LU, pivots, B)` (only
    when the arguments are plain names, so reordering them cannot reorder side effects).
    `triangular_solve` and `svd` return different things than their replacements (no cloned
    coefficient; `Vh` instead of `V`), so they are reported without a fix. For
    `torch.svd(A, compute_uv=False)`, which computes only the singular values, the message points to
    `torch.linalg.svdvals(A)`, as `torch.svd`'s own documentation does.

    The method forms `A.cholesky()`, `A.qr()`, `A.lu()`, `B.lu_solve(LU, pivots)` and
    `B.triangular_solve(A)` warn the same; they are reported where `A`/`B` is known to be a tensor
    (NumPy and SciPy objects have no such methods, but other libraries' matrices may), without a fix.
    """

    code = "TP251"
    name = "legacy-linalg-function"
    summary = "Deprecated pre-`torch.linalg` functions (`torch.cholesky`, `qr`, `chain_matmul`, `lu`, `lu_solve`, ...)"
    deprecated_in = v("1.9")
    fix_safety = SAFE
    fix_safety_note = (
        "Only the rewrites PyTorch's warnings prescribe, on calls whose arguments are visible; the replacements exist "
        "in every supported release and return the same values. `torch.lu(A)` -> `linalg.lu_factor(A)` is unsafe: "
        "the new function raises on a singular matrix where the old one returned."
    )
    references = (
        "https://docs.pytorch.org/docs/stable/linalg.html",
        "https://github.com/pytorch/pytorch/pull/57725",
        "https://github.com/pytorch/pytorch/pull/57745",
        "https://github.com/pytorch/pytorch/pull/57735",
    )
    torchfix_codes = ("TOR101", "TOR103")
    calls = frozenset(FUNCTIONS)
    methods = frozenset(METHODS)

    VALID = [
        "import torch\nL = torch.linalg.cholesky(A)\nQ, R = torch.linalg.qr(A)\n",
        "import torch\nm = torch.linalg.multi_dot([a, b, c])\n",
        # Look-alikes: NumPy/SciPy functions of the same name, a local function, a method.
        "import torch\nimport numpy as np\nL = np.linalg.cholesky(A)\nq, r = np.linalg.qr(A)\n",
        "import torch\nfrom scipy.linalg import lu, cholesky\nP, L, U = lu(A)\n",
        "import torch\ndef qr(a):\n    return a\nq = qr(A)\n",
        "import torch\nU, S, V = A.svd()\n",
        "import torch\nQ, R = A.qr()\n",  # A's type is not known
        Valid("import torch\nA = torch.randn(3, 3)\nU, S, V = A.svd()\nQ, R = torch.linalg.qr(A)\n",
              torch_runs_clean=True),
    ]
    INVALID = [
        Invalid("import torch\nL = torch.cholesky(A)\n", fixed="import torch\nL = torch.linalg.cholesky(A)\n"),
        Invalid("import torch\nU = torch.cholesky(A, True)\n",
                fixed="import torch\nU = torch.linalg.cholesky(A, upper=True)\n"),
        Invalid("import torch\nQ, R = torch.qr(A, some=False)\n",
                fixed='import torch\nQ, R = torch.linalg.qr(A, mode="complete")\n'),
        Invalid("import torch as th\nQ, R = th.qr(A)\n", fixed="import torch as th\nQ, R = th.linalg.qr(A)\n"),
        Invalid("from torch import chain_matmul\nm = chain_matmul(a, b, c)\n",
                fixed="import torch\nm = torch.linalg.multi_dot([a, b, c])\n"),
        Invalid("import torch\nLU, pivots = torch.lu(A)\n", fixed="import torch\nLU, pivots = torch.linalg.lu_factor(A)\n"),
        Invalid("import torch\nLU, pivots, info = torch.lu(A, get_infos=True)\n",
                fixed="import torch\nLU, pivots, info = torch.linalg.lu_factor_ex(A)\n"),
        Invalid("import torch\nX = torch.lu_solve(B, LU, pivots)\n",
                fixed="import torch\nX = torch.linalg.lu_solve(LU, pivots, B)\n"),
        Invalid("import torch\nX, _ = torch.triangular_solve(B, A, upper=False)\n"),
        Invalid("import torch\nU, S, V = torch.svd(A)\n"),
        Invalid("import torch\nS = torch.svd(A, compute_uv=False)[1]\n"),
        Invalid("import torch\nm = torch.chain_matmul(*matrices)\n"),
        Invalid("import torch\nA = torch.randn(3, 3)\nQ, R = A.qr()\n", torch_warns=r"`?torch\.qr`? is deprecated"),
        Invalid("import torch\nA = torch.randn(3, 3)\nLU, pivots = A.lu()\n", torch_warns="torch.lu is deprecated"),
        Invalid("import torch\nA = torch.randn(3, 3)\nX, _ = torch.randn(3, 2).triangular_solve(A.triu())\n",
                torch_warns="torch.triangular_solve is deprecated"),
        Invalid("import torch\ndef chol(spd: torch.Tensor):\n    return spd.cholesky()\n"),
    ]

    def check_call(self, ctx, call, qualname):
        phrase, use = FUNCTIONS[qualname]
        if qualname in RAISE_FROM and ctx.target >= RAISE_FROM[qualname]:
            phrase = f"{phrase[:-len(' (UserWarning)')]}, removed in {RAISE_FROM[qualname]} (it raises RuntimeError there)"
        if qualname == "torch.svd" and _bool(_argument(call, "compute_uv", 2), True) is False:
            use = SVD_VALUES_ONLY
        fix = None if has_star_args(call) or not isinstance(call.func, (ast.Name, ast.Attribute)) else \
            getattr(self, "_fix_" + qualname.rpartition(".")[2], lambda *a: None)(ctx, call)
        yield ctx.diagnostic(call, f"`{qualname}` is {phrase}; use {use}", fix)

    def check_method_call(self, ctx, call):
        qualname = METHODS[call.func.attr]
        if not receivers.is_tensor(ctx, call.func.value):
            return
        phrase, use = FUNCTIONS[qualname]
        if qualname in RAISE_FROM and ctx.target >= RAISE_FROM[qualname]:
            phrase = f"{phrase[:-len(' (UserWarning)')]}, removed in {RAISE_FROM[qualname]} (it raises RuntimeError there)"
        yield ctx.diagnostic(call.func, f"`Tensor.{call.func.attr}()` calls `{qualname}`, which is {phrase}; use {use}")

    # -- fixes -------------------------------------------------------------------------------------
    def _rename(self, ctx, call, new: str, extra: list[Edit], message: str, unsafe: bool = False) -> Fix:
        name, import_edits = ctx.name_for(new, "torch")  # torch.linalg is loaded by `import torch`
        root = call.func
        while isinstance(root, ast.Attribute):
            root = root.value
        return Fix(message=message, edits=[*import_edits, replace_node(ctx, call.func, name), *extra],
                   applicability=ctx.applicability(behaviour_changes=unsafe), obsolete_names=(root.id,))

    def _fix_cholesky(self, ctx, call):
        if len(call.args) < 1 or len(call.args) > 2 or any(k.arg not in ("input", "upper", "out") for k in call.keywords):
            return None
        if keyword(call, "input") is not None:
            return None
        extra = []
        if len(call.args) == 2:
            extra.append(Edit(ctx.start(call.args[1]), ctx.start(call.args[1]), "upper="))
        return self._rename(ctx, call, "torch.linalg.cholesky", extra, "Replace with `torch.linalg.cholesky`")

    def _fix_qr(self, ctx, call):
        if len(call.args) != 1 and not (len(call.args) == 2 and not call.keywords):
            return None
        if any(k.arg not in ("some", "out") for k in call.keywords):
            return None
        node = _argument(call, "some", 1)
        some = _bool(node, True)
        if some is None:
            return None
        extra = []
        if node is not None:
            target = keyword(call, "some") or node
            if some:
                extra.append(remove_argument(ctx, call, target))
            else:
                extra.append(replace_node(ctx, target, 'mode="complete"'))
        return self._rename(ctx, call, "torch.linalg.qr", extra, "Replace with `torch.linalg.qr`")

    def _fix_chain_matmul(self, ctx, call):
        if len(call.args) < 2 or any(k.arg != "out" for k in call.keywords):
            return None
        first, last = call.args[0], call.args[-1]
        extra = [Edit(ctx.start(first), ctx.start(first), "["), Edit(ctx.end(last), ctx.end(last), "]")]
        return self._rename(ctx, call, "torch.linalg.multi_dot", extra,
                            "Replace with `torch.linalg.multi_dot([...])`")

    def _fix_lu(self, ctx, call):
        if len(call.args) != 1 or any(k.arg not in ("pivot", "get_infos") for k in call.keywords):
            return None
        infos_keyword = keyword(call, "get_infos")
        get_infos = _bool(infos_keyword.value if infos_keyword else None, False)
        if get_infos is None:
            return None
        extra = [remove_argument(ctx, call, infos_keyword)] if infos_keyword is not None else []
        if get_infos:
            return self._rename(ctx, call, "torch.linalg.lu_factor_ex", extra, "Replace with `torch.linalg.lu_factor_ex`")
        # torch.lu calls torch._lu_with_info, which never checks errors (2.4.1 through 2.13: a singular
        # matrix factors without complaint); torch.linalg.lu_factor raises on it.
        return self._rename(ctx, call, "torch.linalg.lu_factor", extra,
                            "Replace with `torch.linalg.lu_factor` (unsafe: it raises on a singular matrix, where "
                            "`torch.lu` returned the factorization; `lu_factor_ex` does not raise)", unsafe=True)

    def _fix_lu_solve(self, ctx, call):
        if len(call.args) != 3 or call.keywords or not all(isinstance(a, _SIMPLE) for a in call.args):
            return None
        b, lu_data, pivots = call.args
        extra = [Edit(ctx.start(b), ctx.end(pivots), f"{ctx.source(lu_data)}, {ctx.source(pivots)}, {ctx.source(b)}")]
        return self._rename(ctx, call, "torch.linalg.lu_solve", extra,
                            "Replace with `torch.linalg.lu_solve(LU, pivots, B)`")
