"""TP234: a set passed as an optimizer's params (deprecated in PyTorch 2.15; the order is arbitrary)."""

from __future__ import annotations

import ast

from torchpatch.rules._helpers import keyword
from torchpatch.rules.base import SAFE, CallNeed, Edit, Fix, Invalid, Rule, Valid
from torchpatch.versions import v

#: torch.optim optimizers (torch 2.13) -> their defining submodule, when it is public.
OPTIMIZERS = {
    "ASGD": "asgd", "Adadelta": "adadelta", "Adafactor": None, "Adagrad": "adagrad", "Adam": "adam",
    "AdamW": "adamw", "Adamax": "adamax", "LBFGS": "lbfgs", "Muon": None, "NAdam": "nadam", "RAdam": "radam",
    "RMSprop": "rmsprop", "Rprop": "rprop", "SGD": "sgd", "SparseAdam": "sparse_adam",
}


class OptimizerParamSet(Rule):
    """
    ## What it does
    Flags optimizers of `torch.optim` constructed with a set of parameters as `params`: a set
    literal (`{w, b}`), a set comprehension or `set(...)`. A set literal becomes a list literal.

    ## Why is this bad?
    An optimizer keeps its parameters in the order it receives them, and that order is what its
    `state_dict()` uses to match saved state to parameters. A set of tensors iterates in an order
    that depends on object ids, which changes from run to run, so a checkpoint saved in one run can
    restore the momentum of one parameter into another. `add_param_group` has refused sets
    (`TypeError`) since before 2.4, and parameter groups given as dicts with a set go through it;
    per the catalog of PyTorch changes, 2.15 also deprecates (`FutureWarning`) a set passed
    directly as `params`, which 2.4–2.14 accept silently.

    The fix turns a set literal into a list literal in the written order. It is safe: no run could
    rely on the set's order, and a list is accepted by every release. A set literal that repeats
    an element is not fixed (a list would pass the parameter twice). `set(...)` and set
    comprehensions are reported without a fix: build a list in a fixed order, e.g.
    `list(model.parameters())`.
    """

    code = "TP234"
    name = "optimizer-param-set"
    summary = "A set passed as an optimizer's params (arbitrary order; deprecated in 2.15)"
    deprecated_in = v("2.15")
    fix_safety = SAFE
    fix_safety_note = "A list in the written order replaces an order that changed from run to run; every release accepts it."
    references = (
        "https://docs.pytorch.org/docs/stable/optim.html#constructing-it",
    )
    catalog_ids = ("optim.param-set",)
    calls = frozenset(
        name for optimizer, module in OPTIMIZERS.items()
        for name in (f"torch.optim.{optimizer}", *([f"torch.optim.{module}.{optimizer}"] if module else ()))
    )
    # A set is written in the call: ``{...}`` or ``set(...)`` (a name bound to one elsewhere is not reported).
    call_needs = {name: CallNeed(words=frozenset({"{", "set"})) for name in calls}

    VALID = [
        "import torch\nopt = torch.optim.SGD([w, b], lr=0.1)\n",
        Valid("import torch\nmodel = torch.nn.Linear(2, 2)\nopt = torch.optim.AdamW(model.parameters(), lr=1e-3)\n"
              "model(torch.ones(1, 2)).sum().backward()\nopt.step()\n", torch_runs_clean=True),
        "import torch\nopt = torch.optim.SGD([{'params': [w]}, {'params': [b], 'lr': 0.01}], lr=0.1)\n",
        # Look-alikes: a local set() function, another library's optimizer.
        "import torch\ndef set(*items):\n    return list(items)\nopt = torch.optim.SGD(set(w, b), lr=0.1)\n",
        "import torch\nfrom bitsandbytes.optim import Adam8bit\nopt = Adam8bit({w, b}, lr=0.1)\n",
    ]
    INVALID = [
        Invalid("import torch\nopt = torch.optim.SGD({w, b}, lr=0.1)\n",
                fixed="import torch\nopt = torch.optim.SGD([w, b], lr=0.1)\n"),
        Invalid("from torch.optim import Adam\nopt = Adam(params={\n    model.weight,\n    model.bias,\n}, lr=1e-3)\n",
                fixed="from torch.optim import Adam\nopt = Adam(params=[\n    model.weight,\n    model.bias,\n], lr=1e-3)\n"),
        Invalid("import torch\nopt = torch.optim.AdamW(set(model.parameters()), lr=1e-3)\n"),
        Invalid("import torch\nopt = torch.optim.SGD({p for p in model.parameters() if p.requires_grad}, lr=0.1)\n"),
    ]

    def check_call(self, ctx, call, qualname):
        argument = keyword(call, "params")
        params = argument.value if argument is not None else call.args[0] if call.args else None
        if params is None or not self._is_set(ctx, params):
            return
        optimizer = qualname.rpartition(".")[2]
        message = (f"`{optimizer}` receives a set of parameters, whose order changes between runs (and with it what "
                   f"`state_dict()` restores); deprecated in PyTorch {self.deprecated_in}: pass a list")
        yield ctx.diagnostic(params, message, self._fix(ctx, params))

    def _is_set(self, ctx, node) -> bool:
        if isinstance(node, (ast.Set, ast.SetComp)):
            return True
        return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "set" \
            and ctx.scopes.binding_for("set", ctx.scope, (node.lineno, node.col_offset)) is None

    def _fix(self, ctx, node):
        if not isinstance(node, ast.Set):
            return None
        texts = [ctx.source(element) for element in node.elts]
        if len(set(texts)) != len(texts) or any(isinstance(element, ast.Starred) for element in node.elts):
            return None  # a repeated element would be passed twice; *items may repeat
        start, end = ctx.start(node), ctx.end(node)
        if ctx.text[start] != "{" or ctx.text[end - 1] != "}":
            return None
        return Fix(message="Pass a list in the written order", applicability=SAFE,
                   edits=[Edit(start, start + 1, "["), Edit(end - 1, end, "]")])
