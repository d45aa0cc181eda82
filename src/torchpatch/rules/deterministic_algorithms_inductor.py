"""TP440 (opt-in): since 2.10 `torch.use_deterministic_algorithms(True)` also puts Inductor in deterministic mode."""

from __future__ import annotations

from torchpatch.rules._file_scan import uses_any
from torchpatch.rules._helpers import is_literal
from torchpatch.rules.base import Invalid, Rule, Valid
from torchpatch.versions import v

_COMPILE = frozenset({"torch.compile"})


class DeterministicAlgorithmsInductor(Rule):
    """
    ## What it does
    Flags `torch.use_deterministic_algorithms(True)` (or a non-literal mode) in a file that also uses
    `torch.compile`, when the code must run on releases before 2.10 and on 2.10 or later.

    ## Why is this bad?
    From PyTorch 2.10 `use_deterministic_algorithms(mode)` also sets
    `torch._inductor.config.deterministic = mode` (src 2.10 `torch/__init__.py`; absent in 2.9).
    In that mode Inductor avoids benchmarking that could change numerics: `max-autotune` picks a
    fixed kernel choice instead of timing the candidates (`select_algorithm.py`), padding of
    matrix multiplies is not benchmarked (`pad_mm.py`) and compute/communication reordering is off.
    Compiled code is then reproducible, but it can be slower than on 2.9, where the call only
    affected eager kernels. If you need deterministic eager kernels but autotuned compiled ones,
    set `torch._inductor.config.deterministic = False` after the call (on 2.10+).

    The order of the calls does not matter: a function compiled before the switch is recompiled
    on its next call (Dynamo guards on the deterministic-algorithms flag; checked on 2.13), and the
    new graph sees Inductor's flag.
    """

    code = "TP440"
    opt_in = True
    name = "deterministic-algorithms-inductor"
    summary = "`use_deterministic_algorithms(True)` with `torch.compile`: since 2.10 Inductor stops autotuning too (opt-in)"
    changed_in = v("2.10")
    references = (
        "https://docs.pytorch.org/docs/stable/generated/torch.use_deterministic_algorithms.html",
        "https://github.com/pytorch/pytorch/blob/v2.10.0/torch/__init__.py",
    )
    catalog_ids = ("compile.deterministic",)
    calls = frozenset({"torch.use_deterministic_algorithms"})

    VALID = [
        # Not compiled: only eager kernels are affected, as before.
        Valid("import torch\ntorch.use_deterministic_algorithms(True)\nloss = model(x).sum()\n", min_torch="2.9"),
        Valid("import torch\ntorch.use_deterministic_algorithms(False)\nm = torch.compile(model)\n", min_torch="2.9"),
        # Every supported release already has the new behaviour.
        Valid("import torch\ntorch.use_deterministic_algorithms(True)\nm = torch.compile(model)\n", min_torch="2.10"),
        Valid("import torch\ntorch.use_deterministic_algorithms(True)\nm = torch.compile(model)\n", min_torch="2.8",
              target_torch="2.9"),
    ]
    INVALID = [
        Invalid("import torch\ntorch.use_deterministic_algorithms(True)\nm = torch.compile(model, mode='max-autotune')\n",
                min_torch="2.9"),
        Invalid("import torch\n\n@torch.compile\ndef step(x):\n    return x @ x\n\n"
                "def main(seed):\n    torch.use_deterministic_algorithms(True, warn_only=True)\n    step(x)\n",
                min_torch="2.6"),
        Invalid("from torch import compile, use_deterministic_algorithms\nfast = compile(model)\n"
                "use_deterministic_algorithms(args.deterministic)\n", min_torch="2.9"),
    ]

    def check_call(self, ctx, call, qualname):
        if not (ctx.min_torch < self.changed_in <= ctx.target):
            return
        mode = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "mode"), None)
        if mode is None or is_literal(mode, False):
            return
        if not uses_any(ctx, _COMPILE):
            return
        message = (f"since PyTorch {self.changed_in} `use_deterministic_algorithms` also sets "
                   f"`torch._inductor.config.deterministic`: compiled code stops autotuning (e.g. `max-autotune` picks a "
                   f"fixed kernel); your minimum is {ctx.min_torch}, where compiled code was not affected")
        yield ctx.diagnostic(call.func, message)
