"""Attention, compiler, optimizer, profiler and storage rules: detection edge cases and claims checked against real torch."""

from __future__ import annotations

import functools
import inspect
import textwrap
import warnings

import pytest

from torchpatch.rules.base import example_code
from torchpatch.rules.create_block_mask_compile_flag import CreateBlockMaskCompileFlag
from torchpatch.rules.dynamo_cache_size_limit import RENAMES, DynamoCacheSizeLimit
from torchpatch.rules.error_on_graph_break_without_argument import ErrorOnGraphBreakWithoutArgument
from torchpatch.rules.flex_attention_return_lse import FlexAttentionReturnLse
from torchpatch.rules.lr_scheduler_verbose import VERBOSE_POSITION, LrSchedulerVerbose
from torchpatch.rules.profiler_use_cuda import ProfilerUseCuda
from torchpatch.rules.tensor_storage_method import TensorStorageMethod
from torchpatch.rules.tf32_legacy_flags import LEGACY_FLAGS
from torchpatch.rules.typed_storage import TYPED_STORAGES
from torchpatch.rules.varlen_attn_signature import VarlenAttnSignature


def _codes(result, code):
    return [f for f in result.findings if f.code == code]


def _fixed(lint, code, rule_code, **options):
    options.setdefault("select", [rule_code])
    return lint(textwrap.dedent(code), fix=True, unsafe_fixes=True, **options).fixed_text


def _safe_fixed(lint, code, rule_code, **options):
    options.setdefault("select", [rule_code])
    return lint(textwrap.dedent(code), fix=True, **options).fixed_text


@pytest.fixture
def recorded():
    """Record every warning raised inside the block (filters reset to 'always')."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield caught


def _run(code: str, namespace: dict | None = None) -> dict:
    namespace = dict(namespace or {})
    exec(compile(example_code(code), "<fixed example>", "exec"), namespace)
    return namespace


# -- TP420 error-on-graph-break-without-argument ------------------------------------------------

@pytest.mark.parametrize("code, expected", [
    ("import torch\nwith torch._dynamo.error_on_graph_break():\n    pass\n",
     "import torch\nwith torch._dynamo.error_on_graph_break(True):\n    pass\n"),
    ("from torch._dynamo.decorators import error_on_graph_break\n@error_on_graph_break()\ndef f(x):\n    return x\n",
     "from torch._dynamo.decorators import error_on_graph_break\n@error_on_graph_break(True)\ndef f(x):\n    return x\n"),
    ("import torch\ndef f():\n    import torch._dynamo as td\n    with td.error_on_graph_break(  # strict\n    ):\n        pass\n",
     "import torch\ndef f():\n    import torch._dynamo as td\n    with td.error_on_graph_break(True  # strict\n    ):\n        pass\n"),
], ids=["attribute", "from-import-decorator", "comment-inside"])
def test_error_on_graph_break_fix(lint, code, expected):
    assert _safe_fixed(lint, code, "TP420") == expected


@pytest.mark.parametrize("code", [
    "import torch\nwith torch._dynamo.error_on_graph_break(True):\n    pass\n",
    "import torch\ndef f(torch):\n    with torch._dynamo.error_on_graph_break():\n        pass\n",
    "import torch\nfrom mylib import error_on_graph_break\nwith error_on_graph_break():\n    pass\n",
], ids=["has-argument", "shadowed-parameter", "other-library"])
def test_error_on_graph_break_look_alikes(lint, code):
    assert _codes(lint(code, select=["TP420"]), "TP420") == []


def test_error_on_graph_break_not_reported_before_2_9(lint):
    code = "import torch\nwith torch._dynamo.error_on_graph_break():\n    pass\n"
    assert _codes(lint(code, select=["TP420"], target="2.8"), "TP420") == []


@pytest.mark.torch
def test_error_on_graph_break_claims():
    torch = pytest.importorskip("torch")
    import torch._dynamo

    parameter = inspect.signature(torch._dynamo.error_on_graph_break).parameters["error_on_graph_break"]
    assert parameter.default is inspect.Parameter.empty  # required
    with pytest.raises(TypeError, match="missing 1 required positional argument"):
        exec(example_code(ErrorOnGraphBreakWithoutArgument.INVALID[0].code), {"f": lambda x: x, "x": 1})
    namespace = _run(ErrorOnGraphBreakWithoutArgument.INVALID[0].fixed, {"f": lambda x: x + 1, "x": 1})
    assert namespace["y"] == 2
    namespace = _run(ErrorOnGraphBreakWithoutArgument.INVALID[1].fixed)
    assert namespace["f"](3) == 3


# -- TP220 create-block-mask-compile-flag -------------------------------------------------------

def test_create_block_mask_fix_is_unsafe_below_2_6(lint):
    code = ("from torch.nn.attention.flex_attention import create_block_mask\n"
            "m = create_block_mask(causal, 1, 1, 128, 128, device=\"cpu\", _compile=True)\n")
    assert _safe_fixed(lint, code, "TP220", min_torch="2.5") == code
    result = lint(code, select=["TP220"], min_torch="2.5")
    assert "needs PyTorch >= 2.6" in _codes(result, "TP220")[0].fix.message
    assert "torch.compile(create_block_mask)" in _safe_fixed(lint, code, "TP220", min_torch="2.6")


def test_create_block_mask_uses_existing_torch_alias_and_multiline(lint):
    code = ("import torch as T\nfrom torch.nn.attention.flex_attention import create_block_mask as cbm\n"
            "m = cbm(\n    causal,\n    None,\n    None,\n    128,\n    128,\n    device=\"cpu\",\n    _compile=True,\n)\n")
    expected = ("import torch as T\nfrom torch.nn.attention.flex_attention import create_block_mask as cbm\n"
                "m = T.compile(cbm)(\n    causal,\n    None,\n    None,\n    128,\n    128,\n    device=\"cpu\",\n)\n")
    assert _fixed(lint, code, "TP220") == expected


def test_create_block_mask_star_kwargs_not_fixed(lint):
    code = ("from torch.nn.attention.flex_attention import create_block_mask\n"
            "m = create_block_mask(causal, *shape, device=\"cpu\", _compile=True)\n")
    result = lint(code, select=["TP220"])
    assert [f.fix for f in _codes(result, "TP220")] == [None]


@pytest.mark.torch
def test_create_block_mask_claims(monkeypatch):
    torch = pytest.importorskip("torch")
    from torch.nn.attention import flex_attention as fa

    def causal(b, h, q_idx, kv_idx):
        return q_idx >= kv_idx

    parameters = list(inspect.signature(fa.create_block_mask).parameters)
    assert parameters.index("_compile") == 7  # the positional slot the rule reads
    # The flag warns and only delegates to torch.compile(create_block_mask): record what it compiles.
    compiled = []
    real_compile = torch.compile

    def fake_compile(fn, *args, **kwargs):
        compiled.append(fn)
        return fn

    monkeypatch.setattr(torch, "compile", fake_compile)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        old = fa.create_block_mask(causal, None, None, 128, 128, device="cpu", _compile=True)
    assert any(issubclass(w.category, DeprecationWarning) and "_compile flag on create_block_mask" in str(w.message)
               for w in caught)
    assert compiled == [fa.create_block_mask]
    # The fixed example runs under a real torch.compile (Dynamo with the eager backend: an Inductor
    # build of the mask takes minutes on a loaded 2-core CPU machine) and no longer warns.
    monkeypatch.setattr(torch, "compile", functools.partial(real_compile, backend="eager"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        namespace = _run(CreateBlockMaskCompileFlag.INVALID[0].fixed, {"causal": causal})
    assert not [w for w in caught if "_compile flag" in str(w.message)]
    assert torch.equal(namespace["mask"].to_dense(), old.to_dense())


# -- TP221 flex-attention-return-lse ------------------------------------------------------------

def test_flex_return_lse_fix_picks_a_free_name_and_crlf(lint):
    code = ("from torch.nn.attention.flex_attention import flex_attention\r\n"
            "aux = 1\r\nif True:\r\n    out, lse = flex_attention(q, k, v, return_lse=True)\r\n")
    expected = ("from torch.nn.attention.flex_attention import flex_attention\r\n"
                "from torch.nn.attention.flex_attention import AuxRequest\r\n"
                "aux = 1\r\nif True:\r\n    out, flex_aux = flex_attention(q, k, v, return_aux=AuxRequest(lse=True))\r\n"
                "    lse = flex_aux.lse\r\n")
    assert _fixed(lint, code, "TP221") == expected


@pytest.mark.parametrize("code", [
    "from torch.nn.attention.flex_attention import flex_attention\nif x: out, lse = flex_attention(q, k, v, return_lse=True)\n",
    "from torch.nn.attention.flex_attention import flex_attention\nout, lse = flex_attention(q, k, v, return_lse=True); y = 1\n",
    "from torch.nn.attention.flex_attention import flex_attention\nreturn_value = [flex_attention(q, k, v, return_lse=True)]\n",
    "from torch.nn.attention.flex_attention import flex_attention\nout, lse = flex_attention(q, k, v, return_lse=flag)\n",
    "from torch.nn.attention.flex_attention import flex_attention\n(out, lse), z = flex_attention(q, k, v, return_lse=True), 1\n",
], ids=["one-line-if", "semicolon", "not-assigned", "not-literal", "nested-target"])
def test_flex_return_lse_reported_without_fix(lint, code):
    findings = _codes(lint(code, select=["TP221"]), "TP221")
    assert len(findings) == 1 and findings[0].fix is None


def test_flex_return_lse_version_gate_and_note(lint):
    code = ("from torch.nn.attention.flex_attention import flex_attention\n"
            "out, lse = flex_attention(q, k, v, return_lse=True)\n")
    assert _codes(lint(code, select=["TP221"], target="2.8"), "TP221") == []
    finding = _codes(lint(code, select=["TP221"], min_torch="2.8"), "TP221")[0]
    assert "needs PyTorch >= 2.9" in finding.fix.message and "2.9" in finding.message


@pytest.mark.torch
def test_flex_return_lse_claims():
    torch = pytest.importorskip("torch")
    from torch.nn.attention import flex_attention as fa

    assert inspect.signature(fa.AuxRequest).parameters["lse"].default is False
    query = torch.randn(1, 1, 16, 8)
    namespace = {"q": query, "k": query, "v": query, "mask": None}
    getattr(fa, "_WARNINGS_SHOWN", set()).discard("deprecated_return_lse")  # the warning is once per process
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        old = _run(FlexAttentionReturnLse.INVALID[0].code, namespace)
    assert any(issubclass(w.category, FutureWarning) and "return_lse is deprecated" in str(w.message) for w in caught)
    getattr(fa, "_WARNINGS_SHOWN", set()).discard("deprecated_return_lse")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        new = _run(FlexAttentionReturnLse.INVALID[0].fixed, namespace)
    assert not [w for w in caught if "return_lse" in str(w.message)]
    assert torch.allclose(new["lse"], old["lse"]) and torch.allclose(new["out"], old["out"])
    # Both at once is refused.
    with pytest.raises(ValueError, match="Cannot specify both"):
        fa.flex_attention(query, query, query, return_lse=True, return_aux=fa.AuxRequest(lse=True))


# -- TP110 varlen-attn-signature ----------------------------------------------------------------

VARLEN = "from torch.nn.attention.varlen import varlen_attn\n"


@pytest.mark.parametrize("call, min_torch, safe_result", [
    ("varlen_attn(q, k, v, cu, cu, m, m, is_causal=True)", "2.10", None),
    ("varlen_attn(q, k, v, cu, cu, m, m, is_causal=True)", "2.11", "varlen_attn(q, k, v, cu, cu, m, m, window_size=(-1, 0))"),
    ("varlen_attn(q, k, v, cu, cu, m, m, is_causal=False)", "2.10", "varlen_attn(q, k, v, cu, cu, m, m)"),
    ("varlen_attn(q, k, v, cu, cu, m, m, False, aux)", "2.10", "varlen_attn(q, k, v, cu, cu, m, m, return_aux=aux)"),
    ("varlen_attn(q, k, v, cu, cu, m, m, True, aux)", "2.10", None),
], ids=["causal-min-2.10", "causal-min-2.11", "not-causal", "positional-aux", "positional-causal-min-2.10"])
def test_varlen_fix_safety(lint, call, min_torch, safe_result):
    code = f"{VARLEN}out = {call}\n"
    expected = code if safe_result is None else f"{VARLEN}out = {safe_result}\n"
    assert _safe_fixed(lint, code, "TP110", min_torch=min_torch) == expected


@pytest.mark.parametrize("call", [
    "varlen_attn(q, k, v, cu, cu, m, m, is_causal=flag)",
    "varlen_attn(q, k, v, cu, cu, m, m, flag)",
    "varlen_attn(q, k, v, cu, cu, m, m, True, aux, 1.0)",
    "varlen_attn(q, k, v, cu, cu, m, m, True, is_causal=True)",
    "varlen_attn(*args, is_causal=True)",
    "varlen_attn(q, k, v, cu, cu, m, m, is_causal=True, window_size=(-1, 0))",
], ids=["non-literal", "non-literal-positional", "too-many", "twice", "star-args", "window-given"])
def test_varlen_reported_without_fix(lint, call):
    findings = _codes(lint(f"{VARLEN}out = {call}\n", select=["TP110"]), "TP110")
    assert len(findings) == 1 and findings[0].fix is None


@pytest.mark.parametrize("code", [
    VARLEN + "out = varlen_attn(*args)\n",
    VARLEN + "out = varlen_attn(q, k, v, cu, cu, m, m, **options)\n",
    "import torch\nfrom torch.nn.attention.varlen import varlen_attn\ndef f(varlen_attn):\n    return varlen_attn(q, k, v, cu, cu, m, m, True)\n",
], ids=["star-args", "double-star", "shadowed-parameter"])
def test_varlen_not_reported(lint, code):
    assert _codes(lint(code, select=["TP110"]), "TP110") == []


@pytest.mark.torch
def test_varlen_claims():
    """2.13: is_causal and an 8th positional raise TypeError; the fixed calls bind.

    The kernel needs CUDA (on CPU it raises NotImplementedError for aten::_flash_attention_forward
    after binding), so the fixed examples are checked by binding their arguments, and by running
    them up to the kernel.
    """
    torch = pytest.importorskip("torch")
    from torch.nn.attention import varlen

    parameters = inspect.signature(varlen.varlen_attn).parameters
    names = list(parameters)
    assert names[:7] == ["query", "key", "value", "cu_seq_q", "cu_seq_k", "max_q", "max_k"]
    assert "is_causal" not in parameters
    assert all(parameters[name].kind is inspect.Parameter.KEYWORD_ONLY for name in names[7:])
    assert parameters["window_size"].default == (-1, -1)
    assert "return_aux" in parameters
    query = torch.randn(4, 1, 8)
    cu = torch.tensor([0, 4], dtype=torch.int32)
    namespace = {"q": query, "k": query, "v": query, "cu_q": cu, "cu_k": cu, "cu": cu, "max_q": 4, "max_k": 4,
                 "m": 4, "varlen": varlen, "causal": True}
    for example in VarlenAttnSignature.INVALID:
        with pytest.raises(TypeError, match="is_causal|positional argument"):
            _run(example.code, namespace)
        if example.fixed is None:
            continue
        bound = []
        real = varlen.varlen_attn
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(varlen, "varlen_attn", lambda *a, **kw: bound.append(inspect.signature(real).bind(*a, **kw)))
            _run(example.fixed.replace("out, lse = ", "out = "), namespace)
        assert len(bound) == 1
        expected_window = (-1, 0) if "window_size" in example.fixed else (-1, -1)
        assert bound[0].arguments.get("window_size", (-1, -1)) == expected_window
        try:  # up to the kernel: binding passes, then CPU has no flash kernel
            _run(example.fixed.replace("out, lse = ", "out = "), namespace)
        except NotImplementedError:
            pass



# -- TP111 lr-scheduler-verbose -----------------------------------------------------------------

@pytest.mark.parametrize("code, expected", [
    ("import torch.optim.lr_scheduler\ns = torch.optim.lr_scheduler.CyclicLR(opt, 0.1, 1.0, verbose=True)\n",
     "import torch.optim.lr_scheduler\ns = torch.optim.lr_scheduler.CyclicLR(opt, 0.1, 1.0)\n"),
    ("import torch\ndef build(opt):\n    from torch.optim.lr_scheduler import LambdaLR\n    return LambdaLR(opt, f, -1, False)\n",
     "import torch\ndef build(opt):\n    from torch.optim.lr_scheduler import LambdaLR\n    return LambdaLR(opt, f, -1)\n"),
    ("import torch\ns = torch.optim.lr_scheduler._LRScheduler(opt, verbose=True, last_epoch=-1)\n",
     "import torch\ns = torch.optim.lr_scheduler._LRScheduler(opt, last_epoch=-1)\n"),
], ids=["module-import", "function-local-positional", "private-base-keyword-first"])
def test_lr_verbose_fix(lint, code, expected):
    # Safe at min-torch 2.7 (the argument raised there); below it only ``verbose=False`` is safe to drop,
    # since a true one printed on 2.2-2.6 (test_fix_safety.test_dropping_a_true_verbose_is_unsafe_below_2_7).
    assert _safe_fixed(lint, code, "TP111", min_torch="2.7") == expected
    if "True" in code:
        assert _safe_fixed(lint, code, "TP111") == textwrap.dedent(code)


def test_lr_verbose_positional_not_last_is_not_fixed(lint):
    code = "import torch\ns = torch.optim.lr_scheduler.StepLR(opt, 1, 0.1, -1, True, extra)\n"
    findings = _codes(lint(code, select=["TP111"]), "TP111")
    assert len(findings) == 1 and findings[0].fix is None


@pytest.mark.parametrize("code", [
    "import torch\ns = torch.optim.lr_scheduler.StepLR(opt, **kwargs)\n",
    "import torch\ns = torch.optim.lr_scheduler.StepLR(*args)\n",
    "import torch\nclass MySched(torch.optim.lr_scheduler.LRScheduler):\n    def __init__(self, opt, verbose=False):\n        self.verbose = verbose\n",
], ids=["double-star", "star", "subclass-own-parameter"])
def test_lr_verbose_not_reported(lint, code):
    assert _codes(lint(code, select=["TP111"]), "TP111") == []


def test_lr_verbose_message_names_versions(lint):
    code = "import torch\ns = torch.optim.lr_scheduler.StepLR(opt, 1, verbose=True)\n"
    findings = _codes(lint(code, select=["TP111"], target="2.6"), "TP111")
    assert findings and "deprecated since PyTorch 2.2" in findings[0].message
    assert "removed in 2.7" in _codes(lint(code, select=["TP111"]), "TP111")[0].message


@pytest.mark.torch
def test_lr_verbose_claims():
    torch = pytest.importorskip("torch")
    from torch.optim import lr_scheduler

    # Every scheduler of 2.13 lost the argument (the table lists the 2.2-2.6 ones).
    schedulers = {name: obj for name, obj in vars(lr_scheduler).items()
                  if inspect.isclass(obj) and obj.__module__ == lr_scheduler.__name__
                  and (issubclass(obj, lr_scheduler.LRScheduler) or name == "ReduceLROnPlateau")}
    assert set(VERBOSE_POSITION) <= set(schedulers)
    for name, cls in schedulers.items():
        assert "verbose" not in inspect.signature(cls.__init__).parameters, name
    model = torch.nn.Linear(2, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    with pytest.raises(TypeError, match="verbose"):
        lr_scheduler.StepLR(optimizer, 1, verbose=True)
    with pytest.raises(TypeError):
        lr_scheduler.ExponentialLR(optimizer, 0.9, -1, True)
    for example in LrSchedulerVerbose.INVALID:
        namespace = {"optimizer": optimizer, "args": type("Args", (), {"verbose": True})}
        with pytest.raises(TypeError):
            _run(example.code, namespace)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            namespace = _run(example.fixed, namespace)
        assert isinstance(namespace["scheduler"], (lr_scheduler.LRScheduler, lr_scheduler.ReduceLROnPlateau))
        assert not [w for w in caught if "verbose" in str(w.message)]



# -- TP112 profiler-use-cuda --------------------------------------------------------------------

@pytest.mark.parametrize("code, expected", [
    ("import torch as th\nwith th.profiler.profile(use_cuda=True):\n    pass\n",
     "import torch as th\nfrom torch.profiler import ProfilerActivity\n"
     "with th.profiler.profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]):\n    pass\n"),
    ("import torch.profiler as tp\nwith tp.profile(use_cuda=True):\n    pass\n",
     "import torch.profiler as tp\nwith tp.profile(activities=[tp.ProfilerActivity.CPU, tp.ProfilerActivity.CUDA]):\n    pass\n"),
    ("from torch.autograd.profiler import profile as autoprof\nwith autoprof(enabled=True, use_cuda=True):\n    pass\n",
     "from torch.autograd.profiler import profile as autoprof\nwith autoprof(enabled=True, use_device=\"cuda\"):\n    pass\n"),
], ids=["torch-alias", "module-alias", "autograd-from-import"])
def test_profiler_use_cuda_fix(lint, code, expected):
    assert _safe_fixed(lint, code, "TP112") == expected


@pytest.mark.parametrize("code", [
    "import torch\nwith torch.autograd.profiler.profile(use_cuda=True, use_device=\"xpu\"):\n    pass\n",
    "import torch\nwith torch.profiler.profile(use_cuda=True, **options):\n    pass\n",
    "import torch\nwith torch.profiler.profile(use_cuda=flag):\n    pass\n",
], ids=["both-device-arguments", "double-star", "non-literal"])
def test_profiler_use_cuda_reported_without_fix(lint, code):
    findings = _codes(lint(code, select=["TP112"]), "TP112")
    assert len(findings) == 1 and findings[0].fix is None


def test_profiler_use_cuda_message(lint):
    code = "import torch\nwith torch.profiler.profile(use_cuda=True):\n    pass\n"
    message = _codes(lint(code, select=["TP112"]), "TP112")[0].message
    assert "1.8.1" in message and "2.14" in message


@pytest.mark.torch
def test_profiler_use_cuda_claims():
    torch = pytest.importorskip("torch")
    from torch.profiler import ProfilerActivity

    # 2.13 still accepts both, with a FutureWarning.
    assert "use_cuda" in inspect.signature(torch.profiler.profile.__init__).parameters
    assert "use_cuda" in inspect.signature(torch.autograd.profiler.profile.__init__).parameters
    assert "use_device" in inspect.signature(torch.autograd.profiler.profile.__init__).parameters
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        profiler = torch.profiler.profile(activities=[ProfilerActivity.CPU], use_cuda=True)
    assert any(issubclass(w.category, FutureWarning) and "`use_cuda` is deprecated" in str(w.message) for w in caught)
    assert profiler.activities == {ProfilerActivity.CPU}  # the flag never reached the profiler
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        autograd_profiler = torch.autograd.profiler.profile(use_cuda=True)
    assert any(issubclass(w.category, FutureWarning) and "use_cuda" in str(w.message) for w in caught)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "CUDA is not available, disabling CUDA profiling" on CPU builds
        replacement = torch.autograd.profiler.profile(use_device="cuda")
    assert autograd_profiler.use_device == replacement.use_device  # "cuda", or None without CUDA
    # The fixed examples run on this CPU build without the use_cuda warning.
    for example in ProfilerUseCuda.INVALID:
        if example.fixed is None:
            continue
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            _run(example.fixed, {"step": lambda: torch.ones(2) + 1})
        assert not [w for w in caught if "use_cuda" in str(w.message)], example.fixed



# -- TP222 dynamo-cache-size-limit --------------------------------------------------------------

@pytest.mark.parametrize("code, expected", [
    ("import torch\ndef setup():\n    torch._dynamo.config.cache_size_limit = 64\n",
     "import torch\ndef setup():\n    torch._dynamo.config.recompile_limit = 64\n"),
    ("import torch._dynamo.config as cfg\ncfg.fail_on_cache_limit_hit = True\n",
     "import torch._dynamo.config as cfg\ncfg.fail_on_recompile_limit_hit = True\n"),
    ("import torch\nlimit = torch._dynamo.config.accumulated_cache_size_limit\n",
     "import torch\nlimit = torch._dynamo.config.accumulated_recompile_limit\n"),
    ("import torch\nwith torch._dynamo.config.patch('accumulated_cache_size_limit', 9):\n    pass\n",
     "import torch\nwith torch._dynamo.config.patch('accumulated_recompile_limit', 9):\n    pass\n"),
], ids=["assignment-in-function", "module-alias", "read", "patch-single-quotes"])
def test_cache_size_limit_fix(lint, code, expected):
    assert _safe_fixed(lint, code, "TP222", min_torch="2.7") == expected
    assert _safe_fixed(lint, code, "TP222", min_torch="2.6") == code  # the new names need 2.7


@pytest.mark.parametrize("code", [
    "import torch\ntorch._dynamo.config.recompile_limit = 8\n",
    "import torch\ndef f(torch):\n    torch._dynamo.config.cache_size_limit = 8\n",
    "import torch\nconfig = load()\nconfig.cache_size_limit = 8\n",
    "import torch\nwith torch._dynamo.config.patch(verbose=True):\n    pass\n",
], ids=["new-name", "shadowed-parameter", "other-config", "other-setting"])
def test_cache_size_limit_not_reported(lint, code):
    assert _codes(lint(code, select=["TP222"]), "TP222") == []


def test_cache_size_limit_import_reported_without_fix(lint):
    code = "from torch._dynamo.config import cache_size_limit\n"
    findings = _codes(lint(code, select=["TP222"]), "TP222")
    assert len(findings) == 1 and findings[0].fix is None


def test_cache_size_limit_not_reported_for_target_2_6(lint):
    code = "import torch\ntorch._dynamo.config.cache_size_limit = 8\n"
    assert _codes(lint(code, select=["TP222"], target="2.6"), "TP222") == []


@pytest.mark.torch
def test_cache_size_limit_claims():
    pytest.importorskip("torch")
    import torch._dynamo.config as config

    saved = {new: getattr(config, new) for new in RENAMES.values()}
    try:
        for number, (old, new) in enumerate(RENAMES.items()):
            value = getattr(config, new)
            flipped = (not value) if isinstance(value, bool) else value + 17 + number
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                setattr(config, old, flipped)
            assert getattr(config, new) == flipped and getattr(config, old) == flipped  # an alias
            assert not caught  # silent
        with config.patch(cache_size_limit=3):
            assert config.recompile_limit == 3
    finally:
        for new, value in saved.items():
            setattr(config, new, value)
    for example in DynamoCacheSizeLimit.INVALID:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            namespace = _run(example.fixed, {"run": lambda: None})
            if "test" in namespace:
                namespace["test"]()
        assert not caught
        for new, value in saved.items():
            setattr(config, new, value)



# -- TP223 typed-storage, TP224 tensor-storage-method (opt-in) ----------------------------------

def test_typed_storage_reported_once_per_use_not_at_import(lint):
    code = "from torch import FloatStorage, UntypedStorage\na = FloatStorage(2)\nb = FloatStorage(3)\nc = UntypedStorage(4)\n"
    findings = _codes(lint(code, select=["TP223"]), "TP223")
    assert [f.row for f in findings] == [2, 3]
    assert all(f.fix is None for f in findings)


def test_tensor_storage_method_is_default_on_known_tensors_and_opt_in_elsewhere(lint):
    code = "import torch\nptr = x.storage().data_ptr()\n"
    assert _codes(lint(code), "TP224") == [] and _codes(lint(code), "TP906") == []  # default selection
    assert len(_codes(lint(code, select=["TP906"]), "TP906")) == 1
    known = "import torch\nx = torch.zeros(2)\nptr = x.storage().data_ptr()\n"
    assert len(_codes(lint(known), "TP224")) == 1 and _codes(lint(known, select=["TP906"]), "TP906") == []


@pytest.mark.parametrize("code", [
    "import torch\nx = self.storage()\n",
    "import torch\nx = cls.storage()\n",
    "import torch\nx = obj.storage(\"name\")\n",
    "import torch\nx = obj.storage(key=1)\n",
    "import torch\nimport boto3\nx = boto3.storage()\n",
    "import torch\nx = \"abc\".storage()\n",
    "import django\nx = obj.storage()\n",
    "from google.cloud import storage\nclient = storage.Client()\nx = client.storage()\n",
], ids=["self", "cls", "with-argument", "with-keyword", "other-library-module", "literal", "no-torch", "gcs"])
def test_tensor_storage_method_look_alikes(lint, code):
    assert _codes(lint(code, select=["TP224", "TP906"]), "TP224") == []
    assert _codes(lint(code, select=["TP224", "TP906"]), "TP906") == []


@pytest.mark.parametrize("code, fixed", [
    ("import torch\nptr = t.storage().data_ptr()\n", "import torch\nptr = t.untyped_storage().data_ptr()\n"),
    ("import torch\nn = t.storage().nbytes()\n", "import torch\nn = t.untyped_storage().nbytes()\n"),
    ("import torch\nshared = t.storage().is_shared()\n", "import torch\nshared = t.untyped_storage().is_shared()\n"),
    ("import torch\nsize = t.storage().size()\n", None),
    ("import torch\nitem = t.storage()[0]\n", None),
    ("import torch\nstore = t.storage()\nptr = store.data_ptr()\n", None),
    ("import torch\nptr = t.storage().data_ptr(1)\n", None),
], ids=["data_ptr", "nbytes", "is_shared", "size", "index", "kept", "odd-data_ptr"])
def test_tensor_storage_method_fix_only_when_identical(lint, code, fixed):
    findings = _codes(lint(code, select=["TP906"]), "TP906")  # `t` of unknown type: the opt-in twin of TP224
    assert len(findings) == 1
    if fixed is None:
        assert findings[0].fix is None
    else:
        assert _safe_fixed(lint, code, "TP906") == fixed


@pytest.mark.torch
def test_typed_storage_claims():
    torch = pytest.importorskip("torch")
    import torch.storage

    for qualname in TYPED_STORAGES:
        obj = torch
        for part in qualname.split(".")[1:]:
            obj = getattr(obj, part)
        assert issubclass(obj, torch.storage.TypedStorage), qualname
    assert not issubclass(torch.UntypedStorage, torch.storage.TypedStorage)
    previous = torch.storage._get_always_warn_typed_storage_removal()
    torch.storage._set_always_warn_typed_storage_removal(True)  # it warns once per process otherwise
    try:
        assert not hasattr(torch.storage, "_TypedStorage") and not hasattr(torch, "_TypedStorage")  # TP223 says so
        for make in (lambda: torch.FloatStorage(3), lambda: torch.storage.TypedStorage(3), lambda: torch.ones(3).storage()):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                make()
            assert any(issubclass(w.category, UserWarning) and "TypedStorage is deprecated" in str(w.message)
                       for w in caught)
        tensor = torch.ones(3, dtype=torch.float32)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            typed = tensor.storage()
            # Why there is no blanket fix: elements vs bytes.
            assert (typed.size(), tensor.untyped_storage().size()) == (3, 12)
            assert typed.data_ptr() == tensor.untyped_storage().data_ptr()
            assert typed.nbytes() == tensor.untyped_storage().nbytes()
            assert typed.device == tensor.untyped_storage().device
            assert typed.is_shared() == tensor.untyped_storage().is_shared()
            assert typed.is_pinned() == tensor.untyped_storage().is_pinned()
            assert typed.is_cuda == tensor.untyped_storage().is_cuda
        # The fixed examples run without the warning and give what the old code gave.
        for example in TensorStorageMethod.INVALID:
            if example.fixed is None:
                continue
            names = {"a": tensor, "b": tensor[1:], "tensor": tensor}
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                old = _run(example.code, names)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                new = _run(example.fixed, names)
            assert not [w for w in caught if "TypedStorage" in str(w.message)]
            assert {k: v for k, v in old.items() if k == "same"} == {k: v for k, v in new.items() if k == "same"}
    finally:
        torch.storage._set_always_warn_typed_storage_removal(previous)



# -- TP421 tf32-legacy-flags (opt-in) -----------------------------------------------------------

def test_tf32_flags_opt_in_and_aliases(lint):
    code = "import torch as th\nth.backends.cuda.matmul.allow_tf32 = True\n"
    assert _codes(lint(code), "TP421") == []
    findings = _codes(lint(code, select=["TP421"]), "TP421")
    assert len(findings) == 1 and findings[0].fix is None and "2.9" in findings[0].message
    code = "import torch.backends.cudnn as cudnn\ncudnn.allow_tf32 = True\nflag = cudnn.allow_tf32\n"
    assert [f.row for f in _codes(lint(code, select=["TP421"]), "TP421")] == [2]  # reading (saving) it sets nothing


@pytest.mark.torch
def test_tf32_flags_claims():
    torch = pytest.importorskip("torch")

    for legacy, new in LEGACY_FLAGS.items():
        for qualname in (legacy, new):
            owner, _, attribute = qualname.rpartition(".")
            obj = torch
            for part in owner.split(".")[1:]:
                obj = getattr(obj, part)
            getattr(obj, attribute)  # both APIs exist in 2.13
    conv = torch.backends.cudnn.conv
    saved = (conv.fp32_precision, torch.backends.cudnn.rnn.fp32_precision, torch.backends.cudnn.allow_tf32)
    try:
        conv.fp32_precision = "ieee"  # new API for conv only; rnn keeps the legacy state
        with pytest.raises(RuntimeError, match="mix of the legacy and new APIs"):
            torch.backends.cudnn.allow_tf32
    finally:
        conv.fp32_precision, torch.backends.cudnn.rnn.fp32_precision = saved[0], saved[1]
        torch.backends.cudnn.allow_tf32 = saved[2]
