"""The table of plain renames, moves and removals (rules/data/api_changes.toml), read once."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from torchpatch.versions import Version

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

TABLE_PATH = Path(__file__).with_name("data") / "api_changes.toml"


@dataclass(frozen=True)
class ApiChange:
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

    @property
    def since(self) -> Version:
        return min(x for x in (self.deprecated_in, self.removed_in) if x is not None)

    def phrase(self, target: Version) -> str:
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


@lru_cache(maxsize=1)
def api_changes() -> tuple[ApiChange, ...]:
    data = tomllib.loads(TABLE_PATH.read_text(encoding="utf-8"))
    rows = []
    for row in data["change"]:
        rows.append(ApiChange(
            old=row["old"], new=row.get("new"),
            deprecated_in=_version(row.get("deprecated_in")), removed_in=_version(row.get("removed_in")),
            replacement_since=_version(row.get("replacement_since")), catalog=row["catalog"],
            note=row.get("note", ""), kind=row.get("kind", "name"), fix=row.get("fix", "none"),
            new_module=row.get("new_module"), example=row.get("example"), fixed=row.get("fixed"),
        ))
    return tuple(rows)


def rows_where(removed: bool) -> dict[str, ApiChange]:
    return {row.old: row for row in api_changes() if (row.removed_in is not None) == removed}
