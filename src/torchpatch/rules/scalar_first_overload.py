"""TP258: the scalar-first overloads `x.add_(alpha, other)`, `addcmul_(value, t1, t2)`, `addmm(beta, ...)`, ..."""

from __future__ import annotations

import ast

from torchpatch.rules import _receivers
from torchpatch.rules.base import SAFE, CallNeed, Edit, Fix, Invalid, Rule, Valid
from torchpatch.versions import v

#: method -> {positional argument count of a deprecated form: ((index of a scalar, the keyword it becomes), ...)}.
#: In the new signatures (`add_(other, *, alpha=1)`, `addcmul_(tensor1, tensor2, *, value=1)`, `addmm(input,
#: mat1, mat2, *, beta=1, alpha=1)`, read in the 2.4.0 wheel's torch/_tensor_docs.py and _torch_docs.py) the
#: scalars are keyword-only, so that many positional arguments is always a deprecated overload ("This overload
#: of add_ is deprecated", UserWarning on 2.13 and 2.15, once per process; libtorch_python's signatures marked
#: ``|deprecated``).
METHODS: dict[str, dict[int, tuple[tuple[int, str], ...]]] = {
    **{name: {2: ((0, "alpha"),)} for name in ("add_", "sub_", "add", "sub")},
    **{name: {3: ((0, "value"),)} for name in ("addcmul_", "addcdiv_", "addcmul", "addcdiv")},
    # `M.addmm(beta, mat1, mat2)` and `M.addmm(beta, alpha, mat1, mat2)`, the in-place forms the same (a
    # four-argument `addmv_` whose second argument is a tensor raises on 2.13: the scalars are the only reading).
    **{name: {3: ((0, "beta"),), 4: ((0, "beta"), (1, "alpha"))}
       for base in ("addmm", "addmv", "addr", "addbmm", "baddbmm") for name in (base, f"{base}_")},
}
#: `torch.add(input, alpha, other)`: the scalar after the tensor; `torch.addmm(beta, input, mat1, mat2)` and
#: `torch.addmm(beta, input, alpha, mat1, mat2)`: beta before it.
FUNCTIONS: dict[str, dict[int, tuple[tuple[int, str], ...]]] = {
    **{f"torch.{name}": {count + 1: tuple((at + 1, keyword) for at, keyword in scalars)
                         for count, scalars in forms.items()}
       for name, forms in METHODS.items() if name in ("add", "sub", "addcmul", "addcdiv")},
    **{f"torch.{name}": {4: ((0, "beta"),), 5: ((0, "beta"), (2, "alpha"))}
       for name in ("addmm", "addmv", "addr", "addbmm", "baddbmm")},
}
#: Method names generic enough that another library may take that many positional arguments (``graph.add(a, b)``,
#: a network object's ``addr``): reported only when the scalar is written as a number (``x.add(-lr, grad)``,
#: ``p.add(1 - beta, g)``) or the receiver is a known tensor.
GENERIC = frozenset({"add", "sub", "addr"})
_NOT_TENSORS = frozenset({"self", "cls"})


def _numeric(node: ast.expr) -> bool:
    """A number, or arithmetic holding one (``1 - beta``, ``-lr``, ``2 * step``)."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, (int, float)) and not isinstance(node.value, bool)
    if isinstance(node, ast.UnaryOp):
        return _numeric(node.operand) or isinstance(node.op, ast.USub)
    if isinstance(node, ast.BinOp):
        return _numeric(node.left) or _numeric(node.right)
    return False


def _tensor_attribute(node: ast.expr) -> bool:
    """``p.data`` / ``p.grad`` as the tensor argument: the optimizer shape ``grad.add(group["weight_decay"],
    p.data)`` (dlrm's rwsadagrad, copied from torch's pre-1.5 Adagrad), where the scalar is a param-group entry."""
    return isinstance(node, ast.Attribute) and node.attr in ("data", "grad")


class ScalarFirstOverload(Rule):
    """
    ## What it does
    Flags the scalar-first overloads of `add`, `sub`, `addcmul` and `addcdiv` — `p.add_(-lr, grad)`,
    `exp_avg.mul_(beta1).add_(1 - beta1, grad)`, `v.addcmul_(1 - beta2, grad, grad)`,
    `p.addcdiv_(-step, m, denom)`, `torch.add(x, 2, y)` — and of `addmm`, `addmv`, `addr`, `addbmm` and
    `baddbmm` (`M.addmm(beta, m1, m2)`, `M.addmm_(beta, alpha, m1, m2)`, `torch.addmm(beta, M, alpha, m1, m2)`),
    and moves the scalars to their keywords (`p.add_(grad, alpha=-lr)`, `v.addcmul_(grad, grad, value=1 - beta2)`,
    `torch.addmm(M, m1, m2, beta=beta, alpha=alpha)`).

    `add_`, `sub_`, `addcmul(_)` and `addcdiv(_)` are reported on any receiver in files that use torch
    (except `self`/`cls`); the generic `add`/`sub` only when the scalar is written as a number or an
    arithmetic expression holding one, or the tensor argument is a `.data`/`.grad`
    (`grad.add(group["wd"], p.data)`), and `torch.add`/`torch.sub`/`torch.addcmul`/`torch.addcdiv` always;
    the `beta`/`alpha` family the same way (`addr`, a common name, like `add`).

    ## Why is this bad?
    These are the pre-1.5 signatures that optimizers copied for years. Every release 2.4 … 2.15 still
    accepts them but warns `UserWarning: This overload of add_ is deprecated: add_(Number alpha, Tensor
    other)`, once per process (libtorch_python's `PythonArgParser::check_deprecated` uses `TORCH_WARN_ONCE`:
    the first deprecated overload called is the only one a run shows, so the others go unseen). The keyword forms compute the same `self + alpha * other` (checked on 2.13 for
    float and integer tensors and a tensor scalar; `beta*M + alpha*(m1 @ m2)` for each `addmm`-family form on
    2.13 and 2.15) and exist in every supported release (the 2.4 docs give `add_(other, *, alpha=1)`,
    `addcmul_(tensor1, tensor2, *, value=1)` and `addmm(input, mat1, mat2, *, beta=1, alpha=1)`), so the fix is safe.
    """

    code = "TP258"
    name = "scalar-first-overload"
    summary = "`x.add_(alpha, other)` / `addcmul_(value, t1, t2)`: deprecated scalar-first overloads; pass the scalar by keyword"
    deprecated_in = v("1.5")
    replacement_since = v("1.5")
    fix_safety = SAFE
    fix_safety_note = ("The keyword form is the same computation and exists in every release 2.4 … 2.15; no fix "
                       "when a comment sits among the arguments.")
    references = ("https://docs.pytorch.org/docs/stable/generated/torch.add.html",)
    catalog_ids = ("torchfix.deprecated-symbols",)
    methods = frozenset(METHODS)
    calls = frozenset(FUNCTIONS)
    # Reported only with as many positional arguments as a deprecated form has (_deprecated_form): ``x.add(y)`` is
    # never one, nor is ``re.sub(pattern, repl, text)``.
    method_needs = {name: CallNeed(counts=frozenset(forms)) for name, forms in METHODS.items()}
    call_needs = {name: CallNeed(counts=frozenset(forms)) for name, forms in FUNCTIONS.items()}

    VALID = [
        "import torch\np.add_(grad, alpha=-lr)\nv.addcmul_(grad, grad, value=1 - beta2)\n",
        Valid("import torch\nx = torch.ones(3)\ny = x.clone().add_(x, alpha=0.1)\n"
              "z = x.clone().addcdiv_(x, x + 1, value=0.5)\nw = torch.add(x, x, alpha=2)\n", torch_runs_clean=True),
        # A graph, a set, a user's own method: not tensors, or not the deprecated form.
        "import torch\ngraph.add(node, parent)\nseen.add(key)\n",
        "import torch\nfor group in groups:\n    for p in group['params']:\n        g = p.grad\n"
        "        g.add(group['lr'], other)\n",
        "import torch\nclass Meter:\n    def update(self, a, b):\n        self.add_(a, b)\n",
        "import torch\np.add_(*pair)\n",
        Valid("import torch\nm = torch.ones(2, 2)\ny = m.addmm(m, m, beta=0.5)\nz = torch.baddbmm(m[None], m[None], m[None], alpha=2)\n",
              torch_runs_clean=True),
        # `addr` of a socket-like object: not known to be a tensor, and no number where the scalar would be.
        "import torch\nconn.addr(host, port, family)\n",
    ]
    INVALID = [
        Invalid("import torch\nexp_avg.mul_(beta1).add_(1 - beta1, grad)\n",
                fixed="import torch\nexp_avg.mul_(beta1).add_(grad, alpha=1 - beta1)\n"),
        Invalid("import torch\np.data.add_(-group['lr'], d_p)\n",
                fixed="import torch\np.data.add_(d_p, alpha=-group['lr'])\n"),
        Invalid("import torch\nexp_avg_sq.mul_(beta2).addcmul_(1 - beta2, grad, grad)\n",
                fixed="import torch\nexp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)\n"),
        Invalid("import torch\nx = torch.ones(3)\ny = x.clone().addcdiv_(0.5, x, x + 1)\n",
                fixed="import torch\nx = torch.ones(3)\ny = x.clone().addcdiv_(x, x + 1, value=0.5)\n",
                torch_warns="This overload of addcdiv_ is deprecated"),
        # A tensor receiver (p.grad.data, updated in place by tensor methods): the scalar may be any expression.
        Invalid("import torch\nmodel = torch.nn.Linear(2, 2)\nmodel(torch.ones(1, 2)).sum().backward()\n"
                "opt = torch.optim.SGD(model.parameters(), lr=0.1)\nfor group in opt.param_groups:\n"
                "    for p in group['params']:\n        grad = p.grad.data\n"
                "        grad = grad.add(group['lr'], p.data)\n",
                fixed="import torch\nmodel = torch.nn.Linear(2, 2)\nmodel(torch.ones(1, 2)).sum().backward()\n"
                      "opt = torch.optim.SGD(model.parameters(), lr=0.1)\nfor group in opt.param_groups:\n"
                      "    for p in group['params']:\n        grad = p.grad.data\n"
                      "        grad = grad.add(p.data, alpha=group['lr'])\n",
                torch_warns="This overload of add is deprecated"),
        Invalid("import torch\nx = torch.ones(3)\ny = x.add(2, x)\n",
                fixed="import torch\nx = torch.ones(3)\ny = x.add(x, alpha=2)\n",
                torch_warns="This overload of add is deprecated"),
        Invalid("import torch\nx = torch.ones(3)\ny = torch.add(x, 2, x)\n",
                fixed="import torch\nx = torch.ones(3)\ny = torch.add(x, x, alpha=2)\n",
                torch_warns="This overload of add is deprecated"),
        Invalid("import torch\nx = torch.ones(3)\ny = torch.addcmul(x, 2, x, x, out=None)\n",
                fixed="import torch\nx = torch.ones(3)\ny = torch.addcmul(x, x, x, value=2, out=None)\n",
                torch_warns="This overload of addcmul is deprecated"),
        Invalid("import torch\nm = torch.ones(2, 2)\ny = m.addmm(0.5, m, m)\n",
                fixed="import torch\nm = torch.ones(2, 2)\ny = m.addmm(m, m, beta=0.5)\n",
                torch_warns="This overload of addmm is deprecated"),
        Invalid("import torch\nm = torch.ones(2, 2)\ny = torch.addmm(0.5, m, 2.0, m, m)\n",
                fixed="import torch\nm = torch.ones(2, 2)\ny = torch.addmm(m, m, m, beta=0.5, alpha=2.0)\n",
                torch_warns="This overload of addmm is deprecated"),
        Invalid("import torch\nb = torch.ones(1, 2, 2)\nb.baddbmm_(0.0, 1.0, b, b)\n",
                fixed="import torch\nb = torch.ones(1, 2, 2)\nb.baddbmm_(b, b, beta=0.0, alpha=1.0)\n",
                torch_warns="This overload of baddbmm_ is deprecated"),
        # A comment among the arguments: reported, not rewritten.
        Invalid("import torch\np.add_(\n    -lr,  # step\n    grad,\n)\n"),
    ]

    def check_method_call(self, ctx, call):
        method = call.func.attr
        receiver = call.func.value
        if isinstance(receiver, ast.Name) and receiver.id in _NOT_TENSORS:
            return
        if isinstance(receiver, (ast.Constant, ast.JoinedStr, ast.List, ast.Tuple, ast.Dict, ast.Set)):
            return
        scalars = self._deprecated_form(call, METHODS[method])
        if scalars is None:
            return
        if method in GENERIC and not (_numeric(call.args[0]) or _tensor_attribute(call.args[-1])
                                      or _receivers.is_tensor(ctx, receiver)):
            return  # graph.add(node, parent); but grad.add(group["weight_decay"], p.data) on a known tensor
        yield self._report(ctx, call, method, scalars)

    def check_call(self, ctx, call, qualname):
        scalars = self._deprecated_form(call, FUNCTIONS[qualname])
        if scalars is not None:
            yield self._report(ctx, call, qualname.rpartition(".")[2], scalars)

    @staticmethod
    def _deprecated_form(call: ast.Call, forms: dict[int, tuple[tuple[int, str], ...]]):
        """The (index, keyword) of each scalar when ``call`` is one of the deprecated ``forms``, else None."""
        scalars = forms.get(len(call.args))
        if scalars is None or any(isinstance(a, ast.Starred) for a in call.args):
            return None
        keywords = {keyword for _, keyword in scalars}
        if any(k.arg is None or k.arg in keywords for k in call.keywords):
            return None
        return scalars

    def _report(self, ctx, call: ast.Call, name: str, scalars: tuple[tuple[int, str], ...]):
        first = scalars[0][1]
        keywords = " and ".join(f"`{k}=`" for _, k in scalars)
        message = (f"`{name}({first}, ...)` with the scalar first is a deprecated overload (a UserWarning in PyTorch "
                   f"2.4 through 2.15, shown once per process for whichever such call runs first); "
                   f"pass {'them' if len(scalars) > 1 else 'it'} as {keywords} after the tensors")
        at = {index for index, _ in scalars}
        start, end = ctx.start(call.args[0]), ctx.end(call.args[-1])
        fix = None
        if "#" not in ctx.text[start:end]:
            tensors = [ctx.text[ctx.start(a):ctx.end(a)] for i, a in enumerate(call.args) if i not in at]
            moved = [f"{keyword}={ctx.text[ctx.start(call.args[i]):ctx.end(call.args[i])]}" for i, keyword in scalars]
            fix = Fix(f"Pass the scalar{'s' if len(scalars) > 1 else ''} as {keywords}",
                      [Edit(start, end, ", ".join([*tensors, *moved]))], SAFE)
        return ctx.diagnostic(call, message, fix)
