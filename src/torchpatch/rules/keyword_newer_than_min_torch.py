"""TP433: a keyword argument that does not exist yet in the oldest PyTorch the code must support."""

from __future__ import annotations

from torchpatch.rules._helpers import is_literal, keyword, remove_argument
from torchpatch.rules.base import SAFE, CallNeed, Fix, Invalid, Rule, Valid
from torchpatch.versions import v


class NewKeyword:
    """A keyword that appeared in ``since``; ``default`` is its value there (a call passing it can drop it)."""

    def __init__(self, since: str, default) -> None:
        self.since = v(since)
        self.default = default


_BIAS = {"bias": NewKeyword("2.12", True)}
_NORMS = {
    "torch.nn.modules.batchnorm": ("BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LazyBatchNorm1d", "LazyBatchNorm2d",
                                   "LazyBatchNorm3d", "SyncBatchNorm"),
    "torch.nn.modules.instancenorm": ("InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "LazyInstanceNorm1d",
                                      "LazyInstanceNorm2d", "LazyInstanceNorm3d"),
    "torch.nn.modules.normalization": ("GroupNorm",),
}
_LOSS_WEIGHT = {"weight": NewKeyword("2.6", None)}


class EnumDefault:
    """An enum member's default, by its value: equal to the member, never to a literal (so never dropped)."""

    def __init__(self, value: str) -> None:
        self.value = value

    def __eq__(self, other) -> bool:
        return getattr(other, "value", None) == self.value

    def __hash__(self) -> int:
        return hash(self.value)

    def __repr__(self) -> str:
        return f"<enum member {self.value!r}>"


#: Callable -> its keywords that are newer than 2.4, with the first release that accepts each. Every version
#: was read from the wheels' signatures (2.4.1 ... 2.14.1, by AST) and the 2.13 ones checked with inspect.
NEW_KEYWORDS: dict[str, dict[str, NewKeyword]] = {
    **{f"{prefix}.{name}": _BIAS for module, names in _NORMS.items() for name in names
       for prefix in ("torch.nn", module)},
    **{f"torch.nn.functional.{name}": _LOSS_WEIGHT for name in ("mse_loss", "l1_loss", "huber_loss")},
    "torch.nn.utils.rnn.pad_sequence": {"padding_side": NewKeyword("2.5", "right")},
    "torch.nn.Module.modules": {"remove_duplicate": NewKeyword("2.11", True)},
    "torch.nn.modules.module.Module.modules": {"remove_duplicate": NewKeyword("2.11", True)},
    **{f"{prefix}.Adam": {"decoupled_weight_decay": NewKeyword("2.7", False)}
       for prefix in ("torch.optim", "torch.optim.adam")},
    **{f"{prefix}.LBFGS": {"maximize": NewKeyword("2.14", False)} for prefix in ("torch.optim", "torch.optim.lbfgs")},
    # DCP's safetensors output (2.8.0 wheel: `FileSystemWriter.__init__(..., serialization_format:
    # SerializationFormat = SerializationFormat.TORCH_SAVE)`; 2.7.1 has no such parameter). Its default is an
    # enum member, never a literal, so a call passing it is reported without a fix.
    **{f"{prefix}.FileSystemWriter": {"serialization_format": NewKeyword("2.8", EnumDefault("torch_save"))}
       for prefix in ("torch.distributed.checkpoint", "torch.distributed.checkpoint.filesystem")},
}


class KeywordNewerThanMinTorch(Rule):
    """
    ## What it does
    Flags keyword arguments that the oldest PyTorch your code supports (`min-torch`) does not
    accept yet: `GroupNorm`/`SyncBatchNorm`/`BatchNorm*d`/`InstanceNorm*d(..., bias=)` (2.12),
    `Module.modules(remove_duplicate=)` (2.11), `torch.optim.Adam(..., decoupled_weight_decay=)`
    (2.7), `F.mse_loss`/`l1_loss`/`huber_loss(..., weight=)` (2.6),
    `pad_sequence(..., padding_side=)` (2.5), `torch.optim.LBFGS(..., maximize=)` (2.14) and
    `torch.distributed.checkpoint.FileSystemWriter(..., serialization_format=)` (2.8).
    Method calls on objects of unknown type are not checked.

    ## Why is this bad?
    On an older release the call raises `TypeError: ... got an unexpected keyword argument`.
    Code written against a recent PyTorch easily picks these up, while its `requires-python` /
    `torch>=` floor says it still supports older releases: either raise the floor or avoid the
    keyword. When the argument passes the keyword's default value (`bias=True`,
    `decoupled_weight_decay=False`, `padding_side="right"`, `weight=None`, `maximize=False`,
    `remove_duplicate=True`), the fix drops it, which is safe: newer releases behave the same and
    older ones accept the call. Other values have no fix (`Adam(decoupled_weight_decay=True)` is
    `torch.optim.AdamW` with an explicit `weight_decay=` on older releases).

    ## Which working code changes behaviour
    Code that works on the release you develop on fails on your minimum torch: the older release
    raises `TypeError: unexpected keyword argument`. Reported only for keywords newer than your
    minimum.
    """

    code = "TP433"
    name = "keyword-newer-than-min-torch"
    summary = "A keyword argument that your minimum PyTorch does not accept yet (TypeError there)"
    changed_in = v("2.5")
    fix_safety = SAFE
    fix_safety_note = (
        "Only arguments that pass the keyword's default value are dropped: the newer releases use that default anyway "
        "and the older ones do not know the keyword."
    )
    references = (
        "https://docs.pytorch.org/docs/stable/generated/torch.nn.GroupNorm.html",
        "https://docs.pytorch.org/docs/stable/generated/torch.optim.Adam.html",
        "https://docs.pytorch.org/docs/stable/generated/torch.nn.utils.rnn.pad_sequence.html",
    )
    catalog_ids = ("misc.nn-new-params", "dist.dcp-safetensors")
    calls = frozenset(NEW_KEYWORDS)
    call_needs = {name: CallNeed(passed=tuple((keyword_name, None) for keyword_name in keywords))
                  for name, keywords in NEW_KEYWORDS.items()}  # check_call reads keywords only

    VALID = [
        Valid("import torch\nnorm = torch.nn.GroupNorm(8, 64, bias=False)\n", min_torch="2.12"),
        "import torch\nnorm = torch.nn.GroupNorm(8, 64)\n",
        Valid("import torch\nopt = torch.optim.Adam(params, lr=1e-3, decoupled_weight_decay=True)\n", min_torch="2.7"),
        Valid("from torch.nn.utils.rnn import pad_sequence\nbatch = pad_sequence(seqs, padding_side='left')\n",
              min_torch="2.5"),
        # Look-alikes: LayerNorm has had bias= since 2.1; other libraries' Adam; methods on unknown objects.
        "import torch\nnorm = torch.nn.LayerNorm(64, bias=False)\n",
        "import torch\nfrom apex.optimizers import FusedAdam as Adam\nopt = Adam(params, decoupled_weight_decay=True)\n",
        "import torch\nfor m in model.modules(remove_duplicate=False):\n    pass\n",
    ]
    INVALID = [
        Invalid("import torch.nn as nn\nnorm = nn.GroupNorm(32, 256, affine=True, bias=False)\n"),
        Invalid("import torch\nopt = torch.optim.Adam(model.parameters(), lr=1e-3, decoupled_weight_decay=True)\n"),
        Invalid("import torch.nn.functional as F\nloss = F.mse_loss(pred, target, weight=None)\n",
                fixed="import torch.nn.functional as F\nloss = F.mse_loss(pred, target)\n"),
        Invalid("from torch.nn.utils.rnn import pad_sequence\nbatch = pad_sequence(\n    seqs,\n    batch_first=True,\n"
                "    padding_side=\"right\",\n)\n",
                fixed="from torch.nn.utils.rnn import pad_sequence\nbatch = pad_sequence(\n    seqs,\n    batch_first=True,\n)\n"),
        Invalid("from torch.optim import LBFGS\nopt = LBFGS(params, maximize=True)\n", min_torch="2.13"),
        Invalid("import torch.distributed.checkpoint as dcp\nfrom torch.distributed.checkpoint.filesystem import SerializationFormat\n"
                "writer = dcp.FileSystemWriter(path, serialization_format=SerializationFormat.SAFETENSORS)\n"),
    ]

    def check_call(self, ctx, call, qualname):
        function = qualname.rpartition(".")[2]
        for name, new in NEW_KEYWORDS[qualname].items():
            argument = keyword(call, name)
            if argument is None or ctx.min_torch >= new.since:
                continue
            message = (f"`{function}(..., {name}=)` needs PyTorch >= {new.since}; your minimum is {ctx.min_torch} "
                       f"(TypeError there): raise the minimum or avoid the keyword")
            fix = None
            if is_literal(argument.value, new.default):
                fix = Fix(message=f"Drop `{name}={new.default!r}` (the default where it exists)",
                          edits=[remove_argument(ctx, call, argument)], applicability=SAFE)
            yield ctx.diagnostic(argument, message, fix)

