"""TorchScript, quantization, FSDP1, ONNX, hub, symmetric-memory and MAGMA rules: edge cases, and their claims
checked against real torch (CI installs 2.13.0 CPU)."""

from __future__ import annotations

import inspect
import warnings

import pytest

from torchpatch.rules.onnx_export_positional_args import PARAMETERS_2_4

# -- detection: aliases, from-imports, look-alikes ------------------------------------------------------

FLAGGED = [
    # TorchScript
    ("import torch.jit as J\nm = J.script(model)\n", "TP210"),
    ("from torch.jit._serialization import save\nsave(m, 'm.pt')\n", "TP210"),
    ("import torch\nfn = torch.jit.trace\n", "TP210"),
    ("def f(model):\n    import torch\n    return torch.jit.load('m.pt')\n", "TP210"),
    ("import torch\nfrom torch.jit import wait as jwait\ny = jwait(fut)\n", "TP211"),
    ("import torch.jit._freeze as fz\nm = fz.freeze(m)\n", "TP211"),
    # quantization
    ("import torch.ao.quantization as taq\nm = taq.convert(m)\n", "TP212"),
    ("from torch.quantization.quantize_fx import prepare_qat_fx\nm = prepare_qat_fx(m, q, x)\n", "TP212"),
    ("from torch.ao import quantization\nm = quantization.prepare_qat(m)\n", "TP212"),
    # FSDP1
    ("from torch.distributed.fsdp.fully_sharded_data_parallel import FullyShardedDataParallel\nm = FullyShardedDataParallel(m)\n",
     "TP213"),
    ("from torch.distributed import fsdp\nm = fsdp.FullyShardedDataParallel(m)\n", "TP213"),
    # hub
    ("import torch.hub as hub\nm = hub.load(repo, 'resnet', pretrained=True)\n", "TP303"),
    ("import torch\nm = torch.hub.load(repo_or_dir='someone/repo', model='x')\n", "TP303"),
    # symmetric memory
    ("from torch.distributed import _symmetric_memory as sm\nsm.enable_symm_mem_for_group('0')\n", "TP214"),
    # MAGMA
    ("import torch.backends.cuda as bc\nbc.preferred_linalg_library('magma')\n", "TP215"),
    # ONNX
    ("import torch.onnx\ntorch.onnx.export(m, x, 'm.onnx', fallback=True, dynamo=True)\n", "TP102"),
    ("from torch import onnx\nonnx.export(m, x, 'f.onnx', True, dynamo=False)\n", "TP103"),
    ("from torch.onnx import export as to_onnx\nto_onnx(m, (x,), 'm.onnx')\n", "TP410"),
]

CLEAN = [
    "import torch\nm = torch.compile(model)\n",
    "import torch\nwith torch.no_grad():\n    y = model(x)\n",
    "from mylib.jit import script\nm = script(model)\n",
    "import torch\ndef f(torch):\n    return torch.jit.script(m)\n",  # the parameter shadows the module
    "import torch\nclass A:\n    def trace(self):\n        return self.jit.trace(m)\n",
    "import torch\nm = torch.quantization.get_default_qconfig('x86')\n",
    "from torchao.quantization import quantize_\nquantize_(model, config)\n",
    "import torch\nm = torch.hub.load('pytorch/vision', 'resnet18')\n",
    "import torch\nm = torch.hub.load('facebookresearch/dino:main', 'dino_vits16')\n",
    "import torch\nm = torch.hub.load(repo, 'm', trust_repo='check')\n",
    "import torch\ntorch.backends.cuda.preferred_linalg_library('default')\n",
    "import torch\ntorch.backends.cuda.preferred_linalg_library(backend)\n",  # unknown value: not flagged
    "import torch\ntorch.onnx.export(m, (x,), 'm.onnx', dynamo=True, opset_version=18)\n",  # (no TP436: opset given)
    "import torch\ntorch.onnx.export(m, (x,), 'm.onnx', **options)\n",
    "import torch\ntorch.onnx.export(*arguments, dynamo=False)\n",
    "import torch.distributed._symmetric_memory as symm_mem\nhandle = symm_mem.rendezvous(buf, group)\n",
]


@pytest.mark.parametrize("code, expected", FLAGGED, ids=[f"{c}-{i}" for i, (_, c) in enumerate(FLAGGED)])
def test_flagged(lint, code, expected):
    result = lint(code, select=["ALL"])
    assert result.error is None
    assert expected in [f.code for f in result.findings]


@pytest.mark.parametrize("code", CLEAN, ids=range(len(CLEAN)))
def test_clean(lint, code):
    result = lint(code, select=["ALL"])
    assert result.error is None
    assert [(f.code, f.message) for f in result.findings] == []


def _codes(result):
    return [f.code for f in result.findings]


def test_versions_gate_the_rules(lint):
    code = ("import torch\nm = torch.jit.script(model)\ntorch.jit.fork(fn, x)\n"
            "torch.distributed._symmetric_memory.enable_symm_mem_for_group('0')\n"
            "torch.onnx.export(m, x, 'm.onnx', dynamo=True, fallback=True)\n")
    assert not {"TP210", "TP211", "TP214", "TP102"} & set(_codes(lint(code, select=["ALL"], target="2.9")))
    assert {"TP210"} <= set(_codes(lint(code, select=["ALL"], target="2.10"))) and "TP211" not in _codes(
        lint(code, select=["ALL"], target="2.10"))
    assert {"TP210", "TP211", "TP214", "TP102"} <= set(_codes(lint(code, select=["ALL"], target="2.11")))


def test_dynamo_default_only_matters_below_2_9(lint):
    code = "import torch\ntorch.onnx.export(m, (x,), 'm.onnx')\n"
    assert "TP410" in _codes(lint(code, select=["ALL"], min_torch="2.8"))
    assert "TP410" not in _codes(lint(code, select=["ALL"], min_torch="2.9"))
    assert "TP410" not in _codes(lint(code, select=["ALL"], target="2.8"))


def test_dynamic_axes_is_mentioned(lint):
    result = lint("import torch\ntorch.onnx.export(m, (x,), 'm.onnx', dynamic_axes={'x': {0: 'b'}})\n", select=["TP410"])
    assert "dynamic_axes" in result.findings[0].message


# -- fixes: edge cases -------------------------------------------------------------------------------------------

def _fixed(lint, code, **options):
    result = lint(code, fix=True, unsafe_fixes=True, select=["ALL"], **options)
    assert result.error is None
    return result.fixed_text


def test_fallback_rewrite_needs_a_whole_statement(lint):
    for code in ("import torch\nif ok: torch.onnx.export(m, x, 'm.onnx', dynamo=True, fallback=True)\n",
                 "import torch\na = 1; torch.onnx.export(m, x, 'm.onnx', dynamo=True, fallback=True)\n",
                 "import torch\nout = torch.onnx.export(m, x, dynamo=True, fallback=True)\n",
                 "import torch\ntorch.onnx.export(m, x, '''a\nb''', dynamo=True, fallback=True)\n"):
        assert _fixed(lint, code) == code


def test_fallback_rewrite_keeps_crlf_and_comments(lint):
    code = "import torch\r\n\r\ndef f():\r\n    torch.onnx.export(m, x, 'm.onnx', fallback=True)  # export\r\n"
    expected = ("import torch\r\n\r\ndef f():\r\n    try:\r\n        torch.onnx.export(m, x, 'm.onnx', dynamo=True)\r\n"
                "    except Exception:\r\n        torch.onnx.export(m, x, 'm.onnx', dynamo=False)  # export\r\n")
    assert _fixed(lint, code) == expected


def test_fallback_with_dynamo_false_is_dropped_safely(lint):
    code = "import torch\ntorch.onnx.export(m, x, 'm.onnx', dynamo=False, fallback=True)\n"
    result = lint(code, fix=True, select=["TP102"])  # safe fixes only
    assert result.fixed_text == "import torch\ntorch.onnx.export(m, x, 'm.onnx', dynamo=False)\n"


def test_positional_fix_is_safe_and_skips_what_it_cannot_map(lint):
    code = "import torch\ntorch.onnx.export(m, x, 'm.onnx', False, dynamo=False)\n"
    assert lint(code, fix=True, select=["TP103"]).fixed_text == \
        "import torch\ntorch.onnx.export(m, x, 'm.onnx', export_params=False, dynamo=False)\n"
    too_many = "import torch\ntorch.onnx.export(m, x, 'f', " + ", ".join(["None"] * 15) + ")\n"
    result = lint(too_many, fix=True, unsafe_fixes=True, select=["TP103"])
    assert _codes(result) == ["TP103"] and result.fixed_text == too_many
    starred = "import torch\ntorch.onnx.export(m, x, 'f', True, False, *rest)\n"
    result = lint(starred, fix=True, unsafe_fixes=True, select=["TP103"])
    assert _codes(result) == ["TP103"] and result.fixed_text == starred


def test_symm_mem_delete_variants(lint):
    code = ("import torch.distributed._symmetric_memory as symm_mem\n"
            "for g in groups:\n    symm_mem.enable_symm_mem_for_group(g.group_name)\n"
            "x = 1; symm_mem.enable_symm_mem_for_group('0')\n")
    fixed = _fixed(lint, code, min_torch="2.15")
    assert fixed == ("import torch.distributed._symmetric_memory as symm_mem\n"
                     "for g in groups:\n    pass\n"
                     "x = 1; symm_mem.enable_symm_mem_for_group('0')\n")
    result = lint(code, fix=True, select=["TP214"], min_torch="2.15")  # unsafe: nothing without --unsafe-fixes
    assert result.fixed_text == code


def test_symm_mem_call_is_kept_while_async_tp_needs_it(lint):
    # 2.11-2.14: Inductor's micro_pipeline_tp checks is_symm_mem_enabled_for_group, which only
    # knows the groups this call registered; deleting it turns async TP off.
    code = "import torch.distributed._symmetric_memory as symm_mem\nsymm_mem.enable_symm_mem_for_group(name)\n"
    for min_torch in ("2.4", "2.11", "2.14"):
        result = lint(code, fix=True, unsafe_fixes=True, select=["TP214"], min_torch=min_torch)
        assert [f.code for f in result.findings] == ["TP214"]
        assert result.findings[0].fix is None and result.fixed_text == code
        assert "still needed through PyTorch 2.14" in result.findings[0].message


def test_magma_keeps_quotes_and_ignores_other_backends(lint):
    assert _fixed(lint, "import torch\ntorch.backends.cuda.preferred_linalg_library(backend=r'magma')\n") == \
        "import torch\ntorch.backends.cuda.preferred_linalg_library(backend=r'cusolver')\n"
    code = "import torch\ntorch.backends.cuda.preferred_linalg_library('MAGMA')\n"  # not a valid name anyway
    assert _fixed(lint, code) == code


def test_quantize_module_and_function_share_a_name(lint):
    result = lint("import torch\nm = torch.ao.quantization.quantize.quantize_dynamic(m)\n"
                  "s = torch.ao.quantization.quantize.get_default_static_quant_module_mappings()\n", select=["TP212"])
    assert [(f.code, f.row) for f in result.findings] == [("TP212", 2)]
    assert "quantize_dynamic" in result.findings[0].message


# -- claims against real torch --------------------------------------------------------------------------------

JIT_CORE = ["script", "trace", "trace_module", "save", "load", "script_method"]
JIT_AUX = ["fork", "wait", "freeze", "optimize_for_inference", "set_fusion_strategy", "interface"]


def _warnings_of(call):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            call()
        except Exception:  # noqa: BLE001 - the warning comes before any failure
            pass
    return caught


@pytest.mark.torch
def test_torchscript_entry_points_warn(tmp_path):
    torch = pytest.importorskip("torch")

    class Model(torch.nn.Module):
        def forward(self, x):
            return x + 1

    model, x = Model(), torch.ones(2)
    scripted = torch.jit.script(model)
    path = str(tmp_path / "m.pt")
    previous_fusion = torch.jit.set_fusion_strategy([("STATIC", 2)])
    done = torch.futures.Future()
    done.set_result(x)
    calls = {
        "script": lambda: torch.jit.script(Model()),
        "trace": lambda: torch.jit.trace(model, (x,)),
        "trace_module": lambda: torch.jit.trace_module(model, {"forward": (x,)}),
        "save": lambda: torch.jit.save(scripted, path),
        "load": lambda: torch.jit.load(path),
        "script_method": lambda: torch.jit.script_method(lambda self, x: x),
        "fork": lambda: torch.jit.fork(lambda a: a, x),
        "wait": lambda: torch.jit.wait(done),
        "freeze": lambda: torch.jit.freeze(scripted.eval()),
        "optimize_for_inference": lambda: torch.jit.optimize_for_inference(scripted.eval()),
        "set_fusion_strategy": lambda: torch.jit.set_fusion_strategy(previous_fusion),
        "interface": lambda: torch.jit.interface(int),
    }
    assert sorted(calls) == sorted(JIT_CORE + JIT_AUX)
    for name, call in calls.items():
        caught = _warnings_of(call)
        own = [w for w in caught if f"torch.jit.{name}" in str(w.message) or
               (name == "trace_module" and "torch.jit.trace_method" in str(w.message))]
        assert own, f"torch.jit.{name} does not warn: {[str(w.message) for w in caught]}"
        assert all(w.category is DeprecationWarning for w in own)  # FutureWarning only from 2.14
    lite = _warnings_of(lambda: scripted._save_for_lite_interpreter(str(tmp_path / "m.ptl")))
    assert any("Lite Interpreter is deprecated" in str(w.message) for w in lite)
    assert not hasattr(torch.jit, "trace_method"), "trace_method is only the name trace_module's warning uses"


@pytest.mark.torch
def test_jit_names_resolve_to_the_modules_the_rules_list():
    torch = pytest.importorskip("torch")
    from torchpatch.rules.torchscript_aux_deprecated import _DEFINED_IN as aux
    from torchpatch.rules.torchscript_deprecated import _DEFINED_IN as core

    for leaf, module in {**core, **aux}.items():
        assert getattr(torch.jit, leaf).__module__ == module, leaf


@pytest.mark.torch
def test_quantization_functions_are_deprecated_and_aliased():
    torch = pytest.importorskip("torch")
    import torch.ao.quantization as aq
    import torch.ao.quantization.quantize_fx as aq_fx
    import torch.quantization as tq
    import torch.quantization.quantize_fx as tq_fx

    from torchpatch.rules.eager_fx_quantization_deprecated import EAGER, FX

    for module, alias, names in ((aq, tq, EAGER), (aq_fx, tq_fx, FX)):
        for name in names:
            function = getattr(module, name)
            assert getattr(alias, name) is function, f"torch.quantization.{name} is a different object"
            assert "deprecated" in getattr(function, "__deprecated__", ""), name
    caught = _warnings_of(lambda: aq.quantize_dynamic(torch.nn.Sequential(torch.nn.Linear(2, 2)), {torch.nn.Linear}))
    assert any(w.category is DeprecationWarning and "torch.ao.quantization is deprecated" in str(w.message)
               for w in caught)


@pytest.mark.torch
def test_torchao_replacement_runs_when_installed():
    torch = pytest.importorskip("torch")
    torchao_quantization = pytest.importorskip("torchao.quantization")
    model = torch.nn.Sequential(torch.nn.Linear(16, 16))
    torchao_quantization.quantize_(model, torchao_quantization.Int8DynamicActivationInt8WeightConfig())
    assert model(torch.ones(2, 16)).shape == (2, 16)


@pytest.mark.torch
def test_fsdp1_does_not_warn_and_fully_shard_is_public():
    pytest.importorskip("torch")
    import torch.distributed.fsdp as fsdp
    import torch.distributed.fsdp.fully_sharded_data_parallel as fsdp1_module

    assert not hasattr(fsdp.FullyShardedDataParallel, "__deprecated__")
    source = inspect.getsource(fsdp1_module.FullyShardedDataParallel.__init__)
    assert "deprecat" not in source.lower(), "FSDP1 now warns: update TP213's message"
    assert callable(fsdp.fully_shard) and fsdp.MixedPrecisionPolicy


@pytest.mark.torch
def test_hub_defaults_to_an_interactive_trust_check(tmp_path, monkeypatch):
    torch = pytest.importorskip("torch")
    import builtins

    import torch.hub as hub

    from torchpatch.rules.hub_without_trust_repo import TRUSTED_OWNERS

    for function in (hub.load, hub.list, hub.help):
        assert inspect.signature(function).parameters["trust_repo"].default == "check"
    assert set(hub._TRUSTED_REPO_OWNERS) == TRUSTED_OWNERS
    assert inspect.signature(hub.load).parameters["source"].default == "github"
    monkeypatch.setattr(hub, "get_dir", lambda: str(tmp_path))

    def no_stdin(prompt=""):
        raise EOFError(prompt)

    monkeypatch.setattr(builtins, "input", no_stdin)
    with pytest.raises(EOFError, match="trusted"):
        hub._check_repo_is_trusted("someone", "models", "someone_models_main", "check")
    hub._check_repo_is_trusted("pytorch", "vision", "pytorch_vision_main", "check")  # no prompt
    hub._check_repo_is_trusted("someone", "models", "someone_models_main", True)  # explicit trust: no prompt
    assert torch.hub is hub


@pytest.mark.torch
def test_enable_symm_mem_for_group_is_deprecated_not_removed():
    pytest.importorskip("torch")
    import importlib

    import torch.distributed._symmetric_memory as symm_mem

    assert "no need to call" in symm_mem.enable_symm_mem_for_group.__deprecated__
    caught = _warnings_of(lambda: symm_mem.enable_symm_mem_for_group("no-such-group"))
    assert any(w.category is FutureWarning for w in caught)
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("torch.distributed.symmetric_memory")


@pytest.mark.torch
def test_magma_and_cusolver_are_both_names_of_the_api():
    torch = pytest.importorskip("torch")
    from torch.backends.cuda import _LinalgBackends

    assert {"magma", "cusolver", "default"} <= set(_LinalgBackends)
    if not torch.cuda.is_available():
        with pytest.raises(RuntimeError, match="MAGMA"):
            torch.backends.cuda.preferred_linalg_library("magma")
    assert "backend" in inspect.signature(torch.backends.cuda.preferred_linalg_library).parameters


@pytest.mark.torch
def test_onnx_export_signature_matches_the_rules():
    torch = pytest.importorskip("torch")
    parameters = inspect.signature(torch.onnx.export).parameters
    assert "fallback" not in parameters  # removed in 2.11
    assert parameters["dynamo"].default is True  # default since 2.9
    names = list(parameters)
    assert names[:3] == ["model", "args", "f"]
    for name in names[3:]:
        assert parameters[name].kind is inspect.Parameter.KEYWORD_ONLY, name
    assert set(PARAMETERS_2_4) <= set(names), "every 2.4 positional parameter is still a keyword"
    with pytest.raises(TypeError, match="fallback"):
        torch.onnx.export(torch.nn.Linear(1, 1), (torch.ones(1),), "m.onnx", dynamo=True, fallback=True)
    with pytest.raises(TypeError, match="positional"):
        torch.onnx.export(torch.nn.Linear(1, 1), (torch.ones(1),), "m.onnx", True)


def _run_fixed(text: str, namespace: dict) -> None:
    exec(compile(text, "<fixed>", "exec"), namespace)  # noqa: S102 - our own generated test code


@pytest.mark.torch
def test_fixed_onnx_code_binds_to_the_real_signature(lint, monkeypatch):
    torch = pytest.importorskip("torch")
    signature = inspect.signature(torch.onnx.export)
    seen = []

    def fake_export(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)  # TypeError if the fixed call would not bind in 2.13
        seen.append(bound.arguments.get("dynamo", True))
        if bound.arguments.get("dynamo", True) and failing:
            raise RuntimeError("dynamo export failed")  # exercise the explicit fallback

    monkeypatch.setattr(torch.onnx, "export", fake_export)
    # (source, whether the torch.export-based exporter fails, so the written-out fallback runs)
    sources = [
        ("import torch\ntorch.onnx.export(model, (x,), 'm.onnx', dynamo=True, fallback=True)\n", True),
        ("import torch\ntorch.onnx.export(model, x, 'm.onnx', True, False, None, ['x'])\n", False),
    ]
    for source, failing in sources:
        fixed = _fixed(lint, source)
        assert fixed != source
        seen.clear()
        _run_fixed(fixed, {"model": torch.nn.Linear(1, 1), "x": torch.ones(1)})
        assert seen[-1] is (not failing), fixed


@pytest.mark.torch
def test_fixed_magma_and_symm_mem_code_runs(lint, monkeypatch):
    torch = pytest.importorskip("torch")
    from torch.backends.cuda import _LinalgBackends

    chosen = []
    monkeypatch.setattr(torch.backends.cuda, "preferred_linalg_library",
                        lambda backend=None: chosen.append(_LinalgBackends[backend]))
    fixed = _fixed(lint, "import torch\ntorch.backends.cuda.preferred_linalg_library('magma')\n")
    _run_fixed(fixed, {})
    assert chosen == [_LinalgBackends["cusolver"]]

    fixed = _fixed(lint, "import torch.distributed._symmetric_memory as symm_mem\n\ndef setup(group):\n"
                         "    symm_mem.enable_symm_mem_for_group(group.group_name)\n"
                         "    return symm_mem.is_nvshmem_available\n", min_torch="2.15")
    assert "enable_symm_mem_for_group" not in fixed
    namespace: dict = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _run_fixed(fixed, namespace)
        namespace["setup"](None)
    assert not [w for w in caught if "enable_symm_mem_for_group" in str(w.message)]


@pytest.mark.torch
def test_an_exported_program_takes_the_new_onnx_exporter_whatever_dynamo_says(tmp_path):
    """TP410 leaves `torch.onnx.export(ep, ...)` alone: with an ExportedProgram the 2.9 default flip changes nothing."""
    torch = pytest.importorskip("torch")
    import importlib.util

    if importlib.util.find_spec("onnxscript") is not None:
        pytest.skip("onnxscript is installed: the new exporter would run instead of failing on its import")
    x = torch.randn(1, 2)
    ep = torch.export.export(torch.nn.Linear(2, 2), (x,), strict=False)
    with pytest.raises(ModuleNotFoundError, match="onnxscript"):  # the torch.export-based exporter, despite dynamo=False
        torch.onnx.export(ep, (x,), str(tmp_path / "m.onnx"), dynamo=False)
