"""TP902 (opt-in): a parameter left at its default where the default changed between min-torch and target."""

from __future__ import annotations

import ast

from torchpatch.rules._helpers import has_double_star, has_starred
from torchpatch.rules._wheel_rules import LazyNames, callables_with, keyword_changes_by_callable
from torchpatch.rules.base import Invalid, Rule, Valid
from torchpatch.versions import Version, v


def _argument(call: ast.Call, keyword: str, position: int) -> ast.expr | None:
    for passed in call.keywords:
        if passed.arg == keyword:
            return passed.value
    return call.args[position] if position < len(call.args) else None


def _fork_rng_forks_no_device(call: ast.Call) -> bool:
    """``fork_rng(devices=[])`` or ``fork_rng(enabled=False)``: no device's RNG state is saved, so
    ``device_type`` (its default ``'cuda'`` until 2.12, the current accelerator from 2.13) changes
    nothing — both wheels only look up the device module, which exists for either value
    (tensordict 0.15.3's CPU branch)."""
    devices = _argument(call, "devices", 0)
    enabled = _argument(call, "enabled", 1)
    return (type(devices) in (ast.List, ast.Tuple) and not devices.elts) \
        or (type(enabled) is ast.Constant and enabled.value is False)


#: (callable, parameter) -> the first release whose signature has the parameter, where that is after 2.4: below
#: it, passing the value explicitly is a TypeError. `allow_override=` is in neither signature in the 2.4.1-2.7.1
#: wheels and in both from 2.8.0 (torch/library.py).
_PARAMETER_SINCE = {
    ("torch.library.register_fake", "allow_override"): v("2.8"),
    ("torch.library.Library.impl", "allow_override"): v("2.8"),
}


def _advice(qualname: str, keyword: str, min_torch: Version) -> str:
    since = _PARAMETER_SINCE.get((qualname, keyword))
    if since is not None and min_torch < since:
        return (f"`{keyword}=` exists only since PyTorch {since} (a TypeError before; your minimum is {min_torch}): "
                f"pass it behind a version check")
    return "pass it explicitly"


#: (callable, parameter) -> when a call makes that parameter's value irrelevant.
_DEFAULT_UNUSED = {
    ("torch.random.fork_rng", "device_type"): _fork_rng_forks_no_device,
}


class ChangedDefault(Rule):
    """
    ## What it does
    Flags a call to a PyTorch function or class that leaves a parameter at its default when the
    default's expression in the signature changed between your minimum torch and the target (read
    from the real wheels by `scripts/build_api_db.py`): the same code can behave differently on the
    two releases. Opt-in: many default changes are spelling only (`None` becoming a sentinel that
    means the same), and this rule cannot tell those apart; the behaviour rules (TP4xx) cover the
    changes known to matter.

    ## Why is this bad?
    Code that must run on both releases gets different behaviour from each unless it passes the value
    it means.
    """

    code = "TP902"
    name = "changed-default"
    summary = "A parameter left at a default that changed between min-torch and target (opt-in; read from the wheels)"
    changed_in = v("2.5")
    opt_in = True
    references = ("https://github.com/pytorch/pytorch/releases",)
    # Rows whose whole static pattern is "a call that leaves the changed default": 2.13 made
    # `fork_rng(device_type=)` default to the current accelerator and `allow_override=` default to True on
    # `torch.library.register_fake` (`Library.impl` / `Library._register_fake` too, on a known receiver).
    catalog_ids = ("misc.device-defaults", "export.allow-override-default")
    calls = LazyNames(lambda: callables_with("defaults"))

    VALID = [
        "import torch\nx = torch.ones(3)\n",
        Valid("import torch\nwith torch.random.fork_rng(device_type='cuda'):\n    step()\n",
              min_torch="2.12", target_torch="2.13"),
        # Both ends of the range already have the new default.
        Valid("import torch\nwith torch.random.fork_rng():\n    step()\n", min_torch="2.13", target_torch="2.15"),
        # No device RNG is forked: device_type is not used.
        Valid("import torch\nwith torch.random.fork_rng(devices=[]):\n    step()\n", min_torch="2.12",
              target_torch="2.13"),
        Valid("import torch\nwith torch.random.fork_rng(enabled=False):\n    step()\n", min_torch="2.12",
              target_torch="2.13"),
    ]
    INVALID = [
        Invalid("import torch\nwith torch.random.fork_rng():\n    step()\n", min_torch="2.12", target_torch="2.13"),
        Invalid("import torch\nwith torch.random.fork_rng(devices=[0]):\n    step()\n", min_torch="2.12",
                target_torch="2.13"),
        # A second registration for the same op raised before 2.13 and silently overrides since.
        Invalid("import torch\n@torch.library.register_fake(\"mylib::foo\")\ndef _(x):\n    return x.new_empty(x.shape)\n",
                min_torch="2.12", target_torch="2.13"),
    ]

    def check_call(self, ctx, call, qualname):
        if has_starred(call) or has_double_star(call):
            return
        passed = {keyword.arg for keyword in call.keywords}
        for keyword, change in keyword_changes_by_callable().get(qualname, {}).items():
            if keyword in passed:
                continue
            unused = _DEFAULT_UNUSED.get((qualname, keyword))
            if unused is not None and unused(call):
                continue
            for release_text, old, new, position in change.get("defaults", ()):
                release = Version.parse(release_text)
                if not (ctx.min_torch < release <= ctx.target) or 0 <= position < len(call.args):
                    continue
                advice = _advice(qualname, keyword, ctx.min_torch)
                yield ctx.diagnostic(call.func, f"the default of `{keyword}` in `{qualname}` changed from `{old}` "
                                                f"to `{new}` in PyTorch {release}; {advice}")
                break
