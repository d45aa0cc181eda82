"""Names reached through wrappers: functools.partial, torch.compile(f)(...), subclasses, class attributes,
star imports. A wrapper's own text is not the call's, so nothing reached through one is fixed."""

from __future__ import annotations

import pytest

FSDP_IMPORT = "from torch.distributed.fsdp import FullyShardedDataParallel\n"
VARLEN_IMPORT = "from torch.nn.attention.varlen import varlen_attn\n"


def found(result):
    return [(f.code, f.fix is not None) for f in result.findings]


@pytest.mark.parametrize("code", [
    pytest.param("import functools\n" + FSDP_IMPORT + "wrap = functools.partial(FullyShardedDataParallel, use_orig_params=True)\n",
                 id="functools.partial"),
    pytest.param("from functools import partial\n" + FSDP_IMPORT + "wrap = partial(FullyShardedDataParallel)\n",
                 id="from-functools"),
    pytest.param("import functools as ft\nimport torch\nwrap = ft.partial(torch.distributed.fsdp.FullyShardedDataParallel)\n",
                 id="aliased-functools"),
    pytest.param("from functools import partial as p\nfrom torch.distributed.fsdp import FullyShardedDataParallel as FSDP\n"
                 "policy = dict(wrapper=p(FSDP, sharding_strategy=s))\n", id="nested-in-call"),
])
def test_partial_of_a_deprecated_callable_is_reported(lint, code):
    assert found(lint(code)) == [("TP213", False)]


def test_keywords_given_to_partial_are_keywords_of_the_call(lint):
    result = lint("from functools import partial\n" + VARLEN_IMPORT + "attn = partial(varlen_attn, is_causal=True)\n",
                  target="2.13")
    assert found(result) == [("TP110", False)]  # reported, never fixed through the wrapper
    result = lint("import functools, torch\nexport = functools.partial(torch.onnx.export, fallback=True)\n", target="2.15")
    assert found(result) == [("TP102", False)]


@pytest.mark.parametrize("code", [
    # The caller may pass weights_only=... / dynamo=... itself: an argument's absence says nothing.
    pytest.param("import torch\nfrom functools import partial\nload = partial(torch.load, map_location='cpu')\n",
                 id="load-absent-keyword"),
    pytest.param("import torch\nfrom functools import partial\n"
                 "export = partial(torch.onnx.export, operator_export_type=torch.onnx.OperatorExportTypes.ONNX)\n",
                 id="onnx-absent-dynamo"),
    # Another library's partial, and a partial of another callable.
    pytest.param("from toolz import partial\n" + FSDP_IMPORT + "wrap = partial(FullyShardedDataParallel)\n",
                 id="not-functools"),
    pytest.param("from functools import partial\nimport torch\nwrap = partial(torch.distributed.fsdp.fully_shard)\n",
                 id="fsdp2"),
    pytest.param("from functools import partial\n" + VARLEN_IMPORT + "attn = partial(varlen_attn, window_size=(-1, 0))\n",
                 id="new-signature"),
    pytest.param("from functools import partial\nimport torch\nf = partial(*callables)\n", id="starred"),
])
def test_partial_reports_nothing_it_cannot_know(lint, code):
    assert found(lint(code, target="2.15", min_torch="2.4")) == []


def test_partial_of_a_name_watched_as_reference_is_reported_once(lint):
    result = lint("import torch\nfrom functools import partial\nac = partial(torch.cuda.amp.autocast, dtype=torch.bfloat16)\n")
    assert [f.code for f in result.findings] == ["TP202"]


def test_compiled_function_gets_the_call_arguments(lint):
    code = ("import torch\n" + VARLEN_IMPORT +
            "out = torch.compile(varlen_attn)(q, k, v, cu, cu, m, m, is_causal=True)\n")
    result = lint(code, target="2.13")
    assert found(result) == [("TP110", False)]
    code = "import torch\n" + VARLEN_IMPORT + "out = torch.compile(model=varlen_attn, fullgraph=True)(q, k, v, cu, cu, m, m, True)\n"
    assert found(lint(code, target="2.13")) == [("TP110", False)]


@pytest.mark.parametrize("code", [
    "import torch\n" + VARLEN_IMPORT + "out = torch.compile(varlen_attn)(q, k, v, cu, cu, m, m, window_size=(-1, 0))\n",
    "import torch\nout = torch.compile(flash_varlen)(q, k, v, cu, cu, m, m, is_causal=True)\n",
    "import torch\n" + VARLEN_IMPORT + "fn = torch.compile()\n",
])
def test_compiled_function_valid(lint, code):
    assert found(lint(code, target="2.13")) == []


def test_subclass_of_a_deprecated_class_flags_the_base(lint):
    code = FSDP_IMPORT + "class MyFSDP(FullyShardedDataParallel):\n    pass\n"
    result = lint(code)
    assert found(result) == [("TP213", False)]
    assert code[result.findings[0].start:result.findings[0].end] == "FullyShardedDataParallel"
    code = "import torch.distributed.fsdp as fsdp\nclass Wrapped(Base, fsdp.FullyShardedDataParallel, metaclass=M):\n    pass\n"
    assert found(lint(code)) == [("TP213", False)]


@pytest.mark.parametrize("code", [
    "import torch\nclass Net(torch.nn.Module):\n    pass\n",
    "from fairscale.nn import FullyShardedDataParallel\nclass MyFSDP(FullyShardedDataParallel):\n    pass\n",
    "import torch\nfrom torch.distributed.fsdp import FSDPModule\nclass M(FSDPModule):\n    pass\n",
])
def test_subclass_valid(lint, code):
    assert found(lint(code, target="2.15")) == []


def test_class_attribute_holding_a_deprecated_callable_is_a_reference(lint):
    result = lint("import torch\nclass Trainer:\n    autocast = torch.cuda.amp.autocast\n"
                  "    def step(self):\n        with self.autocast():\n            pass\n")
    assert [f.code for f in result.findings] == ["TP202"]
    result = lint("import torch\nclass Trainer:\n    scaler_cls = torch.cuda.amp.GradScaler\n")
    assert [f.code for f in result.findings] == ["TP202"]
    # A callable watched only as a call: the class attribute stands for the ``self.wrapper_cls(...)`` calls.
    result = lint(FSDP_IMPORT + "class Strategy:\n    wrapper_cls = FullyShardedDataParallel\n"
                  "    def wrap(self, model):\n        return self.wrapper_cls(model)\n")
    assert found(result) == [("TP213", False)]
    assert found(lint(FSDP_IMPORT + "wrapper_cls = FullyShardedDataParallel\nkinds = (FullyShardedDataParallel,)\n")) == []
    assert found(lint("import torch\nclass Strategy:\n    wrapper_cls = torch.distributed.fsdp.fully_shard\n")) == []


def test_fix_leaves_wrappers_alone(lint):
    code = ("from functools import partial\nimport torch\n" + VARLEN_IMPORT + FSDP_IMPORT +
            "attn = partial(varlen_attn, is_causal=True)\nout = torch.compile(varlen_attn)(q, k, v, cu, cu, m, m, False)\n"
            "class MyFSDP(FullyShardedDataParallel):\n    pass\n")
    result = lint(code, target="2.13", fix=True, unsafe_fixes=True)
    assert result.fixed_count == 0 and result.fixed_text in (None, code)
    assert sorted(f.code for f in result.findings) == ["TP110", "TP110", "TP213"]


# -- star imports ----------------------------------------------------------------------------------------------

def test_star_import_of_a_torch_module_binds_its_exports(lint):
    result = lint("from torch.cuda.amp import *\nwith autocast():\n    pass\nscaler = GradScaler()\n")
    assert [(f.code, f.row) for f in result.findings] == [("TP202", 2), ("TP202", 4)]
    assert all(f.fix is None for f in result.findings)  # the callee's import names nothing to fix
    result = lint("from torch.distributed.fsdp import *\nmodel = FullyShardedDataParallel(model)\n")
    assert [(f.code, f.row) for f in result.findings] == [("TP213", 2)]


def test_star_import_keeps_fixes_that_only_touch_arguments(lint):
    code = "from torch.nn.attention.varlen import *\nout = varlen_attn(q, k, v, cu, cu, m, m, is_causal=False)\n"
    result = lint(code, target="2.13", fix=True)
    assert result.fixed_text == "from torch.nn.attention.varlen import *\nout = varlen_attn(q, k, v, cu, cu, m, m)\n"


@pytest.mark.parametrize("code", [
    # A later star import of a module we cannot read may rebind any name.
    "from torch.cuda.amp import *\nfrom apex.amp import *\nwith autocast():\n    pass\n",
    # Rebound after the star import, and names the module does not export.
    "from torch.cuda.amp import *\ndef autocast():\n    pass\nwith autocast():\n    pass\n",
    "from torch.cuda.amp import *\nload(path)\n",
    "from torch.distributed.fsdp import *\nmodel = fully_shard(model)\n",
    # Relative and unknown modules.
    "import torch\nfrom .amp import *\nwith autocast():\n    pass\n",
    "from torch.not_a_module import *\nwith autocast():\n    pass\n",
])
def test_star_import_valid(lint, code):
    assert [f.code for f in lint(code, target="2.15").findings] == []


def test_star_exports_follow_the_releases():
    from torchpatch.rules._api_db import star_exports
    from torchpatch.versions import Version

    v = Version.parse
    assert {"autocast", "GradScaler", "custom_fwd", "custom_bwd"} <= star_exports("torch.cuda.amp", v("2.4"), v("2.15"))
    assert "FullyShardedDataParallel" in star_exports("torch.distributed.fsdp", v("2.4"), v("2.4"))
    assert "fully_shard" not in star_exports("torch.distributed.fsdp", v("2.4"), v("2.4"))
    assert "fully_shard" in star_exports("torch.distributed.fsdp", v("2.6"), v("2.15"))
    assert star_exports("torch.not_a_module", v("2.4"), v("2.15")) is None
    assert star_exports("torch.cuda.amp", v("2.4"), v("2.20")) == star_exports("torch.cuda.amp", v("2.4"), v("2.15"))


@pytest.mark.torch
@pytest.mark.parametrize("module", ["torch.cuda.amp", "torch.distributed.fsdp", "torch.nn.functional", "torch.optim"])
def test_star_exports_match_torch(module):
    torch = pytest.importorskip("torch")
    import importlib

    from torchpatch.rules._api_db import star_exports
    from torchpatch.versions import Version

    if module.startswith("torch.distributed") and not torch.distributed.is_available():
        pytest.skip("no torch.distributed in this build")
    namespace: dict = {}
    exec(f"from {module} import *", namespace)
    real = {name for name in namespace if not name.startswith("_")}
    ours = star_exports(module, Version.parse("2.13"), Version.parse("2.13"))
    assert ours == real, (sorted(ours - real)[:10], sorted(real - ours)[:10])
    assert importlib.import_module(module)


def test_partial_keyword_found_in_deepspeed(lint):
    # deepspeed 0.16.4 inference/v2/checkpoint/huggingface_engine.py
    code = ("import torch\nfrom functools import partial\n"
            "load_fn = partial(torch.load, map_location=\"cpu\", weights_only=False)\n")
    assert found(lint(code)) == [("TP302", False)]


def test_fixes_never_rely_on_a_star_imported_name(lint):
    # ``GradScaler`` is torch.amp.GradScaler through the star import; the fix spells the name it needs itself.
    code = "from torch.amp import *\nimport torch\nscaler = torch.cuda.amp.GradScaler()\n"
    result = lint(code, fix=True, unsafe_fixes=True, min_torch="2.4")
    assert result.fixed_text == "from torch.amp import *\nimport torch\nscaler = torch.amp.GradScaler(\"cuda\")\n"
