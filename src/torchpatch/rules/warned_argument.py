"""TP209: a call whose arguments make the target release warn (conditions read from the wheels)."""

from __future__ import annotations

import ast
import functools
import re
import sys
from functools import lru_cache

from torchpatch.rules import _receivers, _warning_sites
from torchpatch.rules._wheel_rules import _GENERIC_CODES, LazyNames, covered, keyword_changes_by_callable, shorten
from torchpatch.rules.base import Invalid, Rule, Valid
from torchpatch.rules.legacy_loss_reduction import is_legacy_reduction_warning, legacy_reduction
from torchpatch.syntax import nodes_under
from torchpatch.versions import Version, v

#: Methods whose call shape alone names torch's method when the receiver's type is not known: the atoms
#: that must hold (``module.state_dict(destination, prefix)`` is ``nn.Module``'s signature; a scheduler's
#: ``step(epoch=...)``; ``x.scatter(dim, index, src, reduce=...)``; ``x.stft(..., return_complex=False)``).
_UNAMBIGUOUS_METHODS = {
    "state_dict": ("torch.nn.Module.state_dict", "positional"),
    "step": ("torch.optim.lr_scheduler.LRScheduler.step", "keyword"),
    "scatter": ("torch.Tensor.scatter", "keyword"),
    "scatter_": ("torch.Tensor.scatter_", "keyword"),
    "stft": ("torch.Tensor.stft", "keyword"),
}


def _method_sites() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for name, site in _warning_sites.callables().items():
        if site["method"]:
            found.setdefault(name.rpartition(".")[2], []).append(name)
    return found


class WarnedArgument(Rule):
    """
    ## What it does
    Flags a call to a PyTorch function, class or method whose arguments make the target release warn:
    a keyword passed (`torch.autograd.grad(..., only_inputs=False)`, `MinMaxObserver(reduce_range=True)`),
    passed with a given value (`torch.stft(..., return_complex=False)`), left out
    (`F.softmax(x)` without `dim=`, `F.grid_sample` without `align_corners=`), or positional arguments
    where torch wants keywords (`module.state_dict(destination, prefix)`), with torch's own message.

    The conditions are read from the real wheels by `scripts/build_warning_sites.py`: every
    `warnings.warn` site in a torch function together with the test on its parameters that guards it,
    followed through torch's own helpers (`_get_softmax_dim`, `super().__init__`) and through
    `self.dim` from `__init__` to `forward`. A condition that depends on a value the code does not spell
    out (a variable) is not reported. A method is reported where the receiver's class is known from an
    assignment in the file (`scheduler = StepLR(...)`), or where the call's shape names torch's method.

    When torch warns in a module's `forward` (`nn.Softmax()` without `dim=`, `nn.KLDivLoss()` with the
    default `reduction='mean'`), the line torch warns on is the module's call: `self.softmax(x)` in the
    class that assigns `self.softmax = nn.Softmax()`, or `m(x)` after `m = nn.Softmax()` in the same
    function, is reported too (naming the line the module was built on), unless the name is bound to
    anything else there.

    ## Why is this bad?
    torch warns on every such call: the form is deprecated, or its meaning changed or will change.
    """

    code = "TP209"
    name = "warned-argument"
    summary = "A call whose arguments make the target release warn (read from the wheels)"
    deprecated_in = v("2.4")
    references = ("https://github.com/pytorch/pytorch/releases",)
    calls = LazyNames(lambda: {name for name, site in _warning_sites.callables().items() if not site["method"]}
                      | {f"{name}.with_args" for name in _observer_classes()})
    methods = LazyNames(lambda: {*_method_sites(), "__init__"})
    # A call is reported only where the condition of a warning it reports may hold (a ``.with_args`` factory:
    # wherever it is called).
    call_needs = LazyNames(lambda: _call_needs(), kind=dict)
    # Every way a method call is reported goes through a site named ``<class>.<method>``: a call meets no need of
    # any such site (``optimizer.step()``, ``model.state_dict()``) is not reported.
    method_needs = LazyNames(lambda: _method_needs(), kind=dict)
    # super().__init__() is reported only when the class's one base resolves to a class in ``calls``.
    methods_with_mention = frozenset({"__init__"})

    VALID = [
        Valid("import torch\nimport torch.nn.functional as F\nx = torch.randn(2, 3)\ny = F.softmax(x, dim=-1)\n",
              torch_runs_clean=True),
        Valid("import torch\nx = torch.ones(2, requires_grad=True)\ng = torch.autograd.grad((x * 2).sum(), x)\n",
              torch_runs_clean=True),
        Valid("import torch\nimport torch.nn.functional as F\nimg = torch.randn(1, 1, 4, 4)\n"
              "theta = torch.eye(2, 3).unsqueeze(0)\ngrid = F.affine_grid(theta, (1, 1, 4, 4), align_corners=False)\n"
              "out = F.grid_sample(img, grid, align_corners=False)\n", torch_runs_clean=True),
        Valid("import torch\nmodel = torch.nn.Linear(2, 2)\nsd = model.state_dict(prefix='p.')\n",
              torch_runs_clean=True),
        Valid("import torch\nmodel = torch.nn.Linear(2, 2)\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
              "sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1)\nopt.step()\nsched.step()\n",
              torch_runs_clean=True),
        Valid("import torch\nx = torch.zeros(3)\nidx = torch.tensor([0, 1, 0])\n"
              "y = x.scatter(0, idx, 2.0, reduce='add')\n", torch_runs_clean=True),
        # A value the code does not spell out: torch may or may not warn.
        "import torch\nimport torch.nn.functional as F\ny = F.softmax(x, dim=axis)\ng = torch.autograd.grad(y, x, "
        "only_inputs=flag)\n",
        # An optimizer's step(closure) is not a scheduler's step(epoch), nor is timm's step(epoch, metric=).
        "import torch\noptimizer.step(closure)\n",
        "import torch\nlr_scheduler.step(epoch + 1, metric=None)\nscheduler.step(epoch, metric=1.0)\n",
        # Another library's stft is not torch's.
        "import torch\nimport librosa\ns = librosa.stft(y, n_fft=64)\n",
        Valid("import torch\n\nclass Head(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
              "        self.softmax = torch.nn.Softmax(dim=-1)\n\n    def forward(self, x):\n"
              "        return self.softmax(x)\n\ny = Head()(torch.randn(2, 3))\n", torch_runs_clean=True),
        Valid("import torch\nfrom torch.ao.quantization import MinMaxObserver\n\nclass RangeObserver(MinMaxObserver):\n"
              "    def __init__(self):\n        super().__init__(quant_min=0, quant_max=127)\n\nobs = RangeObserver()\n"
              "factory = MinMaxObserver.with_args(quant_min=0, quant_max=127)\nobs2 = factory()\n",
              torch_runs_clean=True),
        # Several bases: which __init__ super() reaches depends on the MRO.
        "import torch\nclass Mixed(Base, torch.nn.Softmax):\n    def __init__(self):\n        super().__init__()\n",
        Valid("import torch\nys, xs = torch.arange(3), torch.arange(4)\ngy, gx = torch.meshgrid(ys, xs, indexing='ij')\n",
              torch_runs_clean=True),
        Valid("import torch\nwav = torch.randn(400)\nspec = wav.stft(64, window=torch.hann_window(64), "
              "return_complex=True)\n", torch_runs_clean=True),
    ]
    INVALID = [
        Invalid("import torch\nimport torch.nn.functional as F\nx = torch.randn(2, 3)\ny = F.softmax(x)\n",
                torch_warns=r"Implicit dimension choice for softmax has been deprecated"),
        Invalid("import torch\nx = torch.randn(2, 3)\nm = torch.nn.LogSoftmax()\ny = m(x)\n",
                torch_warns=r"Implicit dimension choice for log_softmax has been deprecated"),
        Invalid("import torch\nimport torch.nn.functional as F\nimg = torch.randn(1, 1, 4, 4)\n"
                "theta = torch.eye(2, 3).unsqueeze(0)\ngrid = F.affine_grid(theta, (1, 1, 4, 4))\n",
                torch_warns=r"Default grid_sample and affine_grid behavior has changed to align_corners=False"),
        Invalid("import torch\nimport torch.nn.functional as F\np = torch.randn(4, 3).log_softmax(-1)\n"
                "q = torch.randn(4, 3).softmax(-1)\nloss = F.kl_div(p, q)\n",
                torch_warns=r"'mean' will be changed to behave the same as 'batchmean'"),
        Invalid("import torch\nx = torch.ones(2, requires_grad=True)\n"
                "g = torch.autograd.grad((x * 2).sum(), x, only_inputs=False)\n",
                torch_warns=r"only_inputs argument is deprecated"),
        Invalid("import torch\nsig = torch.randn(400)\nw = torch.hann_window(64)\n"
                "s = torch.stft(sig, 64, window=w, return_complex=False)\n",
                torch_warns=r"stft with return_complex=False is deprecated"),
        Invalid("import torch\nsig = torch.randn(400)\ns = torch.stft(sig, 64, return_complex=True)\n",
                torch_warns=r"A window was not provided"),
        Invalid("import torch\nmodel = torch.nn.Linear(2, 2)\nsd = model.state_dict({}, 'prefix.')\n",
                torch_warns=r"Positional args are being deprecated, use kwargs instead"),
        Invalid("import torch\nmodel = torch.nn.Linear(2, 2)\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
                "sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1)\nopt.step()\nsched.step(1)\n",
                torch_warns=r"The epoch parameter in `scheduler.step\(\)` was not necessary"),
        Invalid("import torch\nx = torch.zeros(3)\nidx = torch.tensor([0, 1, 0])\nsrc = torch.ones(3)\n"
                "y = x.scatter(0, idx, src, reduce='add')\n",
                torch_warns=r"The reduce argument of torch.scatter with Tensor src is deprecated"),
        Invalid("import torch\nfrom torch.autograd import Variable\nv = Variable(torch.ones(2), volatile=True)\n",
                torch_warns=r"volatile was removed and now has no effect"),
        Invalid("import torch\nfrom torch.ao.quantization.observer import MinMaxObserver\n"
                "obs = MinMaxObserver(reduce_range=True)\n",
                torch_warns=r"reduce_range will be deprecated in a future release"),
        Invalid("import torch\n\nclass M(torch.nn.Module):\n    @torch.jit.ignore(drop_on_export=True)\n"
                "    def helper(self, x):\n        return x\n",
                torch_warns=r"ignore\(drop_on_export=True\) has been deprecated"),
        # torch warns where the module is called (its forward): the call is reported as well as the build.
        Invalid("import torch\n\nclass Head(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                "        self.softmax = torch.nn.Softmax()\n\n    def forward(self, x):\n"
                "        return self.softmax(x)\n\ny = Head()(torch.randn(2, 3))\n",
                torch_warns=r"Implicit dimension choice for softmax has been deprecated"),
        Invalid("import torch\np = torch.randn(4, 3).log_softmax(-1)\nq = torch.randn(4, 3).softmax(-1)\n"
                "criterion = torch.nn.KLDivLoss()\nloss = criterion(p, q)\n",
                torch_warns=r"'mean' will be changed to behave the same as 'batchmean'"),
        # TP216 reports the construction (with its fix); torch warns where the loss is called, in its forward.
        Invalid("import torch\nx = torch.randn(4, 3)\ncriterion = torch.nn.MSELoss(reduction='elementwise_mean')\n"
                "loss = criterion(x, x + 1)\n",
                fixed="import torch\nx = torch.randn(4, 3)\ncriterion = torch.nn.MSELoss(reduction='mean')\n"
                      "loss = criterion(x, x + 1)\n",
                torch_warns=r"reduction='elementwise_mean' is deprecated"),
        # super().__init__ of a torch class is a call of that class.
        Invalid("import torch\nfrom torch.ao.quantization import MinMaxObserver\n\nclass RangeObserver(MinMaxObserver):\n"
                "    def __init__(self):\n        super().__init__(reduce_range=True)\n\nobs = RangeObserver()\n",
                torch_warns=r"reduce_range will be deprecated in a future release"),
        Invalid("import torch\n\nclass SumMSE(torch.nn.MSELoss):\n    def __init__(self):\n"
                "        super(SumMSE, self).__init__(size_average=False)\n\nloss = SumMSE()\n",
                torch_warns=r"size_average and reduce args will be deprecated"),
        # An observer's with_args factory passes its keywords to the class.
        Invalid("import torch\nfrom torch.ao.quantization import MinMaxObserver\n"
                "factory = MinMaxObserver.with_args(dtype=torch.quint8, reduce_range=True)\nobs = factory()\n",
                torch_warns=r"reduce_range will be deprecated in a future release"),
        # A dtype is true wherever torch tests the argument's truth.
        Invalid("import torch\nfrom torch.ao.quantization.observer import PlaceholderObserver\n"
                "obs = PlaceholderObserver(dtype=torch.float16, compute_dtype=torch.float16)\n",
                torch_warns=r"Please use `is_dynamic` instead of `compute_dtype`"),
        # A receiver known to be a tensor: every condition is read, not only the keywords.
        Invalid("import torch\nwav = torch.randn(400)\nspec = wav.stft(64, return_complex=True)\n",
                torch_warns=r"A window was not provided"),
        # An element of nn.Sequential warns where the Sequential is called.
        Invalid("import torch\nfrom torch import nn\n\nclass Net(nn.Module):\n    def __init__(self):\n"
                "        super().__init__()\n        self.head = nn.Sequential(nn.Linear(4, 3), nn.Softmax())\n\n"
                "    def forward(self, x):\n        return self.head(x)\n\ny = Net()(torch.randn(2, 4))\n",
                torch_warns=r"Implicit dimension choice for softmax has been deprecated"),
        # A name another rule watches (TP230 has DDP's broadcast_buffers=): the other warnings are this rule's.
        Invalid("import torch\nfrom torch.nn.parallel import DistributedDataParallel as DDP\n"
                "ddp = DDP(model, check_reduction=True)\n"),
        # 2.14 and later warn (the 2.13 the tests install does not).
        Invalid("import torch\nwith torch.autograd.profiler.profile(with_modules=True) as prof:\n    pass\n"),
    ]

    @classmethod
    def torch_messages(cls) -> tuple[str, ...]:
        return _warning_sites.messages(cls.calls | _method_names(), _answers)

    def check_call(self, ctx, call, qualname):
        if qualname.endswith(".with_args"):
            yield from self._with_args(ctx, call, qualname.rpartition(".")[0])
            return
        site = _warning_sites.callables().get(qualname)
        if site is not None:
            yield from self._report(ctx, call, qualname, site)

    def check_method_call(self, ctx, call):
        method = call.func.attr
        if method == "__init__":
            yield from self._super_init(ctx, call)
            return
        known = self._receiver_class(ctx, call.func.value)
        if known is None and f"torch.Tensor.{method}" in _warning_sites.callables() \
                and _receivers.is_tensor(ctx, call.func.value):
            known = "torch.Tensor"  # wav = torch.randn(...); wav.stft(64)
        if known is not None:
            qualname = f"{known}.{method}"
            site = _warning_sites.callables().get(qualname)
            if site is not None:
                yield from self._report(ctx, call, qualname, site)
            return
        shape = _UNAMBIGUOUS_METHODS.get(method)
        if shape is None or _is_literal_receiver(call.func.value):
            return
        if method == "state_dict" and call.args and _defines_positional_state_dict(ctx.tree):
            return  # the project's own state_dict(destination, prefix, keep_vars) may be the one called
        qualname, needs = shape
        site = _warning_sites.callables().get(qualname)
        if site is None:
            return
        if needs == "keyword" and not call.keywords:
            return
        known_parameters = {*site["positional"], *site["keyword_only"], *site.get("defaults", {}),
                            *(atom[1] for warning in site["warnings"] for atom in warning["when"])}
        if any(k.arg not in known_parameters for k in call.keywords):
            return  # another class's method (timm's Scheduler.step(epoch, metric=...))
        yield from self._report(ctx, call, qualname, site, keywords_only=needs == "keyword")

    def _super_init(self, ctx, call):
        """``super().__init__(...)`` in a subclass of a torch class is a call of that class's ``__init__``
        (``class Loss(nn.MSELoss): ... super().__init__(size_average=False)``)."""
        receiver = call.func.value
        if not (isinstance(receiver, ast.Call) and isinstance(receiver.func, ast.Name) and receiver.func.id == "super"
                and ctx.resolves_to(receiver.func) in (None, "super", "builtins.super")):
            return
        # The class around the call: the walker's scope says (a class's header is walked in the scope outside it).
        cls = ctx.statement if type(ctx.statement) is ast.ClassDef else ctx.scopes.enclosing_class(ctx.scope)
        if cls is None or len(cls.bases) != 1 or not isinstance(cls.bases[0], (ast.Name, ast.Attribute)):
            return  # several bases: which __init__ super() reaches depends on the MRO
        qualname = ctx.resolves_to(cls.bases[0])
        site = _warning_sites.callables().get(qualname or "")
        if site is not None and not site["method"]:
            # TP216 and TP207 see calls of the class, not super().__init__: every warning is this rule's here.
            yield from self._report(ctx, call, qualname, site, every_warning=True)

    def _with_args(self, ctx, call, qualname):
        """``MinMaxObserver.with_args(reduce_range=True)``: the factory builds the class with these arguments
        (torch's ``_with_args`` is a ``functools.partial`` over keywords), so the keywords are the class's."""
        site = _warning_sites.callables().get(qualname)
        if site is None or call.args:
            return
        yield from self._report(ctx, call, qualname, site, keywords_only=True)

    @staticmethod
    def _receiver_class(ctx, receiver: ast.expr) -> str | None:
        """The torch class every assignment in the file gives this name (``sched = StepLR(...)``)."""
        if isinstance(receiver, ast.Name):
            key = receiver.id
        elif isinstance(receiver, ast.Attribute) and isinstance(receiver.value, ast.Name) \
                and receiver.value.id == "self":
            key = ("self", receiver.attr)
        else:
            return None
        assigned, elsewhere = _assignments(ctx, key)
        if elsewhere:
            return None  # bound another way too (a loop target, ``+=``, a ``with``): not one known class
        classes = set()
        for value in assigned:
            qualname = ctx.resolves_to(value.func) if isinstance(value, ast.Call) and isinstance(
                value.func, (ast.Name, ast.Attribute)) else None
            classes.add(qualname if qualname and qualname.startswith("torch.") else None)
        if len(classes) != 1:
            return None
        known = next(iter(classes))
        # A class the data describes (a factory such as torch.zeros gives a tensor: left to the call's shape).
        if known and known in _classes_with_sites():
            return known
        return None

    def _report(self, ctx, call, qualname, site, keywords_only=False, every_warning=False):
        bound = _warning_sites.bind(call, site)
        if bound is None:
            return
        reported = set()
        objects = _torch_objects(ctx, bound)
        forwarded = _none_default_parameters(ctx, call, bound)
        legacy_bound = _with_legacy_reduction(bound, site)
        for warning in site["warnings"]:
            since = Version.parse(warning["since"])
            if since > ctx.target or warning["until"] and Version.parse(warning["until"]) <= ctx.target:
                continue
            if keywords_only and any(a[0] not in ("passed", "equals", "truthy", "falsy", "tensor") for a in
                                     warning["when"]):
                continue
            # An unknown receiver: the argument torch tests must be spelled as its keyword.
            if keywords_only and not all(any(k.arg == a[1] for k in call.keywords) for a in warning["when"]
                                         if a[0] != "tensor"):
                continue
            # TP216 legacy-loss-reduction and TP207 deprecated-keyword report these where they are written
            # (with the reduction= fix); where torch warns in the module's forward, the calls are this rule's.
            if _handled_by_covering_rule(qualname, warning):
                continue  # TP112 profiler-use-cuda's use_cuda=, TP401's use_reentrant=: that rule reports it
            elsewhere = not every_warning and (is_legacy_reduction_warning(warning, site)
                                               or _reported_by_deprecated_keyword(qualname, warning))
            if elsewhere and warning.get("on") != "forward":
                continue
            if any(atom[0] == "passed" and atom[1] in forwarded for atom in warning["when"]):
                continue  # super().__init__(size_average=size_average): None unless the caller passes one
            if any(atom[1] == "reduction" for atom in warning["when"]) and legacy_bound is not bound:
                if legacy_bound is None:
                    continue  # size_average=/reduce= set the reduction, from values the code does not spell out
                if _warning_sites.evaluate(warning["when"], legacy_bound, site, objects) is not True:
                    continue
            elif _warning_sites.evaluate(warning["when"], bound, site, objects) is not True:
                continue
            if warning["message"] in reported:
                continue
            reported.add(warning["message"])
            form = _warning_sites.describe(warning["when"])
            first = "2.4 or earlier" if since == Version.parse("2.4") else str(since)
            if not elsewhere:
                yield ctx.diagnostic(call, f"`{_short_name(qualname)}` {form} warns in PyTorch {ctx.target} "
                                           f"(since {first}): torch warns: {shorten(warning['message'])}")
            if warning.get("on") != "forward":
                continue
            # torch warns in the module's forward, so where the module is called, not where it was built.
            for use in _module_calls(ctx, call, qualname):
                yield ctx.diagnostic(use, f"`{ctx.source(use.func)}(...)` calls the `{_short_name(qualname)}` "
                                          f"built {form} on line {call.lineno}: it warns here in PyTorch "
                                          f"{ctx.target} (since {first}): torch warns: "
                                          f"{shorten(warning['message'])}")


def _none_default_parameters(ctx, call: ast.Call, bound: dict[str, ast.expr]) -> set[str]:
    """The torch parameters given a plain parameter of the enclosing function whose default is ``None``
    (``def __init__(self, size_average=None): super().__init__(size_average=size_average)``): torch tests
    ``is not None``, so it warns only where a caller passes a value, which this call does not show."""
    function = _enclosing(ctx, call, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
    if function is None:
        return set()
    arguments = function.args
    positional = [*arguments.posonlyargs, *arguments.args]
    defaults = dict(zip(positional[len(positional) - len(arguments.defaults):], arguments.defaults))
    defaults.update((a, d) for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults) if d is not None)
    none_default = {a.arg for a, d in defaults.items() if isinstance(d, ast.Constant) and d.value is None}
    return {parameter for parameter, node in bound.items()
            if isinstance(node, ast.Name) and node.id in none_default}


def _with_legacy_reduction(bound: dict[str, ast.expr], site: dict):
    """A loss given ``size_average=`` or ``reduce=``: torch (2.4-2.15 ``_Loss.__init__`` and the functional
    losses) replaces ``reduction`` by ``legacy_get_string(size_average, reduce)``, so ``KLDivLoss(size_average=False,
    reduce=False)`` has ``reduction='none'`` and never warns about ``'mean'``. Returns ``bound`` itself when
    neither is given, a copy with that reduction when both are literals, else None (not known)."""
    if "reduction" not in site["positional"] + site["keyword_only"]:
        return bound
    given = {name: bound[name] for name in ("size_average", "reduce") if name in bound
             and not (isinstance(bound[name], ast.Constant) and bound[name].value is None)}
    if not given:
        return bound
    values = {}
    for name, node in given.items():
        if not (isinstance(node, ast.Constant) and isinstance(node.value, bool)):
            return None
        values[name] = node.value
    legacy = dict(bound)
    legacy["reduction"] = ast.Constant(legacy_reduction(values.get("size_average"), values.get("reduce")))
    return legacy


_SEQUENTIAL = frozenset({"torch.nn.Sequential", "torch.nn.modules.container.Sequential"})

@functools.lru_cache(maxsize=1)
def _classes_with_sites() -> frozenset[str]:
    """Every ``X`` for which some warning site is named ``X.rest`` (each dotted start of a site's name)."""
    found = set()
    for name in _warning_sites.callables():
        parts = name.split(".")
        found.update(".".join(parts[:end]) for end in range(1, len(parts)))
    return frozenset(found)


def _target_key(node: ast.AST):
    """What ``_receiver_class`` matches a target by: a name's id, or ``("self", attr)`` for ``self.attr``."""
    kind = type(node)
    if kind is ast.Name:
        return node.id
    if kind is ast.Attribute and type(node.value) is ast.Name and node.value.id == "self":
        return ("self", node.attr)
    return None


def _assignments(ctx, key) -> tuple[list[ast.expr], bool]:
    """What ``_receiver_class`` reads of the file for one target key: the values of the ``=`` statements with a
    top-level target of that key, and whether the key is bound another way (anywhere in the target of an
    annotated or augmented assignment or a ``for`` loop, or anywhere in a ``with`` statement: then no single
    class is known). Read for every key at once, the first time a file asks (``_assignment_index``)."""
    index = ctx.memo.get("TP209 assignments")
    if index is None:
        index = ctx.memo["TP209 assignments"] = _assignment_index(ctx.tree)
    values, elsewhere = index
    if key in elsewhere:
        return [], True
    return values.get(key, []), False


def _assignment_index(tree: ast.Module) -> tuple[dict, set]:
    """For ``_assignments``: each target key's ``=`` values, and the keys bound another way. Every node looked
    for is a statement, so only statement lists are walked (a method call's receiver asks about one key, and a
    file's calls about many: one walk of the statements serves them all). Every key written in a ``with``
    statement is bound another way, so its body is not entered."""
    values: dict = {}
    elsewhere: set = set()
    blocks = [tree.body]
    while blocks:
        for node in blocks.pop():
            kind = type(node)
            if kind is ast.Assign:
                for key in {_target_key(target) for target in node.targets}:
                    values.setdefault(key, []).append(node.value)
                continue
            if kind is ast.With:
                _add_keys_in(node, elsewhere)
                continue
            if kind is ast.AnnAssign or kind is ast.AugAssign or kind is ast.For:
                _add_keys_in(node.target, elsewhere)
            for field in _STATEMENT_LISTS.get(kind, ()):
                inner = getattr(node, field)
                if inner:
                    blocks.append(inner)
            if kind in _HOLDERS:
                blocks.extend(holder.body for holder in getattr(node, _HOLDERS[kind]))
    values.pop(None, None)
    elsewhere.discard(None)
    return values, elsewhere


def _add_keys_in(node: ast.AST, keys: set) -> None:
    """Adds the ``_target_key`` of every node under ``node`` (itself included) to ``keys``."""
    keys.update(map(_target_key, nodes_under(node)))


#: The statement lists of each kind of statement that holds some (``handlers`` and ``cases`` hold more).
_STATEMENT_LISTS = {
    ast.FunctionDef: ("body",), ast.AsyncFunctionDef: ("body",), ast.ClassDef: ("body",),
    ast.For: ("body", "orelse"), ast.AsyncFor: ("body", "orelse"), ast.While: ("body", "orelse"),
    ast.If: ("body", "orelse"), ast.AsyncWith: ("body",), ast.Try: ("body", "orelse", "finalbody"),
    **({ast.TryStar: ("body", "orelse", "finalbody")} if hasattr(ast, "TryStar") else {}),
}
#: The statements whose handlers or cases hold statement lists (``body``).
_HOLDERS = {ast.Try: "handlers", ast.Match: "cases", **({ast.TryStar: "handlers"} if hasattr(ast, "TryStar") else {})}


def _module_calls(ctx, construction: ast.Call, qualname: str) -> list[ast.Call]:
    """The calls of the module ``construction`` builds: ``self.X(...)`` in the class that assigns
    ``self.X = construction``, or ``m(...)`` in the function (or module) that assigns ``m = construction``,
    when every assignment to that name there builds the same torch class. A module built as an element of
    ``nn.Sequential(...)`` warns where the Sequential is called (``self.head = nn.Sequential(..., nn.Softmax())``
    then ``self.head(x)``)."""
    container = ctx.parent_of(construction)
    if isinstance(container, ast.Call) and construction in container.args \
            and isinstance(container.func, (ast.Name, ast.Attribute)) \
            and ctx.resolves_to(container.func) in _SEQUENTIAL:
        construction, qualname = container, ctx.resolves_to(container.func)
    assignment = ctx.parent_of(construction)
    if not isinstance(assignment, ast.Assign) or len(assignment.targets) != 1 \
            or assignment.value is not construction:
        return []
    target = assignment.targets[0]
    if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
        scope = _enclosing(ctx, assignment, (ast.ClassDef,))
        matches = lambda node: (isinstance(node, ast.Attribute) and node.attr == target.attr  # noqa: E731
                                and isinstance(node.value, ast.Name) and node.value.id == "self")
    elif isinstance(target, ast.Name):
        scope = _enclosing(ctx, assignment, (ast.FunctionDef, ast.AsyncFunctionDef)) or ctx.tree
        matches = lambda node: isinstance(node, ast.Name) and node.id == target.id  # noqa: E731
    else:
        return []
    if scope is None:
        return []
    calls = []
    for node in _walk_without_nested_classes(scope):
        if isinstance(node, ast.Assign) and any(matches(t) for t in node.targets):
            if not (isinstance(node.value, ast.Call) and isinstance(node.value.func, (ast.Name, ast.Attribute))
                    and ctx.resolves_to(node.value.func) == qualname
                    and _same_arguments(node.value, construction)):
                return []  # rebound to something else: which module is called is not known
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.For, ast.With, ast.NamedExpr,
                               ast.comprehension)) and any(matches(t) for t in ast.walk(
                                   getattr(node, "target", None) or node)):
            return []
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and node is not scope \
                and isinstance(target, ast.Name) and any(a.arg == target.id for a in ast.walk(node.args)
                                                         if isinstance(a, ast.arg)):
            return []  # a parameter of the same name in a nested function
        elif isinstance(node, ast.Call) and matches(node.func):
            calls.append(node)
    return sorted(calls, key=lambda node: (node.lineno, node.col_offset))


def _walk_without_nested_classes(scope: ast.AST):
    """``ast.walk`` that leaves out classes defined inside ``scope``: their ``self`` is another object."""
    pending = [scope]
    while pending:
        node = pending.pop()
        yield node
        pending.extend(child for child in ast.iter_child_nodes(node) if not isinstance(child, ast.ClassDef))


def _same_arguments(call: ast.Call, other: ast.Call) -> bool:
    return ast.dump(call) == ast.dump(other)


def _enclosing(ctx, node: ast.AST, kinds: tuple[type, ...]) -> ast.AST | None:
    parent = ctx.parent_of(node)
    while parent is not None and not isinstance(parent, kinds):
        parent = ctx.parent_of(parent)
    return parent


@lru_cache(maxsize=None)
def _parameters_of_rules_watching(qualname: str) -> frozenset[str]:
    """The parameter names (as string literals) in the sources of the hand-written rules that watch
    ``qualname``: TP230 ddp-broadcast-buffers names "broadcast_buffers", so its warnings are that rule's,
    while DDP's check_reduction= is this one's."""
    if not covered(qualname):
        return frozenset()
    from torchpatch.rules import all_rules
    from torchpatch.rules._manifest import building, rule_facts

    parts = qualname.split(".")
    prefixes = {".".join(parts[:cut]) for cut in range(len(parts), 1, -1)}
    found: set[str] = set()
    for facts in all_rules() if building() else rule_facts():  # only the rules that watch the name are imported
        if facts.code in _GENERIC_CODES or facts.code == WarnedArgument.code \
                or not prefixes & {*facts.calls, *facts.references_to}:
            continue
        try:
            source = _module_source(sys.modules[facts.__module__ if isinstance(facts, type)
                                                else facts.rule_class().__module__])
        except (OSError, ImportError, AttributeError, KeyError, UnicodeDecodeError):
            source = None
        if source is None:
            return frozenset({"*"})  # cannot tell: leave every warning of the name to that rule
        found.update(_QUOTED.findall(source))
    return frozenset(found)


def _module_source(module) -> str | None:
    """A module's source text, as inspect.getsource finds it (its ``.py`` file, else its loader's copy), without
    importing inspect for a check."""
    filename = getattr(module, "__file__", None) or ""
    if filename.endswith(".py"):
        with open(filename, encoding="utf-8") as stream:
            return stream.read()
    return module.__loader__.get_source(module.__name__)


_QUOTED = re.compile(r"""["'`]([A-Za-z_][A-Za-z0-9_]*)["'`=]""")


def _handled_by_covering_rule(qualname: str, warning: dict) -> bool:
    handled = _parameters_of_rules_watching(qualname)
    if not handled:
        return False
    if "*" in handled:
        return True
    parameters = {atom[1] for atom in warning["when"] if atom[0] not in ("tensor", "positional")}
    return bool(parameters & handled)


def _torch_objects(ctx, bound: dict[str, ast.expr]) -> dict[int, _warning_sites.TorchObject]:
    """The arguments that name a torch dtype (``compute_dtype=torch.float16``): true wherever torch tests them."""
    found = {}
    for node in bound.values():
        if isinstance(node, (ast.Name, ast.Attribute)):
            qualname = ctx.resolves_to(node)
            if qualname in _warning_sites.DTYPE_NAMES:
                found[id(node)] = _warning_sites.TorchObject(qualname)
    return found


def _observer_classes() -> set[str]:
    """The classes with sites that torch gives a ``with_args`` factory (the quantization observers)."""
    return {name for name, site in _warning_sites.callables().items()
            if not site["method"] and ".quantization." in name}


def _call_needs() -> dict:
    """For Rule.call_needs: per callable, what a call needs for a warning check_call may report (_report leaves the
    ones TP216 and TP207 report where they are written to them, unless torch warns in the module's forward)."""
    needs = {}
    for name, site in _warning_sites.callables().items():
        if site["method"]:
            continue
        warnings = [warning for warning in site["warnings"] if warning.get("on") == "forward" or not (
            is_legacy_reduction_warning(warning, site) or _reported_by_deprecated_keyword(name, warning))]
        need = _warning_sites.call_need(site, warnings)
        if need is not None:
            needs[name] = need
    return needs


def _method_needs() -> dict:
    """For Rule.method_needs: per method name, what a call needs for a warning of a site of that name."""
    needs: dict = {}
    ungated: set[str] = {"__init__"}  # super().__init__(): the base class's site, whatever its name
    for name, site in _warning_sites.callables().items():
        method = name.rpartition(".")[2]
        need = _warning_sites.call_need(site, site["warnings"])
        if need is None:
            ungated.add(method)
        elif method in needs:
            needs[method] = needs[method].merged(need)
        else:
            needs[method] = need
    return {method: need for method, need in needs.items() if method not in ungated}


def _method_names() -> set[str]:
    return {name for names in _method_sites().values() for name in names}


def _answers(warning: dict, site: dict) -> bool:
    return not is_legacy_reduction_warning(warning, site)


def _reported_by_deprecated_keyword(qualname: str, warning: dict) -> bool:
    """A plain ``passed`` keyword that TP207 deprecated-keyword already reports from the API database."""
    atoms = warning["when"]
    if len(atoms) != 1 or atoms[0][0] != "passed":
        return False
    return "deprecated" in keyword_changes_by_callable().get(qualname, {}).get(atoms[0][1], {})


def _short_name(qualname: str) -> str:
    return qualname.rsplit(".", 2)[-2] + "." + qualname.rsplit(".", 1)[-1] if qualname.count(".") > 1 else qualname


def _defines_positional_state_dict(tree: ast.Module) -> bool:
    """The file defines a ``state_dict`` method that takes positional parameters (torchrec's lookups override
    ``state_dict(self, destination=None, prefix="", keep_vars=False)`` and forward those positionally to their
    kernels, which override it too): a positional ``x.state_dict(destination, prefix)`` on an unknown receiver
    may then call such an override, on which torch never warns."""
    return any(isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == "state_dict"
               and len(node.args.posonlyargs) + len(node.args.args) > 1 for node in ast.walk(tree))


def _is_literal_receiver(receiver: ast.expr) -> bool:
    return isinstance(receiver, (ast.Constant, ast.JoinedStr, ast.List, ast.Tuple, ast.Dict, ast.Set))
