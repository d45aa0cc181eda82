"""TP210: TorchScript entry points (script, trace, save, load, lite interpreter), deprecated in 2.10."""

from __future__ import annotations

from torchpatch.rules._call_sites import is_none_test
from torchpatch.rules._helpers import public_and_defining_names
from torchpatch.rules.base import Invalid, Rule, Valid
from torchpatch.versions import v

#: Public name -> what to use instead (the warnings of torch 2.13 say the same).
_ADVICE = {
    "script": "`torch.compile` (speed) or `torch.export` + AOTInductor (deployment)",
    "script_method": "`torch.compile` (speed) or `torch.export` + AOTInductor (deployment)",
    "trace": "`torch.compile` (speed) or `torch.export` + AOTInductor (deployment)",
    "trace_module": "`torch.compile` (speed) or `torch.export` + AOTInductor (deployment)",
    "save": "`torch.export.save` of an `ExportedProgram` or an AOTInductor package",
    "load": "`torch.export.load` or `torch._inductor.aoti_load_package`",
}

#: Where each name is defined (2.4 through 2.15), so imports from the private modules resolve too.
_DEFINED_IN = {
    "script": "torch.jit._script", "script_method": "torch.jit._script",
    "trace": "torch.jit._trace", "trace_module": "torch.jit._trace",
    "save": "torch.jit._serialization", "load": "torch.jit._serialization",
}
_NAMES = public_and_defining_names("torch.jit", _DEFINED_IN)


class TorchscriptDeprecated(Rule):
    """
    ## What it does
    Flags uses of the TorchScript entry points `torch.jit.script`, `torch.jit.trace`,
    `torch.jit.trace_module`, `torch.jit.script_method`, `torch.jit.save` and `torch.jit.load`
    (calls, `@torch.jit.script` decorators, aliases such as `fn = torch.jit.trace`), and the lite
    interpreter's `module._save_for_lite_interpreter(...)`.

    ## Why is this bad?
    TorchScript is deprecated. PyTorch 2.10 added a `DeprecationWarning` to each of these functions
    (for example "`torch.jit.script` is deprecated. Please switch to `torch.compile` or
    `torch.export`."; `trace_module` says `torch.jit.trace_method`), and 2.14 turned them into
    `FutureWarning`s, which Python shows by default. On Python 3.14 the message says TorchScript is
    not supported and may break. The lite interpreter (mobile runtime) is deprecated in favour of
    ExecuTorch. There is no mechanical replacement: use `torch.compile` to speed a model up in
    process, and `torch.export` with AOTInductor (`torch._inductor.aoti_compile_and_package`) or
    ExecuTorch to deploy it without Python.
    """

    code = "TP210"
    name = "torchscript-deprecated"
    summary = "TorchScript `torch.jit.script/trace/save/load` (deprecated in 2.10; FutureWarning from 2.14)"
    deprecated_in = v("2.10")
    references = (
        "https://docs.pytorch.org/docs/stable/jit.html",
        "https://docs.pytorch.org/docs/stable/export.html",
        "https://docs.pytorch.org/executorch/stable/getting-started.html",
    )
    catalog_ids = ("jit.core-deprecated", "jit.lite-interpreter")
    references_to = frozenset(_NAMES)
    methods = frozenset({"_save_for_lite_interpreter"})

    VALID = [
        'import torch\ncompiled = torch.compile(model)\n',
        'import torch\nep = torch.export.export(model, (x,), strict=False)\ntorch.export.save(ep, "model.pt2")\n',
        'import torch\nif torch.jit.is_scripting():\n    pass\n',
        'from torch.jit import script\n',  # the import alone: its uses are reported
        'import torch\ndef script(model):\n    return model\nscripted = script(model)\n',
        'import jax\nfast = jax.jit(fn)\n',
        'class Runner:\n    def run(self, model):\n        return self.jit.script(model)\n',
        Valid('import torch\ntraced = torch.jit.trace(model, (x,))\n', target_torch="2.9"),
    ]
    INVALID = [
        Invalid('import torch\nscripted = torch.jit.script(model)\n'),
        Invalid('import torch\n@torch.jit.script\ndef f(x):\n    return x + 1\n'),
        Invalid('import torch as th\ntraced = th.jit.trace(model, (x,))\nth.jit.save(traced, "m.pt")\n'),
        Invalid('from torch.jit import load\nmodel = load("m.pt")\n'),
        Invalid('from torch import jit\nmodule = jit.trace_module(model, {"forward": (x,)})\n'),
        Invalid('import torch\nclass M(torch.jit.ScriptModule):\n    @torch.jit.script_method\n'
                '    def forward(self, x):\n        return torch.relu(x)\n'),
        Invalid('import torch\nscripted = torch.jit.script(model)\nscripted._save_for_lite_interpreter("m.ptl")\n'),
        Invalid('from torch.jit._trace import trace\nfn = trace\n'),
    ]

    def check_reference(self, ctx, reference):
        if reference.in_import or is_none_test(reference):
            return  # ``torch.jit.script is not None`` probes a name that 2.15 still ships
        leaf = _NAMES[reference.qualname]
        message = (f"`torch.jit.{leaf}` is {self.version_phrase(ctx.target)} (DeprecationWarning; "
                   f"FutureWarning from 2.14): TorchScript is deprecated, use {_ADVICE[leaf]}")
        yield ctx.diagnostic(reference.node, message)

    def check_method_call(self, ctx, call):
        if not call.args and not call.keywords:
            return  # a zero-argument `_save_for_lite_interpreter()` is not TorchScript's (it needs a file)
        yield ctx.diagnostic(call.func, self._lite_message())

    def _lite_message(self) -> str:
        return (f"the TorchScript lite interpreter is deprecated since PyTorch {self.deprecated_in} "
                "(DeprecationWarning; FutureWarning from 2.14): export with `torch.export` and deploy with ExecuTorch")
