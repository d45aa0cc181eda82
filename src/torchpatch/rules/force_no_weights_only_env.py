"""TP447: a file that loads with torch.load and sets TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD (weights_only=False for all)."""

from __future__ import annotations

import ast

from torchpatch.rules._file_scan import named_uses, scoped_nodes
from torchpatch.rules.base import Invalid, Rule, Valid
from torchpatch.versions import v

_LOADS = frozenset({"torch.load", "torch.serialization.load"})
_VARIABLE = "TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD"
#: What torch 2.6 … 2.15 read as set (``os.getenv(...).lower() in true_values``; 2.6.0 without ``.lower()``).
_FALSE_VALUES = ("", "0", "n", "no", "false")


def _is_environ(ctx, node: ast.expr, scope) -> bool:
    return ctx.scopes.qualname(node, scope) == "os.environ"


def _variable_settings(ctx, variable: str = _VARIABLE) -> list[tuple[ast.AST, ast.expr | None]]:
    """(node to report, the value set or None when unknown) for each place the file sets the variable."""
    found = []
    for node, scope in scoped_nodes(ctx, ctx.tree, ctx.scopes.module_scope):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Subscript) and _is_environ(ctx, target.value, scope) \
                        and isinstance(target.slice, ast.Constant) and target.slice.value == variable:
                    found.append((target, node.value))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            name = node.func.attr
            if name == "setdefault" and _is_environ(ctx, node.func.value, scope) \
                    or name == "putenv" and ctx.scopes.qualname(node.func, scope) == "os.putenv":
                if len(node.args) == 2 and isinstance(node.args[0], ast.Constant) and node.args[0].value == variable:
                    found.append((node, node.args[1]))
            elif name == "update" and _is_environ(ctx, node.func.value, scope):
                for argument in node.args:
                    if isinstance(argument, ast.Dict):
                        for key, value in zip(argument.keys, argument.values):
                            if isinstance(key, ast.Constant) and key.value == variable:
                                found.append((key, value))
                found.extend((k, k.value) for k in node.keywords if k.arg == variable)
    return found


def _sets_it(value: ast.expr | None) -> bool:
    if isinstance(value, ast.Constant) and isinstance(value.value, str):
        return value.value.strip().lower() not in _FALSE_VALUES
    return True  # a value we cannot read may well be "1"


def file_sets_force_no_weights_only(ctx) -> bool:
    """Whether the file sets `TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD` to a value torch reads as set (TP301 asks too)."""
    return _VARIABLE in ctx.text and any(_sets_it(value) for _, value in _variable_settings(ctx))


class ForceNoWeightsOnlyEnv(Rule):
    """
    ## What it does
    Flags `os.environ["TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD"] = "1"` (and `os.environ.setdefault(...)`,
    `os.environ.update(...)`, `os.putenv(...)`) in a file that calls `torch.load`.

    ## Why is this bad?
    Since PyTorch 2.6 `torch.load` defaults to `weights_only=True`, which only unpickles tensors
    and allow-listed types. The environment variable, read by `torch.load` in 2.6 … 2.15, turns
    that off for every call in the process that does not pass `weights_only=` itself (with a
    `UserWarning`), so every checkpoint it opens can run arbitrary code while unpickling, including
    those of libraries you call. It is meant as an emergency switch for legacy pipelines, not as
    code. Pass `weights_only=False` only at the call that loads a trusted legacy file, or better,
    allow-list its types with `torch.serialization.add_safe_globals([...])` /
    `torch.serialization.safe_globals([...])`.

    `TORCH_FORCE_WEIGHTS_ONLY_LOAD=1` (2.4+, the safe direction) is left alone; setting both makes
    `torch.load` raise `RuntimeError`. Variables set in Dockerfiles or CI files are not read.
    """

    code = "TP447"
    name = "force-no-weights-only-env"
    summary = "`TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD` set in code that calls `torch.load` (weights_only=False for every load, 2.6+)"
    changed_in = v("2.6")
    references = (
        "https://docs.pytorch.org/docs/stable/notes/serialization.html#weights-only",
        "https://github.com/pytorch/pytorch/blob/v2.6.0/torch/serialization.py",
    )
    catalog_ids = ("sec.weights-only-env",)
    calls = _LOADS

    VALID = [
        "import os\nimport torch\nos.environ['TORCH_FORCE_WEIGHTS_ONLY_LOAD'] = '1'\nsd = torch.load(path, weights_only=True)\n",
        "import os\nimport torch\nos.environ['TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD'] = '0'\nsd = torch.load(path, weights_only=True)\n",
        Valid("import os\nimport torch\nos.environ['TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD'] = '1'\n"
              "sd = torch.load(path, weights_only=True)\n", target_torch="2.5"),
        # Another mapping called environ.
        "import torch\nenviron = {}\nenviron['TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD'] = '1'\nsd = torch.load(p, weights_only=True)\n",
    ]
    INVALID = [
        Invalid("import os\nimport torch\n\nos.environ[\"TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD\"] = \"1\"\n\n"
                "def restore(path):\n    return torch.load(path, map_location=\"cpu\", weights_only=True)\n"),
        Invalid("from os import environ\nimport torch\n\ndef main(args):\n"
                "    environ.setdefault('TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD', str(int(args.legacy)))\n"
                "    return torch.load(args.ckpt, weights_only=True)\n"),
    ]

    def check_call(self, ctx, call, qualname):
        if ctx.target < self.changed_in or _VARIABLE not in ctx.text:
            return  # the variable's name must be written somewhere for the file to set it
        uses = named_uses(ctx, _LOADS)
        if not uses or uses[0][0] is not call.func:
            return  # the file's settings are reported once, from its first torch.load
        for node, value in _variable_settings(ctx):
            if _sets_it(value):
                yield ctx.diagnostic(node, f"sets `{_VARIABLE}`: since PyTorch {self.changed_in} every `torch.load` "
                                           f"in the process that does not pass `weights_only=` unpickles with "
                                           f"`weights_only=False` (arbitrary code); pass it at the one trusted call, "
                                           f"or allow-list types with `torch.serialization.add_safe_globals`")
