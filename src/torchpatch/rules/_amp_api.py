"""Shared implementation of the `torch.cuda.amp` / `torch.cpu.amp` rules (TP202, TP203)."""

from __future__ import annotations

import ast

from torchpatch.rules._call_sites import (
    CALLEE, DECORATOR, IMPORT, Insertions, has_starred, in_annotation, insert_after_positional,
    insert_first_argument, is_base_class, is_class_test, is_none_test, positional_to_keywords, reference_role, root_name,
)
from torchpatch.rules._helpers import add_keyword, has_double_star, keyword, replace_node
from torchpatch.rules.base import UNSAFE, Fix, Rule
from torchpatch.versions import Version, v

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (3 ms of every start-up)
if TYPE_CHECKING:
    from typing import ClassVar

#: The old classes' and functions' parameters, in order (torch 2.4 and 2.13 torch/{cuda,cpu}/amp/*.py).
OLD_PARAMETERS: dict[str, tuple[str, ...]] = {
    "autocast": ("enabled", "dtype", "cache_enabled"),
    "GradScaler": ("init_scale", "growth_factor", "backoff_factor", "growth_interval", "enabled"),
    "custom_fwd": ("fwd",),
    "custom_bwd": ("bwd",),
}

#: The first release whose ``torch.amp`` has the replacement (checked in the 2.1-2.4 wheels):
#: ``torch.amp.autocast`` is older than 2.1, ``torch.amp.GradScaler(device, ...)`` came in 2.3,
#: ``torch.amp.custom_fwd/custom_bwd(..., device_type=...)`` in 2.4.
REPLACEMENT_SINCE: dict[str, Version] = {
    "autocast": v("2.1"),
    "GradScaler": v("2.3"),
    "custom_fwd": v("2.4"),
    "custom_bwd": v("2.4"),
}

#: The submodule that defines each name (``torch.cuda.amp.autocast_mode.autocast`` is the same class).
_DEFINED_IN = {"autocast": "autocast_mode", "custom_fwd": "autocast_mode", "custom_bwd": "autocast_mode",
               "GradScaler": "grad_scaler"}


def watched_names(module: str, apis: tuple[str, ...]) -> frozenset[str]:
    names = set()
    for api in apis:
        names.add(f"{module}.{api}")
        names.add(f"{module}.{_DEFINED_IN[api]}.{api}")
    return frozenset(names)


class AmpApiRule(Rule):
    """Base class: ``module`` (torch.cuda.amp) and ``device`` ("cuda") are set by the subclass."""

    module: ClassVar[str]
    device: ClassVar[str]
    #: The dtype the old autocast class pins by default (2.4-2.15 ``torch/{cuda,cpu}/amp/autocast_mode.py``).
    #: ``torch.amp.autocast(device)`` without a dtype reads ``torch.get_autocast_dtype(device)``
    #: instead, which an enclosing autocast of another dtype (or ``torch.set_autocast_dtype``)
    #: changes: the fix writes the pinned dtype, so nested regions keep computing in it.
    pinned_dtype: ClassVar[str]

    @classmethod
    def _new_call(cls, api: str) -> str:
        if api in ("custom_fwd", "custom_bwd"):
            return f'torch.amp.{api}(device_type="{cls.device}", ...)'
        return f'torch.amp.{api}("{cls.device}", ...)'

    def _message(self, ctx, api: str, tail: str = "") -> str:
        return f"`{self.module}.{api}` is {self.version_phrase(ctx.target)}; use `{self._new_call(api)}`{tail}"

    # -- hooks ----------------------------------------------------------------------------------
    def check_call(self, ctx, call, qualname):
        api = qualname.rpartition(".")[2]
        fix = self._call_fix(ctx, call, api)
        tail = "" if fix else " (its positional arguments cannot be mapped automatically: name them by hand)"
        yield ctx.diagnostic(call.func, self._message(ctx, api, tail), fix)

    def check_reference(self, ctx, reference):
        role = reference_role(reference)
        if role in (CALLEE, IMPORT) or is_none_test(reference):
            # calls are fixed where they happen; the import goes once it is unused; ``autocast is None``
            # after a guarded import only asks whether the name imported (still shipped in 2.15)
            return
        api = reference.qualname.rpartition(".")[2]
        node = reference.node
        if role == DECORATOR and api in ("custom_fwd", "custom_bwd"):
            yield ctx.diagnostic(node, self._message(ctx, api), self._decorator_fix(ctx, node, api))
            return
        if api == "GradScaler" and in_annotation(reference):
            # A type, not a construction: ``torch.cuda.amp.GradScaler`` subclasses ``torch.amp.GradScaler``
            # on 2.4-2.15 (torch/cuda/amp/grad_scaler.py), so the base class is the type to name. Not
            # fixed: dataclasses and CLI parsers read annotations at run time.
            yield ctx.diagnostic(node, (
                f"`{self.module}.{api}` is {self.version_phrase(ctx.target)}; in an annotation use "
                f"`torch.amp.GradScaler` (the old class subclasses it; not fixed automatically: "
                f"annotations read at run time would change)"))
            return
        if api == "GradScaler" and is_class_test(reference):
            # ``isinstance(scaler, torch.cuda.amp.GradScaler)``: the base class also matches other scalers,
            # and a scaler built by ``torch.amp.GradScaler("cuda")`` (this rule's fix of a construction,
            # perhaps in another module) is not an instance of the old subclass (2.4-2.15
            # torch/{cuda,cpu}/amp/grad_scaler.py): mmf's tests check the trainer's scaler this way.
            yield ctx.diagnostic(node, self._message(ctx, api, (
                f' (not fixed automatically: `torch.amp.GradScaler` also matches other scalers, and a scaler built '
                f'with `torch.amp.GradScaler("{self.device}", ...)`, as the fix of a construction writes, is not '
                f'an instance of `{self.module}.GradScaler`: change the constructions and this test together)')))
            return
        if api == "GradScaler" and is_base_class(reference):
            # A subclass reaches the old class's deprecated ``__init__`` (2.4-2.15), so it warns; a
            # ``functools.partial`` cannot be a base class. ``torch.amp.GradScaler`` takes ``device`` first
            # (default "cuda"; 2.4.1-2.15.0 torch/amp/grad_scaler.py), so positional arguments shift by one.
            yield ctx.diagnostic(node, (
                f"`{self.module}.{api}` is {self.version_phrase(ctx.target)}; as a base class use "
                f'`torch.amp.GradScaler` and pass `"{self.device}"` as the `device` its `__init__` takes first '
                f"(positional arguments to the subclass or to `super().__init__` shift by one; not fixed "
                f"automatically)"))
            return
        tail = " (not fixed automatically here: the new signature differs"
        if api == "GradScaler":
            tail += f'; `functools.partial(torch.amp.GradScaler, "{self.device}")` takes the old arguments'
        tail += ")"
        yield ctx.diagnostic(node, self._message(ctx, api, tail))

    # -- fixes ------------------------------------------------------------------------------------
    def _fix(self, ctx, api: str, edits, node, unsafe_because: str = "") -> Fix:
        needs = REPLACEMENT_SINCE[api]
        note = ctx.needs_note(needs)
        if unsafe_because:
            note += f" (unsafe: {unsafe_because})"
        return Fix(
            message=f"Replace with `{self._new_call(api)}`{note}",
            edits=edits,
            applicability=UNSAFE if unsafe_because else ctx.applicability(needs=needs),
            obsolete_names=root_name(node),
        )

    def _call_fix(self, ctx, call, api: str) -> Fix | None:
        insertions = Insertions()
        device = f'"{self.device}"'
        if api in ("custom_fwd", "custom_bwd"):
            # The old ones take the function positionally and ``cast_inputs`` as a keyword: only
            # the required ``device_type=`` keyword is new.
            if has_starred(call) or not insert_after_positional(ctx, call, f"device_type={device}", insertions):
                return None
        else:
            insert_first_argument(ctx, call, device, insertions)
            if not positional_to_keywords(ctx, call, OLD_PARAMETERS[api], insertions):
                # GradScaler's parameters only shift by one, so ``"cuda", *args`` still lines up;
                # autocast's order changed (dtype now comes before enabled).
                if api != "GradScaler" or len(call.args) > len(OLD_PARAMETERS[api]):
                    return None
                insertions = Insertions()
                insert_first_argument(ctx, call, device, insertions)
        name, import_edits = ctx.name_for(f"torch.amp.{api}")
        edits = [*import_edits, replace_node(ctx, call.func, name), *insertions.edits()]
        unsafe_because = ""
        if api == "GradScaler":
            # The new object is a ``torch.amp.GradScaler``, the old class's base (2.4-2.15
            # torch/{cuda,cpu}/amp/grad_scaler.py): ``isinstance(scaler, torch.cuda.amp.GradScaler)`` in
            # another module or a test turns False (mmf's trainer tests), which one file cannot show.
            unsafe_because = (f"the new scaler is a `torch.amp.GradScaler`, the base class of `{self.module}."
                              f"GradScaler`: an `isinstance(scaler, {self.module}.GradScaler)` test elsewhere "
                              f"turns False")
        if api == "autocast" and keyword(call, "dtype") is None and len(call.args) < 2:
            if has_double_star(call):
                unsafe_because = (f"if the `**` mapping passes no `dtype`, `torch.amp.autocast` inherits an "
                                  f"enclosing autocast's dtype where the old class pinned `torch.{self.pinned_dtype}`")
            else:
                dtype_name, dtype_imports = ctx.name_for(f"torch.{self.pinned_dtype}", "torch")
                dtype = f"dtype={dtype_name}"
                if not call.args and not call.keywords:
                    edits = [*import_edits, *dtype_imports, replace_node(ctx, call.func, name)]
                    insertions = Insertions()
                    insert_first_argument(ctx, call, f"{device}, {dtype}", insertions)
                    edits.extend(insertions.edits())
                else:
                    edits.extend([*dtype_imports, add_keyword(ctx, call, dtype)])
        return self._fix(ctx, api, edits, call.func, unsafe_because)

    def _decorator_fix(self, ctx, node, api: str) -> Fix:
        name, import_edits = ctx.name_for(f"torch.amp.{api}")
        edits = [*import_edits, replace_node(ctx, node, f'{name}(device_type="{self.device}")')]
        return self._fix(ctx, api, edits, node)
