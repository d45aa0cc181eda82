"""Rule helpers made cheaper for speed give the answers of the code they replaced (issue 27).

TP209's receiver lookup used to walk the whole file once per method call (half the CPU time of a cold
check on torch-heavy trees); it now reads the statements that mention the receiver's name once per
file. The old walk is kept here as the reference, and both are asked about every method call's
receiver in code written to hit each way a name can be bound.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from torchpatch.engine.checker import Context
from torchpatch.engine.resolve import ScopeTree
from torchpatch.rules import _warning_sites
from torchpatch.rules.warned_argument import WarnedArgument
from torchpatch.versions import NEWEST_KNOWN, OLDEST_KNOWN


def _reference_receiver_class(ctx, receiver):
    """TP209's ``_receiver_class`` before issue 27: one ``ast.walk`` of the file per call."""
    if isinstance(receiver, ast.Name):
        matches = lambda target: isinstance(target, ast.Name) and target.id == receiver.id  # noqa: E731
    elif isinstance(receiver, ast.Attribute) and isinstance(receiver.value, ast.Name) \
            and receiver.value.id == "self":
        matches = lambda target: (isinstance(target, ast.Attribute) and target.attr == receiver.attr  # noqa: E731
                                  and isinstance(target.value, ast.Name) and target.value.id == "self")
    else:
        return None
    classes = set()
    for node in ast.walk(ctx.tree):
        if isinstance(node, ast.Assign) and any(matches(t) for t in node.targets):
            value = node.value
            qualname = ctx.resolves_to(value.func) if isinstance(value, ast.Call) and isinstance(
                value.func, (ast.Name, ast.Attribute)) else None
            classes.add(qualname if qualname and qualname.startswith("torch.") else None)
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.For, ast.With)) and any(
                matches(t) for t in ast.walk(getattr(node, "target", node))):
            classes.add(None)
    if len(classes) != 1:
        return None
    known = next(iter(classes))
    if known and any(name.startswith(known + ".") for name in _warning_sites.callables()):
        return known
    return None


SOURCES = [
    "import torch\nsched = torch.optim.lr_scheduler.StepLR(opt, 3)\nsched.step(epoch=1)\n",
    "import torch\nsched = torch.optim.lr_scheduler.StepLR(opt, 3)\nfor sched in []:\n    pass\nsched.step(1)\n",
    "import torch\nsched = torch.optim.lr_scheduler.StepLR(opt, 3)\nwith open(f) as g:\n    print(sched)\nsched.step(1)\n",
    "import torch\nsched = torch.optim.lr_scheduler.StepLR(opt, 3)\nsched += 1\nsched.step(1)\n",
    "import torch\nsched: int = 3\nsched = torch.optim.lr_scheduler.StepLR(opt, 3)\nsched.step(1)\n",
    "import torch\na = sched = torch.optim.lr_scheduler.StepLR(opt, 3)\nsched = torch.optim.SGD(p)\nsched.step()\n",
    "import torch\nfrom torch.optim.lr_scheduler import StepLR as S\nclass M(torch.nn.Module):\n"
    "    def __init__(self):\n        self.s = S(opt, 2)\n        self.m = torch.nn.Softmax()\n"
    "    @property\n    def f(self):\n        try:\n            self.s.step(epoch=2)\n        except ValueError:\n"
    "            self.s = None\n        finally:\n            self.m.forward(x)\n",
    "import torch\nclass M:\n    def f(self):\n        with torch.no_grad():\n            self.s = torch.nn.Linear(2, 2)\n"
    "        self.s.state_dict(d, 'p')\n        match x:\n            case 1:\n                self.t = torch.nn.ReLU()\n"
    "        self.t.state_dict(d)\n",
    "import torch\nx, y = torch.nn.Linear(1, 1), 2\nx.state_dict(a, b)\n(z) = torch.nn.Linear(1, 1)\nz.state_dict(a, b)\n",
    "import torch\nif c:\n    m = torch.nn.Linear(1, 1)\nelse:\n    m = torch.nn.Conv2d(1, 1, 1)\nm.state_dict(a, b)\n"
    "while True:\n    k = torch.nn.GRU(1, 1)\n    break\nk.flatten_parameters()\n",
    "import torch\nmodèle = torch.nn.Linear(1, 1)\nmodèle.state_dict(a, b)\nf = lambda: q.step(1)\n",
    "import torch\r\nclass A:\r\n    def f(self):\r\n        self.m = torch.nn.Linear(1, 1)\r\n\r\n"
    "    def g(self):\r\n        self.m.state_dict(a, b)\r\n        for self.k in y:\r\n            self.k.step(1)\r\n",
    "import torch\rm = torch.nn.Linear(1, 1)\rm.state_dict(a, b)\rwith x as m:\r    pass\rn = torch.nn.ReLU()\rn.state_dict(a)\r",
]


def _method_calls(tree: ast.Module) -> list[ast.Call]:
    return [node for node in ast.walk(tree) if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)]


@pytest.mark.parametrize("source", SOURCES)
def test_tp209_receiver_class_gives_the_old_walk_s_answer(source):
    tree = ast.parse(source)
    ctx = Context(source, None, tree, ScopeTree(tree), NEWEST_KNOWN, OLDEST_KNOWN)
    calls = _method_calls(tree)
    assert calls
    for call in calls:
        assert WarnedArgument._receiver_class(ctx, call.func.value) == _reference_receiver_class(ctx, call.func.value), \
            ast.unparse(call)


def test_tp209_receiver_class_on_the_rule_s_own_examples_and_this_repository():
    sources = [example if isinstance(example, str) else example.code
               for example in (*WarnedArgument.VALID, *WarnedArgument.INVALID)]
    engine = Path(__file__).resolve().parents[1] / "src" / "torchpatch" / "engine"
    sources += [path.read_text(encoding="utf-8") for path in sorted(engine.glob("*.py"))]
    asked = 0
    for source in sources:
        tree = ast.parse(source)
        ctx = Context(source, None, tree, ScopeTree(tree), NEWEST_KNOWN, OLDEST_KNOWN)
        for call in _method_calls(tree):
            asked += 1
            assert WarnedArgument._receiver_class(ctx, call.func.value) == _reference_receiver_class(ctx, call.func.value)
    assert asked > 1000
