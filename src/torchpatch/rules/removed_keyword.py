"""TP105: a keyword argument that the target release's signature no longer has (read from the wheels)."""

from __future__ import annotations

from torchpatch.rules._wheel_rules import LazyNames, callables_with, keyword_changes_by_callable
from torchpatch.rules.base import Invalid, Rule, Valid
from torchpatch.versions import Version, v


class RemovedKeyword(Rule):
    """
    ## What it does
    Flags a keyword argument passed to a PyTorch function or class whose signature in the target
    release no longer has that parameter (and takes no `**kwargs`), as read from the real wheels by
    `scripts/build_api_db.py`. When a new parameter took the removed one's place, the message names it.

    Only calls whose callee resolves to the torch function or class are checked (not methods of
    objects of unknown type); a class is checked against its own `__init__`, not an inherited one.

    ## Why is this bad?
    The call raises `TypeError: ... got an unexpected keyword argument` on the target release.
    """

    code = "TP105"
    name = "removed-keyword"
    summary = "A keyword argument the target release's signature no longer accepts (read from the wheels)"
    removed_in = v("2.5")
    references = ("https://github.com/pytorch/pytorch/releases",)
    # dist.dcp-safetensors: HuggingFaceStorageWriter/Reader (2.8) lost `token` and `save_sharded` in 2.9.
    catalog_ids = ("dist.dcp-safetensors",)
    calls = LazyNames(lambda: callables_with("removed"))

    VALID = [
        "import torch\nx = torch.ones(3)\n",
        "from torch.fx.experimental.proxy_tensor import make_fx\ngm = make_fx(f, tracing_mode='fake')(x)\n",
        # Removed in 2.9: the target is older.
        Valid("from torch.fx.experimental.proxy_tensor import make_fx\ngm = make_fx(f, stack_trace=True)(x)\n",
              target_torch="2.8"),
    ]
    INVALID = [
        Invalid("from torch.fx.experimental.proxy_tensor import make_fx\ngm = make_fx(f, stack_trace=True)(x)\n",
                target_torch="2.9"),
        Invalid("import torch\nok = torch.masked.is_masked_tensor(a=t)\n"),
        Invalid("from torch.distributed.checkpoint import HuggingFaceStorageWriter\n"
                "writer = HuggingFaceStorageWriter(path, token=hf_token)\n", min_torch="2.8"),
    ]

    def check_call(self, ctx, call, qualname):
        changes = keyword_changes_by_callable().get(qualname, {})
        for keyword in call.keywords:
            change = changes.get(keyword.arg or "", {}).get("removed")
            if change is None:
                continue
            release, renamed = Version.parse(change[0]), change[1]
            if release > ctx.target:
                continue
            message = f"`{qualname}` has no parameter `{keyword.arg}` since PyTorch {release}"
            if renamed:
                message += f" (its place is taken by `{renamed}`)"
            yield ctx.diagnostic(keyword, message)
