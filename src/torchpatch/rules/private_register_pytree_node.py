"""TP205: torch.utils._pytree._register_pytree_node → torch.utils._pytree.register_pytree_node."""

from __future__ import annotations

import ast

from torchpatch.rules._call_sites import CALLEE, IMPORT, is_none_test, reference_role, root_name
from torchpatch.rules._helpers import has_star_args, keyword, replace_node
from torchpatch.rules.base import UNSAFE, Edit, Fix, Invalid, Rule
from torchpatch.versions import v

_OLD = "torch.utils._pytree._register_pytree_node"
_NEW = "torch.utils._pytree.register_pytree_node"
#: ``_register_pytree_node(cls, flatten_fn, unflatten_fn, to_str_fn=None, maybe_from_str_fn=None, *, ...)``;
#: the public function stops after ``unflatten_fn`` and has the same keyword-only parameters.
_SHARED_POSITIONAL = 3
_DEPRECATED_ARGUMENTS = ("to_str_fn", "maybe_from_str_fn")


class PrivateRegisterPytreeNode(Rule):
    """
    ## What it does
    Flags calls to `torch.utils._pytree._register_pytree_node(cls, flatten_fn, unflatten_fn, ...)` and
    renames them to the public `torch.utils._pytree.register_pytree_node`.

    ## Why is this bad?
    The private function has been deprecated since PyTorch 2.3 (a `UserWarning`, a `FutureWarning`
    from 2.4) in favour of `register_pytree_node`, public since 2.2, which takes the same
    `cls, flatten_fn, unflatten_fn` and the same keyword arguments (`serialized_type_name=`,
    `to_dumpable_context=`, `from_dumpable_context=`, `flatten_with_keys_fn=`).

    Calls that pass the old string-serialization hooks `to_str_fn`/`maybe_from_str_fn` (the 4th and
    5th positional arguments, or those keywords) are reported without a fix: the public function
    does not accept them — the private one only warns and ignores them — so serialization has to
    move to `to_dumpable_context`/`from_dumpable_context` by hand.
    """

    code = "TP205"
    name = "private-register-pytree-node"
    summary = "`torch.utils._pytree._register_pytree_node` is deprecated: use `register_pytree_node`"
    deprecated_in = v("2.3")
    replacement_since = v("2.2")
    fix_safety = UNSAFE
    fix_safety_note = (
        "Two differences: `register_pytree_node` raises `ValueError` when the class is already registered "
        "(the private one warns and overwrites, which matters when a module is imported or reloaded twice), "
        "and it also registers the class with the C++ pytree (`torch.utils._cxx_pytree`) when `optree` is installed."
    )
    references = (
        "https://github.com/pytorch/pytorch/pull/112111",
    )
    torchfix_codes = ("TOR101",)
    catalog_ids = ("ag.pytree-register",)
    calls = frozenset({_OLD})
    references_to = calls

    VALID = [
        'import torch.utils._pytree as pytree\npytree.register_pytree_node(Point, flatten, unflatten, serialized_type_name="m.Point")\n',
        'from torch.utils._pytree import register_pytree_node\nregister_pytree_node(Point, flatten, unflatten)\n',
        'import jax\njax.tree_util.register_pytree_node(Point, flatten, unflatten)\n',
        'import torch\ndef _register_pytree_node(cls, f, u):\n    return cls\n_register_pytree_node(Point, flatten, unflatten)\n',
    ]
    INVALID = [
        Invalid('import torch.utils._pytree as pytree\npytree._register_pytree_node(Point, flatten, unflatten)\n',
                fixed='import torch.utils._pytree as pytree\npytree.register_pytree_node(Point, flatten, unflatten)\n'),
        Invalid('from torch.utils._pytree import _register_pytree_node\n\n'
                '_register_pytree_node(Point, flatten, unflatten, serialized_type_name="mod.Point")\n',
                fixed='from torch.utils._pytree import register_pytree_node\n\n'
                'register_pytree_node(Point, flatten, unflatten, serialized_type_name="mod.Point")\n'),
        Invalid('import torch\nimport torch.utils._pytree\ntorch.utils._pytree._register_pytree_node(Point, flatten, unflatten)\n',
                fixed='import torch\nimport torch.utils._pytree\ntorch.utils._pytree.register_pytree_node(Point, flatten, unflatten)\n'),
        Invalid('from torch.utils import _pytree\n_pytree._register_pytree_node(\n    Point,\n    flatten,\n    unflatten,\n)\n',
                fixed='from torch.utils import _pytree\n_pytree.register_pytree_node(\n    Point,\n    flatten,\n    unflatten,\n)\n'),
        # The deprecated string hooks: no fix.
        Invalid('import torch.utils._pytree as pytree\npytree._register_pytree_node(Point, flatten, unflatten, point_to_str, point_from_str)\n'),
        Invalid('import torch.utils._pytree as pytree\npytree._register_pytree_node(Point, flatten, unflatten, to_str_fn=str)\n'),
        Invalid('import torch.utils._pytree as pytree\nregister = pytree._register_pytree_node\n'),
    ]

    def _message(self, ctx, tail: str = "") -> str:
        return f"`{_OLD}` is {self.version_phrase(ctx.target)}; use `{_NEW}`{tail}"

    def check_call(self, ctx, call, qualname):
        reason = self._no_fix_reason(call)
        if reason:
            yield ctx.diagnostic(call.func, self._message(ctx, f" ({reason})"))
            return
        yield ctx.diagnostic(call.func, self._message(ctx), self._fix(ctx, call.func))

    def check_reference(self, ctx, reference):
        if reference_role(reference) in (CALLEE, IMPORT) or is_none_test(reference):
            return  # ``is None`` after a guarded import is a probe (the old name is still in 2.15)
        yield ctx.diagnostic(reference.node, self._message(ctx))

    @staticmethod
    def _no_fix_reason(call) -> str:
        if any(keyword(call, name) is not None for name in _DEPRECATED_ARGUMENTS) or len(call.args) > _SHARED_POSITIONAL:
            return "`to_str_fn`/`maybe_from_str_fn` are not accepted there: move to `to_dumpable_context`/`from_dumpable_context`"
        if has_star_args(call):
            return "`*args`/`**kwargs` may pass the old `to_str_fn`/`maybe_from_str_fn`: rename by hand"
        return ""

    def _fix(self, ctx, func) -> Fix:
        obsolete: tuple[str, ...] = ()
        if isinstance(func, ast.Attribute):
            # ``X._register_pytree_node`` with X the pytree module: rename the attribute only.
            end = ctx.end(func)
            edits = [Edit(end - len(func.attr), end, "register_pytree_node")]
        else:
            name, import_edits = ctx.name_for(_NEW)
            edits = [*import_edits, replace_node(ctx, func, name)]
            obsolete = root_name(func)
        return Fix(
            message=f"Rename to `register_pytree_node` (raises if the class is already registered){ctx.needs_note(self.replacement_since)}",
            edits=edits,
            applicability=ctx.applicability(needs=self.replacement_since, behaviour_changes=True),
            obsolete_names=obsolete,
        )
