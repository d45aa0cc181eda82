"""TP256: a flattened DeviceMesh dim looked up on the root mesh (warns since 2.10), and the module-level mesh helpers."""

from __future__ import annotations

import ast

from torchpatch.rules._file_scan import uses_any
from torchpatch.rules.base import Invalid, Rule, Valid
from torchpatch.versions import v

_MODULE = "torch.distributed.device_mesh"
_MESH_NAMES = frozenset({f"{_MODULE}.init_device_mesh", f"{_MODULE}.DeviceMesh",
                         "torch.distributed.init_device_mesh", "torch.distributed.DeviceMesh"})
#: ``_MeshEnv`` methods that warn "will be deprecated soon" since 2.10, and the DeviceMesh method to use.
_HELPERS = {
    f"{_MODULE}._mesh_resources.get_root_mesh": "mesh._get_root_mesh()",
    f"{_MODULE}._mesh_resources._get_all_submeshes": "mesh._get_all_submeshes(mesh_dim_name)",
}


class DeviceMeshFlattenSlice(Rule):
    """
    ## What it does
    Flags `mesh[...]._flatten(...)` calls whose result is thrown away (a statement of its own) in a
    file that builds a `DeviceMesh`, and calls of the module-level helpers
    `torch.distributed.device_mesh._mesh_resources.get_root_mesh(mesh)` and
    `_mesh_resources._get_all_submeshes(mesh, name)`.

    ## Why is this bad?
    A flattened mesh that is not kept is only reachable by slicing its name from the root mesh
    (`mesh["dp"]` after `mesh["dp_replicate", "dp_shard"]._flatten("dp")`). Since PyTorch 2.10
    that lookup warns on every slice: "Slicing a flattened dim from root mesh will be deprecated
    in PT 2.11. Users need to bookkeep the flattened mesh directly." (still a warning in 2.15,
    src `device_mesh.py`). Keep the mesh `_flatten` returns (`dp_mesh = mesh[...]._flatten("dp")`)
    and pass it where `mesh["dp"]` was used.

    The two `_mesh_resources` helpers warn "will be deprecated soon" since 2.10 too; the
    replacements are the DeviceMesh methods `mesh._get_root_mesh()` and
    `mesh._get_all_submeshes(name)` (2.10+; 2.9 has no `_get_root_mesh`), so there is no fix.
    """

    code = "TP256"
    name = "device-mesh-flatten-slice"
    summary = "A `DeviceMesh._flatten(...)` result thrown away (sliced from the root mesh later: warns since 2.10)"
    deprecated_in = v("2.10")
    references = ("https://docs.pytorch.org/docs/stable/distributed.html#devicemesh",)
    catalog_ids = ("dist.device-mesh-flatten-slice",)
    methods = frozenset({"_flatten"})
    calls = frozenset(_HELPERS)

    VALID = [
        "from torch.distributed.device_mesh import init_device_mesh\n"
        "mesh = init_device_mesh('cuda', (2, 4), mesh_dim_names=('dp_replicate', 'dp_shard'))\n"
        "dp_mesh = mesh['dp_replicate', 'dp_shard']._flatten('dp')\n",
        # Not a DeviceMesh file: another library's _flatten.
        "import torch\ntree._flatten('x')\n",
        Valid("from torch.distributed.device_mesh import init_device_mesh\n"
              "mesh = init_device_mesh('cuda', (2, 4), mesh_dim_names=('a', 'b'))\nmesh['a', 'b']._flatten('ab')\n",
              target_torch="2.9"),
    ]
    INVALID = [
        Invalid("from torch.distributed.device_mesh import init_device_mesh\n\n"
                "def build(dims, names):\n    mesh = init_device_mesh('cuda', dims, mesh_dim_names=names)\n"
                "    mesh['dp_replicate', 'dp_shard']._flatten(mesh_dim_name='dp')\n    return mesh\n"),
        Invalid("from torch.distributed.device_mesh import _mesh_resources\nroot = _mesh_resources.get_root_mesh(tp_mesh)\n"),
    ]

    def check_method_call(self, ctx, call):
        if ctx.target < self.deprecated_in:
            return
        statement = ctx.statement
        if not (isinstance(statement, ast.Expr) and statement.value is call):
            return  # the flattened mesh is kept: nothing is sliced from the root later
        if not ("init_device_mesh" in ctx.text or "DeviceMesh" in ctx.text) or not uses_any(ctx, _MESH_NAMES):
            return
        message = (f"the mesh `_flatten` returns is thrown away, so it can only be reached as `root_mesh[\"name\"]`, "
                   f"which warns since PyTorch {self.deprecated_in} (\"will be deprecated\"); keep the flattened mesh")
        yield ctx.diagnostic(call, message)

    def check_call(self, ctx, call, qualname):
        if ctx.target < self.deprecated_in:
            return
        helper = qualname.rpartition(".")[2]
        yield ctx.diagnostic(call.func, f"`_mesh_resources.{helper}` warns \"will be deprecated soon\" since PyTorch "
                                        f"{self.deprecated_in}; use `{_HELPERS[qualname]}`")
