"""Pass 2: walk the statements that can mention torch, resolve each call and reference, run the rules."""

from __future__ import annotations

import ast
import bisect
import re
from collections.abc import Iterable, Sequence

from torchpatch._record import Record
from torchpatch.engine.candidates import (Mentions, bound_qualnames, call_may_meet, nothing_to_walk,
                                          nothing_to_walk_by_text, rows_of, watched_mentions, word_offsets_of)
from torchpatch.engine.guards import (BODY_IS_OLD, BOTH, ELSE_IS_OLD, getattr_fallback, handler_is_fallback,
                                      import_returns_early, old_branch, operands_on_new_releases)
from torchpatch.engine.resolve import (TRACKED_ROOTS, Binding, Scope, ScopeTree, first_row as _first_row,
                                       returns_early_on_new_releases)
from torchpatch.engine.source import Locator
from torchpatch.findings import SAFE, UNSAFE, Diagnostic, Edit, Fix
from torchpatch.rules._api_db import star_exports
from torchpatch.rules.base import CallNeed, Rule
from torchpatch.syntax import annotations_of, chain_root
from torchpatch.versions import Version


#: Submodules that ``import torch`` loads, so ``torch.x.y`` works with only ``import torch``
#: (attribute access checked against torch 2.13 in tests/test_torch_facts.py).
EAGER_SUBMODULES = frozenset({
    "torch", "torch.amp", "torch.nn", "torch.nn.functional", "torch.nn.utils", "torch.cuda", "torch.cpu",
    "torch.backends", "torch.backends.cuda", "torch.utils", "torch.utils.data", "torch.jit", "torch.onnx",
    "torch.export", "torch.serialization", "torch.hub", "torch.autograd", "torch.optim", "torch.compiler",
    "torch.distributed", "torch.nn.attention", "torch.nn.utils.parametrizations", "torch.utils.checkpoint",
})


class Reference(Record):
    """A Name/Attribute chain (or an import) that resolves to a watched qualified name."""

    _fields = ("node", "qualname", "scope", "statement", "in_import", "module_node")

    def __init__(self, node: ast.AST, qualname: str, scope: Scope, statement: ast.stmt, in_import: bool = False,
                 module_node: ast.ImportFrom | None = None) -> None:
        self.node = node  # the expression node of this prefix of the chain, or the ast.alias of an import
        self.qualname = qualname
        self.scope = scope
        self.statement = statement
        self.in_import = in_import  # the name appears in an import statement
        self.module_node = module_node  # for ``from M import x``: the statement, when the match is M


class Context:
    """What a rule sees of the file: positions, text, versions, and helpers to build fixes."""

    def __init__(self, text: str, locator: Locator | None, tree: ast.Module, scopes: ScopeTree,
                 target: Version, min_torch: Version) -> None:
        self.text = text
        self._locator = locator
        self.tree = tree
        self.scopes = scopes
        self.target = target
        self.min_torch = min_torch
        self.rule: Rule | None = None
        self.scope: Scope = scopes.module_scope
        self.statement: ast.stmt | None = None
        self.diagnostics: list[Diagnostic] = []
        self._planned_imports: dict[str, tuple[str, Edit]] = {}
        self._parents: dict[int, ast.AST] | None = None
        #: What a rule computes once per file and reads at each of its calls (keyed by the rule's code).
        self.memo: dict = {}

    # -- positions and text ------------------------------------------------------------------------
    @property
    def locator(self) -> Locator:
        """Built on first use: most files have no finding, and line tables cost time."""
        if self._locator is None:
            self._locator = Locator.of(self.text)
        return self._locator

    def start(self, node: ast.AST) -> int:
        return self.locator.offset_from_ast(node.lineno, node.col_offset)

    def end(self, node: ast.AST) -> int:
        return self.locator.offset_from_ast(node.end_lineno, node.end_col_offset)

    def source(self, node: ast.AST) -> str:
        return self.text[self.start(node):self.end(node)]

    def parent_of(self, node: ast.AST) -> ast.AST | None:
        """The node that holds ``node``. Linked on first use, along the row of the node asked about: from
        the module down, each node whose rows hold that row gets its children linked (``link_row``), so a
        question about a statement deep in a large class links that class's statements, not all their
        subtrees. A node found so in none of them (one with no position, or placed outside its parent's
        rows) gets the whole module linked, so the answer is always that of ``parent_links(tree)``."""
        parents = self._parents
        if parents is None:
            parents = self._parents = {}
            self._expanded: set[int] = set()
            self._whole_tree_linked = False
        found = parents.get(id(node))
        if found is not None or self._whole_tree_linked or node is self.tree:
            return found
        row = getattr(node, "lineno", None)
        if row is not None:
            link_row(self.tree, row, parents, self._expanded)
            found = parents.get(id(node))
            if found is not None:
                return found
        parents.update(parent_links(self.tree))
        self._whole_tree_linked = True
        return parents.get(id(node))

    def attribute_uses(self, name: str) -> set[str] | None:
        """The attributes read from the module-level name ``name`` (``name.x`` → x) in the file, or
        None when the name is also used another way (passed on, called, rebound)."""
        used: set[str] = set()
        for node in ast.walk(self.tree):
            if type(node) is ast.Name and node.id == name:
                parent = self.parent_of(node)
                if type(parent) is ast.Attribute and parent.value is node:
                    used.add(parent.attr)
                else:
                    return None
        return used

    # -- reporting -------------------------------------------------------------------------------
    def diagnostic(self, node: ast.AST | tuple[int, int], message: str, fix: Fix | None = None) -> Diagnostic:
        rule = self.rule
        start, end = node if isinstance(node, tuple) else (self.start(node), self.end(node))
        return Diagnostic(code=rule.code, name=rule.name, message=message, start=start, end=end, fix=fix, rule=rule)

    def applicability(self, needs: Version | None = None, behaviour_changes: bool = False) -> str:
        """Safe only when the result behaves the same on every release from min-torch to the target."""
        if behaviour_changes:
            return UNSAFE
        if needs is not None and self.min_torch < needs:
            return UNSAFE
        return SAFE

    def needs_note(self, needs: Version | None) -> str:
        if needs is not None and self.min_torch < needs:
            return f" (needs PyTorch >= {needs}; your minimum is {self.min_torch})"
        return ""

    # -- names for new code ---------------------------------------------------------------------
    def resolves_to(self, expr: ast.expr) -> str | None:
        return self.scopes.qualname(expr, self.scope)

    def name_for(self, qualname: str, module: str | None = None) -> tuple[str, list[Edit]]:
        """Text that refers to ``qualname`` here, and the import edits that make it defined.

        ``module`` is the module to import for it (default: its parent module). Existing bindings
        are reused in the file's own style (``th.amp.autocast`` when torch is imported as th).
        """
        module = module or qualname.rpartition(".")[0] or qualname
        position = self._use_position()
        # 1. A name already bound to exactly this object, or to a module it can be reached from.
        best: tuple[int, str] | None = None
        for name in self._visible_names():
            binding = self.scopes.binding_for(name, self.scope, position)
            # A star import's name may be missing on some release of the range: new code never relies on it.
            bound = self.scopes.binding_qualname(binding) if binding is not None and not binding.star else None
            if bound is None:
                continue
            if bound == qualname:
                return name, []
            if qualname.startswith(bound + ".") and _reachable(bound, module):
                if best is None or len(bound) > best[0]:
                    best = (len(bound), name + qualname[len(bound):])
        if best is not None:
            return best[1], []
        # 2. An import planned by an earlier fix in this file (module-level ones only: a local one
        #    serves its own statement).
        local = not self._imported_at_module_level(qualname.split(".")[0])
        if qualname in self._planned_imports and not local:
            return self._planned_imports[qualname][0], []
        # 3. A new import: ``import torch`` for eagerly loaded torch modules, else ``from M import name``.
        root = qualname.split(".")[0]
        if module in EAGER_SUBMODULES and self.scopes.lookup(root, self.scope, position) is None \
                and root not in self._local_names():
            text, edit = root + qualname[len(root):], self._import_edit(f"import {root}")
        else:
            leaf = qualname.rpartition(".")[2]
            if qualname.rpartition(".")[0] == module and leaf not in self._local_names() \
                    and self.scopes.lookup(leaf, self.scope, position) is None:
                text, edit = leaf, self._import_edit(f"from {module} import {leaf}")
            else:
                text, edit = qualname, self._import_edit(f"import {module}")
        if local:
            # The file imports torch only in some branch or function (torch is optional there): a new
            # module-level import would make it required. Import it right before the statement instead.
            edit = self._local_import_edit(edit.content.strip())
        else:
            self._planned_imports[qualname] = (text, edit)
        return text, [edit]

    def _imported_at_module_level(self, root: str) -> bool:
        """Whether a top-level statement of the module (not one inside an if/try) imports ``root``."""
        for statement in self.tree.body:
            if isinstance(statement, ast.Import) and any(a.name.split(".")[0] == root for a in statement.names):
                return True
            if isinstance(statement, ast.ImportFrom) and not statement.level and statement.module \
                    and statement.module.split(".")[0] == root:
                return True
        return False

    def _local_import_edit(self, statement_text: str) -> Edit:
        node = self.statement
        if node is None:
            return self._import_edit(statement_text)
        row = _first_row(node)
        line_start = self.locator.line_starts[row - 1]
        line = self.locator.line(row)
        indent = line[:len(line) - len(line.lstrip())]
        newline = "\r\n" if "\r\n" in self.text else "\n"
        return Edit(line_start, line_start, f"{indent}{statement_text}{newline}")

    def _use_position(self) -> tuple[int, int]:
        node = self.statement
        return (node.lineno, node.col_offset) if node is not None else (1 << 30, 0)

    def _visible_names(self) -> Iterable[str]:
        scope: Scope | None = self.scope
        seen: set[str] = set()
        while scope is not None:
            for name in scope.bindings:
                if name not in seen:
                    seen.add(name)
                    yield name
            scope = scope.parent

    def _local_names(self) -> set[str]:
        return set(self._visible_names())

    def _import_edit(self, statement: str) -> Edit:
        offset, indent, newline = self._import_insertion_point()
        return Edit(offset, offset, f"{indent}{statement}{newline}")

    def _import_insertion_point(self) -> tuple[int, str, str]:
        """After the module's leading imports (after the docstring and __future__ imports if none)."""
        body = self.tree.body
        newline = "\r\n" if "\r\n" in self.text else "\n"
        anchor = None
        index = 0
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            anchor = body[0]
            index = 1
        while index < len(body) and isinstance(body[index], (ast.Import, ast.ImportFrom)):
            anchor = body[index]
            index += 1
        if anchor is None:
            if not body:
                return len(self.text), "", newline
            return self.locator.offset(body[0].lineno, 0), "", newline
        row = anchor.end_lineno
        if row < len(self.locator.line_starts):
            return self.locator.line_starts[row], "", newline
        # The anchor is the last line of a file without a final newline.
        return len(self.text), newline, ""


def _reachable(bound_module: str, module: str) -> bool:
    """Whether ``bound_module.x.y`` works for something defined in ``module``."""
    return module == bound_module or module.startswith(bound_module + ".") and (
        module in EAGER_SUBMODULES or bound_module == module)


#: The fields that hold shared singleton nodes: expression contexts (``ctx``) and operators (``op``, ``ops``).
_SHARED_NODE_FIELDS = frozenset({"ctx", "op", "ops"})


def parent_links(tree: ast.AST) -> dict[int, ast.AST]:
    """``id(child) -> parent`` for every node under ``tree``: what ``ast.walk`` with ``ast.iter_child_nodes``
    gives, about four times faster (no generator per node; a file's whole tree is linked at once). Left out:
    the contexts and operators (``Load()``, ``Add()``, ...), which ast.parse shares between all the nodes
    that hold one, so that they have no one parent."""
    parents: dict[int, ast.AST] = {}
    stack = [tree]
    pop, push = stack.pop, stack.append
    node_type = ast.AST
    while stack:
        node = pop()
        for field in node._fields:
            if field in _SHARED_NODE_FIELDS:
                continue
            value = getattr(node, field, None)
            if type(value) is list:
                for item in value:
                    if isinstance(item, node_type):
                        parents[id(item)] = node
                        push(item)
            elif isinstance(value, node_type):
                parents[id(value)] = node
                push(value)
    return parents


def link_row(tree: ast.AST, row: int, parents: dict[int, ast.AST], expanded: set[int]) -> None:
    """Adds to ``parents`` (``id(child) -> parent``) the children of every node under ``tree`` whose rows
    hold ``row`` (its decorators' rows included; a node with no position, such as ``arguments``, counts as
    holding it when its parent does). ``expanded`` keeps the ids of the nodes whose children are linked
    already, across calls. Every link is one ``parent_links(tree)`` has; a node on ``row`` is linked unless
    an ancestor of it is placed on other rows."""
    stack = [tree]
    pop, push = stack.pop, stack.append
    node_type = ast.AST
    while stack:
        node = pop()
        first_visit = id(node) not in expanded
        if first_visit:
            expanded.add(id(node))
        for field in node._fields:
            if field in _SHARED_NODE_FIELDS:
                continue
            value = getattr(node, field, None)
            for item in value if type(value) is list else (value,):
                if not isinstance(item, node_type):
                    continue
                if first_visit:
                    parents[id(item)] = node
                start = getattr(item, "lineno", None)
                if start is None:
                    push(item)
                    continue
                if start > row:
                    decorators = getattr(item, "decorator_list", None)
                    if not decorators or _first_row(item) > row:
                        continue
                if row <= (getattr(item, "end_lineno", None) or start):
                    push(item)


class RuleIndex:
    """The enabled rules, indexed by what triggers them."""

    def __init__(self, rules: Sequence[Rule]) -> None:
        self.rules = list(rules)
        self.calls: dict[str, list[Rule]] = {}
        self.references: dict[str, list[Rule]] = {}
        self.methods: dict[str, list[Rule]] = {}
        for rule in self.rules:
            for name in rule.calls:
                self.calls.setdefault(name, []).append(rule)
            for name in rule.references_to:
                self.references.setdefault(name, []).append(rule)
            for name in rule.methods:
                self.methods.setdefault(name, []).append(rule)
        self.method_pattern = re.compile(rf"\.\s*({alternation(self.methods)})\s*\(") if self.methods else None
        self._last_method_matches: tuple[str, list[tuple[int, str]]] | None = None
        #: The methods that every rule watching them sees only in a file with a watched mention.
        self.methods_with_mention = frozenset(
            name for name, rules in self.methods.items() if all(name in rule.methods_with_mention for rule in rules))
        self.attributes: dict[str, list[Rule]] = {}
        self.definitions: dict[str, list[Rule]] = {}  # method names defined in a class (protocols)
        for rule in self.rules:
            for name in rule.attributes_assigned:
                self.attributes.setdefault(name, []).append(rule)
            for name in rule.methods_defined:
                self.definitions.setdefault(name, []).append(rule)
        # What a chain must reach for a rule to see it, and every dotted start of those names (engine/candidates.py).
        self.watched = frozenset(self.calls) | frozenset(self.references)
        prefixes: set[str] = set()
        for name in self.watched:
            while name and name not in prefixes:  # a prefix already in holds its own prefixes too
                prefixes.add(name)
                name = name.rpartition(".")[0]
        self.watched_prefixes = frozenset(prefixes)
        #: The names only rules that report them as decorators watch (Rule.decorators_only): looked for after ``@``.
        self.decorator_names = frozenset(
            name for name, rules in self.references.items()
            if all(name in rule.decorators_only for rule in (*self.calls.get(name, ()), *rules)))
        #: Of those, the names reported only where they decorate a class (Rule.class_decorators_only).
        self.class_decorator_names = frozenset(
            name for name in self.decorator_names
            if all(name in rule.class_decorators_only for rule in (*self.calls.get(name, ()), *self.references[name])))
        self._watched_elsewhere = self.watched - self.decorator_names
        #: The names whose every rule reports only a call that meets a need (Rule.call_needs), with what such a
        #: call must show for one of them: a call that shows none of it is not a candidate (engine/candidates.py).
        self.call_gates: dict[str, CallNeed] = {}
        for name, rules in self.calls.items():
            if name in self.references or not all(name in rule.call_needs for rule in rules):
                continue
            self.call_gates[name] = CallNeed.any_of(rule.call_needs[name] for rule in rules)
        #: The same for method names (Rule.method_needs): a method call that cannot meet it is not a candidate.
        self.method_gates: dict[str, CallNeed] = {
            name: CallNeed.any_of(rule.method_needs[name] for rule in rules)
            for name, rules in self.methods.items() if all(name in rule.method_needs for rule in rules)}
        #: The rules that report only in a text holding one of their words_needed, and watched_in's answers.
        self._rules_needing_words = [rule for rule in self.rules if rule.words_needed]
        self._watched_without: dict[frozenset, frozenset[str]] = {}

    def watched_in(self, text: str) -> frozenset[str]:
        """The names a mention anywhere in ``text`` can reach a rule through: ``watched`` less ``decorator_names``
        (looked for after ``@`` only) and less the names that only rules needing a word the text lacks watch
        (Rule.words_needed). The prefixes stay those of every watched name."""
        silent = frozenset(rule for rule in self._rules_needing_words
                           if not any(word in text for word in rule.words_needed))
        if not silent:
            return self._watched_elsewhere
        kept = self._watched_without.get(silent)
        if kept is None:
            dropped = {name for rule in silent for name in (*rule.calls, *rule.references_to)
                       if all(other in silent for other in (*self.calls.get(name, ()), *self.references.get(name, ())))}
            kept = self._watched_without[silent] = self._watched_elsewhere - dropped
        return kept

    def method_offsets(self, text: str, mentioned: bool = True) -> list[int]:
        """The offsets of ``method_pattern``'s matches; those of ``methods_with_mention`` only when
        ``mentioned`` (the file has a watched mention). One pass of the one pattern: the regex engine looks
        for its leading ``.`` and tries the names only there, which costs a tenth of one ``name in text``
        search per watched method name (23 of them in issue 27's measurement) and does not grow with them."""
        matches = self._method_matches(text)
        if mentioned or not self.methods_with_mention:
            return [start for start, _ in matches]
        gated = self.methods_with_mention
        return [start for start, name in matches if name not in gated]

    def has_method_call(self, text: str, mentioned: bool = True) -> bool:
        """Whether method_offsets would find any."""
        gated = () if mentioned else self.methods_with_mention
        return any(name not in gated for _, name in self._method_matches(text))

    def _method_matches(self, text: str) -> list[tuple[int, str]]:
        """(offset, method name) of each match of ``method_pattern`` whose call may meet its name's gate
        (``method_gates``); the last text's are kept, as one tuple (read at once: threads may share the index),
        for the tree's pass over the file that the text's began."""
        if self.method_pattern is None:
            return []
        last = self._last_method_matches
        if last is not None and last[0] is text:
            return last[1]
        gates = self.method_gates
        matches = [(match.start(), name) for match in self.method_pattern.finditer(text)
                   if (name := match.group(1)) not in gates or call_may_meet(text, match.end() - 1, gates[name])]
        self._last_method_matches = (text, matches)
        return matches


def check_tree(text: str, tree: ast.Module, index: RuleIndex, target: Version, min_torch: Version,
               locator: Locator | None = None, every_mention: bool = False) -> list[Diagnostic]:
    """The rules' findings in one parsed file. ``every_mention`` walks every statement that mentions a
    tracked name, not only those whose chains can reach a watched name (the same findings, slower; for tests)."""
    exports = lambda module: star_exports(module, min_torch, target)  # noqa: E731
    found = Mentions()
    # ``def __torch_function__`` in a class: a definition, not a mention of a torch name (a plain substring test).
    defines = [name for name in index.definitions if name in text]
    if not every_mention and not defines and nothing_to_walk(text, tree, index, exports, found):
        return []  # most files: no rule can see anything in them, and pass 1 is not needed to know it
    rows = found.rows  # None when every mention is walked (or the text was not read): from the scope tree
    if rows is None:
        scopes = ScopeTree(tree, exports)
    else:
        # Known before pass 1: it leaves for later the function bodies that hold no candidate row.
        eager = rows_of(text, word_offsets_of(text, "global", len(text))) if "global" in text else []
        scopes = ScopeTree(tree, exports, walked_rows=rows, eager_rows=eager)
    try:
        ctx = Context(text, locator, tree, scopes, target, min_torch)
        candidate_rows = rows if rows is not None else _candidate_rows(text, scopes, index, every_mention, found)
        if not candidate_rows and not scopes.imports and not defines:
            return []
        _Walker(ctx, index, candidate_rows).run()
        if defines:
            _check_definitions(ctx, index, defines)
        return ctx.diagnostics
    finally:
        scopes.release()  # freed at once, not by the cyclic collector


def nothing_to_check(text: str, index: RuleIndex, target: Version, min_torch: Version) -> bool:
    """True when check_tree of this text's tree is sure to return no finding, decided from the text alone
    (candidates.nothing_to_walk_by_text): the file need not be parsed into a tree, only checked to parse."""
    if any(name in text for name in index.definitions):
        return False  # a ``def __torch_function__`` hook is checked on the tree
    return nothing_to_walk_by_text(text, index, lambda module: star_exports(module, min_torch, target))


def _check_definitions(ctx: Context, index: RuleIndex, names: list[str]) -> None:
    """The ``methods_defined`` hooks: each ``def NAME`` directly in a class body, classes nested anywhere. Code the
    walker skips (the old branch of a version check, an ImportError fallback) is skipped here too."""
    wanted = set(names)

    def visit(body: list[ast.stmt], scope: Scope) -> None:
        for statement in body:
            if type(statement) in _SIMPLE_STATEMENTS or isinstance(statement, (ast.Import, ast.ImportFrom)):
                continue
            _, bodies, inner = _split_statement(statement, ctx.scopes, scope)
            if isinstance(statement, ast.ClassDef):
                for item in statement.body:
                    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name in wanted:
                        ctx.statement, ctx.scope = item, inner
                        for rule in index.definitions[item.name]:
                            ctx.rule = rule
                            ctx.diagnostics.extend(rule.check_method_definition(ctx, statement, item))
            for nested in bodies:
                visit(nested, inner)

    visit(ctx.tree.body, ctx.scopes.module_scope)
    ctx.scope, ctx.statement = ctx.scopes.module_scope, None


def _tracked_names(scopes: ScopeTree) -> set[str]:
    """Names bound (anywhere in the file) to something inside a tracked package, aliases included."""
    names: set[str] = set()
    aliases: list[Binding] = []
    for scope in (scopes.module_scope, *scopes.scope_of.values()):
        for name, bindings in scope.bindings.items():
            for binding in bindings:
                if binding.qualname and binding.qualname.split(".")[0] in TRACKED_ROOTS:
                    names.add(name)
                elif binding.alias_of is not None:
                    aliases.append(binding)
    changed = True
    while changed:
        changed = False
        for binding in aliases:
            if binding.name not in names and chain_root(binding.alias_of) in names:
                names.add(binding.name)
                changed = True
    return names


def alternation(words: Iterable[str]) -> str:
    """A regex alternation without capturing groups matching exactly the non-empty ``words``, written as a trie
    (``add|add_|addmm`` as ``add(?:_|mm)?``): the regex engine then tries one branch per character instead
    of every word in turn, half the time of the plain alternation for method_pattern's 45 names."""
    by_first: dict[str, list[str]] = {}
    ends = False
    for word in sorted(set(words)):
        if word:
            by_first.setdefault(word[0], []).append(word[1:])
        else:
            ends = True
    branches = [re.escape(first) + alternation(rests) for first, rests in by_first.items()]
    if not branches:
        return ""
    body = branches[0] if len(branches) == 1 and not ends else "(?:" + "|".join(branches) + ")"
    return body + "?" if ends else body


def word_offsets(text: str, names: Iterable[str]) -> list[int]:
    """Offsets where any of ``names`` occurs as a whole identifier."""
    end = len(text)
    return [offset for name in names for offset in word_offsets_of(text, name, end)]


def _candidate_rows(text: str, scopes: ScopeTree, index: RuleIndex, every_mention: bool = False,
                    found: Mentions | None = None) -> list[int]:
    """Rows where a tracked name whose chain can reach a watched name (engine/candidates.py), or a watched
    method, appears as text: only their statements are walked. ``found``: what nothing_to_walk read of the
    text, reused where it is exactly what would be computed here."""
    offsets: list[int] = []
    names = _tracked_names(scopes)
    if found is not None and found.names != names:
        found = None
    if names and every_mention:
        offsets.extend(word_offsets(text, names))
    elif names:
        bound = bound_qualnames(scopes, names)
        known = found.watched_offsets(bound, index.watched_prefixes) if found is not None else None
        offsets.extend(known if known is not None else
                       watched_mentions(text, bound, index.watched_in(text), index.watched_prefixes,
                                        index.decorator_names, index.class_decorator_names, index.call_gates))
    if names and found is not None and found.others is not None:
        offsets.extend(found.others)
    else:
        if names:
            # ``offsets`` holds the watched mentions so far (every tracked name's, with ``every_mention``).
            offsets.extend(index.method_offsets(text, mentioned=every_mention or bool(offsets)))
        if index.attributes and names:
            offsets.extend(word_offsets(text, index.attributes))
    if not every_mention:
        # An import makes its names out of the module and ``import x`` (not a chain of the text): the body that
        # holds one must be walked, so every import row counts.
        import_rows = sorted({node.lineno for node, _ in scopes.imports})
        rows = rows_of(text, offsets) if offsets else []
        return sorted(set(rows).union(import_rows)) if import_rows else rows
    return rows_of(text, offsets) if offsets else []


#: Statements without nested statements: walked whole when a candidate row falls inside them.
_SIMPLE_STATEMENTS = frozenset({
    ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Return, ast.Raise, ast.Assert, ast.Delete,
    ast.Pass, ast.Break, ast.Continue, ast.Global, ast.Nonlocal,
})
_ASSIGNMENTS = frozenset({ast.Assign, ast.AnnAssign, ast.AugAssign})
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)
_COMPREHENSION_KINDS = frozenset(_COMPREHENSIONS)


class _Walker:
    def __init__(self, ctx: Context, index: RuleIndex, candidate_rows: list[int]) -> None:
        self.ctx = ctx
        self.index = index
        self.rows = candidate_rows
        self.watch_references = bool(index.references)

    def run(self) -> None:
        self._visit_body(self.ctx.tree.body, self.ctx.scopes.module_scope)

    def _has_candidate(self, first_row: int, last_row: int) -> bool:
        position = bisect.bisect_left(self.rows, first_row)
        return position < len(self.rows) and self.rows[position] <= last_row

    def _visit_body(self, body: list[ast.stmt], scope: Scope) -> None:
        for index, statement in enumerate(body):
            if type(statement) is ast.Assign and index + 1 < len(body) \
                    and _overridden_on_new_releases(statement, body[index + 1], self.ctx.scopes):
                continue
            self._visit_statement(statement, scope)
            if type(statement) is ast.If and returns_early_on_new_releases(statement, self.ctx.scopes.old_branch_of):
                return  # ``if NEW: return new(...)``: what follows is the old releases' path
            if type(statement) is ast.Try and import_returns_early(statement):
                return  # ``try: from torch.new import X; return X`` / ``except ImportError: pass``: likewise

    def _visit_statement(self, node: ast.stmt, scope: Scope) -> None:
        ctx = self.ctx
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            self._visit_import(node, scope)
            return
        if type(node) in _SIMPLE_STATEMENTS:
            if self._has_candidate(node.lineno, node.end_lineno or node.lineno):
                ctx.statement = node
                self._visit_expression(node, scope, node)
                if self.index.attributes and type(node) in _ASSIGNMENTS:
                    self._attribute_assignments(node, scope)
                if scope.kind == "class" and type(node) is ast.Assign and self.index.calls \
                        and isinstance(node.value, (ast.Name, ast.Attribute)):
                    # ``wrapper_cls = FullyShardedDataParallel`` in a class body is called as ``self.wrapper_cls(...)``,
                    # which resolves to nothing: the attribute stands for the calls.
                    starred, double = _unknown_arguments(node.value)
                    self._wrapped_call(ast.copy_location(ast.Call(node.value, [starred], [double]), node.value), scope, node)
            return
        if not self._has_candidate(_first_row(node), node.end_lineno or node.lineno):
            return  # its header and bodies lie inside it: nothing of it would be visited
        header, bodies, inner_scope = _split_statement(node, self.ctx.scopes, scope)
        if header:
            first = min(getattr(n, "lineno", node.lineno) for n in header)
            first = min(first, node.lineno)
            last = max(getattr(n, "end_lineno", node.lineno) or node.lineno for n in header)
            if self._has_candidate(first, last):
                ctx.statement = node
                for expr, expr_scope in ((h, scope) for h in header):
                    self._visit_expression(expr, expr_scope, node)
                if type(node) is ast.ClassDef and self.index.calls:
                    # ``class MyFSDP(FullyShardedDataParallel)``: constructing the subclass calls the base.
                    for base in node.bases:
                        starred, double = _unknown_arguments(base)
                        self._wrapped_call(ast.copy_location(ast.Call(base, [starred], [double]), base), scope, node)
        for body in bodies:
            if body and self._has_candidate(_first_row(body[0]), body[-1].end_lineno or body[-1].lineno):
                self._visit_body(body, inner_scope)

    def _visit_import(self, node: ast.Import | ast.ImportFrom, scope: Scope) -> None:
        if not self.watch_references:
            return
        references = self.index.references
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] not in TRACKED_ROOTS:
                    continue
                self._dispatch_longest([Reference(alias, qualname, scope, node, in_import=True)
                                        for qualname in reversed(_prefixes(alias.name)) if qualname in references])
            return
        if node.level or not node.module or node.module.split(".")[0] not in TRACKED_ROOTS:
            return
        module_matches = [Reference(node, qualname, scope, node, in_import=True, module_node=node)
                          for qualname in reversed(_prefixes(node.module)) if qualname in references]
        reported: set[int] = set()
        for alias in node.names:
            qualname = f"{node.module}.{alias.name}"
            if qualname in references:
                reported |= self._dispatch_longest([Reference(alias, qualname, scope, node, in_import=True)])
        # The module of ``from M import x`` once per statement, for the rules no name matched.
        self._dispatch_longest(module_matches, skip=reported)

    def _dispatch_longest(self, candidates: list[Reference], skip: set[int] = frozenset(), fixes: bool = True) -> set[int]:
        """Each rule sees only the longest of the candidates it watches (shortest first in the list).
        ``fixes=False``: a name bound by a star import, reported without fixes (its import names nothing).

        Returns the ids of the rules that were called.
        """
        chosen: dict[int, tuple[Rule, Reference]] = {}
        for reference in candidates:
            for rule in self.index.references.get(reference.qualname, ()):
                if id(rule) not in skip:
                    chosen[id(rule)] = (rule, reference)
        ctx = self.ctx
        for rule, reference in chosen.values():
            ctx.scope = reference.scope
            ctx.statement = reference.statement
            ctx.rule = rule
            found = rule.check_reference(ctx, reference)
            ctx.diagnostics.extend(found if fixes else map(_without_fix, found))
        return set(chosen)

    def _visit_expression(self, root: ast.AST, scope: Scope, statement: ast.stmt) -> None:
        ctx = self.ctx
        scopes = ctx.scopes
        calls = self.index.calls
        methods = self.index.methods
        references = self.index.references
        stack: list[tuple[ast.AST, Scope]] = [(root, scope)]
        push = stack.append
        while stack:
            node, current = stack.pop()
            kind = type(node)  # parsed nodes are of the ast classes themselves: no isinstance chain
            if kind is ast.Call:
                func = node.func
                if isinstance(func, (ast.Name, ast.Attribute)):
                    qualname = scopes.qualname(func, current)
                    if qualname is not None and qualname in calls:
                        ctx.scope, ctx.statement = current, statement
                        through_alias = _called_through_assignment(scopes, func, current)
                        for rule in calls[qualname]:
                            ctx.rule = rule
                            found = rule.check_call(ctx, node, qualname)
                            if through_alias:
                                found = _without_callee_rewrites(ctx, found, func)
                            ctx.diagnostics.extend(found)
                    elif qualname is None and isinstance(func, ast.Attribute) and func.attr in methods:
                        ctx.scope, ctx.statement = current, statement
                        for rule in methods[func.attr]:
                            ctx.rule = rule
                            ctx.diagnostics.extend(rule.check_method_call(ctx, node))
                    elif qualname == "functools.partial" and calls and node.args:
                        self._wrapped_call(_partial_call(node), current, statement)
                    elif qualname is None and self.index.attributes and type(func) is ast.Name and func.id == "setattr" \
                            and len(node.args) == 3 and not node.keywords:
                        self._setattr_call(node, current, statement)
                elif type(func) is ast.Call and calls and isinstance(func.func, (ast.Name, ast.Attribute)) \
                        and scopes.qualname(func.func, current) == "torch.compile":
                    wrapped = _compiled_function(func)
                    if wrapped is not None:
                        self._wrapped_call(ast.copy_location(ast.Call(wrapped, node.args, node.keywords), node),
                                           current, statement)
                stack.append((func, current))
                fallback = getattr_fallback(node, scopes.guard_facts(current)) \
                    if type(func) is ast.Name and func.id == "getattr" else None
                stack.extend((arg, current) for arg in node.args if arg is not fallback)
                stack.extend((keyword.value, current) for keyword in node.keywords)
            elif kind is ast.Attribute or kind is ast.Name:
                chain: list[ast.AST] = []
                base: ast.AST = node
                while isinstance(base, ast.Attribute):
                    chain.append(base)
                    base = base.value
                if isinstance(base, ast.Name):
                    if references and (kind is ast.Attribute or type(getattr(node, "ctx", None)) is ast.Load):
                        self._references_in_chain(base, chain, current, statement)
                else:
                    stack.append((base, current))
            elif kind is ast.IfExp:
                old = old_branch(node.test, scopes.guard_facts(current))
                if old is None:
                    stack.extend(((node.test, current), (node.body, current), (node.orelse, current)))
                else:
                    if old not in (BODY_IS_OLD, BOTH):
                        stack.append((node.body, current))
                    if old not in (ELSE_IS_OLD, BOTH):
                        stack.append((node.orelse, current))
            elif kind is ast.BoolOp:
                kept = operands_on_new_releases(node, scopes.guard_facts(current))
                stack.extend((value, current) for value in node.values[:kept])
            elif kind is ast.Lambda:
                inner = Scope("function", current)
                _bind_arguments(inner, node.args)
                stack.append((node.body, inner))
                stack.extend((d, current) for d in [*node.args.defaults, *node.args.kw_defaults] if d is not None)
            elif kind in _COMPREHENSION_KINDS:
                inner = Scope("function", current)
                for generator in node.generators:
                    for target_name in _names_in(generator.target):
                        inner.bind(Binding(name=target_name, position=(0, 0)))
                for generator in node.generators:
                    stack.append((generator.iter, current if generator is node.generators[0] else inner))
                    stack.extend((condition, inner) for condition in generator.ifs)
                if kind is ast.DictComp:
                    stack.append((node.key, inner))
                    stack.append((node.value, inner))
                else:
                    stack.append((node.elt, inner))
            elif kind is ast.Constant:
                continue
            else:  # ast.iter_child_nodes, without its generators; contexts and operators hold nothing to visit
                for field in node._fields:
                    if field in _SHARED_NODE_FIELDS:
                        continue
                    value = getattr(node, field, None)
                    if type(value) is list:
                        stack.extend((item, current) for item in value if isinstance(item, ast.AST))
                    elif isinstance(value, ast.AST):
                        push((value, current))

    def _attribute_assignments(self, node: ast.Assign | ast.AnnAssign | ast.AugAssign, scope: Scope) -> None:
        targets = node.targets if type(node) is ast.Assign else [node.target]
        value = None if type(node) is ast.AugAssign else node.value
        ctx = self.ctx
        for target in targets:
            for element in _assigned_elements(target):
                rules = self.index.attributes.get(element.attr) if type(element) is ast.Attribute else None
                for rule in rules or ():
                    ctx.scope, ctx.statement, ctx.rule = scope, node, rule
                    ctx.diagnostics.extend(rule.check_attribute_assignment(ctx, element, value))

    def _setattr_call(self, call: ast.Call, scope: Scope, statement: ast.stmt) -> None:
        """``setattr(obj, "name", value)`` with the builtin setattr."""
        name = call.args[1]
        if type(name) is not ast.Constant or not isinstance(name.value, str) or name.value not in self.index.attributes:
            return
        ctx = self.ctx
        if ctx.scopes.binding_for("setattr", scope, (call.lineno, call.col_offset)) is not None:
            return
        for rule in self.index.attributes[name.value]:
            ctx.scope, ctx.statement, ctx.rule = scope, statement, rule
            ctx.diagnostics.extend(rule.check_attribute_assignment(ctx, name, call.args[2]))

    def _wrapped_call(self, call: ast.Call, scope: Scope, statement: ast.stmt) -> None:
        """A watched callable called through a wrapper (``functools.partial(f, ...)``, ``torch.compile(f)(...)``,
        a subclass of ``f``): ``call`` stands for the call that eventually happens. Rules that watch the name
        as a reference already report it there. No fix: the wrapper's own text is not the call's."""
        func = call.func
        if not isinstance(func, (ast.Name, ast.Attribute)):
            return
        ctx = self.ctx
        qualname = ctx.scopes.qualname(func, scope)
        rules = self.index.calls.get(qualname) if qualname is not None else None
        if not rules:
            return
        watching = {id(rule) for prefix in _prefixes(qualname) for rule in self.index.references.get(prefix, ())}
        ctx.scope, ctx.statement = scope, statement
        for rule in rules:
            if id(rule) in watching:
                continue
            ctx.rule = rule
            ctx.diagnostics.extend(map(_without_fix, rule.check_call(ctx, call, qualname)))

    def _references_in_chain(self, base: ast.Name, chain: list[ast.AST], scope: Scope, statement: ast.stmt) -> None:
        scopes = self.ctx.scopes
        binding = scopes.binding_for(base.id, scope, (base.lineno, base.col_offset))
        qualname = scopes.binding_qualname(binding) if binding is not None else None
        if qualname is None or qualname.split(".")[0] not in TRACKED_ROOTS:
            return
        references = self.index.references
        candidates = []
        if qualname in references:
            candidates.append(Reference(base, qualname, scope, statement))
        for node in reversed(chain):
            qualname = f"{qualname}.{node.attr}"
            if qualname in references:
                candidates.append(Reference(node, qualname, scope, statement))
        if candidates:
            self._dispatch_longest(candidates, fixes=not binding.star)


def _without_fix(diagnostic: Diagnostic) -> Diagnostic:
    if diagnostic.fix is None:
        return diagnostic
    return Diagnostic(code=diagnostic.code, name=diagnostic.name, message=diagnostic.message,
                      start=diagnostic.start, end=diagnostic.end, fix=None, rule=diagnostic.rule)


def _assigned_elements(target: ast.expr) -> list[ast.expr]:
    """The targets an assignment stores to: ``a.x, (b.y, *c) = ...`` → a.x, b.y, c."""
    if type(target) in (ast.Tuple, ast.List):
        return [inner for element in target.elts for inner in _assigned_elements(element)]
    if type(target) is ast.Starred:
        return _assigned_elements(target.value)
    return [target]


def _unknown_arguments(like: ast.AST) -> tuple[ast.Starred, ast.keyword]:
    """``*args`` and ``**kwargs`` standing for the arguments a wrapper's caller adds (unknown here)."""
    starred = ast.copy_location(ast.Starred(ast.copy_location(ast.Name("<caller>", ast.Load()), like), ast.Load()), like)
    double = ast.copy_location(ast.keyword(None, ast.copy_location(ast.Name("<caller>", ast.Load()), like)), like)
    return starred, double


def _partial_call(partial: ast.Call) -> ast.Call:
    """``partial(f, a, k=1)`` is ``f(a, *args, k=1, **kwargs)`` once called: its arguments are the first
    ones of the call, and the caller may add any others."""
    starred, double = _unknown_arguments(partial)
    return ast.copy_location(ast.Call(partial.args[0], [*partial.args[1:], starred], [*partial.keywords, double]),
                             partial)


def _compiled_function(compile_call: ast.Call) -> ast.expr | None:
    """The function ``torch.compile(f, ...)`` compiles (the compiled callable takes f's arguments)."""
    if compile_call.args:
        return None if isinstance(compile_call.args[0], ast.Starred) else compile_call.args[0]
    for keyword in compile_call.keywords:
        if keyword.arg == "model":
            return keyword.value
    return None


def _called_through_assignment(scopes: ScopeTree, func: ast.expr, scope: Scope) -> bool:
    """``ac = torch.cuda.amp.autocast`` then ``ac(...)``: the callee is a variable, not an import."""
    root = func
    while isinstance(root, ast.Attribute):
        root = root.value
    if not isinstance(root, ast.Name):
        return False
    binding = scopes.binding_for(root.id, scope, (root.lineno, root.col_offset))
    return binding is not None and (binding.alias_of is not None or binding.star)


def _without_callee_rewrites(ctx: Context, diagnostics: Iterable[Diagnostic], func: ast.expr) -> list[Diagnostic]:
    """A fix that renames a callee reached through a variable would leave that variable dead and
    still bound to the old object: such a call is reported without the fix (the assignment is
    reported on its own). Fixes that only touch the arguments stay."""
    start, end = ctx.start(func), ctx.end(func)
    kept = []
    for diagnostic in diagnostics:
        fix = diagnostic.fix
        if fix is not None and any(edit.start < end and start < edit.end for edit in fix.edits):
            diagnostic = Diagnostic(code=diagnostic.code, name=diagnostic.name, message=diagnostic.message,
                                    start=diagnostic.start, end=diagnostic.end, fix=None, rule=diagnostic.rule)
        kept.append(diagnostic)
    return kept


def _split_statement(node: ast.stmt, scopes: ScopeTree, scope: Scope):
    """(header expressions, nested bodies, the scope of those bodies) of a statement."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        arguments = node.args
        header = [*node.decorator_list, *arguments.defaults, *(d for d in arguments.kw_defaults if d is not None),
                  *annotations_of(node)]
        return header, [node.body], scopes.scope_of_node(node, scope)
    if isinstance(node, ast.ClassDef):
        header = [*node.decorator_list, *node.bases, *(k.value for k in node.keywords)]
        return header, [node.body], scopes.scope_of_node(node, scope)
    if isinstance(node, ast.If):
        old = scopes.old_branch_of[id(node)] if id(node) in scopes.old_branch_of \
            else old_branch(node.test, scopes.guard_facts(scope))
        if old is None:
            return [node.test], [node.body, node.orelse], scope
        # A version or feature check: its old-release branch is compatibility code, not a finding.
        return [], [b for b, name in ((node.body, BODY_IS_OLD), (node.orelse, ELSE_IS_OLD)) if old not in (name, BOTH)], scope
    if isinstance(node, ast.While):
        return [node.test], [node.body, node.orelse], scope
    if isinstance(node, (ast.For, ast.AsyncFor)):
        return [node.iter], [node.body, node.orelse], scope
    if isinstance(node, (ast.With, ast.AsyncWith)):
        return [item.context_expr for item in node.items], [node.body], scope
    if isinstance(node, ast.Try) or type(node).__name__ == "TryStar":
        # ``except ImportError:`` (AttributeError, TypeError...) is the path for releases without the new API.
        def is_version_check(test_node: ast.If) -> bool:
            return (scopes.old_branch_of.get(id(test_node)) if id(test_node) in scopes.old_branch_of
                    else old_branch(test_node.test, scopes.guard_facts(scope))) is not None

        handlers = [h for h in node.handlers if not handler_is_fallback(node, h, is_version_check)]
        header = [h.type for h in handlers if h.type is not None]
        body = [] if not handlers and node.handlers and _only_probes(node.body) else node.body
        return header, [body, *(h.body for h in handlers), node.orelse, node.finalbody], scope
    if isinstance(node, ast.Match):
        header = [node.subject, *(c.guard for c in node.cases if c.guard is not None)]
        return header, [c.body for c in node.cases], scope
    return [node], [], scope


def _only_probes(body: list[ast.stmt]) -> bool:
    """``try: _ = torch.cpu.amp.autocast`` / ``except AttributeError:`` asks whether a name exists; it uses nothing."""
    def is_reference(node: ast.AST) -> bool:
        return type(node) in (ast.Attribute, ast.Name)

    return all((type(s) is ast.Expr and is_reference(s.value))
               or (type(s) is ast.Assign and is_reference(s.value)
                   and all(type(t) is ast.Name and t.id == "_" for t in s.targets))
               for s in body)


def _overridden_on_new_releases(assignment: ast.Assign, following: ast.stmt, scopes: ScopeTree) -> bool:
    """``x = old_api`` followed by ``if <new release or feature>: x = new_api``: the first is the old default."""
    if type(following) is not ast.If or len(assignment.targets) != 1 or type(assignment.targets[0]) is not ast.Name:
        return False
    old = scopes.old_branch_of.get(id(following))
    if old != ELSE_IS_OLD:
        return False
    name = assignment.targets[0].id
    return any(type(s) is ast.Assign and any(type(t) is ast.Name and t.id == name for t in s.targets)
               for s in following.body)


def _bind_arguments(scope: Scope, arguments: ast.arguments) -> None:
    for arg in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs, arguments.vararg, arguments.kwarg]:
        if arg is not None:
            scope.bind(Binding(name=arg.arg, position=(0, 0)))


def _names_in(target: ast.AST) -> list[str]:
    return [n.id for n in ast.walk(target) if isinstance(n, ast.Name)]


def _prefixes(dotted: str) -> list[str]:
    """'a.b.c' -> ['a.b.c', 'a.b', 'a'] (longest first)."""
    parts = dotted.split(".")
    return [".".join(parts[:i]) for i in range(len(parts), 0, -1)]
