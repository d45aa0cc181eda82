"""Name resolution as Python does it: imports, aliases, scopes and shadowing, without executing anything."""

from __future__ import annotations

import ast
import bisect
from collections.abc import Callable

from torchpatch._record import Record
from torchpatch.engine.guards import BODY_IS_OLD, BOTH, ELSE_IS_OLD, GuardFacts, module_definitions, old_branch

#: Imports from these packages are tracked; everything else is ignored as early as possible.
TRACKED_ROOTS = frozenset({"torch", "functorch", "torchvision", "torchaudio", "torchao", "torchtext"})

Position = tuple[int, int]  # (row, ast column) — only compared, never shown

_FALLBACK_EXCEPTIONS = frozenset({"ImportError", "ModuleNotFoundError", "AttributeError", "Exception", "BaseException"})
_MAX_ALIAS_DEPTH = 16


class Binding(Record):
    """One assignment of a name: to a qualified name, to an alias expression, or to something unknown."""

    # One per name binding of the file: slots make them cheaper to build and smaller.
    __slots__ = _fields = ("name", "position", "qualname", "alias_of", "scope", "fallback", "conditional",
                           "import_node", "import_alias", "star", "serial")

    def __init__(self, name: str, position: Position, qualname: str | None = None, alias_of: ast.expr | None = None,
                 scope: Scope | None = None, fallback: bool = False, conditional: bool = False,
                 import_node: ast.stmt | None = None, import_alias: ast.alias | None = None, star: bool = False,
                 serial: int = 0) -> None:
        self.name = name
        self.position = position  # where the binding takes effect (the end of its statement)
        self.qualname = qualname
        self.alias_of = alias_of  # ``fn = torch.load`` keeps the expression, resolved lazily
        self.scope = scope
        self.fallback = fallback  # made inside ``except ImportError:`` — the path old releases take
        self.conditional = conditional  # made in a branch, loop or handler: it may or may not have run
        self.import_node = import_node
        self.import_alias = import_alias
        self.star = star  # bound by ``from torch.M import *`` (the names come from the star-export table)
        self.serial = serial  # the order in which pass 1 made it (0: an argument); see ScopeTree._materialize


class Scope(Record):
    __slots__ = _fields = ("kind", "parent", "bindings", "global_names", "nonlocal_names", "pending")

    def __init__(self, kind: str, parent: Scope | None, bindings: dict[str, list[Binding]] | None = None,
                 global_names: set[str] | None = None, nonlocal_names: set[str] | None = None,
                 pending: tuple | None = None) -> None:
        self.kind = kind  # module, class, function
        self.parent = parent
        self.bindings = {} if bindings is None else bindings
        self.global_names = set() if global_names is None else global_names
        self.nonlocal_names = set() if nonlocal_names is None else nonlocal_names
        # A function pass 1 has not visited yet (its arguments and body): (the FunctionDef, the last serial then,
        # the fallback depth, the conditional depth).
        self.pending = pending

    def bind(self, binding: Binding) -> None:
        binding.scope = self
        self.bindings.setdefault(binding.name, []).append(binding)

    @property
    def module(self) -> "Scope":
        scope = self
        while scope.parent is not None:
            scope = scope.parent
        return scope


def _store_names(target: ast.expr) -> list[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [name for element in target.elts for name in _store_names(element)]
    if isinstance(target, ast.Starred):
        return _store_names(target.value)
    return []


def is_chain(expr: ast.expr) -> bool:
    """A name or a chain of attributes on a name (``torch.cuda.amp``)."""
    while isinstance(expr, ast.Attribute):
        expr = expr.value
    return isinstance(expr, ast.Name)


def _catches_import_error(handler: ast.ExceptHandler) -> bool:
    if handler.type is None:
        return True
    types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(isinstance(t, ast.Name) and t.id in _FALLBACK_EXCEPTIONS for t in types)


def _plain_assignments(body: list[ast.stmt]) -> dict[str, list[ast.expr]]:
    """name -> the values of the ``name = value`` statements of a function body (not of nested scopes)."""
    assigned: dict[str, list[ast.expr]] = {}
    stack = list(body)
    while stack:
        statement = stack.pop()
        kind = type(statement)
        if kind in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
            continue  # their bodies bind in their own scopes
        if kind is ast.Assign and len(statement.targets) == 1 and type(statement.targets[0]) is ast.Name:
            assigned.setdefault(statement.targets[0].id, []).append(statement.value)
        for field_name in ("body", "orelse", "finalbody", "handlers", "cases"):
            stack.extend(getattr(statement, field_name, ()))
    return assigned


class ScopeTree:
    """Pass 1 over the statements: every binding of every scope, and the scope of each function body.

    ``walked_rows`` (the walker's candidate rows) lets pass 1 leave for later the body of a function that
    holds none of them: the walker never enters it, and its bindings are seen only from inside it. Such a
    body is visited when something first looks into its scope (a lookup, or ``scope_of``, through which the
    rules that scan the whole file reach every scope), exactly as pass 1 would have visited it: see
    :meth:`_materialize`. A function whose body (or an enclosing function's) holds one of ``eager_rows``
    (the rows of the word ``global``: a ``global`` statement binds in the module scope) is visited at once.
    """

    def __init__(self, module: ast.Module, star_exports: Callable[[str], frozenset[str] | None] | None = None,
                 walked_rows: list[int] | None = None, eager_rows: list[int] = ()) -> None:
        self.module_scope = Scope("module", None)
        self._star_exports = star_exports  # module → the names ``from module import *`` binds (None: unknown)
        self._star_bound: dict[int, set[str]] = {}  # id(scope) → names its torch star imports bound
        self._scope_of: dict[int, Scope] = {}  # id(FunctionDef/ClassDef/Lambda) -> its scope
        self._walked_rows = walked_rows  # None: every function body is visited at once
        self._eager_rows = eager_rows
        self._eager_depth = 0  # inside a function whose body holds an eager row
        self._pending: list[Scope] = []  # the scopes whose bodies wait (see _materialize)
        self._serial = 0  # the serial of the last binding made
        self._visible: tuple[int, int] | None = None  # while a body is materialized: see _materialize
        self.imports: list[tuple[ast.stmt, Scope]] = []
        self.old_branch_of: dict[int, str | None] = {}  # id(ast.If) -> which branch is compatibility code
        self._guard_facts: dict[int, GuardFacts] = {}  # id(scope) -> its facts (see guard_facts)
        self._function_of: dict[int, ast.FunctionDef | ast.AsyncFunctionDef] = {}  # id(function scope) -> its def
        self._class_of: dict[int, ast.ClassDef] = {}  # id(class scope) -> its class statement
        # id(function scope) -> the function's body, replaced by its plain assignments when first needed
        self._function_body: dict[int, list[ast.stmt] | dict[str, list[ast.expr]]] = {}
        self._fallback_depth = 0
        self._conditional_depth = 0
        self.definitions, self.imported_names = module_definitions(module)
        self._visit_body(module.body, self.module_scope)

    @property
    def scope_of(self) -> dict[int, Scope]:
        """id(FunctionDef/ClassDef) -> its scope, every function body visited (for code that scans the file)."""
        while self._pending:
            scope = self._pending.pop()
            if scope.pending is not None:
                self._materialize(scope)
        return self._scope_of

    def scope_of_node(self, node: ast.AST, default: Scope) -> Scope:
        """The scope of a FunctionDef/ClassDef's body, which may still wait (for the walker: it enters only
        bodies that hold a candidate row, and those never wait)."""
        return self._scope_of.get(id(node), default)

    def _materialize(self, scope: Scope) -> None:
        """Visit a body left for later as pass 1 would have visited it then. Only the ``if`` tests of pass 1
        look names up (the guard classification), and they would have seen the enclosing scopes as they were
        when the ``def`` was reached: the bindings made before it (serial <= the one kept then). The body's
        own bindings (made now, serial > start) are seen as they are made, in order, as they would have been;
        the depths of fallback and conditional code are those of the ``def``. Its nested functions are visited
        at once, inside the same view. The bindings of other bodies visited later are in no scope seen here."""
        function, limit, fallback_depth, conditional_depth = scope.pending
        scope.pending = None
        saved = self._visible, self._walked_rows, self._fallback_depth, self._conditional_depth
        self._visible, self._walked_rows = (limit, self._serial), None
        self._fallback_depth, self._conditional_depth = fallback_depth, conditional_depth
        try:
            self._visit_function_body(function, scope)
        finally:
            self._visible, self._walked_rows, self._fallback_depth, self._conditional_depth = saved

    def guard_facts(self, scope: Scope) -> GuardFacts:
        """What the compatibility-code classifier may know at ``scope`` (one per scope: asked at every ``if``)."""
        facts = self._guard_facts.get(id(scope))
        if facts is None:  # the cached facts hold the scope, so its id cannot be reused while cached
            facts = self._guard_facts[id(scope)] = GuardFacts(
                qualname=lambda expr: self.qualname(expr, scope), definitions=self.definitions,
                imported=self.imported_names, function=self._function_of.get(id(scope)),
                local_values=(lambda name: self._local_values(scope, name)) if id(scope) in self._function_body else None)
        return facts

    def enclosing_class(self, scope: Scope) -> ast.ClassDef | None:
        """The class statement of the nearest class scope at or above ``scope`` (a method's, a lambda's or a
        comprehension's in a class: the class; at module level: None)."""
        while scope is not None and scope.kind != "class":
            scope = scope.parent
        return self._class_of.get(id(scope)) if scope is not None else None

    def _local_values(self, scope: Scope, name: str) -> list[ast.expr | None] | None:
        """The values a function's ``name = value`` statements assign to a name it binds (None in the list for
        each other binding: a parameter, a loop target...); None when the function does not bind the name."""
        bindings = scope.bindings.get(name)
        if not bindings:
            return None
        if any(binding.position == (0, 0) for binding in bindings):
            return [None]  # a parameter (``if mask is None:``, the common case): no walk
        assigned = self._function_body.get(id(scope))
        if type(assigned) is list:  # the body, walked on first use
            assigned = self._function_body[id(scope)] = _plain_assignments(assigned)
        values: list[ast.expr | None] = list(assigned.get(name, ()))
        values.extend([None] * (len(bindings) - len(values)))
        return values

    def release(self) -> None:
        """Break the binding <-> scope and facts -> tree cycles, so the file's scopes are freed at once."""
        for scope in (self.module_scope, *self._scope_of.values()):
            if scope.bindings:
                scope.bindings.clear()
            scope.pending = None
        self._pending.clear()
        self._guard_facts.clear()
        self._function_of.clear()
        self._class_of.clear()
        self._function_body.clear()

    # -- pass 1 -------------------------------------------------------------------------------
    def _bind(self, scope: Scope, name: str, node: ast.AST, qualname: str | None = None,
              alias_of: ast.expr | None = None, import_node: ast.stmt | None = None,
              import_alias: ast.alias | None = None, star: bool = False) -> None:
        if scope.kind == "function" and name in scope.global_names:
            scope = scope.module
        # Scope.bind and _end, inlined: pass 1 makes one binding per name bound in the file.
        self._serial += 1
        binding = Binding(name, (node.end_lineno or node.lineno, node.end_col_offset or 0), qualname, alias_of, scope,
                          self._fallback_depth > 0, self._conditional_depth > 0, import_node, import_alias, star,
                          self._serial)
        bindings = scope.bindings.get(name)
        if bindings is None:
            scope.bindings[name] = [binding]
        else:
            bindings.append(binding)

    def _visit_body(self, body: list[ast.stmt], scope: Scope) -> None:
        early = False
        visitors = self._visitors
        for statement in body:
            kind = type(statement)
            visit = visitors.get(kind)
            if visit is not None:
                visit(self, statement, scope)
            if not early and kind is ast.If and returns_early_on_new_releases(statement, self.old_branch_of):
                early = True  # the rest of the body runs on old releases only
                self._fallback_depth += 1
        if early:
            self._fallback_depth -= 1

    # One visitor per statement type (a dict lookup, not a chain of isinstance tests: pass 1 sees every
    # statement of the file). Statements that bind nothing and hold no statements have none.
    def _visit_import(self, node: ast.Import, scope: Scope) -> None:
        self.imports.append((node, scope))
        for alias in node.names:
            if alias.asname:
                self._bind(scope, alias.asname, node, qualname=alias.name, import_node=node, import_alias=alias)
            else:
                root = alias.name.split(".")[0]
                self._bind(scope, root, node, qualname=root, import_node=node, import_alias=alias)

    def _visit_import_from(self, node: ast.ImportFrom, scope: Scope) -> None:
        self.imports.append((node, scope))
        for alias in node.names:
            if alias.name == "*":
                self._bind_star(scope, node)
                continue
            qualname = f"{node.module}.{alias.name}" if node.module and not node.level else None
            self._bind(scope, alias.asname or alias.name, node, qualname=qualname, import_node=node, import_alias=alias)

    def _visit_function(self, node: ast.FunctionDef | ast.AsyncFunctionDef, scope: Scope) -> None:
        self._bind(scope, node.name, node)
        inner = Scope("function", scope)
        self._scope_of[id(node)] = inner
        self._function_of[id(inner)] = node
        if self._walked_rows is not None and not self._eager_depth:
            # The rows the walker tests before it enters the body (checker._Walker._visit_statement).
            body = node.body
            first, last = first_row(body[0]), body[-1].end_lineno or body[-1].lineno
            if _holds_a_row(self._eager_rows, first, last):
                self._eager_depth += 1
                self._visit_function_body(node, inner)
                self._eager_depth -= 1
                return
            if not _holds_a_row(self._walked_rows, first, last):
                inner.pending = (node, self._serial, self._fallback_depth, self._conditional_depth)
                self._pending.append(inner)
                return
        self._visit_function_body(node, inner)

    def _visit_function_body(self, node: ast.FunctionDef | ast.AsyncFunctionDef, inner: Scope) -> None:
        arguments = node.args
        for arg in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs, arguments.vararg, arguments.kwarg]:
            if arg is not None:
                inner.bind(Binding(name=arg.arg, position=(0, 0)))
        self._function_body[id(inner)] = node.body
        self._prescan_declarations(node.body, inner)
        self._visit_body(node.body, inner)

    def _visit_class(self, node: ast.ClassDef, scope: Scope) -> None:
        self._bind(scope, node.name, node)
        inner = Scope("class", scope)
        self._scope_of[id(node)] = inner
        self._class_of[id(inner)] = node
        self._visit_body(node.body, inner)

    def _visit_assign(self, node: ast.Assign, scope: Scope) -> None:
        targets = node.targets
        if len(targets) == 1 and type(targets[0]) is ast.Name:  # ``x = ...``: most assignments
            value = node.value
            self._bind(scope, targets[0].id, node, alias_of=value if is_chain(value) else None)
            return
        for target in targets:
            for name in _store_names(target):
                self._bind(scope, name, node)

    def _visit_annotated_assign(self, node: ast.AnnAssign | ast.AugAssign, scope: Scope) -> None:
        if isinstance(node.target, ast.Name) and (not isinstance(node, ast.AnnAssign) or node.value is not None or scope.kind == "function"):
            value = getattr(node, "value", None)
            alias = value if isinstance(node, ast.AnnAssign) and value is not None and is_chain(value) else None
            self._bind(scope, node.target.id, node, alias_of=alias)

    def _visit_for(self, node: ast.For | ast.AsyncFor, scope: Scope) -> None:
        for name in _store_names(node.target):
            self._bind(scope, name, node.target)
        self._conditional_depth += 1
        self._visit_body(node.body, scope)
        self._visit_body(node.orelse, scope)
        self._conditional_depth -= 1

    def _visit_with(self, node: ast.With | ast.AsyncWith, scope: Scope) -> None:
        for item in node.items:
            if item.optional_vars is not None:
                for name in _store_names(item.optional_vars):
                    self._bind(scope, name, item.optional_vars)
        self._visit_body(node.body, scope)

    def _visit_if(self, node: ast.If, scope: Scope) -> None:
        old = self.old_branch_of[id(node)] = old_branch(node.test, self.guard_facts(scope))
        for body, name in ((node.body, BODY_IS_OLD), (node.orelse, ELSE_IS_OLD)):
            fallback = old in (name, BOTH)
            self._fallback_depth += fallback
            self._conditional_depth += 1
            self._visit_body(body, scope)
            self._conditional_depth -= 1
            self._fallback_depth -= fallback

    def _visit_while(self, node: ast.While, scope: Scope) -> None:
        self._conditional_depth += 1
        self._visit_body(node.body, scope)
        self._visit_body(node.orelse, scope)
        self._conditional_depth -= 1

    def _visit_try(self, node: ast.Try, scope: Scope) -> None:
        self._visit_body(node.body, scope)
        for handler in node.handlers:
            if handler.name:
                self._bind(scope, handler.name, handler)
            fallback = _catches_import_error(handler)
            self._fallback_depth += fallback
            self._conditional_depth += 1
            self._visit_body(handler.body, scope)
            self._conditional_depth -= 1
            self._fallback_depth -= fallback
        self._visit_body(node.orelse, scope)
        self._visit_body(node.finalbody, scope)

    def _visit_match(self, node: ast.Match, scope: Scope) -> None:
        self._conditional_depth += 1
        for case in node.cases:
            for name in _pattern_names(case.pattern):
                self._bind(scope, name, case.pattern)
            self._visit_body(case.body, scope)
        self._conditional_depth -= 1

    def _visit_global(self, node: ast.Global, scope: Scope) -> None:
        scope.global_names.update(node.names)

    def _visit_nonlocal(self, node: ast.Nonlocal, scope: Scope) -> None:
        scope.nonlocal_names.update(node.names)

    _visitors: dict[type, Callable[["ScopeTree", ast.stmt, Scope], None]] = {
        ast.Import: _visit_import, ast.ImportFrom: _visit_import_from,
        ast.FunctionDef: _visit_function, ast.AsyncFunctionDef: _visit_function, ast.ClassDef: _visit_class,
        ast.Assign: _visit_assign, ast.AnnAssign: _visit_annotated_assign, ast.AugAssign: _visit_annotated_assign,
        ast.For: _visit_for, ast.AsyncFor: _visit_for, ast.With: _visit_with, ast.AsyncWith: _visit_with,
        ast.If: _visit_if, ast.While: _visit_while, ast.Try: _visit_try, ast.Match: _visit_match,
        ast.Global: _visit_global, ast.Nonlocal: _visit_nonlocal,
        **({ast.TryStar: _visit_try} if hasattr(ast, "TryStar") else {}),
    }

    def _bind_star(self, scope: Scope, node: ast.ImportFrom) -> None:
        """``from torch.cuda.amp import *`` binds the names the star-export table lists for that module; a
        star import of any other module may rebind any of them, so after it they are unknown."""
        module = node.module if not node.level else None
        names = None
        if module and module.split(".")[0] == "torch" and self._star_exports is not None:
            names = self._star_exports(module)
        if names is None:
            for name in self._star_bound.get(id(scope), ()):
                self._bind(scope, name, node)
            # ``from utils import *`` where utils imports torch: the one name a torch project's star import can
            # only bind to the torch module (code that says ``torch.x`` with no import of its own relies on it).
            self._bind(scope, "torch", node, qualname="torch")
            return
        for name in names:
            self._bind(scope, name, node, qualname=f"{module}.{name}", star=True)
        self._star_bound.setdefault(id(scope), set()).update(names)

    def _prescan_declarations(self, body: list[ast.stmt], scope: Scope) -> None:
        """``global x`` anywhere in a function applies to the whole function."""
        for statement in body:
            if isinstance(statement, ast.Global):
                scope.global_names.update(statement.names)

    # -- lookups --------------------------------------------------------------------------------
    def is_tracked(self, expr: ast.expr, scope: Scope) -> bool:
        """Whether an expression names torch (or a tracked package) or something inside it."""
        qualname = self.qualname(expr, scope)
        return qualname is not None and qualname.split(".")[0] in TRACKED_ROOTS

    def lookup(self, name: str, scope: Scope, position: Position, depth: int = 0) -> str | None:
        """The qualified name a Name refers to at a position, or None when it is not an import."""
        binding = self.binding_for(name, scope, position)
        return self.binding_qualname(binding, depth) if binding else None

    def binding_for(self, name: str, scope: Scope, position: Position) -> Binding | None:
        if scope.pending is not None:
            self._materialize(scope)
        visible = self._visible
        current: Scope | None = scope
        ordered = True  # module and class bodies run top to bottom; a function runs after them
        while current is not None:
            if current.kind == "function" and name in current.global_names:
                current = current.module
                ordered = False
                continue
            bindings = current.bindings.get(name)
            if bindings and visible is not None:
                limit, start = visible
                bindings = [b for b in bindings if b.serial <= limit or b.serial > start]
            if bindings:
                return _choose(bindings, position if ordered else None)
            if current.kind in ("function", "lambda"):
                ordered = False
            parent = current.parent
            # A class body's names are not visible inside its methods.
            while parent is not None and parent.kind == "class" and current.kind != "class":
                parent = parent.parent
            current = parent
        return None

    def binding_qualname(self, binding: Binding, depth: int = 0) -> str | None:
        if binding.alias_of is None:
            return binding.qualname
        if depth > _MAX_ALIAS_DEPTH or binding.scope is None:
            return None
        return self.qualname(binding.alias_of, binding.scope, binding.position, depth + 1)

    def qualname(self, expr: ast.expr, scope: Scope, position: Position | None = None, depth: int = 0) -> str | None:
        parts: list[str] = []
        while isinstance(expr, ast.Attribute):
            parts.append(expr.attr)
            expr = expr.value
        if not isinstance(expr, ast.Name):
            return None
        base = self.lookup(expr.id, scope, position or (expr.lineno, expr.col_offset), depth)
        if base is None:
            return None
        if parts:
            return base + "." + ".".join(reversed(parts))
        return base


_EXITS = (ast.Return, ast.Raise, ast.Continue, ast.Break)


def first_row(statement: ast.stmt) -> int:
    """A statement's first row, its decorators included."""
    decorators = getattr(statement, "decorator_list", None)
    return min([statement.lineno, *(d.lineno for d in decorators)]) if decorators else statement.lineno


def _holds_a_row(rows: list[int], first: int, last: int) -> bool:
    at = bisect.bisect_left(rows, first)
    return at < len(rows) and rows[at] <= last


def returns_early_on_new_releases(node: ast.If, old_branch_of: dict[int, str | None]) -> bool:
    """``if <new release or feature>: ...; return new(...)`` with no else: the statements after it in
    the same body are the old releases' path (an early-return guard). A check whose direction cannot be
    told (``if check_version(torch.__version__, "2.4"): return new(...)``) is one too: neither its body nor
    what follows it is reported, as neither branch of its ``if``/``else`` form is."""
    return not node.orelse and old_branch_of.get(id(node)) in (ELSE_IS_OLD, BOTH) and _always_exits(node.body)


def _always_exits(body: list[ast.stmt]) -> bool:
    """Whether running ``body`` always ends in return/raise/continue/break (pyg's ``torch_load``:
    ``if WITH_PT24: try: return torch.load(...) / except ...: return ... / raise``)."""
    if not body:
        return False
    last = body[-1]
    if isinstance(last, _EXITS):
        return True
    if isinstance(last, ast.If):
        return _always_exits(last.body) and _always_exits(last.orelse)
    if isinstance(last, (ast.With, ast.AsyncWith)):
        return _always_exits(last.body)
    if isinstance(last, ast.Try) or type(last).__name__ == "TryStar":
        if last.finalbody and _always_exits(last.finalbody):
            return True
        main = _always_exits(last.orelse) if last.orelse else _always_exits(last.body)
        return main and all(_always_exits(handler.body) for handler in last.handlers)
    return False


def _choose(bindings: list[Binding], position: Position | None) -> Binding | None:
    """The binding in effect: the last one before the use (or the last of all, for code that runs later).

    A binding made in an ``except ImportError:`` handler is the fallback for old releases; the
    binding from the ``try`` body is what runs on the releases we migrate to.
    """
    if len(bindings) == 1:  # most names: the general case below gives the same answer
        only = bindings[0]
        return only if position is None or only.position <= position else None
    visible = bindings if position is None else [b for b in bindings if b.position <= position]
    if not visible:
        # Used before bound at module level (or a function-scope local used before assignment).
        visible = bindings if position is None or bindings[0].position == (0, 0) else []
        if not visible:
            return None
    preferred = [b for b in visible if not b.fallback] or visible
    chosen = preferred[-1]
    if chosen.conditional:
        # ``if fsdp: scaler_type = ShardedGradScaler`` / ``else: scaler_type = GradScaler``, or
        # ``if npu: from torch.npu.amp import GradScaler`` / ``else: from torch.cuda.amp import GradScaler``
        # (mmengine): the name may hold one of several objects; it certainly is none of them.
        others = [b for b in preferred[:-1] if b.scope is chosen.scope]
        if any(_target(b) != _target(chosen) for b in others):
            return None
    return chosen


def _target(binding: Binding) -> str | None:
    if binding.alias_of is not None:
        return ast.dump(binding.alias_of)
    return binding.qualname


def _pattern_names(pattern: ast.AST) -> list[str]:
    names = []
    for node in ast.walk(pattern):
        name = getattr(node, "name", None)
        if isinstance(name, str):
            names.append(name)
        rest = getattr(node, "rest", None)
        if isinstance(rest, str):
            names.append(rest)
    return names
