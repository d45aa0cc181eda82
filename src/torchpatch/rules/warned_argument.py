"""TP209: a call whose arguments make the target release warn (conditions read from the wheels)."""

from __future__ import annotations

import ast
import bisect
import functools

from torchpatch.rules import _warning_sites
from torchpatch.rules._wheel_rules import LazyNames, covered, keyword_changes_by_callable, shorten
from torchpatch.rules.base import Invalid, Rule, Valid
from torchpatch.rules.legacy_loss_reduction import is_legacy_reduction_warning
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
    calls = LazyNames(lambda: {name for name, site in _warning_sites.callables().items()
                               if not site["method"] and not covered(name)})
    methods = LazyNames(lambda: set(_method_sites()))

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
    ]

    @classmethod
    def torch_messages(cls) -> tuple[str, ...]:
        return _warning_sites.messages(cls.calls | _method_names(), _answers)

    def check_call(self, ctx, call, qualname):
        site = _warning_sites.callables().get(qualname)
        if site is not None:
            yield from self._report(ctx, call, qualname, site)

    def check_method_call(self, ctx, call):
        method = call.func.attr
        known = self._receiver_class(ctx, call.func.value)
        if known is not None:
            qualname = f"{known}.{method}"
            site = _warning_sites.callables().get(qualname)
            if site is not None:
                yield from self._report(ctx, call, qualname, site)
            return
        shape = _UNAMBIGUOUS_METHODS.get(method)
        if shape is None or _is_literal_receiver(call.func.value):
            return
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

    def _report(self, ctx, call, qualname, site, keywords_only=False):
        bound = _warning_sites.bind(call, site)
        if bound is None:
            return
        reported = set()
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
            if is_legacy_reduction_warning(warning, site):
                continue  # TP216 legacy-loss-reduction reports these, with the reduction= fix
            if _reported_by_deprecated_keyword(qualname, warning):
                continue
            if _warning_sites.evaluate(warning["when"], bound, site) is not True:
                continue
            if warning["message"] in reported:
                continue
            reported.add(warning["message"])
            form = _warning_sites.describe(warning["when"])
            first = "2.4 or earlier" if since == Version.parse("2.4") else str(since)
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



def _mention_test(text: str, word: str):
    """Whether a statement's rows (its decorators' included) hold ``word`` or a non-ASCII character (an
    identifier can be another spelling of an ASCII one, NFKC): a statement without holds no target named so.
    The engine's linter.mention_test, by rows (a rule imports no engine module)."""
    if "\r" in text.replace("\r\n", "\n"):
        return lambda statement: True  # lone CRs end lines too: every statement is read
    offsets = []
    at = text.find(word)
    while at >= 0:
        offsets.append(at)
        at = text.find(word, at + 1)
    if not text.isascii():
        offsets.extend(index for index, character in enumerate(text) if ord(character) > 127)
        offsets.sort()
    rows, row, previous = [], 1, 0
    for offset in offsets:
        row += text.count("\n", previous, offset)
        previous = offset
        if not rows or rows[-1] != row:
            rows.append(row)

    def mentions(statement: ast.stmt) -> bool:
        decorators = getattr(statement, "decorator_list", None)
        first = decorators[0].lineno if decorators else statement.lineno
        at = bisect.bisect_left(rows, first)
        return at < len(rows) and rows[at] <= statement.end_lineno

    return mentions


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
    """What ``_receiver_class`` reads of the file for one target key (once per key and file, not once per
    method call): the values of the ``=`` statements with a top-level target of that key, and whether the key
    is bound another way (anywhere in the target of an annotated or augmented assignment or a ``for`` loop, or
    anywhere in a ``with`` statement: then no single class is known). Every node looked for is a statement, so
    only statement lists are walked, and only the statements whose lines hold the key's name are entered
    (linter.mention_test): a target is written on its statement's lines."""
    known = ctx.memo.setdefault("TP209 assignments", {})
    found = known.get(key)
    if found is not None:
        return found
    mentions = _mention_test(ctx.text, key if type(key) is str else key[1])
    values: list[ast.expr] = []
    found = (values, False)
    blocks = [ctx.tree.body]
    while blocks:
        for node in blocks.pop():
            if not mentions(node):
                continue
            kind = type(node)
            if kind is ast.Assign:
                if any(_target_key(target) == key for target in node.targets):
                    values.append(node.value)
            elif kind in (ast.AnnAssign, ast.AugAssign, ast.For, ast.With) and any(
                    _target_key(inner) == key for inner in ast.walk(node.target if kind is not ast.With else node)):
                found = ([], True)
                blocks.clear()
                break
            for field in ("body", "orelse", "finalbody"):
                inner = getattr(node, field, None)
                if type(inner) is list and inner and isinstance(inner[0], ast.stmt):
                    blocks.append(inner)
            for holder in (*getattr(node, "handlers", ()), *getattr(node, "cases", ())):
                blocks.append(holder.body)
    known[key] = found
    return found


def _module_calls(ctx, construction: ast.Call, qualname: str) -> list[ast.Call]:
    """The calls of the module ``construction`` builds: ``self.X(...)`` in the class that assigns
    ``self.X = construction``, or ``m(...)`` in the function (or module) that assigns ``m = construction``,
    when every assignment to that name there builds the same torch class."""
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


def _is_literal_receiver(receiver: ast.expr) -> bool:
    return isinstance(receiver, (ast.Constant, ast.JoinedStr, ast.List, ast.Tuple, ast.Dict, ast.Set))
