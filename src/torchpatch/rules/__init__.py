"""The rule database: one module per rule, plus table-driven rules for plain renames, moves and removals."""

from __future__ import annotations

import importlib
from functools import lru_cache

from torchpatch.rules.base import Rule

_NOT_RULES = frozenset({"base", "api_table"})


@lru_cache(maxsize=1)
def all_rules() -> tuple[type[Rule], ...]:
    """Every rule class, sorted by code."""
    import pkgutil  # every rule is imported only to build the manifest, list or document them

    found: dict[str, type[Rule]] = {}
    for module_info in pkgutil.iter_modules(__path__):
        if module_info.name in _NOT_RULES or module_info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{module_info.name}")
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, Rule) and value.__module__ == module.__name__ \
                    and getattr(value, "code", None):
                if value.code in found and found[value.code] is not value:
                    raise RuntimeError(f"rule code {value.code} is used twice")
                found[value.code] = value
    return tuple(found[code] for code in sorted(found))


def rule_by_code_or_name(key: str) -> type[Rule] | None:
    key_upper = key.upper()
    for rule in all_rules():
        if rule.code == key_upper or rule.name == key.lower():
            return rule
    for rule in all_rules():
        if key_upper in rule.torchfix_codes:
            return rule
    return None
