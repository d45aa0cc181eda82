"""TP302: torch.load(..., weights_only=False) runs the full unpickler."""

from __future__ import annotations

import ast

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

    With a custom `pickle_module=` (a restricted unpickler of your own), `weights_only=False` is
    required: `torch.load` raises "Can not safely load weights when explicit pickle_module is
    specified" for `weights_only=True` with any `pickle_module` (2.4 through 2.15). The message then
    says that the safety rests on that module's `Unpickler.find_class`, not that any code runs.
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
        Invalid('import torch\nckpt = torch.load(path, weights_only=False, pickle_module=RestrictedPickle)\n'),
    ]

    def check_call(self, ctx, call, qualname):
        argument = keyword(call, "weights_only")
        if argument is None or not is_literal(argument.value, False):
            return
        pickle_module = keyword(call, "pickle_module")
        if pickle_module is not None and not is_full_unpickler(pickle_module.value):
            yield ctx.diagnostic(
                argument,
                "`weights_only=False` with a custom `pickle_module`: only that module's "
                "`Unpickler.find_class` keeps a malicious file from running code (torch.load refuses "
                "`weights_only=True` with any `pickle_module`, 2.4-2.15); make sure it allowlists types, "
                "or drop `pickle_module=` and use `weights_only=True` with "
                "`torch.serialization.safe_globals([...])` (PyTorch 2.5+)",
            )
            return
        yield ctx.diagnostic(
            argument,
            "`weights_only=False` unpickles arbitrary code; allowlist the needed types with "
            "`torch.serialization.safe_globals([...])` (PyTorch 2.5+) or load only trusted files",
        )


# Modules whose Unpickler resolves any global: passing one of them restricts nothing.
_FULL_UNPICKLERS = frozenset({"pickle", "_pickle", "cPickle", "dill", "cloudpickle", "pickle5", "joblib"})


def is_full_unpickler(node) -> bool:
    """True for `None` and for `pickle`, `dill`, ... or an attribute of one of them."""
    if is_literal(node, None):
        return True
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name) and node.id in _FULL_UNPICKLERS
