"""TP227: ``Module.register_backward_hook`` (a non-full backward hook) is deprecated; torch warns when the module
runs. Use ``register_full_backward_hook``."""

from __future__ import annotations

import ast

from torchpatch.rules import _receivers as receivers
from torchpatch.rules._helpers import replace_node
from torchpatch.rules.base import UNSAFE, Edit, Fix, Invalid, Rule, Valid
from torchpatch.versions import v

#: The global twin in torch/nn/modules/module.py (2.4.1-2.15.0), not re-exported by torch.nn.
GLOBAL_HOOK = "torch.nn.modules.module.register_module_backward_hook"
_NEW_NAMES = {"register_backward_hook": "register_full_backward_hook",
              "register_module_backward_hook": "register_module_full_backward_hook"}


class NonFullBackwardHook(Rule):
    """
    ## What it does
    Flags `module.register_backward_hook(hook)` and the global
    `torch.nn.modules.module.register_module_backward_hook(hook)`.

    ## Why is this bad?
    Their documentation says they are "deprecated in favor of" `register_full_backward_hook` (since
    PyTorch 1.8), and `Module._maybe_warn_non_full_backward_hook` (torch/nn/modules/module.py, 2.4.1 through
    2.15.0) warns each time such a module runs, with a `FutureWarning` that depends on its forward: "Using
    a non-full backward hook when the forward contains multiple autograd Nodes is deprecated and will be
    removed in future versions. This hook will be missing some grad_input." A module with a bias or a
    leaf input already has several nodes, so nearly every registration warns, and the hook receives the
    gradients of the last autograd node only, not of the module's inputs. torch warns at the module's
    call; the registration is the line to change.

    `register_backward_hook` is reported on any receiver in a file that imports torch (no other
    library's objects have a method of that name), except one known to be a tensor.

    ## Example
    ```python
    layer.register_backward_hook(save_gradients)
    ```
    Use instead:
    ```python
    layer.register_full_backward_hook(save_gradients)
    ```

    ## Fix safety
    Unsafe: a full hook receives the module's real input gradients (different values), and it wraps the
    inputs and outputs in a `BackwardHookFunction`, so a module that modifies its input or output in place
    (`nn.ReLU(inplace=True)` right after it) raises "a view ... is being modified inplace".
    """

    code = "TP227"
    name = "non-full-backward-hook"
    summary = "`Module.register_backward_hook` is deprecated (torch warns when the module runs): use `register_full_backward_hook`"
    deprecated_in = v("1.8")
    replacement_since = v("1.8")
    fix_safety = UNSAFE
    torch_message = ("Using a non-full backward hook when the forward contains multiple autograd Nodes is deprecated "
                     "and will be removed in future versions.")
    references = ("https://docs.pytorch.org/docs/stable/generated/torch.nn.Module.html#torch.nn.Module.register_full_backward_hook",)
    methods = frozenset({"register_backward_hook"})
    calls = frozenset({GLOBAL_HOOK})

    VALID = [
        Valid("import torch\nlayer = torch.nn.Linear(2, 2)\nlayer.register_full_backward_hook(lambda m, gi, go: None)\n"
              "layer(torch.randn(1, 2, requires_grad=True)).sum().backward()\n", torch_runs_clean=True),
        # A tensor's hook is a different API (Tensor.register_hook), and tensors have no register_backward_hook.
        "import torch\nx = torch.randn(2, requires_grad=True)\nx.register_hook(print)\n",
        # A file without torch: another framework's method.
        "hooks.register_backward_hook(callback)\n",
    ]
    INVALID = [
        Invalid("import torch\nlayer = torch.nn.Linear(2, 2)\nlayer.register_backward_hook(lambda m, gi, go: None)\n"
                "layer(torch.randn(1, 2, requires_grad=True)).sum().backward()\n",
                fixed="import torch\nlayer = torch.nn.Linear(2, 2)\nlayer.register_full_backward_hook(lambda m, gi, go: None)\n"
                      "layer(torch.randn(1, 2, requires_grad=True)).sum().backward()\n",
                torch_warns="Using a non-full backward hook when the forward contains multiple autograd Nodes is deprecated"),
        Invalid("import torch\n\ndef watch(model, hook):\n    for module in model.modules():\n"
                "        module.register_backward_hook(hook)\n",
                fixed="import torch\n\ndef watch(model, hook):\n    for module in model.modules():\n"
                      "        module.register_full_backward_hook(hook)\n"),
        Invalid("import torch.nn as nn\n\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                "        self.fc = nn.Linear(4, 2)\n        self.fc.register_backward_hook(self.save)\n"),
        Invalid("import torch\nfrom torch.nn.modules.module import register_module_backward_hook\n"
                "register_module_backward_hook(log_gradients)\n",
                fixed="import torch\ntorch.nn.modules.module.register_module_full_backward_hook(log_gradients)\n"),
    ]

    def check_method_call(self, ctx, call):
        receiver = call.func.value
        if isinstance(receiver, (ast.Constant, ast.JoinedStr, ast.List, ast.Tuple, ast.Dict, ast.Set)) \
                or receivers.is_tensor(ctx, receiver):
            return
        end = ctx.end(call.func)
        fix = Fix(message="Use `register_full_backward_hook` (unsafe: the hook sees other gradients, and in-place "
                          "ops on the module's inputs or outputs raise)",
                  edits=[Edit(end - len("register_backward_hook"), end, "register_full_backward_hook")],
                  applicability=UNSAFE)
        yield ctx.diagnostic(call.func, self._message("Module.register_backward_hook", "register_full_backward_hook"), fix)

    def check_call(self, ctx, call, qualname):
        name, import_edits = ctx.name_for("torch.nn.modules.module.register_module_full_backward_hook", "torch")
        root = call.func
        while isinstance(root, ast.Attribute):
            root = root.value
        fix = Fix(message="Use `register_module_full_backward_hook` (unsafe: hooks see other gradients)",
                  edits=[*import_edits, replace_node(ctx, call.func, name)], applicability=UNSAFE,
                  obsolete_names=(root.id,) if isinstance(root, ast.Name) else ())
        yield ctx.diagnostic(call.func, self._message("register_module_backward_hook",
                                                      "register_module_full_backward_hook"), fix)

    def _message(self, old: str, new: str) -> str:
        return (f"`{old}` is deprecated since PyTorch {self.deprecated_in}: torch warns (FutureWarning, 2.4 through "
                f"2.15) when the module runs, and the hook misses gradients of the module's inputs; use `{new}`")
