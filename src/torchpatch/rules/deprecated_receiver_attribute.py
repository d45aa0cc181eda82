"""TP260: deprecated methods and attributes read on an object a torch constructor built in the same function."""

from __future__ import annotations

import ast

from torchpatch.rules import _receivers as receivers
from torchpatch.rules._file_scan import enclosing_def_or_module
from torchpatch.rules.base import SAFE, UNSAFE, Edit, Fix, Invalid, Rule, Valid
from torchpatch.versions import v

#: torch.distributions classes (public name → defining submodule), read from torch 2.13's ``torch.distributions``
#: (tests/test_deprecated_receiver_attribute.py checks the list against it).
DISTRIBUTION_MODULES = {
    "Bernoulli": "bernoulli", "Beta": "beta", "Binomial": "binomial", "Categorical": "categorical",
    "Cauchy": "cauchy", "Chi2": "chi2", "ContinuousBernoulli": "continuous_bernoulli", "Dirichlet": "dirichlet",
    "Exponential": "exponential", "FisherSnedecor": "fishersnedecor", "Gamma": "gamma",
    "GeneralizedPareto": "generalized_pareto", "Geometric": "geometric", "Gumbel": "gumbel",
    "HalfCauchy": "half_cauchy", "HalfNormal": "half_normal", "Independent": "independent",
    "InverseGamma": "inverse_gamma", "Kumaraswamy": "kumaraswamy", "LKJCholesky": "lkj_cholesky",
    "Laplace": "laplace", "LogNormal": "log_normal", "LogisticNormal": "logistic_normal",
    "LowRankMultivariateNormal": "lowrank_multivariate_normal", "MixtureSameFamily": "mixture_same_family",
    "Multinomial": "multinomial", "MultivariateNormal": "multivariate_normal",
    "NegativeBinomial": "negative_binomial", "Normal": "normal", "OneHotCategorical": "one_hot_categorical",
    "OneHotCategoricalStraightThrough": "one_hot_categorical", "Pareto": "pareto", "Poisson": "poisson",
    "RelaxedBernoulli": "relaxed_bernoulli", "RelaxedOneHotCategorical": "relaxed_categorical",
    "StudentT": "studentT", "TransformedDistribution": "transformed_distribution", "Uniform": "uniform",
    "VonMises": "von_mises", "Weibull": "weibull", "Wishart": "wishart",
}
DISTRIBUTION = "Distribution"
CONCAT_DATASET = "ConcatDataset"
TREESPEC = "TreeSpec"
_PYTREE = "torch.utils._pytree"

#: The calls that build a known receiver: qualified name → (type, position in the returned tuple or None).
BUILT_BY: dict[str, tuple[str, int | None]] = {
    **{f"torch.distributions.{name}": (DISTRIBUTION, None) for name in DISTRIBUTION_MODULES},
    **{f"torch.distributions.{module}.{name}": (DISTRIBUTION, None) for name, module in DISTRIBUTION_MODULES.items()},
    "torch.utils.data.ConcatDataset": (CONCAT_DATASET, None),
    "torch.utils.data.dataset.ConcatDataset": (CONCAT_DATASET, None),
    f"{_PYTREE}.TreeSpec": (TREESPEC, None),
    f"{_PYTREE}.tree_structure": (TREESPEC, None),
    f"{_PYTREE}.tree_flatten": (TREESPEC, 1),
}

#: torch/utils/_pytree.py: ``TreeSpec.children_specs`` is a plain dataclass field up to 2.9 and a property that
#: warns "`treespec.children_specs` is deprecated" (FutureWarning) from 2.10 (wheels 2.10.0 … 2.15.0).
CHILDREN_SPECS_DEPRECATED_IN = v("2.10")


class DeprecatedReceiverAttribute(Rule):
    """
    ## What it does
    Flags deprecated methods and attributes read on an object built by a torch constructor in the same
    function (or module body), as far as the code shows it: `Distribution.sample_n(n)` on a
    `torch.distributions` class (`d = torch.distributions.Normal(0, 1)`), `ConcatDataset.cummulative_sizes`
    on a `torch.utils.data.ConcatDataset`, and `TreeSpec.children_specs` on a spec from
    `torch.utils._pytree.tree_flatten`, `tree_structure` or `TreeSpec(...)`. A name bound more than once, an
    argument, or an object returned from another function is not inferred.

    ## Why is this bad?
    In every release 2.4 … 2.15, `sample_n(n)` warns "`sample_n(n)` will be deprecated. Use `sample((n,))`
    instead." and `cummulative_sizes` warns that it "is renamed to `cumulative_sizes`" (both FutureWarning);
    from 2.10, `children_specs` warns that it is deprecated in favour of `children()` / `child(index)`.
    The misspelt `cummulative_sizes` returns `cumulative_sizes` itself, which every release has, so its
    rename is safe. `sample_n(n)` returns `sample(torch.Size((n,)))`; `sample((n,))` is what torch
    recommends but passes a tuple where `sample_n` passed a `torch.Size`, so that fix is unsafe for a
    distribution subclass that checks the type. `children()` exists only from 2.10 and returns a copy,
    so `children_specs` is not fixed.
    """

    code = "TP260"
    name = "deprecated-receiver-attribute"
    summary = "Deprecated `sample_n`, `cummulative_sizes` or `children_specs` on a torch object built in the same function"
    deprecated_in = v("2.4")
    fix_safety = SAFE
    fix_safety_note = ("`cummulative_sizes` → `cumulative_sizes` is safe; `sample_n(n)` → `sample((n,))` is unsafe "
                       "(a tuple, not a `torch.Size`); `children_specs` is not fixed.")
    calls = frozenset(BUILT_BY)
    catalog_ids = ("ag.pytree-private",)  # children_specs; sample_n and cummulative_sizes are not in the catalog
    references = ("https://docs.pytorch.org/docs/stable/distributions.html#torch.distributions.distribution.Distribution.sample",
                  "https://docs.pytorch.org/docs/stable/data.html#torch.utils.data.ConcatDataset")

    VALID = [
        Valid("import torch\nd = torch.distributions.Normal(torch.zeros(2), torch.ones(2))\ns = d.sample((3,))\n",
              torch_runs_clean=True),
        # `d` is bound twice: it may hold something else, whose `sample_n` is its own
        "import torch\nd = torch.distributions.Normal(0.0, 1.0)\nd = make()\nd.sample_n(3)\n",
        "def draw(d):\n    return d.sample_n(3)\n",
        Valid("import torch\nfrom torch.utils.data import ConcatDataset, TensorDataset\n"
              "data = ConcatDataset([TensorDataset(torch.ones(2)), TensorDataset(torch.ones(3))])\n"
              "sizes = data.cumulative_sizes\n", torch_runs_clean=True),
        # before 2.10, `children_specs` is the field itself and warns nowhere
        Valid("import torch.utils._pytree as pytree\nspec = pytree.tree_structure([1, 2])\nc = spec.children_specs\n",
              target_torch="2.9"),
    ]
    INVALID = [
        Invalid("import torch\nd = torch.distributions.Normal(torch.zeros(2), torch.ones(2))\ns = d.sample_n(3)\n",
                fixed="import torch\nd = torch.distributions.Normal(torch.zeros(2), torch.ones(2))\n"
                      "s = d.sample((3,))\n",
                torch_warns=r"`sample_n\(n\)` will be deprecated\. Use `sample\(\(n,\)\)` instead"),
        Invalid("import torch\nfrom torch.distributions import Categorical\n"
                "def draw(logits):\n    return Categorical(logits=logits).sample_n(4)\n",
                fixed="import torch\nfrom torch.distributions import Categorical\n"
                      "def draw(logits):\n    return Categorical(logits=logits).sample((4,))\n"),
        Invalid("import torch\nfrom torch.utils.data import ConcatDataset, TensorDataset\n"
                "data = ConcatDataset([TensorDataset(torch.ones(2)), TensorDataset(torch.ones(3))])\n"
                "sizes = data.cummulative_sizes\n",
                fixed="import torch\nfrom torch.utils.data import ConcatDataset, TensorDataset\n"
                      "data = ConcatDataset([TensorDataset(torch.ones(2)), TensorDataset(torch.ones(3))])\n"
                      "sizes = data.cumulative_sizes\n",
                torch_warns=r"`cummulative_sizes` attribute is renamed to `cumulative_sizes`"),
        Invalid("import torch.utils._pytree as pytree\nleaves, spec = pytree.tree_flatten([1, (2, 3)])\n"
                "first = spec.children_specs[0]\n",
                torch_warns=r"`treespec\.children_specs` is deprecated"),
    ]

    def check_call(self, ctx, call, qualname):
        scope_node = enclosing_def_or_module(ctx, call)
        done = receivers._SCOPES_DONE.setdefault(ctx.tree, {}).setdefault(self.code, set())
        if id(scope_node) in done:
            return
        done.add(id(scope_node))
        resolve = lambda expr: ctx.scopes.qualname(expr, ctx.scope)  # noqa: E731
        for node, kind in receivers.built_accesses(scope_node, resolve, BUILT_BY):
            yield from self._report(ctx, node, kind)
        owner = ctx.parent_of(scope_node) if scope_node is not ctx.tree else None
        if isinstance(owner, ast.ClassDef) and id(owner) not in done:
            done.add(id(owner))  # ``self.data = ConcatDataset(...)`` in __init__, read in another method
            seen = {id(node) for node, _ in receivers.built_accesses(scope_node, resolve, BUILT_BY)}
            for node, kind in receivers.member_built_accesses(owner, resolve, BUILT_BY):
                if id(node) not in seen:
                    yield from self._report(ctx, node, kind)

    def _report(self, ctx, node: ast.Attribute, kind: str):
        end = ctx.end(node)
        if kind == DISTRIBUTION and node.attr == "sample_n":
            call = ctx.parent_of(node)
            message = "`Distribution.sample_n(n)` is deprecated (FutureWarning in PyTorch 2.4 through 2.15); use `sample((n,))`"
            fix = None
            if isinstance(call, ast.Call) and call.func is node and len(call.args) == 1 and not call.keywords \
                    and not isinstance(call.args[0], ast.Starred):
                argument = ctx.text[ctx.start(call.args[0]):ctx.end(call.args[0])]
                fix = Fix("Replace with `sample((n,))` (unsafe: a tuple where `sample_n` passed a `torch.Size`)",
                          [Edit(end - len("sample_n"), ctx.end(call), f"sample(({argument},))")], UNSAFE)
            yield ctx.diagnostic(node, message, fix)
        elif kind == CONCAT_DATASET and node.attr == "cummulative_sizes":
            message = ("`ConcatDataset.cummulative_sizes` is deprecated (FutureWarning in PyTorch 2.4 through 2.15); "
                       "use `cumulative_sizes`")
            fix = Fix("Rename to `cumulative_sizes`", [Edit(end - len(node.attr), end, "cumulative_sizes")], SAFE)
            yield ctx.diagnostic(node, message, fix)
        elif kind == TREESPEC and node.attr == "children_specs" and ctx.target >= CHILDREN_SPECS_DEPRECATED_IN:
            message = (f"`TreeSpec.children_specs` is deprecated in PyTorch {CHILDREN_SPECS_DEPRECATED_IN} "
                       "(FutureWarning); use `children()` (a copy) or `child(index)`, both new in 2.10")
            yield ctx.diagnostic(node, message, None)
