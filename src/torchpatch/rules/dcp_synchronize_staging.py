"""TP239: `AsyncStager.synchronize_staging()` is deprecated since PyTorch 2.9 (wait on `staging_completion`)."""

from __future__ import annotations

from torchpatch.rules._file_scan import defines_function
from torchpatch.rules.base import Invalid, Rule, Valid
from torchpatch.versions import v

_METHOD = "synchronize_staging"


class DcpSynchronizeStaging(Rule):
    """
    ## What it does
    Flags `.synchronize_staging()` calls, the method of distributed checkpoint stagers
    (`torch.distributed.checkpoint.staging.AsyncStager` and its `DefaultStager`). The method name
    is DCP's alone: any receiver is checked, except one that resolves to a name outside torch or a
    class of the file's own that defines the method.

    ## Why is this bad?
    From PyTorch 2.9 `AsyncStager.synchronize_staging` is wrapped in
    `@deprecated(..., category=FutureWarning)`: "`synchronize_staging` is deprecated and will be
    removed in future versions. Please use staging_future from AsyncSaveResponse instead" (2.9.1 …
    2.15.0 wheels). `dcp.async_save(...)` returns an `AsyncSaveResponse` whose
    `staging_completion` future says when the state dict may be modified again. Only the base
    class warns: `DefaultStager` (new in 2.9) overrides the method silently, but it is the same
    deprecated protocol. There is no automatic fix: the future comes from the `async_save` call.
    """

    code = "TP239"
    name = "dcp-synchronize-staging"
    summary = "DCP `stager.synchronize_staging()` (deprecated in 2.9; wait on `AsyncSaveResponse.staging_completion`)"
    deprecated_in = v("2.9")
    replacement_since = v("2.9")
    fix_safety_note = "No fix: the replacement future is returned by the `async_save` call, elsewhere in the code."
    references = ("https://docs.pytorch.org/docs/stable/distributed.checkpoint.html",)
    catalog_ids = ("dist.dcp-async-staging",)
    methods = frozenset({_METHOD})

    VALID = [
        "import torch.distributed.checkpoint as dcp\nresponse = dcp.async_save(state_dict, checkpoint_id=path)\n"
        "response.staging_completion.result()\n",
        Valid("import torch\nstager.synchronize_staging()\n", target_torch="2.8"),
        "import torch\nclass Stager:\n    def synchronize_staging(self):\n        pass\nStager().synchronize_staging()\n",
    ]
    INVALID = [
        Invalid("import torch.distributed.checkpoint as dcp\nfrom torch.distributed.checkpoint.staging import DefaultStager\n"
                "stager = DefaultStager()\nfuture = dcp.async_save(state_dict, checkpoint_id=path, async_stager=stager)\n"
                "stager.synchronize_staging()\n"),
        Invalid("import torch\ndef save(self):\n    self.stager.synchronize_staging()\n"),
    ]

    def check_method_call(self, ctx, call):
        if defines_function(ctx, _METHOD):
            return
        receiver = ctx.resolves_to(call.func.value)
        if receiver is not None and receiver.split(".")[0] != "torch":
            return
        yield ctx.diagnostic(call, (
            f"`synchronize_staging()` is deprecated since PyTorch {self.deprecated_in}; wait on the "
            "`staging_completion` future of the `AsyncSaveResponse` that `dcp.async_save` returns"))
