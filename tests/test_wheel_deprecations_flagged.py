"""Every function and class the wheels mark deprecated (rules/data/api_db.json.gz, from @deprecated and
warnings at function entry in the 2.4 … 2.15 wheels) is flagged by default where it runs, in every import form
(issue #23): dotted, ``import m as alias``, ``from m import f`` then a call, a function-local from-import. A name
gone by the target fails at its import, which is what is flagged then."""

from __future__ import annotations

import pytest

from torchpatch.rules import _api_db


def _forms(name: str):
    module, _, attribute = name.rpartition(".")
    yield "dotted", f"import {module}\nr = {name}()\n", 2, 1
    yield "alias", f"import {module} as mod\nr = mod.{attribute}()\n", 2, 1
    yield "from", f"from {module} import {attribute}\nr = {attribute}()\n", 2, 1
    yield "local", f"import torch\ndef f():\n    from {module} import {attribute} as g\n    return g()\n", 4, 3


_NAMES = sorted(name for name, found in _api_db.deprecations().items() if found.kind in ("function", "class"))


@pytest.mark.parametrize("name", _NAMES)
def test_a_wheel_deprecation_is_flagged_in_every_import_form(lint, name):
    removed = _api_db.removed_names().get(name)
    missed = []
    for form, code, call_row, import_row in _forms(name):
        rows = {finding.row for finding in lint(code).findings}
        wanted = import_row if removed is not None and form in ("from", "local") else call_row
        if wanted not in rows:
            missed.append((form, sorted(rows)))
    assert not missed, missed
