"""TP262: `$TORCH_HUB` set in a file that calls torch.hub (deprecated, ignored: torch reads TORCH_HOME)."""

from __future__ import annotations

import ast

from torchpatch.rules.base import Invalid, Rule, Valid
from torchpatch.rules.force_no_weights_only_env import _variable_settings
from torchpatch.versions import v

_VARIABLE = "TORCH_HUB"
#: torch.hub functions that call ``get_dir()``, which warns when ``$TORCH_HUB`` is set (hub.py of 2.13 and 2.15:
#: ``load``/``list``/``help`` through ``_get_cache_or_reload`` and ``_check_repo_is_trusted``,
#: ``load_state_dict_from_url`` without ``model_dir``; ``torch.utils.model_zoo.load_url`` is that function).
HUB_CALLS = frozenset({"torch.hub.get_dir", "torch.hub.load", "torch.hub.list", "torch.hub.help",
                       "torch.hub.load_state_dict_from_url", "torch.utils.model_zoo.load_url"})


class TorchHubEnv(Rule):
    """
    ## What it does
    Flags the `torch.hub` calls (`torch.hub.load`, `list`, `help`, `get_dir`,
    `load_state_dict_from_url`, `torch.utils.model_zoo.load_url`) of a file that sets the `TORCH_HUB`
    environment variable (`os.environ["TORCH_HUB"] = ...`, `os.environ.setdefault(...)`,
    `os.environ.update(...)`, `os.putenv(...)`).

    ## Why is this bad?
    `$TORCH_HUB` is deprecated and has no effect: `torch.hub.get_dir()` warns `UserWarning: TORCH_HUB is
    deprecated, please use env TORCH_HOME instead` whenever it is set (checked on torch 2.13 and 2.15)
    and then uses `torch.hub.set_dir(...)`'s directory or `$TORCH_HOME/hub`. Models land where the code
    did not ask. Set `TORCH_HOME` (the hub directory is its `hub/` subfolder) or call
    `torch.hub.set_dir(path)`. No fix: which directory was meant is a judgment.
    """

    code = "TP262"
    name = "torch-hub-env"
    summary = "`$TORCH_HUB` set where torch.hub is used: deprecated and ignored (use TORCH_HOME or hub.set_dir)"
    deprecated_in = v("1.0")
    torch_message = "TORCH_HUB is deprecated, please use env TORCH_HOME instead"
    references = ("https://docs.pytorch.org/docs/stable/hub.html#where-are-my-downloaded-models-saved",)
    calls = HUB_CALLS

    VALID = [
        Valid("import os\nimport torch\nos.environ['TORCH_HOME'] = 'torch-home'\nd = torch.hub.get_dir()\n",
              torch_runs_clean=True),
        Valid("import os\nimport torch\nos.environ['TORCH_HUB'] = ''\nd = torch.hub.get_dir()\n", torch_runs_clean=True),
        "import os\nimport torch\nhub = os.environ.get('TORCH_HUB')\nd = torch.hub.get_dir()\n",
    ]
    INVALID = [
        Invalid("import os\nimport torch\nos.environ['TORCH_HUB'] = 'hub-cache'\nd = torch.hub.get_dir()\n",
                torch_warns="TORCH_HUB is deprecated"),
        Invalid("import os\nfrom torch.hub import load_state_dict_from_url\n"
                "os.environ.setdefault('TORCH_HUB', '/models')\n"
                "def weights(url):\n    return load_state_dict_from_url(url, progress=False)\n"),
    ]

    def check_call(self, ctx, call, qualname):
        if _VARIABLE not in ctx.text:
            return
        if qualname == "torch.hub.load_state_dict_from_url" or qualname == "torch.utils.model_zoo.load_url":
            if len(call.args) >= 2 or any(k.arg == "model_dir" for k in call.keywords):
                return  # an explicit model_dir: get_dir() is not called
        if qualname == "torch.hub.load" and any(k.arg == "source" and isinstance(k.value, ast.Constant)
                                                and k.value.value == "local" for k in call.keywords):
            return
        settings = [node for node, value in _variable_settings(ctx, _VARIABLE)
                    if not (isinstance(value, ast.Constant) and value.value == "")]
        if not settings:
            return
        yield ctx.diagnostic(call, f"`$TORCH_HUB` (set on line {settings[0].lineno}) is deprecated and ignored "
                                   f"(PyTorch 2.4 through 2.15): `torch.hub` warns here and uses `$TORCH_HOME/hub`; set `TORCH_HOME` or call "
                                   f"`torch.hub.set_dir()`")
