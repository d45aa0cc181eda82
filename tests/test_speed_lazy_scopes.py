"""Pass 1 may leave for later the function bodies that hold no candidate row (resolve.ScopeTree, ``walked_rows``).
A body left for later is visited when something first looks into it, and it must come out exactly as pass 1
would have built it at once: the same bindings (fallback and conditional flags included), the same guard
classification of its ``if`` tests (which look names up as the enclosing scopes were when the ``def`` was
reached), the same name lookups afterwards. Each file below is built both ways and compared; then the whole
check runs with and without the deferral, and the findings must be the same to the byte."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import torchpatch.engine.checker as checker
from torchpatch.engine.candidates import rows_of, word_offsets_of
from torchpatch.engine.resolve import ScopeTree
from torchpatch.rules import all_rules
from torchpatch.rules._api_db import star_exports
from torchpatch.rules.base import Invalid, example_code
from torchpatch.versions import Version

ROOT = Path(__file__).resolve().parent.parent
TARGET, MIN_TORCH = Version.parse("2.13"), Version.parse("2.4")


def _exports(module: str):
    return star_exports(module, MIN_TORCH, TARGET)


def _eager_rows(code: str) -> list[int]:
    return rows_of(code, word_offsets_of(code, "global", len(code))) if "global" in code else []


def _dump(tree: ast.Module, scopes: ScopeTree, through_lookups: bool) -> list:
    """Everything pass 1 decides, in source order; ``through_lookups``: bodies are materialized by the name
    lookups made from inside them (in source order), not all at once through ``scope_of``."""
    definitions = [node for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    definitions.sort(key=lambda node: (node.lineno, node.col_offset))
    lookups = []
    if through_lookups:
        for node in definitions:
            scope = scopes.scope_of_node(node, scopes.module_scope)
            for inner in ast.walk(node):
                if type(inner) is ast.Name and inner is not node:
                    lookups.append((inner.id, inner.lineno, inner.col_offset, scopes.qualname(inner, scope)))
    scope_of = scopes.scope_of

    def bindings(scope):
        return sorted((name, b.position, b.qualname, None if b.alias_of is None else ast.dump(b.alias_of),
                       b.fallback, b.conditional, b.star, b.import_alias is not None)
                      for name, found in scope.bindings.items() for b in found)

    result = [("module", bindings(scopes.module_scope))]
    result += [(node.name, node.lineno, bindings(scope_of[id(node)]), sorted(scope_of[id(node)].global_names))
               for node in definitions]
    ifs = sorted((node for node in ast.walk(tree) if type(node) is ast.If), key=lambda node: (node.lineno, node.col_offset))
    result.append([(node.lineno, scopes.old_branch_of.get(id(node), "unvisited")) for node in ifs])
    if not through_lookups:
        for node in definitions:
            scope = scope_of[id(node)]
            for inner in ast.walk(node):
                if type(inner) is ast.Name and inner is not node:
                    lookups.append((inner.id, inner.lineno, inner.col_offset, scopes.qualname(inner, scope)))
    result.append(sorted(lookups, key=repr))
    return result


def _assert_built_the_same(code: str, every_row: bool = False) -> None:
    """Built at once and deferred: with no walked row (every body that may wait does) and, with ``every_row``,
    with each single row walked (the bodies around it visited at once, the others deferred)."""
    tree = ast.parse(code)
    expected = _dump(tree, ScopeTree(tree, _exports), through_lookups=False)
    expected_by_lookups = _dump(tree, ScopeTree(tree, _exports), through_lookups=True)
    row_sets = [[], *([row] for row in range(1, code.count("\n") + 2))] if every_row else [[]]
    for rows in row_sets:
        for through_lookups, wanted in ((False, expected), (True, expected_by_lookups)):
            deferred = ScopeTree(tree, _exports, walked_rows=rows, eager_rows=_eager_rows(code))
            assert _dump(tree, deferred, through_lookups) == wanted, rows


SNIPPETS = {
    "module name bound again after the def": (
        "import torch\nTORCH_GE_2_4 = True\n"
        "def f():\n    if hasattr(torch, 'compile'):\n        x = torch.compile\n    else:\n        x = None\n    return x\n"
        "torch = None\n"),
    "module import after the def": (
        "def f():\n    if hasattr(torch, 'compile'):\n        return 1\n    y = 2\n    return y\nimport torch\n"),
    "local shadowing before and after the test": (
        "import torch\ndef f(a):\n    if hasattr(torch, 'x'):\n        pass\n    torch = a\n"
        "    if hasattr(torch, 'y'):\n        pass\n"),
    "early return on new releases": (
        "import torch\ndef f():\n    if hasattr(torch, 'compile'):\n        return torch.compile\n"
        "    amp = torch.cuda.amp\n    return amp\n"),
    "a def inside an except ImportError": (
        "try:\n    from torch.amp import GradScaler\nexcept ImportError:\n    def f():\n        scaler = 1\n        return scaler\n"),
    "a def in a branch of a version check": (
        "import torch\nif torch.__version__ >= '2.4':\n    def f():\n        new = torch.amp\n        return new\n"
        "else:\n    def f():\n        old = torch.cuda.amp\n        return old\n"),
    "nested functions and a class": (
        "import torch\nVERSION = torch.__version__\ndef outer():\n    helper = torch.cuda\n"
        "    def inner():\n        if VERSION < '2.4':\n            v = helper.amp\n        return v\n"
        "    class Local:\n        def method(self):\n            return helper\n    return inner, Local\n"
        "VERSION = '0'\n"),
    "alias bound after the def": (
        "import torch\ndef f():\n    if hasattr(cu, 'amp'):\n        pass\ncu = torch.cuda\n"),
    "a global statement": (
        "def setup():\n    global dist\n    import torch.distributed as dist\ndef use():\n    return dist.get_rank()\n"),
    "a global statement in an enclosing function": (
        "import torch\ndef outer():\n    def inner():\n        if hasattr(t, 'x'):\n            pass\n        return t\n"
        "    global t\n    t = torch\n    return inner\n"),
    "async functions, loops, with, match": (
        "import torch\nasync def f(xs):\n    async for x in xs:\n        y = x\n    with open(p) as fh:\n        z = fh\n"
        "    match y:\n        case [a, *rest]:\n            pass\n    try:\n        w = 1\n    except Exception as error:\n        w = error\n    return w\n"),
    "decorated and star-imported": (
        "from torch.cuda.amp import *\n@decorate\n@other(1)\ndef f():\n    if hasattr(autocast, 'x'):\n        g = autocast\n    return g\n"),
}


@pytest.mark.parametrize("name", list(SNIPPETS))
def test_deferred_bodies_are_built_as_pass_1_builds_them(name):
    _assert_built_the_same(SNIPPETS[name], every_row=True)


def _texts():
    for rule in all_rules():
        for kind in ("VALID", "INVALID"):
            for number, example in enumerate(getattr(rule, kind)):
                yield pytest.param(example_code(example), id=f"{rule.code}-{kind.lower()}{number}")
                if isinstance(example, Invalid) and example.fixed:
                    yield pytest.param(example_code(example.fixed), id=f"{rule.code}-{kind.lower()}{number}-fixed")
    for path in sorted([*(ROOT / "tests" / "fixtures").rglob("*.py"), *(ROOT / "examples").rglob("*.py")]):
        yield pytest.param(path.read_text(encoding="utf-8"), id=path.name)


@pytest.mark.parametrize("code", list(_texts()))
def test_rule_examples_and_fixtures_are_built_the_same(code):
    try:
        ast.parse(code)
    except SyntaxError:
        pytest.skip("not Python (a notebook or dependency-file example)")
    _assert_built_the_same(code)


def test_a_lookup_from_a_waiting_body_builds_it_first():
    code = "import torch\ndef f():\n    load = torch.load\n    return load\n"
    tree = ast.parse(code)
    scopes = ScopeTree(tree, _exports, walked_rows=[], eager_rows=[])
    function = tree.body[1]
    scope = scopes.scope_of_node(function, scopes.module_scope)
    assert scope.pending is not None and not scope.bindings
    returned = function.body[1].value
    assert scopes.qualname(returned, scope) == "torch.load"
    assert scope.pending is None and "load" in scope.bindings


def test_bodies_holding_a_walked_row_are_visited_at_once():
    code = "import torch\ndef f():\n    return torch.load(p)\ndef g():\n    return 1\n"
    tree = ast.parse(code)
    scopes = ScopeTree(tree, _exports, walked_rows=[1, 3], eager_rows=[])
    f, g = tree.body[1], tree.body[2]
    assert scopes.scope_of_node(f, scopes.module_scope).pending is None
    assert scopes.scope_of_node(g, scopes.module_scope).pending is not None


# -- the whole check, with and without the deferral (and the candidate rows read without the scope tree) ----

def _findings(code: str, deferred: bool, monkeypatch, select=("ALL",)) -> list:
    from torchpatch.engine.settings import Settings

    settings = Settings()
    settings.select = list(select)
    settings.min_torch = MIN_TORCH
    index = settings.rules_for(Path("snippet.py"))
    if not deferred:
        original = checker.nothing_to_walk

        def exact(*arguments, **keywords):
            answer = original(*arguments, **keywords)
            arguments[4].rows = None  # the rows and the scope tree of before: all of pass 1 at once
            return answer

        monkeypatch.setattr(checker, "nothing_to_walk", exact)
    tree = ast.parse(code)
    found = checker.check_tree(code, tree, index, settings.target, settings.min_torch)
    monkeypatch.undo()
    return [(d.code, d.start, d.end, d.message, None if d.fix is None else (d.fix.message, d.fix.applicability,
                                                                            tuple(d.fix.edits)))
            for d in found]


@pytest.mark.parametrize("code", [*(pytest.param(code, id=name) for name, code in SNIPPETS.items()), *_texts()])
def test_findings_are_the_same_with_and_without_the_deferral(code, monkeypatch):
    try:
        ast.parse(code)
    except SyntaxError:
        pytest.skip("not Python (a notebook or dependency-file example)")
    assert _findings(code, True, monkeypatch) == _findings(code, False, monkeypatch)


def test_method_offsets_are_the_method_patterns_matches():
    from torchpatch.engine.settings import Settings

    settings = Settings()
    settings.select = ["ALL"]
    index = settings.rules_for(Path("snippet.py"))
    texts = ["", "x.compile()", "model . zero_grad (set_to_none=False)\nopt.zero_grad\n(x).storage ()",
             "a.compiled()\nb.recompile()\nc.to_local(\n)\nd.to_localx()\ne._flatten(1)._flatten(2)",
             "torch.compile\nx = y.compile\t(\n)", "..compile((", ".\n compile\n(", "compile(x)"]
    for path in sorted([*(ROOT / "tests" / "fixtures").rglob("*.py"), *(ROOT / "examples").rglob("*.py")]):
        texts.append(path.read_text(encoding="utf-8"))
    texts += [example_code(example) for rule in all_rules() for example in (*rule.VALID, *rule.INVALID)]
    from torchpatch.engine.candidates import call_may_meet

    gates = index.method_gates
    for text in texts:
        assert index.method_offsets(text) == [
            match.start() for match in index.method_pattern.finditer(text)
            if match.group(1) not in gates or call_may_meet(text, match.end() - 1, gates[match.group(1)])], text


def test_method_calls_that_cannot_meet_their_rules_needs_are_not_candidates():
    """Rule.method_needs: ``optimizer.step()``, ``model.state_dict()``, ``x.add(y)`` are not reported by any rule."""
    from torchpatch.engine.settings import Settings

    settings = Settings()
    settings.select = ["ALL"]
    index = settings.rules_for(Path("snippet.py"))
    # TP258's forms have exactly so many positional arguments (CallNeed.counts): two for ``sub``, not three.
    skipped = ("opt.step()\nmodel.state_dict(prefix='m.')\nx.add(y)\np.add_(g, alpha=-lr)\nx.scatter_(0, i, s)\n"
               "name = re.sub(r'[^a-z]', '_', name)\nm.addmm(a, b, c, d, e)\n")
    kept = ("sched.step(1)\nopt.step(closure)\nx.add(2, y)\nmodel.state_dict(d, 'p.')\nx.scatter_(0, i, s, reduce='add')\n"
            "x.sub(*pair)\nm.addmm(0.5, a, b)\nm.addmm(0.5, 2.0, a, b)\n")
    assert index.method_offsets(skipped) == []
    assert [kept[offset:kept.index("(", offset)] for offset in index.method_offsets(kept)] == [
        ".step", ".step", ".add", ".state_dict", ".scatter_", ".sub", ".addmm", ".addmm"]


def test_method_pattern_alternation_matches_exactly_its_words():
    # checker.alternation writes the watched method names as a trie; it must match what "|".join did.
    import itertools
    import re

    words = sorted({rule_method for rule in all_rules() for rule_method in rule.methods})
    assert len(words) > 20
    pattern = re.compile(rf"(?:{checker.alternation(words)})\Z")
    near = {w + extra for w in words for extra in ("", "_", "x", "1")} | {w[:-1] for w in words}
    near |= {"".join(pair) for pair in itertools.product(["add", "sub", "a", ""], ["", "_", "mm", "cmul"])}
    assert {w for w in near if pattern.match(w)} == set(words)
    assert checker.alternation(["add", "add_", "addmm", "x.y"]) == r"(?:add(?:_|mm)?|x\.y)"
    assert checker.alternation([]) == ""
