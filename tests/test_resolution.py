"""Names are resolved as Python resolves them: aliases, from-imports, scopes, shadowing, fallbacks."""

from __future__ import annotations

import pytest

LOAD = "TP301"


def codes(result):
    return [f.code for f in result.findings]


@pytest.mark.parametrize("code", [
    pytest.param('import torch\ntorch.load("m.pt")\n', id="plain"),
    pytest.param('import torch as th\nth.load("m.pt")\n', id="import-as"),
    pytest.param('from torch import load\nload("m.pt")\n', id="from-import"),
    pytest.param('from torch import load as tl\ntl("m.pt")\n', id="from-import-as"),
    pytest.param('import torch.serialization\ntorch.serialization.load("m.pt")\n', id="submodule"),
    pytest.param('from torch import serialization as ser\nser.load("m.pt")\n', id="module-alias"),
    pytest.param('def f():\n    import torch\n    return torch.load("m.pt")\n', id="import-in-function"),
    pytest.param('import torch\nfn = torch.load\nfn("m.pt")\n', id="assigned-alias"),
    pytest.param('import torch\nfn = torch.load\ng = fn\ng("m.pt")\n', id="alias-of-alias"),
    pytest.param('def f():\n    return torch.load("m.pt")\nimport torch\n', id="module-import-after-function"),
    pytest.param('import torch\nclass A:\n    def m(self):\n        return torch.load("m.pt")\n', id="method"),
    pytest.param('import torch\nx = [torch.load(p) for p in paths]\n', id="comprehension"),
    pytest.param('import torch\nf = lambda p: torch.load(p)\n', id="lambda"),
    pytest.param('import torch\nif True:\n    for p in ps:\n        with open(p) as fh:\n            torch.load(fh)\n', id="nested-blocks"),
    pytest.param('try:\n    import torch\nexcept ImportError:\n    torch = None\ntorch.load("m.pt")\n', id="optional-import"),
    pytest.param('import torch\ndef f():\n    global torch\n    torch.load("m.pt")\n', id="global"),
])
def test_resolved_call_is_reported(lint, code):
    assert codes(lint(code)) == [LOAD]


@pytest.mark.parametrize("code", [
    pytest.param('import numpy as np\nnp.load("x.npy")\n', id="numpy"),
    pytest.param('from safetensors.torch import load\nload(data)\n', id="safetensors-torch"),
    pytest.param('import safetensors.torch\nsafetensors.torch.load(data)\n', id="safetensors-module"),
    pytest.param('import torch\ndef f(torch):\n    return torch.load("m.pt")\n', id="parameter-shadows"),
    pytest.param('import torch\ndef f():\n    torch = Mock()\n    return torch.load("m.pt")\n', id="local-assignment-shadows"),
    pytest.param('from torch import load\ndef load(p):\n    return p\nload("m.pt")\n', id="def-shadows"),
    pytest.param('from torch import load\nload = pickle.load\nload(f)\n', id="reassigned"),
    pytest.param('import torch\nclass A:\n    def m(self):\n        return self.torch.load("m.pt")\n', id="attribute-of-self"),
    pytest.param('import torch\nx = "torch.load(p)"\n# torch.load(p)\n', id="string-and-comment"),
    pytest.param('import torch\ndef f():\n    """torch.load("m.pt") in a docstring."""\n', id="docstring"),
    pytest.param('import torch\nfrom unittest import mock\nwith mock.patch("torch.load"):\n    pass\n', id="mock-target"),
    pytest.param('torch.load("m.pt")\n', id="never-imported"),
    pytest.param('import torch\nx = [torch for torch in items]\ny = [torch.load(p) for torch in loaders]\n', id="comprehension-shadows"),
    pytest.param('import torch\nf = lambda torch: torch.load(p)\n', id="lambda-shadows"),
    pytest.param('from . import torch\ntorch.load("m.pt")\n', id="relative-import"),
    pytest.param('import apex.amp as amp\nimport torch\nwith amp.autocast():\n    pass\n', id="apex"),
])
def test_look_alike_is_not_reported(lint, code):
    assert codes(lint(code)) == []


def test_try_import_fallback_uses_the_new_path(lint):
    code = (
        "try:\n"
        "    from torch.distributed.tensor import DTensor\n"
        "except ImportError:\n"
        "    from torch.distributed._tensor import DTensor  # torch < 2.5\n"
        "x = DTensor\n"
    )
    # The fallback import is compatibility code for old releases, and the use resolves to the new path.
    assert lint(code).findings == []


def test_use_before_module_level_binding_is_not_resolved(lint):
    assert codes(lint('torch.load("m.pt")\nimport torch\n')) == []


def test_each_rule_sees_the_longest_name_it_watches():
    import ast as ast_module

    from torchpatch.engine.checker import RuleIndex, check_tree
    from torchpatch.rules.base import Rule
    from torchpatch.versions import v

    class Short(Rule):
        code, name, summary, changed_in = "TP998", "short", "s", v("2.4")
        references_to = frozenset({"torch._dynamo.config"})

        def check_reference(self, ctx, reference):
            yield ctx.diagnostic(reference.node, reference.qualname)

    class Long(Short):
        code, name = "TP999", "long"
        references_to = frozenset({"torch._dynamo.config", "torch._dynamo.config.cache_size_limit"})

    source = "import torch\nx = torch._dynamo.config.cache_size_limit\nfrom torch._dynamo.config import cache_size_limit\n"
    found = check_tree(source, ast_module.parse(source), RuleIndex([Short(), Long()]), v("2.15"), v("2.4"))
    assert sorted((d.code, d.message) for d in found) == [
        ("TP998", "torch._dynamo.config"), ("TP998", "torch._dynamo.config"),
        ("TP999", "torch._dynamo.config.cache_size_limit"), ("TP999", "torch._dynamo.config.cache_size_limit"),
    ]


@pytest.mark.parametrize("code", [
    pytest.param("import torch\nscaler = torch.amp.GradScaler('cuda') if TORCH_GREATER_EQUAL_2_4 else torch.cuda.amp.GradScaler()\n",
                 id="ifexp-flag"),
    pytest.param("import torch\nif is_torch_version('<', '2.2'):\n    torch.utils._pytree._register_pytree_node(A, f, g)\n",
                 id="is-torch-version-less"),
    pytest.param("import torch\nfrom packaging import version\nif version.parse(torch.__version__) >= version.parse('2.4'):\n"
                 "    s = torch.amp.GradScaler('cuda')\nelse:\n    s = torch.cuda.amp.GradScaler()\n", id="version-compare"),
    pytest.param("import torch\nif not hasattr(torch.amp, 'GradScaler'):\n    s = torch.cuda.amp.GradScaler()\n", id="not-hasattr"),
    pytest.param("import torch\ntry:\n    s = torch.load(p, weights_only=True)\nexcept TypeError:\n    s = torch.load(p)\n",
                 id="except-typeerror"),
    pytest.param("try:\n    from torch.amp import GradScaler\nexcept (ImportError, AttributeError):\n"
                 "    from torch.cuda.amp import GradScaler\ns = GradScaler('cuda')\n", id="except-import-tuple"),
])
def test_compatibility_branches_are_not_reported(lint, code):
    assert codes(lint(code)) == []


@pytest.mark.parametrize("code, row", [
    pytest.param("import torch\nif TORCH_GREATER_EQUAL_2_4:\n    s = torch.cuda.amp.GradScaler()\n", 3, id="new-branch"),
    pytest.param("import torch\nif torch.cuda.is_available():\n    s = torch.cuda.amp.GradScaler()\n", 3, id="not-a-version-check"),
    pytest.param("import torch\ntry:\n    s = torch.cuda.amp.GradScaler()\nexcept RuntimeError:\n    pass\n", 3, id="other-exception"),
    pytest.param("import torch\ntry:\n    pass\nexcept Exception:\n    s = torch.cuda.amp.GradScaler()\n", 5, id="broad-except"),
])
def test_code_outside_compatibility_branches_is_reported(lint, code, row):
    assert [f.row for f in lint(code).findings] == [row]


def test_old_default_overridden_by_a_feature_check_is_not_reported(lint):
    code = ("import torch.nn as nn\n"
            "weight_norm = nn.utils.weight_norm\n"
            "if hasattr(nn.utils.parametrizations, 'weight_norm'):\n"
            "    weight_norm = nn.utils.parametrizations.weight_norm\n"
            "conv = weight_norm(nn.Conv1d(2, 2, 3))\n")
    assert lint(code).findings == []
    unguarded = code.replace("if hasattr(nn.utils.parametrizations, 'weight_norm'):", "if use_new:")
    assert [f.row for f in lint(unguarded).findings] == [2]


def test_feature_probe_in_try_is_not_reported(lint):
    code = "import torch\ntry:\n    _ = torch.cpu.amp.autocast\nexcept AttributeError:\n    pass\n"
    assert lint(code).findings == []
    used = "import torch\ntry:\n    ctx = torch.cpu.amp.autocast()\nexcept AttributeError:\n    pass\n"
    assert [f.code for f in lint(used).findings] == ["TP203"]


def test_hasattr_on_other_objects_is_not_a_feature_check(lint):
    code = ("import torch\nif hasattr(kwargs, 'attention_mask'):\n    ids = 1\nelse:\n"
            "    state = torch.load('m.pt')\n")
    assert [f.row for f in lint(code).findings] == [5]
    guarded = code.replace("hasattr(kwargs, 'attention_mask')", "hasattr(torch.serialization, 'safe_globals')")
    assert lint(guarded).findings == []


def test_parameter_and_return_annotations_resolve_in_the_enclosing_scope(lint):
    """A def's annotations are evaluated with its header, where the parameters are not bound yet: a
    parameter called ``torch`` does not shadow the module in ``x: torch.X`` (they were not looked at before)."""
    code = ("import torch\n"
            "def f(torch, x: torch.distributed._tensor.DTensor) -> torch.distributed._tensor.DTensor:\n"
            "    return torch.distributed._tensor.DTensor\n")
    findings = lint(code, select=["TP201"]).findings
    assert [(f.row, f.column) for f in findings] == [(2, 16), (2, 54)]
