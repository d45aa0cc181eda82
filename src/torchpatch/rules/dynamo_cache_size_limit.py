"""TP222: torch._dynamo.config.cache_size_limit and friends were renamed to *recompile_limit* in 2.7."""

from __future__ import annotations

import ast

from torchpatch.rules._helpers import has_double_star
from torchpatch.rules.base import SAFE, Edit, Fix, Invalid, Rule, Valid
from torchpatch.versions import v

_CONFIG = "torch._dynamo.config"
#: Old name -> new name (src 2.7 and 2.15 torch/_dynamo/config.py: ``Config(alias=...)``). The fourth
#: alias, ``skip_code_recursive_on_cache_limit_hit``, is left out: both of its names warn "does not do
#: anything" in 2.13, so renaming it helps nobody.
RENAMES = {
    "cache_size_limit": "recompile_limit",
    "accumulated_cache_size_limit": "accumulated_recompile_limit",
    "fail_on_cache_limit_hit": "fail_on_recompile_limit_hit",
}


class DynamoCacheSizeLimit(Rule):
    """
    ## What it does
    Flags the pre-2.7 names of the Dynamo recompilation limits, `torch._dynamo.config.cache_size_limit`,
    `accumulated_cache_size_limit` and `fail_on_cache_limit_hit`, in attribute reads and assignments
    and in `torch._dynamo.config.patch(...)`, and renames them to `recompile_limit`,
    `accumulated_recompile_limit` and `fail_on_recompile_limit_hit`.

    ## Why is this bad?
    PyTorch 2.7 renamed the settings to say what they limit (recompilations per code object, not a
    cache size) and kept the old names as silent aliases (`Config(alias=...)`), so old code still
    works through 2.15 but reads the setting under a name the docs and error messages ("hit
    config.recompile_limit (8)") no longer use. The new names do not exist before 2.7, so the fix is
    unsafe while you support older releases.
    """

    code = "TP222"
    name = "dynamo-cache-size-limit"
    summary = "`torch._dynamo.config.cache_size_limit` → `recompile_limit` (renamed in 2.7, alias kept)"
    changed_in = v("2.7")
    replacement_since = v("2.7")
    fix_safety = SAFE
    fix_safety_note = "The old names are aliases of the new ones from 2.7 on; before 2.7 only the old names exist."
    references = (
        "https://docs.pytorch.org/docs/stable/torch.compiler_troubleshooting.html",
    )
    catalog_ids = ("compile.recompile-limit",)
    references_to = frozenset(f"{_CONFIG}.{old}" for old in RENAMES)
    calls = frozenset({f"{_CONFIG}.patch"})

    VALID = [
        Valid("import torch\ntorch._dynamo.config.recompile_limit = 64\n", min_torch="2.7"),
        "import torch\ntorch._dynamo.config.cache_size_limit = 64  # noqa: TP222 (we support 2.6)\n",
        Valid("import torch\n@torch._dynamo.config.patch(recompile_limit=1)\ndef test():\n    pass\n", min_torch="2.7"),
        # Look-alikes: other objects with the same attribute.
        "import torch\nself.config.cache_size_limit = 8\n",
        "import torch\nfrom mylib import config\nconfig.cache_size_limit = 8\n",
    ]
    INVALID = [
        Invalid("import torch\ntorch._dynamo.config.cache_size_limit = 64\n",
                fixed="import torch\ntorch._dynamo.config.recompile_limit = 64\n"),
        Invalid("from torch._dynamo import config as dynamo_config\n"
                "dynamo_config.accumulated_cache_size_limit += 100\nprint(dynamo_config.cache_size_limit)\n",
                fixed="from torch._dynamo import config as dynamo_config\n"
                "dynamo_config.accumulated_recompile_limit += 100\nprint(dynamo_config.recompile_limit)\n",
                min_torch="2.7"),
        Invalid("import torch\n@torch._dynamo.config.patch(cache_size_limit=1, fail_on_cache_limit_hit=True)\n"
                "def test():\n    pass\n",
                fixed="import torch\n@torch._dynamo.config.patch(recompile_limit=1, fail_on_recompile_limit_hit=True)\n"
                "def test():\n    pass\n"),
        Invalid("import torch._dynamo\nwith torch._dynamo.config.patch(\"cache_size_limit\", 2):\n    run()\n",
                fixed="import torch._dynamo\nwith torch._dynamo.config.patch(\"recompile_limit\", 2):\n    run()\n"),
        # The saved value is no second finding: only the two config attributes are (vllm 0.33).
        Invalid("import torch\nsaved = torch._dynamo.config.cache_size_limit\ntorch._dynamo.config.cache_size_limit = saved\n",
                fixed="import torch\nsaved = torch._dynamo.config.recompile_limit\ntorch._dynamo.config.recompile_limit = saved\n"),
        Invalid("import torch\nwith torch._dynamo.config.patch({\"cache_size_limit\": 2}):\n    run()\n",
                fixed="import torch\nwith torch._dynamo.config.patch({\"recompile_limit\": 2}):\n    run()\n"),
    ]

    def _message(self, old: str) -> str:
        return (f"`torch._dynamo.config.{old}` was renamed to `{RENAMES[old]}` in PyTorch {self.changed_in} "
                f"(the old name is an alias)")

    def _fix(self, ctx, old: str, edits: list[Edit]) -> Fix:
        return Fix(message=f"Rename to `{RENAMES[old]}`{ctx.needs_note(self.replacement_since)}", edits=edits,
                   applicability=ctx.applicability(needs=self.replacement_since))

    def check_reference(self, ctx, reference):
        old = reference.qualname.rpartition(".")[2]
        node = reference.node
        if isinstance(node, ast.Name) and not reference.in_import:
            # ``saved = torch._dynamo.config.cache_size_limit`` ... ``config.cache_size_limit = saved``
            # (vllm 0.33): ``saved`` holds the setting's value, not the setting; its assignment is reported.
            return
        fix = None
        if isinstance(node, ast.Attribute) and node.attr == old:
            end = ctx.end(node)
            fix = self._fix(ctx, old, [Edit(end - len(old), end, RENAMES[old])])
        yield ctx.diagnostic(node, self._message(old), fix)

    def check_call(self, ctx, call, qualname):
        # patch(name=value, ...), patch("name", value) or patch({"name": value, ...})
        for item in call.keywords:
            if item.arg in RENAMES:
                start = ctx.start(item)
                fix = self._fix(ctx, item.arg, [Edit(start, start + len(item.arg), RENAMES[item.arg])])
                yield ctx.diagnostic(item, self._message(item.arg), fix)
        strings: list[ast.Constant] = []
        if call.args and isinstance(call.args[0], ast.Constant):
            strings.append(call.args[0])
        elif call.args and isinstance(call.args[0], ast.Dict):
            strings.extend(key for key in call.args[0].keys if isinstance(key, ast.Constant))
        for node in strings:
            value = node.value
            if not isinstance(value, str) or value not in RENAMES:
                continue
            source = ctx.source(node)
            quote = source[-1]
            fix = None
            if source == f"{quote}{value}{quote}" and not has_double_star(call):
                fix = self._fix(ctx, value, [Edit(ctx.start(node), ctx.end(node), f"{quote}{RENAMES[value]}{quote}")])
            yield ctx.diagnostic(node, self._message(value), fix)
