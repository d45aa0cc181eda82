"""TP431: torch.load("x.safetensors") dispatches to safetensors since PyTorch 2.13 (and fails before)."""

from __future__ import annotations

import ast

from torchpatch.rules._helpers import keyword
from torchpatch.rules.base import Invalid, Rule
from torchpatch.versions import v

_SUFFIX = ".safetensors"


class TorchLoadSafetensorsPath(Rule):
    """
    ## What it does
    Flags `torch.load(...)` calls whose path is visibly a `.safetensors` file: a string literal,
    an f-string or a `path / "name"` expression ending in `.safetensors`.

    ## Why is this bad?
    Since PyTorch 2.13, `torch.load` checks whether a path ends in `.safetensors` and then returns
    `safetensors.torch.load_file(path, device=...)` instead of unpickling: a flat `dict` of tensors.
    It needs the `safetensors` package (`RuntimeError` otherwise), converts a string or
    `torch.device` `map_location` to `device=`, raises for a dict or callable `map_location`, and
    ignores `weights_only`, `mmap` and the pickle options. Before 2.13 the same call fails (a
    safetensors file is not a pickle or a zip archive). Calling `safetensors.torch.load_file` (or
    `safe_open`) yourself works on every release and says what the file is. There is no fix: it
    adds a dependency and the device argument needs a decision.

    ## Which working code changes behaviour
    Code written for 2.13+ that passes a `.safetensors` path to `torch.load` fails on 2.4–2.12 (no
    working code before 2.13 could load such a path). Reported only when your minimum torch is below
    2.13.
    """

    code = "TP431"
    name = "torch-load-safetensors-path"
    summary = "`torch.load(\"*.safetensors\")` (dispatches to safetensors since 2.13; fails before)"
    changed_in = v("2.13")
    references = (
        "https://huggingface.co/docs/safetensors/api/torch",
        "https://docs.pytorch.org/docs/stable/generated/torch.load.html",
    )
    catalog_ids = ("ser.load-safetensors-path",)
    calls = frozenset({"torch.load", "torch.serialization.load"})

    VALID = [
        "from safetensors.torch import load_file\nstate = load_file(\"model.safetensors\", device=\"cpu\")\n",
        "import torch\nstate = torch.load(\"model.pt\", weights_only=True)\n",
        "import torch\nstate = torch.load(path, weights_only=True)\n",  # unknown: not reported
        "import torch\nstate = torch.load(\"model.safetensors.pt\", weights_only=True)\n",
        # Look-alikes: other libraries' load functions.
        "import torch\nimport safetensors.torch\nstate = safetensors.torch.load(open('m.safetensors', 'rb').read())\n",
        "import numpy as np\nimport torch\nx = np.load('x.safetensors')\n",
    ]
    INVALID = [
        Invalid("import torch\nstate = torch.load(\"model.safetensors\", weights_only=True)\n"),
        Invalid("import torch\nstate = torch.load(f\"{ckpt_dir}/model-{step}.safetensors\", map_location=\"cpu\", weights_only=True)\n"),
        Invalid("from pathlib import Path\nimport torch\nstate = torch.load(Path(root) / \"adapter_model.safetensors\", weights_only=True)\n"),
    ]

    def check_call(self, ctx, call, qualname):
        argument = keyword(call, "f")
        path = argument.value if argument is not None else call.args[0] if call.args else None
        if path is None or isinstance(path, ast.Starred) or not _ends_with_suffix(path):
            return
        message = (f"`torch.load` of a `.safetensors` path returns `safetensors.torch.load_file(...)` (a dict of tensors) "
                   f"since PyTorch {self.changed_in} and fails before; call `safetensors.torch.load_file` explicitly")
        if ctx.min_torch < self.changed_in:
            message += f" (your minimum is {ctx.min_torch})"
        yield ctx.diagnostic(path, message)


def _ends_with_suffix(node: ast.AST) -> bool:
    """A path expression whose text visibly ends in ``.safetensors``."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str) and node.value.endswith(_SUFFIX)
    if isinstance(node, ast.JoinedStr):
        return bool(node.values) and _ends_with_suffix(node.values[-1])
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Div, ast.Add)):
        return _ends_with_suffix(node.right)
    return False
