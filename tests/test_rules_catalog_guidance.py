"""Catalog rows answered by behaviour and guidance rules (and by the generic TP902): each row's real pattern,
look-alikes that stay clean, and each claim checked against real torch (CI installs 2.13.0 CPU)."""

from __future__ import annotations

import inspect

import pytest

# (code, expected rule, options)
FLAGGED = [
    # misc.device-defaults: fork_rng(device_type=) "cuda" -> None (current accelerator) in 2.13, via TP902
    ("import torch\nwith torch.random.fork_rng(devices=[0]):\n    sample()\n", "TP902",
     {"min_torch": "2.12", "target": "2.13"}),
    ("from torch.random import fork_rng\nwith fork_rng():\n    sample()\n", "TP902", {"min_torch": "2.9", "target": "2.15"}),
    # export.allow-override-default: allow_override False -> True in 2.13, via TP902
    ("import torch.library\n@torch.library.register_fake('mylib::custom_linear')\ndef _(x, w):\n    return x @ w\n",
     "TP902", {"min_torch": "2.12", "target": "2.13"}),
    # jit.functional-optim
    ("import torch.distributed.optim as dopt\nopt = dopt._FunctionalAdamW([], lr=1e-3, _allow_empty_param_list=True)\n",
     "TP255", {}),
    ("from torch.distributed.optim.utils import as_functional_optim\nf = as_functional_optim(torch.optim.Adam, lr=1)\n",
     "TP255", {}),
    # compile.deterministic
    ("import torch as th\nnet = th.compile(net)\nif cfg.det:\n    th.use_deterministic_algorithms(mode=True)\n", "TP440",
     {"min_torch": "2.4", "target": "2.10"}),
    # plat.cxx11-abi
    ("import torch.utils.cpp_extension as cpp\nm = cpp.load_inline('m', src, extra_cflags=['-D_GLIBCXX_USE_CXX11_ABI=0 -O3'])\n",
     "TP441", {}),
    # dist.device-mesh-flatten-slice (the torchtune / accelerate pattern: flatten on the root, slice "dp" later)
    ("import torch\nfrom torch.distributed.device_mesh import init_device_mesh\nclass P:\n    def build(self):\n"
     "        if ok:\n            from torch.distributed.device_mesh import init_device_mesh as idm\n"
     "        mesh = idm('cuda', (2, 2), mesh_dim_names=('r', 's'))\n"
     "        if self.dp:\n            mesh[tuple(self.dp)]._flatten(mesh_dim_name='dp')\n        return mesh\n", "TP256", {}),
    ("import torch.distributed.device_mesh as dm\nsubs = dm._mesh_resources._get_all_submeshes(mesh, 'tp')\n", "TP256", {}),
    # ag.sac-hooks
    ("import torch\nimport torch.utils.checkpoint as ckpt\nwith torch.autograd.graph.save_on_cpu():\n"
     "    out = ckpt.checkpoint(layer, h, use_reentrant=False, context_fn=ctx_fn)\n", "TP442", {"target": "2.14"}),
    ("from torch.utils.checkpoint import checkpoint\nout = checkpoint(layer, h, use_reentrant=False, "
     "respect_saved_tensors_hooks=True)\n", "TP442", {"min_torch": "2.13", "target": "2.15"}),
    # dist.dtensor-grad-placements
    ("from torch.distributed._tensor import DTensor\nfrom torch.distributed._tensor.placement_types import Partial\n"
     "o = DTensor.from_local(t, device_mesh=mesh, placements=(Partial('avg'),))\n", "TP443", {"target": "2.11"}),
    ("from torch.distributed.tensor import distribute_tensor, Partial\ndef f(w, mesh):\n"
     "    d = distribute_tensor(w, mesh, [Partial()])\n    return d.to_local()\n", "TP443", {}),
    # export.zero-one-specialization
    ("import torch\nfrom torch import export\ninputs = (torch.rand(size=(1, 16)),)\n"
     "ep = export.export(m, inputs, dynamic_shapes=[{0: export.Dim.DYNAMIC}], strict=True)\n", "TP444", {}),
    # dist.c10d-group-rank-args
    ("from torch.distributed import get_global_rank, recv\nrecv(buf, src=get_global_rank(pp_group, prev), group=pp_group)\n",
     "TP445", {"min_torch": "2.6"}),
    # compile.cond
    ("import torch\nclass Router(torch.nn.Module):\n    def forward(self, x):\n"
     "        return self.a(x) if x.mean().item() > 0 else self.b(x)\n"
     "def export():\n    return torch.export.export(Router(), (torch.randn(4, 8),), strict=False)\n", "TP446", {}),
    # plat.alloc-conf
    ("import torch.cuda.memory as cm\ncm._set_allocator_settings('garbage_collection_threshold:0.6')\n", "TP257", {}),
    # sec.weights-only-env
    ("import os\nimport torch\nos.environ.update({'TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD': 'true'})\nm = torch.load(p)\n",
     "TP447", {}),
    ("import os as _os\nfrom torch import serialization\n_os.putenv('TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD', flag)\n"
     "m = serialization.load(p, weights_only=True)\n", "TP447", {}),
    # attn.score-mod-vs-block-mask
    ("import torch\nfrom torch.nn.attention import flex_attention as fx\nneg = -torch.inf\n"
     "def doc_mask(score, b, h, q, kv):\n    return torch.where(doc[q] == doc[kv], score, -torch.inf)\n"
     "o = fx.flex_attention(q, k, v, doc_mask)\n", "TP510", {}),
]

CLEAN = [
    ("import torch\nwith torch.random.fork_rng(device_type='cuda'):\n    sample()\n", {"min_torch": "2.12", "target": "2.13"}),
    ("import torch\nwith torch.random.fork_rng():\n    sample()\n", {"min_torch": "2.13", "target": "2.15"}),
    ("import torch\n@torch.library.register_fake('mylib::f', allow_override=False)\ndef _(x):\n    return x\n",
     {"min_torch": "2.12", "target": "2.13"}),
    # Another library's compile; a deterministic switch that is off.
    ("import torch\nfrom mylib import compile\ntorch.use_deterministic_algorithms(True)\nm = compile(model)\n",
     {"min_torch": "2.9", "target": "2.13"}),
    ("import torch\ntorch.use_deterministic_algorithms(mode=False)\nm = torch.compile(model)\n",
     {"min_torch": "2.9", "target": "2.13"}),
    # An old-ABI flag chosen by a test of torch's ABI, with a conditional expression.
    ("import torch\nfrom torch.utils import cpp_extension\n"
     "flag = '-D_GLIBCXX_USE_CXX11_ABI=1' if torch._C._GLIBCXX_USE_CXX11_ABI else '-D_GLIBCXX_USE_CXX11_ABI=0'\n"
     "ext = cpp_extension.CppExtension('m', ['m.cpp'], extra_compile_args=[flag])\n", {}),
    # The flattened mesh is kept.
    ("from torch.distributed import init_device_mesh\nmesh = init_device_mesh('cuda', (2, 2), mesh_dim_names=('r', 's'))\n"
     "meshes = {'dp': mesh['r', 's']._flatten('dp')}\n", {}),
    # A reentrant checkpoint (no SAC) next to save_on_cpu.
    ("import torch\nfrom torch.utils.checkpoint import checkpoint\nwith torch.autograd.graph.save_on_cpu():\n"
     "    out = checkpoint(layer, h, use_reentrant=True)\n", {"target": "2.15"}),
    # to_local on a DTensor whose placements are not seen, or passed grad_placements.
    ("from torch.distributed.tensor import distribute_tensor, Partial\ndef f(w, mesh):\n"
     "    d = distribute_tensor(w, mesh, [Partial()])\n    return d.to_local(grad_placements=[Partial()])\n", {}),
    ("import torch\ndef f(d):\n    return d.to_local()\n", {}),
    # The example tuple is rebound: its value is not known.
    ("import torch\nfrom torch import export\ninputs = (torch.rand(1, 16),)\nif big:\n    inputs = (torch.rand(8, 16),)\n"
     "ep = export.export(m, inputs, dynamic_shapes=[{0: export.Dim.DYNAMIC}], strict=True)\n", {}),
    # numpy's any on a module name, in a fullgraph function.
    ("import numpy as np\nimport torch\n@torch.compile(fullgraph=True)\ndef f(x):\n    if np.any(FLAGS):\n"
     "        return x + 1\n    return x\n", {}),
    # The variable without torch.load in the file; set to a false value.
    ("import os\nimport torch\nos.environ['TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD'] = '1'\nx = torch.ones(2)\n", {}),
    ("import os\nimport torch\nos.environ.setdefault('TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD', 'No')\n"
     "m = torch.load(p, weights_only=True)\n", {}),
    # A score_mod imported from elsewhere (not seen), and one that returns +inf (not a mask).
    ("from torch.nn.attention.flex_attention import flex_attention\nfrom masks import causal\n"
     "o = flex_attention(q, k, v, score_mod=causal)\n", {}),
    ("from torch.nn.attention.flex_attention import flex_attention\n"
     "o = flex_attention(q, k, v, score_mod=lambda s, b, h, q, kv: s.clamp(max=float('inf')))\n", {}),
    ("import torch.distributed.optim as dopt\nopt = dopt.ZeroRedundancyOptimizer(ps, torch.optim.SGD, lr=0.1)\n", {}),
]


@pytest.mark.parametrize("code, expected, options", FLAGGED, ids=[f"{c}-{i}" for i, (_, c, _) in enumerate(FLAGGED)])
def test_flagged(lint, code, expected, options):
    result = lint(code, select=["ALL"], **options)
    assert result.error is None
    assert expected in [f.code for f in result.findings]


@pytest.mark.parametrize("code, options", CLEAN, ids=range(len(CLEAN)))
def test_clean(lint, code, options):
    result = lint(code, select=["ALL"], **options)
    assert result.error is None
    assert [(f.code, f.message) for f in result.findings] == []


# -- the claims, against the installed torch (2.13) --------------------------------------------------------------

@pytest.mark.torch
def test_2_13_defaults_of_fork_rng_and_register_fake():
    torch = pytest.importorskip("torch")
    assert inspect.signature(torch.random.fork_rng).parameters["device_type"].default is None
    assert inspect.signature(torch.library.register_fake).parameters["allow_override"].default is True
    assert inspect.signature(torch.library.Library.impl).parameters["allow_override"].default is True


@pytest.mark.torch
def test_functional_optimizers_warn_on_construction():
    torch = pytest.importorskip("torch")
    from torch.distributed.optim import _FunctionalSGD, as_functional_optim
    for build in (lambda: as_functional_optim(torch.optim.SGD, lr=0.1),
                  lambda: _FunctionalSGD([], lr=0.1, _allow_empty_param_list=True)):
        with pytest.warns(DeprecationWarning, match="TorchScript. support for functional optimizers is deprecated"):
            build()


@pytest.mark.torch
def test_deterministic_algorithms_set_inductor_flag_and_recompile():
    torch = pytest.importorskip("torch")
    import torch._dynamo.testing
    import torch._inductor.config as inductor_config

    counter = torch._dynamo.testing.CompileCounter()
    compiled = torch.compile(lambda x: x.sin() + 1, backend=counter)
    before = torch.are_deterministic_algorithms_enabled()
    try:
        torch.use_deterministic_algorithms(False)
        compiled(torch.ones(3))
        torch.use_deterministic_algorithms(True)
        assert inductor_config.deterministic is True  # new in 2.10
        compiled(torch.ones(3))
        assert counter.frame_count == 2  # switched after compiling: recompiled, so the order does not matter
    finally:
        torch.use_deterministic_algorithms(before)
        torch._dynamo.reset()


@pytest.mark.torch
def test_flex_attention_without_block_mask_uses_one_dense_block():
    torch = pytest.importorskip("torch")
    from torch.nn.attention import flex_attention as fx
    assert inspect.signature(fx.flex_attention).parameters["block_mask"].default is None
    q = torch.ones(1, 1, 256, 16)
    dense = fx._create_empty_block_mask(q, q)
    assert dense.kv_num_blocks.tolist() == [[[1]]]  # one block over everything: nothing is skipped


@pytest.mark.torch
def test_wheel_uses_cxx11_abi_and_cpp_extension_no_longer_adds_the_flag():
    torch = pytest.importorskip("torch")
    import torch.utils.cpp_extension as cpp_extension
    assert torch._C._GLIBCXX_USE_CXX11_ABI is True
    assert "_GLIBCXX_USE_CXX11_ABI" not in inspect.getsource(cpp_extension)  # 2.4-2.7 appended torch's own flag


@pytest.mark.torch
def test_slicing_a_flattened_dim_from_the_root_mesh_warns():
    torch = pytest.importorskip("torch")
    import warnings

    import torch.distributed as dist
    from torch.distributed.device_mesh import _mesh_resources, init_device_mesh

    if not dist.is_available():
        pytest.skip("torch built without distributed")
    dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    try:
        mesh = init_device_mesh("cpu", (1, 1), mesh_dim_names=("r", "s"))
        kept = mesh["r", "s"]._flatten("dp")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            kept.size()  # the kept handle: no warning
            assert not caught
            mesh["dp"]
            _mesh_resources.get_root_mesh(kept)
        messages = [str(w.message) for w in caught]
        assert any("Slicing a flattened dim from root mesh will be deprecated" in m for m in messages)
        assert any("get_root_mesh API will be deprecated" in m for m in messages)
        assert kept._get_root_mesh() is mesh
    finally:
        dist.destroy_process_group()


@pytest.mark.torch
def test_checkpoint_2_13_hands_unknown_keywords_to_the_function():
    torch = pytest.importorskip("torch")
    from torch.utils.checkpoint import checkpoint

    assert "respect_saved_tensors_hooks" not in inspect.signature(checkpoint).parameters  # declared from 2.14
    assert "early_stop" in inspect.signature(checkpoint).parameters  # declared from 2.9
    seen = {}

    def block(x, **extra):
        seen.update(extra)
        return x * 2

    checkpoint(block, torch.ones(2, requires_grad=True), use_reentrant=False, respect_saved_tensors_hooks=False)
    assert seen == {"respect_saved_tensors_hooks": False}


@pytest.mark.torch
def test_to_local_and_from_local_normalise_partial_gradients_to_replicate():
    torch = pytest.importorskip("torch")
    from torch.distributed.tensor import Partial, Replicate, Shard
    from torch.distributed.tensor import _api

    assert _api._normalize_placements_for_grad((Partial(), Shard(0))) == (Replicate(), Shard(0))
    assert "_normalize_placements_for_grad" in inspect.getsource(_api._ToTorchTensor.backward)
    assert "_normalize_placements_for_grad" in inspect.getsource(_api._FromTorchTensor.backward)
    assert "grad_placements" in inspect.signature(_api.DTensor.from_local).parameters  # 2.12+ (not in 2.11.0)


@pytest.mark.torch
def test_export_specializes_size_one_examples():
    torch = pytest.importorskip("torch")
    from torch.export import Dim, export

    class Double(torch.nn.Module):
        def forward(self, x):
            return x * 2

    def batch_size(program):
        return program.graph_module.graph.find_nodes(op="placeholder")[0].meta["val"].shape[0]

    assert not isinstance(batch_size(export(Double(), (torch.randn(4, 3),), dynamic_shapes={"x": {0: Dim.AUTO}},
                                            strict=False)), int)
    assert batch_size(export(Double(), (torch.randn(1, 3),), dynamic_shapes={"x": {0: Dim.AUTO}}, strict=False)) == 1
    for spec in (Dim.DYNAMIC, Dim("batch")):
        with pytest.raises(Exception, match="conflicts|Constraints violated"):
            export(Double(), (torch.randn(1, 3),), dynamic_shapes={"x": {0: spec}}, strict=False)


def test_group_rank_fix_drops_the_translation_import(lint):
    code = "from torch.distributed import get_global_rank, recv\nrecv(buf, src=get_global_rank(pp, prev), group=pp)\n"
    result = lint(code, fix=True, select=["TP445"], min_torch="2.6")
    assert result.fixed_text == "from torch.distributed import recv\nrecv(buf, group_src=prev, group=pp)\n"


@pytest.mark.torch
def test_group_src_is_the_rank_within_the_group():
    torch = pytest.importorskip("torch")
    import torch.distributed as dist

    if not dist.is_available():
        pytest.skip("torch built without distributed")
    for name in ("broadcast", "scatter", "recv", "broadcast_object_list"):
        assert "group_src" in inspect.signature(getattr(dist, name)).parameters
    for name in ("reduce", "gather", "send", "gather_object"):
        assert "group_dst" in inspect.signature(getattr(dist, name)).parameters
    dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    try:
        group = dist.new_group([0])
        tensor = torch.ones(2)
        dist.broadcast(tensor, group_src=0, group=group)
        assert dist.get_global_rank(group, 0) == 0
    finally:
        dist.destroy_process_group()


@pytest.mark.torch
def test_a_branch_on_a_tensor_value_fails_export_and_torch_cond_traces():
    torch = pytest.importorskip("torch")

    class Branch(torch.nn.Module):
        def forward(self, x):
            if x.any():
                return x + 1
            return x - 1

    class Cond(torch.nn.Module):
        def forward(self, x):
            return torch.cond(x.any(), lambda x: x + 1, lambda x: x - 1, (x,))

    with pytest.raises(Exception, match="data-dependent"):
        torch.export.export(Branch(), (torch.randn(3),), strict=False)
    program = torch.export.export(Cond(), (torch.randn(3),), strict=False)
    assert torch.equal(program.module()(torch.ones(3)), torch.full((3,), 2.0))


@pytest.mark.torch
def test_set_allocator_settings_warns_and_the_new_function_exists():
    torch = pytest.importorskip("torch")
    assert hasattr(torch._C, "_accelerator_setAllocatorSettings")
    with pytest.warns(FutureWarning, match="torch._C._accelerator_setAllocatorSettings"):
        torch.cuda.memory._set_allocator_settings("expandable_segments:False")


@pytest.mark.torch
def test_force_no_weights_only_env_turns_weights_only_off(tmp_path, monkeypatch):
    torch = pytest.importorskip("torch")
    import argparse
    import pickle

    path = tmp_path / "legacy.pt"
    torch.save({"args": argparse.Namespace(lr=0.1)}, path)
    with pytest.raises(pickle.UnpicklingError):
        torch.load(path)  # 2.6+: weights_only=True refuses the Namespace
    monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")
    with pytest.warns(UserWarning, match="TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD"):
        assert torch.load(path)["args"].lr == 0.1
    with pytest.raises(pickle.UnpicklingError):
        torch.load(path, weights_only=True)  # an explicit weights_only wins over the variable


@pytest.mark.torch
def test_a_mesh_built_without_init_process_group_works_under_compile(monkeypatch):
    """Why no rule answers dist.device-mesh-pg-registry: the mesh initialises the default group itself and
    records the groups it creates in `_pg_registry` (docs/corrections.md)."""
    torch = pytest.importorskip("torch")
    import socket

    import torch.distributed as dist
    from torch.distributed._functional_collectives import all_reduce
    from torch.distributed.device_mesh import init_device_mesh

    if not dist.is_available():
        pytest.skip("torch built without distributed")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    for name, value in {"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port), "RANK": "0", "WORLD_SIZE": "1"}.items():
        monkeypatch.setenv(name, value)
    assert not dist.is_initialized()
    mesh = init_device_mesh("cpu", (1,), mesh_dim_names=("dp",))
    try:
        assert dist.is_initialized() and mesh._pg_registry

        @torch.compile(backend="eager", fullgraph=True)
        def reduce(x):
            return all_reduce(x, "sum", mesh.get_group("dp"))

        assert torch.equal(reduce(torch.ones(2)), torch.ones(2))
    finally:
        dist.destroy_process_group()
        torch._dynamo.reset()


@pytest.mark.parametrize("min_torch, advice", [
    ("2.4", "`allow_override=` exists only since PyTorch 2.8 (a TypeError before; your minimum is 2.4): "
            "pass it behind a version check"),
    ("2.8", "pass it explicitly"),
])
def test_changed_default_advice_respects_when_the_parameter_arrived(lint, min_torch, advice):
    # executorch 1.5.1 (min-torch 2.4): `allow_override=` is in no register_fake signature of the 2.4.1-2.7.1
    # wheels, so "pass it explicitly" alone would be a TypeError there.
    code = "import torch\n@torch.library.register_fake('mylib::foo')\ndef _(x):\n    return x\n"
    result = lint(code, select=["TP902"], min_torch=min_torch, target="2.15")
    assert [f.message for f in result.findings] == [
        "the default of `allow_override` in `torch.library.register_fake` changed from `False` to `True` in "
        f"PyTorch 2.13; {advice}"]


@pytest.mark.torch
def test_allow_override_is_a_parameter_of_the_installed_torch():
    torch = pytest.importorskip("torch")
    assert "allow_override" in inspect.signature(torch.library.register_fake).parameters


def test_changed_default_advice_for_library_impl_below_2_8(lint):
    result = lint("import torch\ntorch.library.Library.impl(lib, 'foo', f, 'CPU')\n", select=["TP902"],
                  min_torch="2.4", target="2.15")
    assert [f.message.split("; ", 1)[1] for f in result.findings] == [
        "`allow_override=` exists only since PyTorch 2.8 (a TypeError before; your minimum is 2.4): "
        "pass it behind a version check"]
