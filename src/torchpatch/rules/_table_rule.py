"""The generic rule behind the API table: a reference to an old name, and the minimal edit to the new one."""

from __future__ import annotations

import ast
import re

from torchpatch.rules._call_sites import is_assignment_target
from torchpatch.rules.api_table import ApiChange
from torchpatch.rules.base import UNSAFE, Edit, Fix, Invalid, Rule
from torchpatch.syntax import chain_root


def examples_of(rows: dict[str, ApiChange]) -> list[Invalid]:
    """The rows' own examples, as the rule's INVALID examples (tests and docs)."""
    return [Invalid(row.example, fixed=row.fixed) for row in rows.values() if row.example]


class TableRule(Rule):
    """Shared implementation; subclasses choose their rows."""

    rows: dict[str, ApiChange] = {}

    def check_reference(self, ctx, reference):
        row = self.rows.get(reference.qualname)
        if row is None or row.since > ctx.target:
            return
        if reference.module_node is not None and (row.submodule_names_kept or row.submodule_names_kept_unless) and all(
                _submodule_name_kept(ctx, alias, row) for alias in reference.module_node.names):
            # ``from torch.nn.utils.weight_norm import remove_weight_norm``: the match is the submodule that shares
            # the deprecated function's name, and the names imported from it are not deprecated
            return
        if is_assignment_target(reference):
            # ``torch.distributed.reduce_scatter_tensor = wrapper`` (xtuner 0.2.0's MLU patch) replaces the
            # name: nothing old runs or warns there, and renaming the target would move the patch
            return
        run_by_name = False
        if _imported_by_name(ctx, reference):
            # ``from m import old`` is fixed at the import, and its uses follow it. A deprecated name still
            # warns where it runs (``clip_grad_norm(params, 1.0)``: FutureWarning on the call's line, 2.4-2.15),
            # so each call is reported too, without a fix of its own.
            if not _runs_a_warned_name(ctx, reference, row):
                return
            run_by_name = True
        if _absence_tolerated(ctx, reference, row) or (
                row.removed_in is not None and self._needs_a_module_removed_by_then(ctx, reference, row)):
            return
        gone = _names_gone_from(ctx, reference, row)
        if gone:
            move, names = gone
            kept = ", ".join(f"`{name}`" for name in sorted(move.names))
            missing = ", ".join(f"`{name}`" for name in names)
            # Not a silent re-export for these names: the old submodule lost them, so the import fails.
            message = (f"`{move.old}` keeps only {kept} from PyTorch {move.others_fail_from}: importing {missing} "
                       f"from it raises ImportError there")
        else:
            message = f"`{row.old}` is {row.phrase(ctx.target)}"
        if row.new:
            message += f"; use `{row.new}`"
        if row.note:
            message += f" ({row.note})"
        blocking = self._blocking(ctx, row)
        if blocking:
            names = ", ".join(f"`{name}`" for name in blocking)
            message += f"; not fixed automatically: this file also uses {names}, which the move breaks"
        fix = None if run_by_name else self._fix(ctx, reference, row)
        node = reference.node
        if reference.module_node is not None:
            span = _module_span(ctx, reference.module_node)
            yield ctx.diagnostic(span or node, message, fix)
        else:
            yield ctx.diagnostic(node, message, fix)

    # -- availability flags -------------------------------------------------------------------------
    def _needs_a_module_removed_by_then(self, ctx, reference, row: ApiChange) -> bool:
        """The reference runs only under ``if FLAG`` (or ``if FLAG and ...``), where FLAG is a module-level
        flag that is True only when an import of a torch name this table removes no later than ``row``
        worked (torchtnt 0.2.4: ``try: from torch.ao.quantization.pt2e.export_utils import ...`` /
        ``except Exception: _EXPORT_UTILS_AVAIL = False``, then ``torch.ao.quantization.
        move_exported_model_to_train`` under ``if _EXPORT_UTILS_AVAIL and ...``; both leave in 2.11):
        on the releases without ``row.old`` the flag is False and the code does not run."""
        node = reference.node
        parent = ctx.parent_of(node)
        while parent is not None:
            if type(parent) is ast.If and any(node is s for s in parent.body):
                for flag in _positive_flags(parent.test):
                    removed = self._probed_removal(ctx.tree, flag)
                    if removed is not None and removed <= row.removed_in:
                        return True
            node, parent = parent, ctx.parent_of(parent)
        return False

    def _probed_removal(self, module: ast.Module, flag: str):
        """When ``flag`` is True only after a module-level ``try`` imported a name this table removes
        (and False in its handler), the release that removes it; else None."""
        values: list[bool | None] = []  # every module-level assignment of the flag
        removal = None
        for statement in module.body:
            if type(statement) is ast.Try:
                handler_values = [v for h in statement.handlers for v in _flag_values(h.body, flag)]
                body_values = _flag_values(statement.body, flag)
                if handler_values:
                    if handler_values != [False] * len(handler_values) or set(body_values) - {True}:
                        return None
                    removals = [self._removal_of(s) for s in statement.body if type(s) in (ast.Import, ast.ImportFrom)]
                    removals = [r for r in removals if r is not None]
                    if removals:
                        removal = min([*removals, *([removal] if removal is not None else [])])
                    values += handler_values
                values += body_values
            else:
                values += _flag_values([statement], flag)
        if removal is None or True not in values or None in values:
            return None
        assigned = sum(1 for n in ast.walk(module) if type(n) is ast.Name and n.id == flag and type(n.ctx) is ast.Store)
        # an assignment anywhere else (a nested block, a function) could set it: not a plain probe
        return removal if assigned == len(values) else None

    def _removal_of(self, statement: ast.Import | ast.ImportFrom):
        """The earliest removal (in this table) of what the import statement imports, or None."""
        if statement.level:
            return None
        names = [a.name for a in statement.names] if type(statement) is ast.Import \
            else [f"{statement.module}.{a.name}" for a in statement.names]
        found = []
        for name in names:
            parts = name.split(".")
            for end in range(len(parts), 0, -1):
                row = self.rows.get(".".join(parts[:end]))
                if row is not None and row.removed_in is not None:
                    found.append(row.removed_in)
                    break
        return min(found) if found else None

    # -- fixes ------------------------------------------------------------------------------------
    def _fix(self, ctx, reference, row: ApiChange) -> Fix | None:
        if not row.new or row.fix == "none" or self._blocked(ctx, row):
            return None
        edits = self._edits(ctx, reference, row)
        if not edits:
            return None
        new, needs = row.new, row.replacement_since
        move = _target_move(reference, row) if row.kind == "module" else None
        if move is not None:  # a submodule's own new home (``_tensor.device_mesh`` -> ``device_mesh``)
            new, needs = move.new, move.since or needs
        applicability = UNSAFE if row.fix == "unsafe" else ctx.applicability(needs=needs)
        note = ctx.needs_note(needs)
        if applicability != UNSAFE and row.kind != "module" and _used_as_a_value(ctx, reference):
            # `ops = [torch.ger, ...]` (lightning-thunder's op table): the new name is another object
            # (`torch.ger is torch.outer` is False on 2.13), so a table keyed by function changes meaning.
            applicability = UNSAFE
            note += " (unsafe: the name is used as a value, not called; the new one is a different object)"
        obsolete = ()
        if not reference.in_import and isinstance(reference.node, (ast.Name, ast.Attribute)):
            obsolete = (chain_root(reference.node),)
        return Fix(message=f"Replace with `{new}`{note}", edits=edits, applicability=applicability,
                   obsolete_names=obsolete)

    @staticmethod
    def _blocking(ctx, row: ApiChange) -> list[str]:
        """The names the fix would break that the file uses (a word match: it only ever withholds a fix)."""
        text = ctx.text
        # The substring test first: a pattern that starts with ``\b`` is searched for character by character.
        return [name for name in row.no_fix_with if name in text and re.search(rf"\b{re.escape(name)}\b", text)]

    @classmethod
    def _blocked(cls, ctx, row: ApiChange) -> bool:
        return bool(cls._blocking(ctx, row))

    def _edits(self, ctx, reference, row: ApiChange) -> list[Edit]:
        if row.kind == "module":
            return self._module_edits(ctx, reference, row)
        node = reference.node
        old_parent, _, old_leaf = row.old.rpartition(".")
        new_parent, _, new_leaf = row.new.rpartition(".")
        if reference.module_node is not None:
            # ``from torch.nn.utils.weight_norm import weight_norm`` (mmf): the old function's name is also
            # the submodule that defines it, and the match is the statement's module path. Only the
            # statement that imports just that function can become ``from NEW_PARENT import NEW_LEAF``;
            # replacing the statement with the new name (an expression) would drop the import.
            statement = reference.module_node
            names = statement.names
            if statement.level or statement.module != row.old or len(names) != 1 or names[0].name != old_leaf:
                return []
            local = names[0].asname or names[0].name
            alias = "" if local == new_leaf else f" as {local}"
            return [Edit(ctx.start(statement), ctx.end(statement), f"from {new_parent} import {new_leaf}{alias}")]
        if isinstance(node, ast.alias):
            start = ctx.start(node)
            statement = reference.statement
            if isinstance(statement, ast.Import):
                if node.name != row.old:
                    return []
                return [Edit(start, start + len(row.old), row.new)]
            # from M import leaf [as alias]
            if isinstance(statement, ast.ImportFrom) and statement.module == new_parent:
                replacement = new_leaf if node.asname or new_leaf == old_leaf else f"{new_leaf} as {old_leaf}"
                return [Edit(start, start + len(node.name), replacement)]
            if isinstance(statement, ast.ImportFrom) and len(statement.names) == 1 and statement.level == 0:
                local = node.asname or node.name
                alias = "" if local == new_leaf else f" as {local}"
                return [Edit(ctx.start(statement), ctx.end(statement), f"from {new_parent} import {new_leaf}{alias}")]
            return []
        if isinstance(node, ast.Attribute) and old_parent == new_parent and row.new_module is None:
            # a rename within the module (``nn.init.normal`` → ``nn.init.normal_``): only the last name
            # changes, whatever alias reached the module
            end = ctx.end(node)
            return [Edit(end - len(old_leaf), end, new_leaf)]
        text, import_edits = ctx.name_for(row.new, row.new_module)
        return [*import_edits, Edit(ctx.start(node), ctx.end(node), text)]

    def _module_edits(self, ctx, reference, row: ApiChange) -> list[Edit]:
        """A moved module: only to a module the wheels show, and only for the names it has there."""
        node = reference.node
        statement = reference.statement
        if reference.module_node is not None:  # from OLD[.sub] import a, b
            move = row.move_for(statement.module)
            span = _module_span(ctx, statement)
            if move is None or span is None or statement.level or any(a.name == "*" for a in statement.names) \
                    or not move.has_all(a.name for a in statement.names):
                return []
            start, end = span
            return [Edit(start, end, move.new)]
        if isinstance(node, ast.alias):
            if isinstance(statement, ast.Import):  # import OLD[.sub] as x
                move = row.move_for(node.name)
                if move is None or node.asname is None:
                    return []  # ``import a.b`` binds ``a``: its uses are fixed (or not) one by one
                uses = ctx.attribute_uses(node.asname)
                if uses is None or not move.has_all(uses):
                    return []
                start = ctx.start(node)
                return [Edit(start, start + len(node.name), move.new)]
            if isinstance(statement, ast.ImportFrom) and statement.level == 0 and len(statement.names) == 1:
                move = row.move_for(f"{statement.module}.{node.name}")  # from torch.distributed import _tensor
                local = node.asname or node.name
                uses = ctx.attribute_uses(local)
                if move is None or uses is None or not move.has_all(uses):
                    return []
                parent, _, leaf = move.new.rpartition(".")
                alias = "" if local == leaf else f" as {local}"
                return [Edit(ctx.start(statement), ctx.end(statement), f"from {parent} import {leaf}{alias}")]
            return []
        # A chain in code: OLD.name, with name one the new module has.
        move = row.move_for(reference.qualname)
        parent = ctx.parent_of(node)
        if move is None or type(parent) is not ast.Attribute or parent.value is not node \
                or not move.has_all([parent.attr]) or row.move_for(f"{reference.qualname}.{parent.attr}"):
            return []
        if isinstance(node, ast.Attribute) and move.new.rpartition(".")[0] == move.old.rpartition(".")[0]:
            end = ctx.end(node)
            return [Edit(end - len(node.attr), end, move.new.rpartition(".")[2])]
        text, import_edits = ctx.name_for(move.new, move.new)
        return [*import_edits, Edit(ctx.start(node), ctx.end(node), text)]


def _positive_flags(test: ast.expr) -> list[str]:
    """``if FLAG:`` and ``if FLAG and ...:``: the names whose truth the body needs."""
    if type(test) is ast.Name:
        return [test.id]
    if type(test) is ast.BoolOp and isinstance(test.op, ast.And):
        return [value.id for value in test.values if type(value) is ast.Name]
    return []


def _flag_values(statements: list[ast.stmt], flag: str) -> list[bool]:
    """The constants ``flag`` is assigned in these statements (a non-constant assignment: [None])."""
    values = []
    for statement in statements:
        targets = statement.targets if type(statement) is ast.Assign else \
            [statement.target] if type(statement) is ast.AnnAssign and statement.value is not None else []
        if any(type(t) is ast.Name and t.id == flag for t in targets):
            value = statement.value
            values.append(value.value if type(value) is ast.Constant and type(value.value) is bool else None)
    return values


def _names_gone_from(ctx, reference, row: ApiChange):
    """``from OLD.sub import name``, where ``sub`` holds only some names from a release up to the target: the move
    and the imported names it lacks (they raise ImportError there), or None."""
    if reference.module_node is None:
        return None
    statement = reference.statement
    move = row.move_for(statement.module) if statement.level == 0 else None
    if move is None or move.others_fail_from is None or move.names is None or move.others_fail_from > ctx.target:
        return None
    missing = [alias.name for alias in statement.names if alias.name != "*" and alias.name not in move.names]
    return (move, missing) if missing else None


def _target_move(reference, row: ApiChange):
    """The module move a module row's fix applies to this reference (as ``_module_edits`` picks it)."""
    statement, node = reference.statement, reference.node
    if reference.module_node is not None:
        return row.move_for(statement.module)
    if isinstance(node, ast.alias):
        if isinstance(statement, ast.Import):
            return row.move_for(node.name)
        if isinstance(statement, ast.ImportFrom):
            return row.move_for(f"{statement.module}.{node.name}")
        return None
    return row.move_for(reference.qualname)


def _used_as_a_value(ctx, reference) -> bool:
    """The reference is neither imported, nor called, nor a decorator: a function object handed around."""
    node = reference.node
    if reference.in_import or not isinstance(node, (ast.Name, ast.Attribute)):
        return False
    parent = ctx.parent_of(node)
    if isinstance(parent, ast.Call) and parent.func is node:
        return False
    if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node in parent.decorator_list:
        return False
    if isinstance(parent, ast.Attribute) and parent.value is node and parent.attr.isupper():
        return False  # an enum member read off it (``dist.reduce_op.SUM`` is ``dist.ReduceOp.SUM``)
    return True


#: What catches the error a removal raises: the name's own error, or any exception.
_CATCH_ANY = frozenset({"Exception", "BaseException"})
_ABSENT_IMPORT = frozenset({"ImportError", "ModuleNotFoundError"})
_ABSENT_ATTRIBUTE = frozenset({"AttributeError"})


def _absence_tolerated(ctx, reference, row: ApiChange) -> bool:
    """``try: torch.onnx.enable_log()`` / ``except AttributeError: pass`` (detectron2 02b5c4e2,
    tests/test_export_onnx.py): a removed name alone in a ``try`` whose handler catches the error its
    removal raises runs where the name exists and is skipped where it does not, so it breaks nothing.
    Only for a removal with no deprecation before it (a name that warned first still warns there) and
    only when the try holds nothing else (more statements would be skipped silently on new releases)."""
    if row.removed_in is None or row.removed_in > ctx.target:
        return False
    if row.deprecated_in is not None and row.deprecated_in < row.removed_in:
        return False
    statement = reference.statement
    holder = ctx.parent_of(statement)
    if not isinstance(holder, ast.Try) and type(holder).__name__ != "TryStar":
        return False
    body = holder.body
    if not any(s is statement for s in body):
        return False
    imports_only = all(isinstance(s, (ast.Import, ast.ImportFrom)) for s in body)
    if len(body) != 1 and not (reference.in_import and imports_only):
        return False
    absent = _ABSENT_IMPORT if reference.in_import else _ABSENT_ATTRIBUTE
    return any(_catches(handler, absent) for handler in holder.handlers)


def _catches(handler: ast.ExceptHandler, errors: frozenset[str]) -> bool:
    if handler.type is None:
        return True
    types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    names = {t.id if isinstance(t, ast.Name) else t.attr if isinstance(t, ast.Attribute) else "" for t in types}
    return bool(names & (errors | _CATCH_ANY))


def _submodule_name_kept(ctx, alias: ast.alias, row: ApiChange) -> bool:
    """``alias`` (imported from the submodule that shares the row's name) is not a use of the deprecated function:
    a name that carries no deprecation, or one whose deprecated attributes the file never reaches through it."""
    if alias.name in row.submodule_names_kept:
        return True
    attributes = dict(row.submodule_names_kept_unless).get(alias.name)
    if attributes is None:
        return False
    local = alias.asname or alias.name
    for node in ast.walk(ctx.tree):
        if type(node) is ast.Name and node.id == local:
            if type(node.ctx) is not ast.Load or not _keeps_clear_of(ctx, node, attributes, instances=True):
                return False
    return True


def _keeps_clear_of(ctx, use: ast.Name, attributes: tuple[str, ...], instances: bool) -> bool:
    """``use`` only reads attributes other than ``attributes`` (``WeightNorm.compute_weight``), or, with
    ``instances``, builds an object that is only used so (``wn = WeightNorm(...)`` then ``wn.compute_weight(m)``
    in the same function). Anything else (an argument, a base class, a return value) could reach them."""
    parent = ctx.parent_of(use)
    if type(parent) is ast.Attribute:
        return parent.attr not in attributes
    if not instances or type(parent) is not ast.Call or parent.func is not use:
        return False
    holder = ctx.parent_of(parent)
    if type(holder) is ast.Attribute:
        return holder.attr not in attributes
    if type(holder) is not ast.Assign or len(holder.targets) != 1 or type(holder.targets[0]) is not ast.Name:
        return False
    name = holder.targets[0].id
    scope = ctx.parent_of(holder)
    while scope is not None and type(scope) not in (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.Module):
        scope = ctx.parent_of(scope)
    if type(scope) is not ast.FunctionDef and type(scope) is not ast.AsyncFunctionDef:
        return False  # a module-level or class-level object can be reached from anywhere
    for node in ast.walk(scope):
        if type(node) is ast.Name and node.id == name and node is not holder.targets[0]:
            if type(node.ctx) is not ast.Load or not _keeps_clear_of(ctx, node, attributes, instances=False):
                return False
    return True


def _imported_by_name(ctx, reference) -> bool:
    node = reference.node
    if reference.in_import or not isinstance(node, ast.Name):
        return False
    binding = ctx.scopes.binding_for(node.id, reference.scope, (node.lineno, node.col_offset))
    return binding is not None and binding.import_alias is not None and binding.qualname == reference.qualname


def _runs_a_warned_name(ctx, reference, row: ApiChange) -> bool:
    """A use of a from-imported name that runs a deprecated (still present, warning) function or class: a call or a
    decorator. Module rows warn at the import only; a silent re-export never warns; a removed name fails at the import."""
    if row.kind == "module" or row.silent or (row.removed_in is not None and row.removed_in <= ctx.target):
        return False
    node = reference.node
    parent = ctx.parent_of(node)
    if isinstance(parent, ast.Call) and parent.func is node:
        return True
    if row.warns_on_attribute and isinstance(parent, ast.Attribute) and parent.value is node:
        return True  # ``from torch.distributed import reduce_op`` … ``reduce_op.SUM`` (FutureWarning there)
    return isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node in parent.decorator_list


_FROM = re.compile(r"from\s+([\w.]+)\s+import")


def _module_span(ctx, statement: ast.ImportFrom) -> tuple[int, int] | None:
    start = ctx.start(statement)
    match = _FROM.match(ctx.text, start)
    if match is None:
        return None
    return match.start(1), match.end(1)
