"""TP106: an argument passed by position where the target release made the parameter keyword-only."""

from __future__ import annotations

from torchpatch.rules._helpers import has_starred
from torchpatch.rules._wheel_rules import LazyNames, callables_with, keyword_changes_by_callable
from torchpatch.rules.base import Invalid, Rule
from torchpatch.versions import Version, v


class KeywordOnlyArgument(Rule):
    """
    ## What it does
    Flags positional arguments to a PyTorch function or class at a position whose parameter became
    keyword-only (after `*`) in the target release, as read from the real wheels by
    `scripts/build_api_db.py`. Calls with `*args` are not judged.

    ## Why is this bad?
    The call raises `TypeError: ... takes N positional arguments but M were given` on the target
    release. Passing the argument by keyword works on every release.
    """

    code = "TP106"
    name = "keyword-only-argument"
    summary = "A positional argument where the target release made the parameter keyword-only (read from the wheels)"
    removed_in = v("2.5")
    references = ("https://github.com/pytorch/pytorch/releases",)
    calls = LazyNames(lambda: callables_with("keyword_only"))
    catalog_ids = ("compile.nested-compile-region", "plat.green-contexts")

    VALID = [
        "import torch\nx = torch.ones(3)\n",
        "import torch\nschema = torch.library.infer_schema(fn, mutates_args=())\n",
        "import torch\nschema = torch.library.infer_schema(*args)\n",
    ]
    INVALID = [
        Invalid("import torch\nschema = torch.library.infer_schema(fn, ())\n"),
        Invalid("import torch\nregion = torch.compiler.nested_compile_region(fn, opts)\n"),
    ]

    def check_call(self, ctx, call, qualname):
        if has_starred(call):
            return
        changes = keyword_changes_by_callable().get(qualname, {})
        for keyword, change in changes.items():
            record = change.get("keyword_only")
            if record is None:
                continue
            release, position = Version.parse(record[0]), record[1]
            if release > ctx.target or len(call.args) <= position:
                continue
            yield ctx.diagnostic(call.args[position],
                                 f"`{keyword}` of `{qualname}` is keyword-only since PyTorch {release}; "
                                 f"pass it as `{keyword}=...`")
