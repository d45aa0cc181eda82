"""The table of plain renames, moves and removals (rules/data/api_changes.toml), read once."""

from __future__ import annotations

import sys
from functools import lru_cache
from pathlib import Path

from torchpatch._record import FrozenRecord
from torchpatch.rules import _manifest
from torchpatch.versions import Version

TABLE_PATH = Path(__file__).with_name("data") / "api_changes.toml"


class ModuleMove(FrozenRecord):
    """Where one old module went, and which of its names the new module has (None: every name).

    A module row with moves is fixed only for the modules it lists: a submodule of the old
    package that has no public counterpart (``torch.distributed._tensor.api`` → the private
    ``tensor._api``) is reported without a fix. The lists come from the real wheels' layout.
    """

    old: str
    new: str
    names: frozenset[str] | None = None
    #: The oldest release that has ``new`` when it is older than the row's ``replacement_since``
    #: (``torch.distributed.device_mesh`` is in 2.4, ``torch.distributed.tensor`` only from 2.5).
    since: Version | None = None
    #: The release from which ``old`` holds only ``names``: importing any other name from it raises ImportError
    #: there (2.6's ``torch.distributed._composable.fsdp.fully_shard`` keeps four re-exports).
    others_fail_from: Version | None = None

    def has_all(self, names) -> bool:
        return self.names is None or all(name in self.names for name in names)


class ApiChange(FrozenRecord):
    """One row: an old qualified name, what replaces it, and when."""

    old: str
    new: str | None
    deprecated_in: Version | None
    removed_in: Version | None
    replacement_since: Version | None  # the oldest release that has ``new``
    catalog: str
    note: str
    kind: str  # "name" (function/class/attribute) or "module"
    fix: str  # "safe": same behaviour; "unsafe": review needed; "none"
    new_module: str | None  # what to import for ``new`` when it is not its parent module
    example: str | None
    fixed: str | None
    module_moves: tuple[ModuleMove, ...] = ()  # kind = "module": the old modules that have a new home
    no_fix_with: tuple[str, ...] = ()  # names whose presence in the file makes the fix wrong
    silent: bool = False  # a re-export kept without a warning or a documented deprecation
    #: A function row whose name is also the submodule defining it (``torch.nn.utils.weight_norm``): the names
    #: of that submodule that are not deprecated, so ``from OLD import name`` is not a use of the function.
    submodule_names_kept: tuple[str, ...] = ()
    #: Names of that submodule that are not deprecated themselves but have deprecated attributes (``WeightNorm``,
    #: whose static ``apply`` warns): (name, attributes) pairs; importing one is kept while the file never
    #: reaches those attributes through it.
    submodule_names_kept_unless: tuple[tuple[str, tuple[str, ...]], ...] = ()
    #: An object that warns on every attribute read (``dist.reduce_op``, whose ``__getattribute__`` warns): a
    #: from-imported name of it warns where its attributes are read, not only where it is called.
    warns_on_attribute: bool = False

    def move_for(self, module: str) -> ModuleMove | None:
        """The new home of ``module`` (the row's module or one of its submodules), or None."""
        if self.module_moves:
            return next((move for move in self.module_moves if move.old == module), None)
        if module == self.old and self.new:
            return ModuleMove(self.old, self.new)
        return None

    @property
    def since(self) -> Version:
        return min(x for x in (self.deprecated_in, self.removed_in) if x is not None)

    def phrase(self, target: Version) -> str:
        if self.silent and self.removed_in is None:
            # No release warns or documents a deprecation: say what it is, not "deprecated".
            if self.new and self.new.split(".")[0] not in ("torch", "functorch"):
                # ``torch.jit.annotations.Optional`` is ``typing.Optional``: not a PyTorch module at all
                return "a silent re-export of the standard name (no release 2.4 … 2.15 warns)"
            return f"an old private path that silently re-exports the public module of PyTorch {self.deprecated_in}"
        if self.removed_in is not None and self.removed_in <= target:
            if self.deprecated_in is not None:
                return f"deprecated in PyTorch {self.deprecated_in}, removed in {self.removed_in}"
            return f"removed in PyTorch {self.removed_in}"
        if self.removed_in is not None:
            start = f"deprecated since PyTorch {self.deprecated_in}, " if self.deprecated_in else ""
            return f"{start}removed in {self.removed_in}"
        return f"deprecated since PyTorch {self.deprecated_in}"


def _version(value: str | None) -> Version | None:
    return Version.parse(value) if value else None


def _parse_table() -> dict:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    return tomllib.loads(TABLE_PATH.read_text(encoding="utf-8"))


@lru_cache(maxsize=1)
def api_changes() -> tuple[ApiChange, ...]:
    data = _manifest.cached_data("api-changes", _parse_table)
    rows = []
    for row in data["change"]:
        rows.append(ApiChange(
            old=row["old"], new=row.get("new"),
            deprecated_in=_version(row.get("deprecated_in")), removed_in=_version(row.get("removed_in")),
            replacement_since=_version(row.get("replacement_since")), catalog=row["catalog"],
            note=row.get("note", ""), kind=row.get("kind", "name"), fix=row.get("fix", "none"),
            new_module=row.get("new_module"), example=row.get("example"), fixed=row.get("fixed"),
            module_moves=tuple(
                ModuleMove(move["old"], move["new"], frozenset(move["names"]) if "names" in move else None,
                           _version(move.get("since")), _version(move.get("others_fail_from")))
                for move in row.get("module_move", ())),
            no_fix_with=tuple(row.get("no_fix_with", ())), silent=row.get("silent", False),
            submodule_names_kept=tuple(row.get("submodule_names_kept", ())),
            submodule_names_kept_unless=tuple(
                (name, tuple(attributes)) for name, attributes in row.get("submodule_names_kept_unless", {}).items()),
            warns_on_attribute=row.get("warns_on_attribute", False),
        ))
    return tuple(rows)


def rows_where(removed: bool) -> dict[str, ApiChange]:
    return {row.old: row for row in api_changes() if (row.removed_in is not None) == removed}
