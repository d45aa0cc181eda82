"""TP301: torch.load without an explicit weights_only."""

from __future__ import annotations

from torchpatch.rules._helpers import add_keyword, has_double_star, has_starred, is_literal, keyword
from torchpatch.rules.base import UNSAFE, Fix, Invalid, Rule, Valid
from torchpatch.rules.force_no_weights_only_env import file_sets_force_no_weights_only
from torchpatch.rules.torch_load_weights_only_false import is_full_unpickler
from torchpatch.versions import v


class TorchLoadWithoutWeightsOnly(Rule):
    """
    ## What it does
    Flags `torch.load(...)` calls that do not pass `weights_only=`.

    ## Why is this bad?
    Before PyTorch 2.6, `torch.load` unpickled with the full `pickle` module by default, so loading a
    file could run arbitrary code; 2.4 and 2.5 warn about it (`FutureWarning`). From 2.6 the default
    is `weights_only=True`, which refuses anything but tensors, containers and allowlisted types: a
    checkpoint that pickled a custom class, an optimizer with unusual state or a NumPy array now fails
    to load. Passing the argument explicitly makes the behaviour the same on every release and tells
    readers which one you meant. On releases before 2.6 even `weights_only=True` was bypassable
    (CVE-2025-32434), so untrusted files need torch >= 2.6 as well.

    When `pickle_module=` is passed (by keyword or as the third positional argument,
    `torch.load(f, map_location, pickle_module)`), torch keeps `weights_only=False` as the default
    and `weights_only=True` with a pickle module raises; the call is still reported, without a fix.
    With `pickle`, `dill` or `cloudpickle` the call unpickles with the full pickle module; with a module
    of the project's own, only that module's `Unpickler.find_class` decides what the file may load.
    `pickle_module=None` is torch's own default, the same as leaving it out.

    ## When the minimum torch is 2.6 or newer
    Then a call without `weights_only=` (and without `pickle_module`) already loads weights-only on
    every release the code supports, so it is **not reported**: there is nothing unsafe and nothing that
    differs between releases, and writing `weights_only=True` would change one thing — torch honours the
    `TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1` escape hatch only when the call leaves `weights_only` unset
    (2.6.0-2.15.0 `torch/serialization.py`), which some projects rely on for their users' old
    checkpoints (nemo_toolkit's `save_restore_connector.py`). A call with `pickle_module` is still
    reported at any minimum: its default stays `weights_only=False` on every release, so it unpickles
    with that module, not weights-only, without saying so. `torch.load(*args)` is not reported at a 2.6+
    minimum (whether it passes a pickle module is not known).

    ## In a file that sets `TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD`
    Torch 2.6 … 2.15 reads that variable at each load and forces `weights_only=False` when the call
    leaves it unset, so once the file has set it such a call does not start loading weights-only in 2.6:
    it unpickles with the full pickle module on every release (2.4 and 2.5 ignore the variable and use
    their own full-pickle default). The call is still reported, with a message that says so: pass
    `weights_only=False` where the file is trusted, or `weights_only=True` (the unsafe fix, which the
    variable then no longer overrides) with allowlisted types. TP447 reports the variable itself.
    """

    code = "TP301"
    name = "torch-load-without-weights-only"
    summary = "`torch.load` without `weights_only=` (default became True in 2.6)"
    deprecated_in = v("2.4")
    changed_in = v("2.6")
    replacement_since = v("2.4")
    fix_safety = UNSAFE
    fix_safety_note = (
        "Adding `weights_only=True` keeps tensors and state dicts loading, but a checkpoint that pickled "
        "other objects will be refused: review what each call loads. Allowlist trusted classes with "
        "`torch.serialization.safe_globals([...])` (2.5+) rather than passing `weights_only=False`."
    )
    references = (
        "https://pytorch.org/docs/stable/generated/torch.load.html",
        "https://github.com/advisories/GHSA-53q9-r3pm-6pq6",
    )
    torchfix_codes = ("TOR102",)
    catalog_ids = ("sec.load-weights-only-default", "sec.cve-2025-32434")
    calls = frozenset({"torch.load", "torch.serialization.load"})

    VALID = [
        'import torch\nstate = torch.load("model.pt", weights_only=True)\n',
        # From a 2.6 minimum the default is weights_only=True everywhere (and the env escape hatch works).
        Valid('import torch\nstate = torch.load("model.pt", map_location="cpu")\n', min_torch="2.6"),
        'import torch\nobj = torch.load("trusted.pt", weights_only=False)  # noqa: TP302 (our own file)\n',
        'import numpy as np\narray = np.load("x.npy")\n',
        'from safetensors.torch import load\nstate = load(data)\n',
        'import torch\ndef load(path):\n    return path\nload("x")\n',
        'import torch\nopts = {"weights_only": True}\nstate = torch.load("m.pt", **opts)\n',
    ]
    INVALID = [
        Invalid('import torch\nstate = torch.load("model.pt")\n',
                fixed='import torch\nstate = torch.load("model.pt", weights_only=True)\n'),
        Invalid('import torch as th\nstate = th.load(path, map_location="cpu")\n',
                fixed='import torch as th\nstate = th.load(path, map_location="cpu", weights_only=True)\n'),
        Invalid('from torch import load\nfn = load\nstate = fn(\n    "m.pt",\n    map_location="cpu",\n)\n',
                fixed='from torch import load\nfn = load\nstate = fn(\n    "m.pt",\n    map_location="cpu",\n    weights_only=True,\n)\n'),
        Invalid('import pickle\nimport torch\nstate = torch.load("m.pt", pickle_module=pickle)\n'),
        # The third positional argument is pickle_module: weights_only=True would raise.
        Invalid('import pickle\nimport torch\nstate = torch.load(path, "cpu", pickle)\n'),
        Invalid('import torch\nstate = torch.load(*args)\n'),
        Invalid('import pickle\nimport torch\nstate = torch.load("m.pt", pickle_module=pickle)\n', min_torch="2.6"),
        # The file turns the 2.6 default off: reported with a message that says the call unpickles fully.
        Invalid('import os\nos.environ["TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD"] = "1"\nimport torch\nmodel = torch.load(path)\n',
                fixed='import os\nos.environ["TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD"] = "1"\nimport torch\n'
                      'model = torch.load(path, weights_only=True)\n'),
    ]

    def check_call(self, ctx, call, qualname):
        if keyword(call, "weights_only") is not None or has_double_star(call):
            return
        # load(f, map_location=None, pickle_module=None, *, weights_only=None, ...) in 2.4-2.15; with a
        # pickle_module the default stays False (_default_to_weights_only(pickle_module), 2.6-2.15).
        pickle_keyword = keyword(call, "pickle_module")
        pickle_module = pickle_keyword.value if pickle_keyword is not None else (
            call.args[2] if len(call.args) >= 3 else None)
        if pickle_module is not None and not is_literal(pickle_module, None):  # None: torch's default choice
            if is_full_unpickler(ctx, pickle_module):
                message = ("`torch.load` with `pickle_module` and no `weights_only=`: it unpickles with the full "
                           "pickle module on every release (the default stays False with a pickle module, 2.4-2.15)")
            else:  # a module of the project's own: its Unpickler may allowlist (TP302 says the same)
                message = ("`torch.load` with a custom `pickle_module` and no `weights_only=`: the default stays "
                           "False with a pickle module (2.4-2.15), so only that module's `Unpickler.find_class` "
                           "keeps a malicious file from running code; make sure it allowlists types")
            yield ctx.diagnostic(call, message)
            return
        if ctx.min_torch >= self.changed_in:
            return  # weights_only=True is the default on every supported release (see the docstring)
        fix_message = "Pass `weights_only=True` (changes what loads: only tensors and allowlisted types)"
        if ctx.target >= self.changed_in and file_sets_force_no_weights_only(ctx):
            # 2.6.0-2.15.0 serialization.py: the variable forces weights_only=False only for an unset argument.
            message = ("`torch.load` without `weights_only=` in a file that sets `TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD`: "
                       f"once it is set, this call unpickles with the full pickle module on every release "
                       f"(the default before {self.changed_in}, forced by the variable with a warning from "
                       f"{self.changed_in}); say `weights_only=False` where the file is trusted, or allowlist its "
                       "types and pass `weights_only=True`")
            fix_message = ("Pass `weights_only=True` (changes what loads: only tensors and allowlisted types; "
                           "`TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD` no longer applies to this call)")
        else:
            message = (f"`torch.load` without `weights_only=`: the default became `weights_only=True` in PyTorch "
                       f"{self.changed_in} (full pickle before; your minimum is {ctx.min_torch})")
        fix = None
        if not has_starred(call):
            fix = Fix(message=fix_message, edits=[add_keyword(ctx, call, "weights_only=True")], applicability=UNSAFE)
        yield ctx.diagnostic(call, message, fix)
