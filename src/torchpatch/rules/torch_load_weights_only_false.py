"""TP302: torch.load(..., weights_only=False) runs the full unpickler."""

from __future__ import annotations

from torchpatch.rules._helpers import is_literal, keyword
from torchpatch.rules.base import Invalid, Rule
from torchpatch.versions import v


class TorchLoadWeightsOnlyFalse(Rule):
    """
    ## What it does
    Flags `torch.load(..., weights_only=False)`.

    ## Why is this bad?
    `weights_only=False` unpickles with the full `pickle` module: a malicious checkpoint runs code on
    your machine when it is loaded. Since PyTorch 2.6 the safe unpickler is the default, and types it
    refuses can be allowlisted instead: `torch.serialization.add_safe_globals([...])` (2.4+) or the
    `torch.serialization.safe_globals([...])` context manager (2.5+);
    `torch.serialization.get_unsafe_globals_in_checkpoint(path)` (2.6+) lists what a file needs, and
    `torchpatch audit FILE` prints the allowlist without loading the file. Keep `weights_only=False`
    only for files you created yourself, and say so with `# noqa: TP302`.
    """

    code = "TP302"
    name = "torch-load-weights-only-false"
    summary = "`torch.load(..., weights_only=False)` runs arbitrary pickle code"
    changed_in = v("2.6")
    references = (
        "https://pytorch.org/docs/stable/notes/serialization.html#weights-only",
    )
    catalog_ids = ("sec.safe-globals-api",)
    calls = frozenset({"torch.load", "torch.serialization.load"})

    VALID = [
        'import torch\nstate = torch.load("model.pt", weights_only=True)\n',
        'import torch\nwith torch.serialization.safe_globals([MyConfig]):\n    state = torch.load("model.pt", weights_only=True)\n',
    ]
    INVALID = [
        Invalid('import torch\nckpt = torch.load(path, weights_only=False)\n'),
        Invalid('from torch import load\nckpt = load(path, map_location="cpu", weights_only=False)\n'),
    ]

    def check_call(self, ctx, call, qualname):
        argument = keyword(call, "weights_only")
        if argument is None or not is_literal(argument.value, False):
            return
        yield ctx.diagnostic(
            argument,
            "`weights_only=False` unpickles arbitrary code; allowlist the needed types with "
            "`torch.serialization.safe_globals([...])` (PyTorch 2.5+) or load only trusted files",
        )
