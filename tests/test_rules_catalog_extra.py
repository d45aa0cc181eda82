"""Catalog rules TP120, TP230-TP233 (and the later extra rows): aliases, look-alikes, fix edge cases, and each
claim checked against real torch (CI installs 2.13.0 CPU)."""

from __future__ import annotations

import inspect
import warnings

import pytest

# -- detection: aliases, from-imports, look-alikes ------------------------------------------------------

FLAGGED = [
    # TP230 ddp-broadcast-buffers
    ("from torch.nn.parallel.distributed import DistributedDataParallel as D\nm = D(m, broadcast_buffers=False)\n", "TP230"),
    ("import torch.nn as nn\nm = nn.parallel.DistributedDataParallel(m, broadcast_buffers=flag)\n", "TP230"),
    ("from torch.nn import parallel\nm = parallel.DistributedDataParallel(m, None, None, 0, True)\n", "TP230"),
    # TP231 dataloader-pin-memory-device
    ("from torch.utils.data.dataloader import DataLoader as DL\nl = DL(ds, pin_memory=True, pin_memory_device='xpu')\n",
     "TP231"),
    ("import torch\nmake = torch.utils.data.DataLoader\nl = make(ds, pin_memory_device=device)\n", "TP231"),
    # TP232 torch-has-backend-attrs
    ("import torch\nprint(torch.has_cudnn)\n", "TP232"),
    ("from torch import has_mps as mps_ok\nif mps_ok:\n    pass\n", "TP232"),
    ("def f():\n    import torch as t\n    return t.has_mkldnn\n", "TP232"),
    # TP120 cpp-extension-paths-cuda
    ("import torch.utils.cpp_extension\np = torch.utils.cpp_extension.include_paths(cuda=True)\n", "TP120"),
    ("from torch.utils.cpp_extension import library_paths as lp\np = lp(not cpu_only)\n", "TP120"),
    # TP233 check-is-size
    ("import torch\nfn = torch._check_is_size\nfn(n)\n", "TP233"),
    ("def f(n):\n    from torch import _check_is_size as cis\n    cis(n, max=8)\n", "TP233"),
    # TP310 object-collectives-pickle
    ("import torch.distributed.distributed_c10d as c10d\nc10d.recv_object_list(objs, src=1)\n", "TP310"),
    ("from torch import distributed as dist\ndist.send_object_list(objs, 1, None, None, None, False)\n", "TP310"),
    ("from torch.distributed import gather_object as g\ng(obj, out if rank == 0 else None, dst=0)\n", "TP310"),
    # TP431 torch-load-safetensors-path
    ("import torch\nsd = torch.load(f='w.safetensors', weights_only=True)\n", "TP431"),
    ("from torch.serialization import load\nsd = load(base + '.safetensors', weights_only=True)\n", "TP431"),
    # TP432 block-mask-device-default
    ("import torch.nn.attention.flex_attention as F\nm = F.create_block_mask(fn, B=1, H=1, Q_LEN=8, KV_LEN=8)\n", "TP432"),
    ("from torch.nn.attention.flex_attention import create_mask as cm\nm = cm(fn, 1, 1, 8, 8)\n", "TP432"),
    # TP121 compile-shapes-spec
    ("from torch import compile as tc\nf = tc(model, shapes_spec=s)\n", "TP121"),
    ("import torch\nself.encoder.compile(mode='max-autotune', shapes_spec=s)\n", "TP121"),
    # TP433 keyword-newer-than-min-torch
    ("from torch.nn.modules.batchnorm import SyncBatchNorm as SBN\nn = SBN(64, bias=False)\n", "TP433"),
    ("import torch\nn = torch.nn.LazyInstanceNorm2d(affine=True, bias=False)\n", "TP433"),
    ("from torch.nn import functional as F\nl = F.huber_loss(a, b, delta=2.0, weight=w)\n", "TP433"),
    ("import torch\nfor m in torch.nn.Module.modules(model, remove_duplicate=False):\n    pass\n", "TP433"),
    ("from torch.optim.adam import Adam\nopt = Adam(ps, decoupled_weight_decay=flag)\n", "TP433"),
    # TP234 optimizer-param-set
    ("from torch.optim.sgd import SGD\nopt = SGD({w}, lr=0.1)\n", "TP234"),
    ("import torch.optim as optim\nopt = optim.Adafactor(set(params))\n", "TP234"),
]

CLEAN = [
    "import torch\nm = torch.nn.parallel.DistributedDataParallel(m, device_ids=[0], find_unused_parameters=True)\n",
    "import torch\nm = torch.nn.parallel.DistributedDataParallel(m, None, None, 0)\n",
    "import torch\nm = torch.nn.parallel.DistributedDataParallel(*args, **kwargs)\n",
    "import torch\nm = torch.nn.DataParallel(m)\n",
    "import torch\nl = torch.utils.data.DataLoader(ds, 4, True, None, None, 2, None, True)\n",
    "import torch\nl = torch.utils.data.DataLoader(ds, num_workers=2, pin_memory=True, pin_memory_device=\"\")\n",
    "import torch\nok = torch.cuda.is_available() and torch.backends.cudnn.is_available()\n",
    "import torch\nok = torch.has_openmp or torch.has_lapack\n",
    "import torch\ntorch.has_cuda = True\n",  # assigned, not read
    "import torch\nclass C:\n    has_cuda = False\nprint(C.has_cuda)\n",
    "from torch.utils.cpp_extension import include_paths\np = include_paths('cuda')\n",
    "from torch.utils.cpp_extension import include_paths\np = include_paths(device)\n",  # unknown: a string?
    "import torch\ntorch._check(n >= 0)\ntorch._check_is_size_like = 1\n",
    "import torch.distributed as dist\ndist.all_gather_object(out, obj, weights_only=False)\n",
    "import torch.distributed as dist\ndist.send_object_list(objs, 1, None, None, None, False, True)\n",
    "import torch.distributed as dist\ndist.broadcast_object_list(*arguments)\n",
    "import torch.distributed as dist\ndist.all_gather(tensors, t)\n",
    "import torch\nsd = torch.load(open('w.safetensors', 'rb'), weights_only=True)\n",  # a file object: no dispatch
    "import torch\nsd = torch.load(name, weights_only=True)\n",
    "from torch.nn.attention.flex_attention import create_block_mask\nm = create_block_mask(fn, 1, 1, 8, 8, dev)\n",
    "import torch\nm = torch.compile(create_block_mask)(fn, 1, 1, 8, 8)\n",
    "import torch\nf = torch.compile(model, dynamic=None)\nmodel.compile(backend='eager')\n",
    "import torch\nn = torch.nn.BatchNorm2d(64, affine=False)\nm = torch.nn.LayerNorm(8, bias=False)\n",
    "import torch\nopt = torch.optim.AdamW(ps, weight_decay=0.01)\nopt2 = torch.optim.LBFGS(ps, lr=1)\n",
    "import torch\nopt = torch.optim.SGD(sorted(params, key=id), lr=0.1)\n",
    "import torch\nopt = torch.optim.SGD(params=list({w, b}), lr=0.1)\n",  # an explicit conversion: left alone
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


def _fixed(lint, code, **options):
    result = lint(code, fix=True, unsafe_fixes=True, select=["ALL"], **options)
    assert result.error is None
    return result.fixed_text if result.fixed_text is not None else code


def _safe_fixed(lint, code, select, **options):
    result = lint(code, fix=True, select=select, **options)
    assert result.error is None
    return result.fixed_text if result.fixed_text is not None else code


# -- versions and fix safety --------------------------------------------------------------------------------------

def test_rules_apply_from_their_release(lint):
    code = ("import torch\nm = torch.nn.parallel.DistributedDataParallel(m, broadcast_buffers=False)\n"
            "l = torch.utils.data.DataLoader(ds, pin_memory=True, pin_memory_device='cuda')\n"
            "torch._check_is_size(n)\n"
            "import torch.utils.cpp_extension as ext\np = ext.include_paths(cuda=True)\n")
    assert not {"TP230", "TP231", "TP233", "TP120"} & set(_codes(lint(code, select=["ALL"], target="2.5")))
    assert {"TP120"} == {"TP230", "TP231", "TP233", "TP120"} & set(_codes(lint(code, select=["ALL"], target="2.8")))
    assert {"TP120", "TP231", "TP233"} <= set(_codes(lint(code, select=["ALL"], target="2.12")))
    assert "TP230" not in _codes(lint(code, select=["ALL"], target="2.12"))
    assert "TP230" in _codes(lint(code, select=["ALL"], target="2.13"))


def test_ddp_false_is_unsafe_unless_init_sync_is_off(lint):
    code = "import torch\nm = torch.nn.parallel.DistributedDataParallel(m, broadcast_buffers=False)\n"
    assert _safe_fixed(lint, code, ["TP230"], min_torch="2.13") == code
    assert "forward_sync_buffers=False" in _fixed(lint, code, min_torch="2.13")
    no_init = "import torch\nm = torch.nn.parallel.DistributedDataParallel(m, broadcast_buffers=False, init_sync=False)\n"
    assert _safe_fixed(lint, no_init, ["TP230"], min_torch="2.12") == no_init  # needs 2.13
    assert _safe_fixed(lint, no_init, ["TP230"], min_torch="2.13") == no_init.replace("broadcast_buffers", "forward_sync_buffers")
    true = "import torch\nm = torch.nn.parallel.DistributedDataParallel(m, broadcast_buffers=True)\n"
    assert _safe_fixed(lint, true, ["TP230"]) == "import torch\nm = torch.nn.parallel.DistributedDataParallel(m)\n"
    opaque = "import torch\nm = torch.nn.parallel.DistributedDataParallel(m, broadcast_buffers=False, **extra)\n"
    result = lint(opaque, fix=True, unsafe_fixes=True, select=["TP230"])
    assert _codes(result) == ["TP230"] and result.fixed_text in (None, opaque)


def test_pin_memory_device_fix_is_safe_only_from_2_9(lint):
    code = "import torch\nl = torch.utils.data.DataLoader(ds, pin_memory=True, pin_memory_device='cuda')\n"
    fixed = "import torch\nl = torch.utils.data.DataLoader(ds, pin_memory=True)\n"
    assert _safe_fixed(lint, code, ["TP231"], min_torch="2.8") == code
    assert _fixed(lint, code, min_torch="2.8") == fixed
    assert _safe_fixed(lint, code, ["TP231"], min_torch="2.9") == fixed
    message = lint(code, select=["TP231"], min_torch="2.8").findings[0].message
    assert "2.9" in message and "2.8" in message


def test_cpp_paths_fixes(lint):
    def fixed(call, **options):
        return _fixed(lint, f"from torch.utils.cpp_extension import include_paths\np = {call}\n", **options).splitlines()[1]

    assert fixed("include_paths(cuda=True)") == 'p = include_paths("cuda")'
    assert fixed("include_paths(cuda=True)", min_torch="2.6") == 'p = include_paths(device_type="cuda")'
    assert fixed("include_paths(False)") == "p = include_paths()"
    assert fixed("include_paths(cuda=a or b)") == 'p = include_paths(device_type="cuda" if a or b else "cpu")'
    assert fixed("include_paths(cuda=a if b else c)") == 'p = include_paths(device_type="cuda" if (a if b else c) else "cpu")'
    assert fixed("include_paths(not cpu)") == "p = include_paths(not cpu)"  # reported, not guessed
    code = "from torch.utils.cpp_extension import include_paths\np = include_paths(cuda=flag)\n"
    assert _safe_fixed(lint, code, ["TP120"], min_torch="2.5") == code
    assert _safe_fixed(lint, code, ["TP120"], min_torch="2.6") != code


def test_check_is_size_parenthesizes_and_skips_max(lint):
    def fixed(call):
        return _fixed(lint, f"import torch\n{call}\n").splitlines()[1]

    assert fixed("torch._check_is_size(a or b)") == "torch._check((a or b) >= 0)"
    assert fixed("torch._check_is_size(not a)") == "torch._check((not a) >= 0)"
    assert fixed("torch._check_is_size(-x.size(0) + 1)") == "torch._check(-x.size(0) + 1 >= 0)"
    assert fixed("torch._check_is_size(n, message=lambda: 'm')") == "torch._check(n >= 0, message=lambda: 'm')"
    assert fixed("torch._check_is_size(n, max=4)") == "torch._check_is_size(n, max=4)"
    assert fixed("torch._check_is_size(*sizes)") == "torch._check_is_size(*sizes)"
    code = "import torch\ntorch._check_is_size(n)\n"
    assert _safe_fixed(lint, code, ["TP233"], min_torch="2.15") == code  # always unsafe


def test_has_attrs_keep_aliases_and_add_no_duplicate_imports(lint):
    code = "from torch import has_cuda, has_mps\nprint(has_cuda, has_mps)\n"
    assert _fixed(lint, code) == "import torch\nprint(torch.backends.cuda.is_built(), torch.backends.mps.is_built())\n"
    code = "import torch\nfrom torch import has_cuda\nprint(has_cuda, torch.ones(1))\n"
    assert _fixed(lint, code) == "import torch\nprint(torch.backends.cuda.is_built(), torch.ones(1))\n"


def test_object_collectives_fix_only_from_2_14(lint):
    code = "import torch.distributed as dist\ndist.broadcast_object_list(objs, src=0)\n"
    result = lint(code, select=["TP310"], min_torch="2.13")
    assert result.findings[0].fix is None and "2.13" in result.findings[0].message
    assert _fixed(lint, code, min_torch="2.13") == code
    assert _fixed(lint, code, min_torch="2.14") == code.replace("src=0)", "src=0, weights_only=True)")
    assert _safe_fixed(lint, code, ["TP310"], min_torch="2.14") == code  # never safe
    assert "TP310" not in _codes(lint(code, select=["ALL"], target="2.13"))


def test_safetensors_path_needs_2_13(lint):
    code = "import torch\nsd = torch.load('w.safetensors', weights_only=True)\n"
    assert "TP431" not in _codes(lint(code, select=["ALL"], target="2.12"))
    assert "your minimum is 2.4" in lint(code, select=["TP431"]).findings[0].message
    assert "your minimum" not in lint(code, select=["TP431"], min_torch="2.13").findings[0].message


def test_block_mask_device_only_below_2_10(lint):
    code = "from torch.nn.attention.flex_attention import create_block_mask\nm = create_block_mask(fn, 1, 1, 8, 8)\n"
    assert "TP432" in _codes(lint(code, select=["ALL"], min_torch="2.9"))
    assert "TP432" not in _codes(lint(code, select=["ALL"], min_torch="2.10"))
    assert "TP432" not in _codes(lint(code, select=["ALL"], target="2.9"))
    assert _safe_fixed(lint, code, ["TP432"]) == code  # never safe


def test_shapes_spec_rename_is_safe_from_2_14(lint):
    code = "import torch\nf = torch.compile(model, shapes_spec=s)\n"
    fixed = "import torch\nf = torch.compile(model, dynamic_shapes=s)\n"
    assert _safe_fixed(lint, code, ["TP121"], min_torch="2.13") == code
    assert _safe_fixed(lint, code, ["TP121"], min_torch="2.14") == fixed
    assert "TP121" not in _codes(lint(code, select=["ALL"], target="2.13"))
    both = "import torch\nf = torch.compile(model, shapes_spec=s, dynamic_shapes=t)\n"
    assert _fixed(lint, both, min_torch="2.14") == both  # already broken: reported, not guessed


def test_new_keywords_follow_min_torch(lint):
    code = "import torch\nn = torch.nn.GroupNorm(4, 8, bias=False)\nopt = torch.optim.LBFGS(ps, maximize=True)\n"
    assert _codes(lint(code, select=["TP433"], min_torch="2.11")) == ["TP433", "TP433"]
    assert _codes(lint(code, select=["TP433"], min_torch="2.12")) == ["TP433"]
    assert _codes(lint(code, select=["TP433"], min_torch="2.14")) == []
    message = lint(code, select=["TP433"], min_torch="2.11").findings[0].message
    assert "2.12" in message and "2.11" in message
    defaults = ("import torch\nn = torch.nn.BatchNorm1d(8, bias=True)\nopt = torch.optim.Adam(ps, decoupled_weight_decay=False)\n"
                "l = torch.nn.functional.l1_loss(a, b, weight=None)\n")
    assert _safe_fixed(lint, defaults, ["TP433"]) == ("import torch\nn = torch.nn.BatchNorm1d(8)\n"
                                                      "opt = torch.optim.Adam(ps)\nl = torch.nn.functional.l1_loss(a, b)\n")
    other = "import torch\nn = torch.nn.BatchNorm1d(8, bias=1)\n"  # not the literal default: reported only
    assert _fixed(lint, other) == other and _codes(lint(other, select=["TP433"])) == ["TP433"]


def test_param_set_fix_skips_repeats_and_starred(lint):
    for code in ("import torch\nopt = torch.optim.SGD({w, w}, lr=0.1)\n",
                 "import torch\nopt = torch.optim.SGD({*ws, b}, lr=0.1)\n"):
        result = lint(code, fix=True, unsafe_fixes=True, select=["TP234"])
        assert _codes(result) == ["TP234"] and result.fixed_text in (None, code)
    assert _safe_fixed(lint, "import torch\nopt = torch.optim.SGD(params={a.w, b.w})\n", ["TP234"]) == \
        "import torch\nopt = torch.optim.SGD(params=[a.w, b.w])\n"
    assert "TP234" not in _codes(lint("import torch\nopt = torch.optim.SGD({w}, lr=0.1)\n", select=["ALL"], target="2.14"))


# -- claims against real torch ------------------------------------------------------------------------------

def _warnings_of(call):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = call()
    return result, caught


def _run_fixed(text: str, namespace: dict) -> dict:
    exec(compile(text, "<fixed>", "exec"), namespace)  # noqa: S102 - our own generated test code
    return namespace


@pytest.fixture
def process_group():
    torch = pytest.importorskip("torch")
    import torch.distributed as dist

    if not dist.is_available():
        pytest.skip("torch.distributed is not available")
    dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    yield torch
    dist.destroy_process_group()


@pytest.mark.torch
def test_ddp_broadcast_buffers_claims(process_group, lint, monkeypatch):
    torch = process_group
    import torch.nn.parallel.distributed as ddp_module

    parameters = inspect.signature(ddp_module.DistributedDataParallel.__init__).parameters
    assert list(parameters).index("broadcast_buffers") == 5  # self, module, device_ids, output_device, dim
    assert parameters["broadcast_buffers"].default is None
    assert parameters["forward_sync_buffers"].default is None
    init_syncs = []
    real_sync = ddp_module._sync_module_states
    monkeypatch.setattr(ddp_module, "_sync_module_states",
                        lambda **kwargs: (init_syncs.append(kwargs["broadcast_buffers"]), real_sync(**kwargs)))

    def wrap(**options):
        model = torch.nn.BatchNorm1d(2)
        return _warnings_of(lambda: torch.nn.parallel.DistributedDataParallel(model, **options))

    for options, forward, init in (({"broadcast_buffers": False}, False, False), ({}, True, True),
                                   ({"forward_sync_buffers": False}, False, True),
                                   ({"broadcast_buffers": True}, True, True)):
        init_syncs.clear()
        wrapped, caught = wrap(**options)
        deprecated = [w for w in caught if "broadcast_buffers" in str(w.message)]
        assert bool(deprecated) == ("broadcast_buffers" in options), options
        assert all(w.category is FutureWarning for w in deprecated)
        assert wrapped.forward_sync_buffers is forward and init_syncs == [init], options
    # The fixed code: no deprecation warning; False keeps forward sync off (init sync is the documented difference).
    source = "import torch\nm = torch.nn.parallel.DistributedDataParallel(model, broadcast_buffers=False)\n"
    fixed = _fixed(lint, source, min_torch="2.13")
    init_syncs.clear()
    namespace, caught = _warnings_of(lambda: _run_fixed(fixed, {"model": torch.nn.BatchNorm1d(2)}))
    assert not [w for w in caught if "broadcast_buffers" in str(w.message)]
    assert namespace["m"].forward_sync_buffers is False and init_syncs == [True]
    source = "import torch\nm = torch.nn.parallel.DistributedDataParallel(model, broadcast_buffers=True)\n"
    namespace, caught = _warnings_of(lambda: _run_fixed(_fixed(lint, source), {"model": torch.nn.BatchNorm1d(2)}))
    assert not [w for w in caught if "broadcast_buffers" in str(w.message)] and namespace["m"].forward_sync_buffers


@pytest.mark.torch
def test_pin_memory_device_is_ignored_and_warns(lint):
    torch = pytest.importorskip("torch")
    from torch.utils.data import DataLoader

    assert inspect.signature(DataLoader).parameters["pin_memory_device"].kind is inspect.Parameter.KEYWORD_ONLY
    data = torch.arange(4.0)
    source = "from torch.utils.data import DataLoader\nloader = DataLoader(data, pin_memory=True, pin_memory_device='cuda')\n"
    namespace = _run_fixed(source, {"data": data})
    iterator, caught = _warnings_of(lambda: iter(namespace["loader"]))
    assert any("pin_memory_device is deprecated" in str(w.message) for w in caught)
    assert iterator._pin_memory_device == (None if not torch.accelerator.is_available()
                                           else torch.accelerator.current_accelerator().type)
    fixed = _fixed(lint, source, min_torch="2.9")
    namespace = _run_fixed(fixed, {"data": data})
    fixed_iterator, caught = _warnings_of(lambda: iter(namespace["loader"]))
    assert not any("pin_memory_device" in str(w.message) for w in caught)
    assert fixed_iterator._pin_memory_device == iterator._pin_memory_device
    assert fixed_iterator._pin_memory == iterator._pin_memory
    assert [b.tolist() for b in fixed_iterator] == [[0.0], [1.0], [2.0], [3.0]]


@pytest.mark.torch
def test_has_attrs_warn_and_equal_their_replacements(lint):
    torch = pytest.importorskip("torch")
    from torchpatch.rules.torch_has_backend_attrs import REPLACEMENTS

    for old, new in REPLACEMENTS.items():
        value, caught = _warnings_of(lambda: getattr(torch, old.rpartition(".")[2]))
        assert [w.category for w in caught] == [UserWarning] and new in str(caught[0].message)
        target = torch._deprecated_attrs[old.rpartition(".")[2]]
        assert f"{target.__module__}.{target.__name__}" == new
        assert value == eval(f"{new}()", {"torch": torch})  # noqa: S307
    for name in ("has_lapack", "has_mkl", "has_openmp"):  # not deprecated: not reported
        _, caught = _warnings_of(lambda: getattr(torch, name))
        assert not caught
    fixed = _fixed(lint, "from torch import has_cuda, has_cudnn, has_mps, has_mkldnn\n"
                         "flags = (has_cuda, has_cudnn, has_mps, has_mkldnn)\n")
    namespace, caught = _warnings_of(lambda: _run_fixed(fixed, {}))
    assert not [w for w in caught if "deprecated" in str(w.message)]
    assert namespace["flags"] == (torch.backends.cuda.is_built(), torch.backends.cudnn.is_available(),
                                  torch.backends.mps.is_built(), torch.backends.mkldnn.is_available())


@pytest.mark.torch
def test_cpp_extension_paths_take_device_type(lint, monkeypatch, tmp_path):
    pytest.importorskip("torch")
    import torch.utils.cpp_extension as ext

    monkeypatch.setattr(ext, "CUDA_HOME", str(tmp_path))
    for function in (ext.include_paths, ext.library_paths):
        parameters = inspect.signature(function).parameters
        assert "cuda" not in parameters and list(parameters)[0] == "device_type"
        assert parameters["device_type"].default == "cpu"
        with pytest.raises(TypeError, match="cuda"):
            function(cuda=True)
        assert function(True) == function() != function("cuda")  # a bool silently means the CPU paths
    namespace = _run_fixed(_fixed(lint, "from torch.utils.cpp_extension import include_paths, library_paths\n"
                                        "a = include_paths(cuda=True)\nb = library_paths(True)\nc = library_paths(cuda=False)\n"
                                        "d = include_paths(cuda=1 > 0)\n"), {})
    assert namespace["a"] == namespace["d"] == ext.include_paths("cuda")
    assert str(tmp_path) in " ".join(namespace["a"])
    assert namespace["b"] == ext.library_paths("cuda") and namespace["c"] == ext.library_paths()


@pytest.mark.torch
def test_check_is_size_warns_and_check_is_equivalent_in_eager(lint):
    torch = pytest.importorskip("torch")
    _, caught = _warnings_of(lambda: torch._check_is_size(3))
    assert [w.category for w in caught] == [FutureWarning] and "_check(i >= 0)" in str(caught[0].message)
    with pytest.raises(RuntimeError), warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        torch._check_is_size(-1)
    source = "import torch\ndef f(n):\n    torch._check_is_size(n, lambda: 'negative')\n    return n\n"
    namespace = _run_fixed(_fixed(lint, source), {})
    _, caught = _warnings_of(lambda: namespace["f"](3))
    assert not caught
    with pytest.raises(RuntimeError, match="negative"):
        namespace["f"](-1)


UNPICKLED: list = []


def _record(tag):
    UNPICKLED.append(tag)


class _Payload:
    def __reduce__(self):
        return (_record, ("unpickled",))


@pytest.mark.torch
def test_object_collectives_unpickle_and_have_no_weights_only_before_2_14(process_group):
    torch = process_group
    import torch.distributed as dist

    from torchpatch.rules.object_collectives_pickle import WEIGHTS_ONLY_POSITION

    for name, position in WEIGHTS_ONLY_POSITION.items():
        parameters = list(inspect.signature(getattr(dist, name)).parameters)
        assert "weights_only" not in parameters, f"{name} has weights_only in {torch.__version__}"
        assert len(parameters) == position, name  # 2.14 appends weights_only as the last parameter
        assert getattr(dist, name) is getattr(dist.distributed_c10d, name)
    with pytest.raises(TypeError, match="weights_only"):
        dist.all_gather_object([None], 1, weights_only=True)
    pytest.importorskip("numpy")  # the object collectives turn byte tensors into bytes through NumPy
    UNPICKLED.clear()
    out = [None]
    dist.all_gather_object(out, _Payload())  # the receiving side runs the code the sender chose
    assert UNPICKLED == ["unpickled"]


@pytest.mark.torch
def test_torch_load_dispatches_safetensors_paths(tmp_path, monkeypatch):
    torch = pytest.importorskip("torch")
    import builtins
    import pickle

    import json
    import struct

    path = tmp_path / "w.safetensors"
    try:
        import safetensors.torch
    except ImportError:
        safetensors = None
    if safetensors is not None:
        header = json.dumps({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}).encode()
        path.write_bytes(struct.pack("<Q", len(header)) + header + struct.pack("<2f", 1.0, 1.0))
        state = torch.load(str(path), map_location="cpu")  # weights_only is ignored, returns a dict
        assert type(state) is dict and torch.equal(state["w"], torch.ones(2))
        with pytest.raises(RuntimeError, match="dict map_location"):
            torch.load(path, map_location={"cuda:0": "cpu"})
        with open(path, "rb") as handle, pytest.raises(pickle.UnpicklingError):
            torch.load(handle, weights_only=True)  # a file object is not dispatched
    real_import = builtins.__import__

    def no_safetensors(name, *args, **kwargs):
        if name.startswith("safetensors"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    torch.save({"w": torch.ones(1)}, str(path))  # a real pickle checkpoint with the suffix
    monkeypatch.setattr(builtins, "__import__", no_safetensors)
    with pytest.raises(RuntimeError, match="safetensors is not installed"):
        torch.load(str(path), weights_only=True)


@pytest.mark.torch
def test_block_mask_device_defaults_to_the_current_accelerator():
    torch = pytest.importorskip("torch")
    from torch.nn.attention import flex_attention as fa

    for function in (fa.create_block_mask, fa.create_mask):
        parameters = inspect.signature(function).parameters
        assert list(parameters).index("device") == 5 and parameters["device"].default is None

    def causal(b, h, q, kv):
        return q >= kv

    expected = torch.accelerator.current_accelerator() or torch.device("cpu")
    mask = fa.create_mask(causal, 1, 1, 8, 8)
    assert mask.device.type == expected.type
    block = fa.create_block_mask(causal, 1, 1, 128, 128)
    assert block.kv_num_blocks.device.type == expected.type
    assert torch.equal(block.to_dense(), fa.create_block_mask(causal, 1, 1, 128, 128, device=expected).to_dense())


@pytest.mark.torch
def test_compile_takes_shapes_spec_only_in_2_13():
    torch = pytest.importorskip("torch")
    parameters = inspect.signature(torch.compile).parameters
    if torch.__version__.startswith("2.13"):
        assert "shapes_spec" in parameters and "dynamic_shapes" not in parameters
    else:
        assert "shapes_spec" not in parameters
    from torch.fx.experimental.dynamic_spec import ParamsSpec, ShapesSpec  # the values both names take

    assert ShapesSpec(ParamsSpec({})) is not None


@pytest.mark.torch
def test_new_keywords_exist_from_the_recorded_release():
    torch = pytest.importorskip("torch")
    from torchpatch.rules.keyword_newer_than_min_torch import NEW_KEYWORDS
    from torchpatch.versions import Version

    installed = Version.parse(torch.__version__.split("+")[0])
    for qualname, keywords in NEW_KEYWORDS.items():
        module, _, attribute = qualname.rpartition(".")
        if module.endswith(".Module"):
            target = getattr(torch.nn.Module, attribute)
        else:
            target = getattr(__import__(module, fromlist=[attribute]), attribute)
        parameters = inspect.signature(target).parameters
        for name, new in keywords.items():
            if new.since <= installed:
                assert name in parameters, qualname
                assert parameters[name].default == new.default, qualname
            else:
                assert name not in parameters, f"{qualname} accepts {name} before {new.since}"


@pytest.mark.torch
def test_dropping_a_default_keyword_keeps_the_result(lint):
    torch = pytest.importorskip("torch")
    source = ("import torch\nimport torch.nn.functional as F\ntorch.manual_seed(0)\n"
              "norm = torch.nn.GroupNorm(2, 4, bias=True)\nloss = F.mse_loss(x, y, weight=None)\n"
              "padded = torch.nn.utils.rnn.pad_sequence([x[0], x[1, :2]], padding_side='right')\n")
    fixed = _fixed(lint, source)
    assert "bias" not in fixed and "weight" not in fixed and "padding_side" not in fixed
    x, y = torch.arange(12.0).reshape(3, 4), torch.ones(3, 4)
    old, new = _run_fixed(source, {"x": x, "y": y}), _run_fixed(fixed, {"x": x, "y": y})
    assert [p.shape for p in old["norm"].parameters()] == [p.shape for p in new["norm"].parameters()]
    assert torch.equal(old["loss"], new["loss"]) and torch.equal(old["padded"], new["padded"])


@pytest.mark.torch
def test_optimizers_take_sets_silently_but_param_groups_refuse_them(lint):
    torch = pytest.importorskip("torch")
    from torchpatch.rules.optimizer_param_set import OPTIMIZERS

    for name, module in OPTIMIZERS.items():
        optimizer = getattr(torch.optim, name)
        assert issubclass(optimizer, torch.optim.Optimizer)
        if module:
            assert getattr(__import__(f"torch.optim.{module}", fromlist=[name]), name) is optimizer
    w, b = torch.nn.Parameter(torch.ones(2)), torch.nn.Parameter(torch.zeros(2))
    _, caught = _warnings_of(lambda: torch.optim.SGD({w, b}, lr=0.1))  # accepted through 2.14
    assert not [c for c in caught if "set" in str(c.message)]
    with pytest.raises(TypeError, match="sets"):
        torch.optim.SGD([{"params": {w, b}}], lr=0.1)
    namespace = _run_fixed(_fixed(lint, "import torch\nopt = torch.optim.SGD({w, b}, lr=0.1)\n"), {"w": w, "b": b})
    assert namespace["opt"].param_groups[0]["params"] == [w, b]
