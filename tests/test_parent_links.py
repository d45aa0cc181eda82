"""checker.parent_links gives what ast.walk with ast.iter_child_nodes gives, on real code of every shape."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from torchpatch.engine.checker import parent_links

SHAPES = '''\
import torch
from torch import nn as n, cuda
x: "int" = 1
async def f(a, /, b=2, *c, d: int = 3, **e) -> None:
    async with torch.autocast("cuda") as (p, q):
        async for i in g():
            yield [j async for j in h() if j]
    match x:
        case {"k": [1, *rest]} | Point(x=0) if rest:
            pass
        case _:
            del x
    try:
        raise ValueError from None
    except* (TypeError, ValueError) as err:
        pass
    lambda k=1, *a, **b: (k, a, b)
    print(f"{x!r:>{10}}", *c, **e)
    global y
    return x[1:2, ::3] if a else {**e, 1: 2} or {1, 2}
'''


_SHARED = (ast.expr_context, ast.boolop, ast.operator, ast.unaryop, ast.cmpop)


def _by_walk(tree: ast.AST) -> dict[int, ast.AST]:
    """The links as parent_of built them before; less the shared contexts and operators, whose one "parent"
    was whichever node ast.walk reached last."""
    return {id(child): parent for parent in ast.walk(tree) for child in ast.iter_child_nodes(parent)
            if not isinstance(child, _SHARED)}


@pytest.mark.parametrize("path", sorted(p for p in (Path(__file__).parents[1] / "src" / "torchpatch" / "engine").glob("*.py")
                                         if p.stat().st_size > 2000),
                         ids=lambda p: p.name)
def test_the_same_links_as_ast_walk_on_real_code(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    links = parent_links(tree)
    assert links == _by_walk(tree) and len(links) > 100


def test_the_same_links_on_every_kind_of_node() -> None:
    tree = ast.parse(SHAPES)
    links = parent_links(tree)
    assert links == _by_walk(tree)
    kinds = {type(node).__name__ for node in ast.walk(tree)}
    assert {"MatchMapping", "TryStar", "JoinedStr", "comprehension", "arguments", "withitem"} <= kinds
    load = next(node.ctx for node in ast.walk(tree) if type(node) is ast.Name)
    assert id(load) not in links  # one Load() for every Name that reads


FSTRINGS = ('x = f"""a\n{b}\n{c!r:>{w}}"""\ny = (f"{d}"\n     f"{e(f, g)}")\n'
            "z = f\"{f'{h}'}\"\n")


@pytest.mark.parametrize("source", [SHAPES, "@dec\nclass A: x = 1; y = [i for i in z]\n@torch.no_grad()\ndef f(): pass\n",
                                    FSTRINGS,
                                    (Path(__file__).parents[1] / "src" / "torchpatch" / "engine" / "checker.py").read_text()],
                         ids=["shapes", "decorators", "f-strings", "checker.py"])
def test_context_parent_of_links_by_statement_with_the_same_answers(source: str) -> None:
    """Context.parent_of links only along the rows asked about (issue 27): every node, asked in a shuffled
    order and with its ancestors after it as the rules ask, gets the whole-tree answer."""
    import random

    from torchpatch.engine.checker import Context
    from torchpatch.engine.resolve import ScopeTree
    from torchpatch.versions import NEWEST_KNOWN, OLDEST_KNOWN

    tree = ast.parse(source)
    links = parent_links(tree)
    nodes = [node for node in ast.walk(tree) if not isinstance(node, _SHARED)]
    random.Random(27).shuffle(nodes)
    ctx = Context(source, None, tree, ScopeTree(tree), NEWEST_KNOWN, OLDEST_KNOWN)
    first = nodes[0]
    assert ctx.parent_of(first) is links.get(id(first))
    assert not ctx._whole_tree_linked or len(tree.body) == 1 or not hasattr(first, "lineno")
    for node in nodes:
        parent = ctx.parent_of(node)
        assert parent is links.get(id(node)), ast.dump(node)[:80]
        while parent is not None:  # the ancestors, up to the module
            assert ctx.parent_of(parent) is links.get(id(parent))
            parent = ctx.parent_of(parent)
    assert ctx.parent_of(ast.Name("x", ast.Load())) is None  # a node of no tree


def test_context_parent_of_deep_in_a_class_links_only_the_way_there() -> None:
    """A question about a statement in one method links the class's methods and that method's statements,
    not the other methods' bodies (issue 27: a rule asking for the class of ``self.x = ...`` linked whole
    classes)."""
    from torchpatch.engine.checker import Context
    from torchpatch.engine.resolve import ScopeTree
    from torchpatch.versions import NEWEST_KNOWN, OLDEST_KNOWN

    methods = "".join(f"    def m{i}(self):\n        return [self.a + {i} for _ in range(3)]\n" for i in range(20))
    source = f"class A:\n{methods}    def __init__(self):\n        self.x = f(1, 2)\n"
    tree = ast.parse(source)
    ctx = Context(source, None, tree, ScopeTree(tree), NEWEST_KNOWN, OLDEST_KNOWN)
    assignment = tree.body[0].body[-1].body[0]
    call = assignment.value
    assert ctx.parent_of(call) is assignment
    assert ctx.parent_of(ctx.parent_of(assignment)) is tree.body[0]
    assert len(ctx._parents) < len(parent_links(tree)) / 5 and not ctx._whole_tree_linked


@pytest.mark.parametrize("source", [SHAPES, FSTRINGS, (Path(__file__).parents[1] / "src" / "torchpatch" / "engine" / "guards.py").read_text()],
                         ids=["shapes", "f-strings", "guards.py"])
def test_names_read_in_finds_what_ast_walk_finds(source: str) -> None:
    from torchpatch.syntax import names_read_in, nodes_under

    tree = ast.parse(source)
    assert sorted(map(id, nodes_under(tree))) == sorted(map(id, ast.walk(tree)))  # the same nodes, each once
    assert names_read_in(tree) == {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    for statement in ast.walk(tree):
        if isinstance(statement, ast.stmt):
            assert names_read_in(statement) == {n.id for n in ast.walk(statement) if isinstance(n, ast.Name)}


def test_receivers_walk_scope_yields_what_iter_child_nodes_gives_in_its_order() -> None:
    """_receivers._walk_scope expands nodes through their fields (issue 27): the same nodes, in the same order, as
    the ast.iter_child_nodes walk it replaced, for every scope of real code and of every kind of node."""
    from torchpatch.rules._receivers import _walk_scope

    def by_iter_child_nodes(scope_node, lambdas):
        stack = list(ast.iter_child_nodes(scope_node))
        while stack:
            node = stack.pop()
            yield node
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) \
                    or isinstance(node, ast.Lambda) and not lambdas:
                continue
            stack.extend(ast.iter_child_nodes(node))

    for source in (SHAPES, FSTRINGS, (Path(__file__).parents[1] / "src" / "torchpatch" / "engine" / "checker.py").read_text()):
        tree = ast.parse(source)
        for node in ast.walk(tree):
            if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                for lambdas in (False, True):
                    expected, found = list(by_iter_child_nodes(node, lambdas)), list(_walk_scope(node, lambdas))
                    assert len(found) == len(expected) and all(a is b for a, b in zip(found, expected))
