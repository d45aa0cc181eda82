"""TP444: torch.export with an example input of size 0 or 1 in a dimension marked dynamic: it specializes."""

from __future__ import annotations

import ast

from torchpatch.rules._file_scan import enclosing_function
from torchpatch.rules._helpers import argument, keyword
from torchpatch.rules.base import Invalid, Rule
from torchpatch.versions import v

_EXPORTS = frozenset({"torch.export.export", "torch.export.export_for_training", "torch.export._trace._export"})
#: Factories whose shape is ``f(*sizes)`` or ``f(size_tuple)`` (or ``size=``).
_FACTORIES = frozenset(f"torch.{name}" for name in ("randn", "rand", "zeros", "ones", "empty", "full"))


def _single_value(ctx, call: ast.Call, node: ast.expr) -> ast.expr:
    """A Name assigned exactly once in the enclosing function (or module) stands for its value."""
    if not isinstance(node, ast.Name):
        return node
    function = enclosing_function(ctx, call)
    body = function.body if function is not None and not isinstance(function, ast.Lambda) else ctx.tree.body
    values = []
    for statement in body:
        for inner in ast.walk(statement):
            if isinstance(inner, ast.Assign) and any(isinstance(t, ast.Name) and t.id == node.id for t in inner.targets):
                values.append(inner.value if len(inner.targets) == 1 else None)
            elif isinstance(inner, (ast.AnnAssign, ast.AugAssign, ast.NamedExpr, ast.For, ast.With)) \
                    and node.id in {n.id for n in ast.walk(inner) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}:
                values.append(None)
    return values[0] if len(values) == 1 and values[0] is not None else node


def _literal_shape(ctx, node: ast.expr) -> list[int | None] | None:
    """The shape of ``torch.randn(1, 3)`` / ``torch.zeros((1, 3), ...)`` / ``torch.full((1, 3), v)``."""
    if not isinstance(node, ast.Call) or ctx.resolves_to(node.func) not in _FACTORIES:
        return None
    size = keyword(node, "size")
    if size is not None:
        sizes = size.value.elts if isinstance(size.value, (ast.Tuple, ast.List)) else None
    elif node.args and isinstance(node.args[0], (ast.Tuple, ast.List)):
        sizes = node.args[0].elts
    elif ctx.resolves_to(node.func) == "torch.full":
        return None
    else:
        sizes = node.args
    if not sizes or any(isinstance(s, ast.Starred) for s in sizes):
        return None
    return [s.value if isinstance(s, ast.Constant) and type(s.value) is int else None for s in sizes]


def _dynamic_dims(spec: ast.expr) -> list[int] | None:
    """Dimensions a per-tensor spec marks dynamic: ``{0: batch}`` or ``(batch, None)``."""
    def dynamic(value: ast.expr) -> bool:
        if isinstance(value, ast.Constant) and value.value is None:
            return False
        return not (isinstance(value, ast.Attribute) and value.attr == "STATIC")
    if isinstance(spec, ast.Dict):
        dims = []
        for key, value in zip(spec.keys, spec.values):
            if key is None or not (isinstance(key, ast.Constant) and type(key.value) is int):
                return None
            if dynamic(value):
                dims.append(key.value)
        return dims
    if isinstance(spec, (ast.Tuple, ast.List)):
        if any(isinstance(value, _CONTAINER_SPECS) for value in spec.elts):
            return None  # a spec of a container (``*args``, a tuple input), not of one tensor's dims
        return [index for index, value in enumerate(spec.elts) if dynamic(value)]
    return None


#: Specs that describe a container of tensors; a per-dimension entry is a `Dim`, `None` or an int.
_CONTAINER_SPECS = (ast.Dict, ast.Tuple, ast.List)


def _star_args_specs(inputs: list[ast.expr], shapes: list[ast.expr]) -> list[ast.expr] | None:
    """The per-tensor specs of ``forward(self, *args)``: one outer entry, a tuple with one spec per input."""
    if len(shapes) != 1 or not isinstance(shapes[0], (ast.Tuple, ast.List)):
        return None
    inner = shapes[0].elts
    nested = all(isinstance(value, _CONTAINER_SPECS) or (isinstance(value, ast.Constant) and value.value is None)
                 for value in inner)
    return inner if nested and len(inner) == len(inputs) else None


class ExportSizeOneExample(Rule):
    """
    ## What it does
    Flags `torch.export.export(model, args, dynamic_shapes=...)` when an example input is built
    with a literal shape (`torch.randn(1, 3, 224)`, `torch.zeros((1, 128))`, ...) whose size is
    0 or 1 in a dimension that `dynamic_shapes` marks dynamic (`Dim("batch")`, `Dim.DYNAMIC`,
    `Dim.AUTO`). The example tuple and the spec may be written in the call or assigned once in
    the same function; dict specs are matched to the inputs when there is one of each, tuple and
    list specs by position, and the spec of a `forward(self, *args)` module (one outer entry that
    holds a spec per input, `(({0: batch}, None),)`) one level down.

    ## Why is this bad?
    Export specializes every dimension whose example size is 0 or 1, on every release: with a
    named `Dim` or `Dim.DYNAMIC` it raises (`UserError: Constraints violated` / `ValueError: Found
    the following conflicts between user-specified ranges and inferred ranges`), and with
    `Dim.AUTO` it silently exports a static size (the program then only accepts that size).
    Checked on 2.13: a batch of 4 exports as a symbolic size, a batch of 1 does not. Use example
    sizes of at least 2 for the dynamic dimensions.
    """

    code = "TP444"
    name = "export-size-one-example"
    summary = "`torch.export` example input of size 0/1 in a dimension marked dynamic (it specializes or raises)"
    changed_in = v("2.4")
    references = (
        "https://docs.pytorch.org/docs/stable/export.html#the-0-1-specialization-problem",
        "https://github.com/pytorch/tutorials/issues/3400",
    )
    catalog_ids = ("export.zero-one-specialization",)
    calls = _EXPORTS

    VALID = [
        "import torch\nfrom torch.export import Dim, export\n"
        "ep = export(model, (torch.randn(4, 3),), dynamic_shapes={'x': {0: Dim('batch')}}, strict=False)\n",
        # Size 1 in a static dimension.
        "import torch\nfrom torch.export import Dim, export\n"
        "ep = export(model, (torch.randn(1, 8),), dynamic_shapes={'x': {1: Dim.AUTO}}, strict=False)\n",
        "import torch\nep = torch.export.export(model, (torch.randn(1, 3),), strict=False)\n",
        # Two inputs, one dict: which is which depends on forward's signature.
        "import torch\nfrom torch.export import Dim, export\n"
        "ep = export(model, (torch.randn(1, 3), mask), dynamic_shapes={'x': {0: Dim.AUTO}, 'mask': None}, strict=False)\n",
    ]
    INVALID = [
        Invalid("import torch\nfrom torch.export import Dim, export\n"
                "ep = export(model, (torch.randn(1, 3, 224, 224),), dynamic_shapes={'x': {0: Dim('batch')}}, strict=False)\n"),
        Invalid("import torch\nfrom torch.export import Dim\n\n"
                "def export_model(model):\n    example = (torch.zeros((1, 128), dtype=torch.long), torch.ones(1, 128))\n"
                "    shapes = ({0: Dim.AUTO}, (Dim.DYNAMIC, None))\n"
                "    return torch.export.export(model, example, dynamic_shapes=shapes, strict=False)\n"),
    ]

    def check_call(self, ctx, call, qualname):
        example = argument(call, "args", 1)
        spec = keyword(call, "dynamic_shapes")
        if example is None or spec is None:
            return
        inputs = _single_value(ctx, call, example[1])
        shapes = _single_value(ctx, call, spec.value)
        if not isinstance(inputs, (ast.Tuple, ast.List)):
            return
        if isinstance(shapes, (ast.Tuple, ast.List)):
            # ``forward(self, *args)``: the outer tuple is forward's one parameter, the inner one its tensors
            specs = _star_args_specs(inputs.elts, shapes.elts) or shapes.elts
            pairs = list(zip(inputs.elts, specs)) if len(inputs.elts) == len(specs) else []
        elif isinstance(shapes, ast.Dict) and len(inputs.elts) == 1 and len(shapes.values) == 1:
            pairs = [(inputs.elts[0], shapes.values[0])]
        else:
            return
        for tensor, tensor_spec in pairs:
            shape = _literal_shape(ctx, tensor)
            dims = _dynamic_dims(tensor_spec) if shape is not None else None
            if not dims:
                continue
            small = [dim for dim in dims if 0 <= dim < len(shape) and shape[dim] in (0, 1)]
            if small:
                sizes = ", ".join(f"dim {dim} has size {shape[dim]}" for dim in small)
                yield ctx.diagnostic(tensor, f"example input for `torch.export` ({sizes}) in a dimension marked dynamic: "
                                             f"sizes 0 and 1 specialize (PyTorch {self.changed_in} to 2.15), so export "
                                             f"raises or exports a static size; use an example size >= 2")
