"""TP303: torch.hub.load/list/help without trust_repo= (the default became "check" in 2.11)."""

from __future__ import annotations

import ast

from torchpatch.rules._helpers import has_double_star, keyword, literal
from torchpatch.rules.base import Invalid, Rule, Valid
from torchpatch.versions import v

#: Owners torch.hub trusts without asking (`_TRUSTED_REPO_OWNERS` in torch/hub.py, 2.4 through 2.15).
TRUSTED_OWNERS = frozenset({"facebookresearch", "facebookincubator", "pytorch", "fairinternal"})


def _literal(node: ast.AST | None):
    try:
        return literal(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


class HubWithoutTrustRepo(Rule):
    """
    ## What it does
    Flags `torch.hub.load`, `torch.hub.list` and `torch.hub.help` calls that do not pass
    `trust_repo=`, unless the repository is a literal owned by one of the owners torch.hub always
    trusts (`pytorch`, `facebookresearch`, `facebookincubator`, `fairinternal`) or the call loads
    from a local directory (`source="local"`).

    ## Why is this bad?
    Loading a hub model downloads a GitHub repository and runs its `hubconf.py`. Up to PyTorch 2.10
    the default `trust_repo=None` only printed a warning for unknown repositories and ran the code
    anyway. From 2.11 the default is `trust_repo="check"`: a repository that is neither owned by a
    trusted owner nor listed in `<hub_dir>/trusted_list` (nor already in the hub cache) triggers an
    interactive `input()` prompt, which blocks or fails (`EOFError`) in batch jobs, CI and
    notebooks without stdin. Decide explicitly: `trust_repo=True` for a repository you vetted and
    pinned (`owner/repo:tag`), `trust_repo="check"` to keep the prompt, or download the weights
    and build the model yourself.

    There is deliberately no automatic fix: writing `trust_repo=True` is a trust decision about
    third-party code that only a person can make, and an automatic edit would turn a prompt into
    silent code execution.
    """

    code = "TP303"
    name = "hub-without-trust-repo"
    summary = "`torch.hub.load/list/help` without `trust_repo=` (interactive trust prompt since 2.11)"
    changed_in = v("2.11")
    fix_safety_note = (
        "No automatic fix: `trust_repo=True` is a decision to run a third-party repository's code, which only a "
        "person who vetted (and pinned) the repository can make; an edit would turn the prompt into silent execution."
    )
    references = (
        "https://docs.pytorch.org/docs/stable/hub.html#torch.hub.load",
    )
    catalog_ids = ("sec.hub-trust-repo-check",)
    calls = frozenset({"torch.hub.load", "torch.hub.list", "torch.hub.help"})

    VALID = [
        'import torch\nmodel = torch.hub.load("someone/models:v1.2", "resnet", trust_repo=True)\n',
        'import torch\nmodel = torch.hub.load("pytorch/vision:v0.20.0", "resnet50", weights="DEFAULT")\n',
        'import torch\nentries = torch.hub.list("facebookresearch/dinov2")\n',
        'import torch\nmodel = torch.hub.load("./hubdir", "mymodel", source="local")\n',
        'import torch\nopts = {"trust_repo": True}\nmodel = torch.hub.load(repo, "m", **opts)\n',
        'import torch\nstate = torch.hub.load_state_dict_from_url(url)\n',
        'import torch\ndef load(repo, name):\n    return repo\nmodel = load("a/b", "c")\n',
        Valid('import torch\nmodel = torch.hub.load("someone/models", "net")\n', target_torch="2.10"),
    ]
    INVALID = [
        Invalid('import torch\nmodel = torch.hub.load("ultralytics/yolov5", "yolov5s")\n'),
        Invalid('from torch import hub\nmodels = hub.list(repo)\n'),
        Invalid('from torch.hub import help as hub_help\nprint(hub_help("someone/models", "net"))\n'),
        Invalid('import torch\nmodel = torch.hub.load("someone/models", "net", source="github")\n'),
    ]

    def check_call(self, ctx, call, qualname):
        if keyword(call, "trust_repo") is not None or has_double_star(call):
            return
        function = qualname.rpartition(".")[2]
        if function == "load":
            source = keyword(call, "source")
            if source is not None and _literal(source.value) == "local":
                return
        repo = call.args[0] if call.args else getattr(keyword(call, "repo_or_dir" if function == "load" else "github"),
                                                       "value", None)
        value = _literal(repo)
        if isinstance(value, str) and value.split("/", 1)[0] in TRUSTED_OWNERS and "/" in value:
            return
        message = (f"`torch.hub.{function}` without `trust_repo=`: since PyTorch {self.changed_in} the default "
                   "`trust_repo=\"check\"` asks for confirmation on stdin for repositories not already trusted "
                   "(fails in batch jobs); pass `trust_repo=True` only for a vetted, pinned repository")
        yield ctx.diagnostic(call, message)
