"""Receiver types known without running code: profiler objects built by a torch call in the same scope.

Only what can be read off the code is inferred, in one function (or the module body) at a time:

- ``with torch.profiler.profile(...) as prof`` / ``prof = torch.profiler.profile(...)`` (and
  ``torch.autograd.profiler.profile``) → a profiler;
- ``prof.key_averages(...)`` → a list of ``FunctionEventAvg``; ``prof.events()`` and
  ``prof.function_events`` → a list of ``FunctionEvent``;
- ``for event in <such a list>``, comprehensions over one, and ``<such a list>[i]`` → one element (a loop
  variable bound by several loops, all over lists of one element type, too).

A name bound more than once in the scope to anything else is not inferred (it may hold another object),
and neither are attributes, function arguments, or objects returned from other functions.
"""

from __future__ import annotations

import ast
import weakref
from collections.abc import Callable, Iterator

from torchpatch.rules._file_scan import enclosing_def_or_module
from torchpatch.syntax import dotted_name, names_read_in

PROFILERS = frozenset({"torch.profiler.profile", "torch.profiler.profiler.profile", "torch.autograd.profiler.profile"})
EVENT = "torch.autograd.profiler_util.FunctionEvent"
EVENT_AVG = "torch.autograd.profiler_util.FunctionEventAvg"
_PROFILER = "profiler"
_LISTS = {"key_averages": EVENT_AVG, "events": EVENT}  # method of a profiler → element type of its list
_LIST_ATTRIBUTES = {"function_events": EVENT}


def element_accesses(scope_node: ast.AST, resolve: Callable[[ast.expr], str | None],
                     parent_of: Callable[[ast.AST], ast.AST | None] | None = None) -> Iterator[tuple[ast.Attribute, str]]:
    """Each ``X.attr`` in the scope where X is a profiler event of a known type: (the Attribute, the type).
    With ``parent_of``, a name read inside a loop, a comprehension or a ``key=`` lambda over an event list is that
    list's element there, whatever else the name is bound to elsewhere in the scope."""
    types = _bind(scope_node, resolve)

    def kind(expr: ast.AST) -> str | None:
        """'profiler', 'list:<element type>' or an element type."""
        if isinstance(expr, ast.Name):
            if parent_of is not None:
                local = _local_element(expr, scope_node, parent_of, kind)
                if local is not _UNBOUND:
                    return local
            return types.get(expr.id)
        if isinstance(expr, ast.Call):
            if resolve(expr.func) in PROFILERS:
                return _PROFILER
            func = expr.func
            if isinstance(func, ast.Attribute) and func.attr in _LISTS and kind(func.value) == _PROFILER:
                return "list:" + _LISTS[func.attr]
            if isinstance(func, ast.Attribute) and func.attr == "key_averages":
                # Only torch's profilers and their EventList have ``key_averages()`` (``prof.events().key_averages()``,
                # a profiler passed in as an argument).
                return "list:" + EVENT_AVG
            if isinstance(func, ast.Attribute) and func.attr == "total_average" and kind(func.value) == "list:" + EVENT_AVG:
                return EVENT_AVG
            return None
        if isinstance(expr, ast.Attribute) and expr.attr in _LIST_ATTRIBUTES and kind(expr.value) == _PROFILER:
            return "list:" + _LIST_ATTRIBUTES[expr.attr]
        if isinstance(expr, ast.Subscript) and not isinstance(expr.slice, ast.Slice):
            inner = kind(expr.value)
            return inner[5:] if inner and inner.startswith("list:") else None
        return None

    types_of_loops(scope_node, types, kind)
    for node in _walk_scope(scope_node, lambdas=parent_of is not None):
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
            found = kind(node.value)
            if found in (EVENT, EVENT_AVG):
                yield node, found


def _bind(scope_node: ast.AST, resolve) -> dict[str, str]:
    """Names bound exactly once in the scope, to a profiler or to one of its event lists."""
    counts: dict[str, int] = {}
    candidates: dict[str, ast.expr] = {}
    for node in _walk_scope(scope_node):
        targets: list[tuple[ast.AST, ast.expr | None]] = []
        if isinstance(node, ast.Assign):
            targets = [(target, node.value if len(node.targets) == 1 else None) for target in node.targets]
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            targets = [(node.target, None)]
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            targets = [(item.optional_vars, item.context_expr) for item in node.items if item.optional_vars]
        elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
            targets = [(node.target, None)]
        elif isinstance(node, ast.NamedExpr):
            targets = [(node.target, node.value)]
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                counts[(alias.asname or alias.name).split(".")[0]] = 2
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node is not scope_node:
            counts[node.name] = 2
        for target, value in targets:
            for name in ast.walk(target):
                if isinstance(name, ast.Name):
                    counts[name.id] = counts.get(name.id, 0) + 1
                    if isinstance(target, ast.Name) and value is not None:
                        candidates[name.id] = value
    if isinstance(scope_node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        for argument in ast.walk(scope_node.args):
            if isinstance(argument, ast.arg):
                counts[argument.arg] = 2
    types: dict[str, str] = {}
    for _ in range(3):  # prof → events = prof.key_averages() → …
        for name, value in candidates.items():
            if counts.get(name) != 1 or name in types:
                continue
            if isinstance(value, ast.Call) and resolve(value.func) in PROFILERS:
                types[name] = _PROFILER
            elif isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) \
                    and value.func.attr in _LISTS and isinstance(value.func.value, ast.Name) \
                    and types.get(value.func.value.id) == _PROFILER:
                types[name] = "list:" + _LISTS[value.func.attr]
            elif isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) \
                    and value.func.attr == "key_averages":
                types[name] = "list:" + EVENT_AVG  # only torch's profilers and EventList have it
            elif isinstance(value, ast.Subscript) and not isinstance(value.slice, ast.Slice) \
                    and isinstance(value.value, ast.Name) and types.get(value.value.id, "").startswith("list:"):
                types[name] = types[value.value.id][5:]  # ``first = events[0]``
    return types


_UNBOUND = object()
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)
_KEY_FUNCTIONS = frozenset({"sorted", "min", "max", "filter", "map"})


def _local_element(name: ast.Name, scope_node: ast.AST, parent_of, kind):
    """What ``name`` is where it is read, from the nearest loop, comprehension or lambda around it that binds it:
    an element type, None (bound there to something unknown), or _UNBOUND (no such construct up to the scope)."""
    def element(iterable: ast.expr):
        found = kind(iterable)
        return found[5:] if found and found.startswith("list:") else None

    child: ast.AST = name
    node = parent_of(name)
    while node is not None and node is not scope_node:
        if isinstance(node, _COMPREHENSIONS):
            for generator in reversed(node.generators):
                if child is generator.iter and generator is node.generators[0]:
                    continue  # the first iterable is evaluated outside the comprehension
                if any(isinstance(n, ast.Name) and n.id == name.id for n in ast.walk(generator.target)):
                    return element(generator.iter) if isinstance(generator.target, ast.Name) else None
        elif isinstance(node, (ast.For, ast.AsyncFor)) and child in node.body:
            if any(isinstance(n, ast.Name) and n.id == name.id for n in ast.walk(node.target)):
                if not isinstance(node.target, ast.Name) or any(
                        isinstance(n, ast.Name) and n.id == name.id and isinstance(n.ctx, ast.Store)
                        for statement in node.body for n in ast.walk(statement)):
                    return None
                return element(node.iter)
        elif isinstance(node, ast.Lambda):
            if any(argument.arg == name.id for argument in ast.walk(node.args) if isinstance(argument, ast.arg)):
                # ``sorted(events, key=lambda e: e.cuda_time_total)``, ``map(lambda e: ..., events)``
                holder = parent_of(node)
                call = parent_of(holder) if isinstance(holder, ast.keyword) and holder.arg == "key" else holder
                if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id in _KEY_FUNCTIONS:
                    if holder is not call and call.args and call.func.id in ("sorted", "min", "max"):
                        return element(call.args[0])
                    if holder is call and len(call.args) == 2 and call.args[0] is node and call.func.id in ("map", "filter"):
                        return element(call.args[1])
                return None
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            break
        child, node = node, parent_of(node)
    return _UNBOUND


def types_of_loops(scope_node: ast.AST, types: dict[str, str], kind) -> None:
    """Loop and comprehension variables over an event list (bound nowhere else in the scope)."""
    bound: dict[str, int] = {}
    for node in _walk_scope(scope_node):
        for target in _targets(node):
            for name in ast.walk(target):
                if isinstance(name, ast.Name):
                    bound[name.id] = bound.get(name.id, 0) + 1
    # ``for e in prof.events(): ...`` twice in one function (issue #23): a name every binding of which is a
    # loop over event lists of one element type holds such an event wherever it is read.
    loops: dict[str, set[str | None]] = {}
    for node in _walk_scope(scope_node):
        if isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)) and isinstance(node.target, ast.Name):
            found = kind(node.iter)
            loops.setdefault(node.target.id, set()).add(found[5:] if found and found.startswith("list:") else None)
    for name, found in loops.items():
        if len(found) == 1 and None not in found and bound.get(name) == sum(1 for _ in _loops_binding(scope_node, name)):
            types[name] = next(iter(found))


def _loops_binding(scope_node: ast.AST, name: str) -> Iterator[ast.AST]:
    for node in _walk_scope(scope_node):
        if isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)) and isinstance(node.target, ast.Name) \
                and node.target.id == name:
            yield node


def _targets(node: ast.AST) -> list[ast.AST]:
    if isinstance(node, ast.Assign):
        return list(node.targets)
    if isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.For, ast.AsyncFor, ast.comprehension, ast.NamedExpr)):
        return [node.target]
    if isinstance(node, (ast.With, ast.AsyncWith)):
        return [item.optional_vars for item in node.items if item.optional_vars]
    return []


_OWN_SCOPES = frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef})


def _walk_scope(scope_node: ast.AST, lambdas: bool = False) -> Iterator[ast.AST]:
    """The nodes of one scope: nested functions and classes are their own scopes (comprehensions are not, and
    with ``lambdas`` neither are lambdas' bodies)."""
    stack = list(ast.iter_child_nodes(scope_node))
    extend, node_type = stack.extend, ast.AST
    while stack:
        node = stack.pop()
        yield node
        kind = type(node)
        if kind in _OWN_SCOPES or kind is ast.Lambda and not lambdas:
            continue
        for field in node._fields:  # ast.iter_child_nodes(node), in its order, without its generators
            value = getattr(node, field, None)
            if type(value) is list:
                extend(item for item in value if isinstance(item, node_type))
            elif isinstance(value, node_type):
                extend((value,))


def scopes_of(tree: ast.Module) -> Iterator[ast.AST]:
    """The module and every function (the scopes element_accesses reads one at a time)."""
    yield tree
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node


_SCOPES_DONE: "weakref.WeakKeyDictionary[ast.AST, dict[str, set[int]]]" = weakref.WeakKeyDictionary()


def element_accesses_once(ctx, call: ast.Call, rule_code: str) -> Iterator[tuple[ast.Attribute, str]]:
    """``element_accesses`` of the function (or module) holding ``call``, once per scope and rule: each
    profiler call of a scope triggers the rule, but its events are read only the first time."""
    scope_node = enclosing_def_or_module(ctx, call)
    done = _SCOPES_DONE.setdefault(ctx.tree, {}).setdefault(rule_code, set())
    if id(scope_node) in done:
        return
    done.add(id(scope_node))
    yield from element_accesses(scope_node, lambda expr: ctx.scopes.qualname(expr, ctx.scope), ctx.parent_of)


# -- tensors ----------------------------------------------------------------------------------------
#: torch functions that return one new tensor (every release 2.4 … 2.15), and the Parameter class. Functions that
#: return a tuple (``torch.max(x, dim)``, ``torch.sort``, ``torch.split``) are left out.
TENSOR_FACTORIES = frozenset({f"torch.{name}" for name in (
    "tensor", "as_tensor", "from_numpy", "zeros", "ones", "empty", "full", "rand", "randn", "randint", "randperm",
    "arange", "linspace", "logspace", "eye", "zeros_like", "ones_like", "empty_like", "full_like", "rand_like",
    "randn_like", "randint_like", "stack", "cat", "concat", "concatenate", "frombuffer", "empty_strided",
    "hstack", "vstack", "dstack", "matmul", "mm", "bmm", "addmm", "baddbmm", "einsum", "outer", "dot", "kron",
    "add", "sub", "mul", "div", "true_divide", "pow", "exp", "log", "log2", "log1p", "expm1", "sqrt", "rsqrt",
    "abs", "neg", "sign", "square", "reciprocal", "floor", "ceil", "round", "clamp", "clip", "where", "lerp",
    "maximum", "minimum", "sigmoid", "tanh", "relu", "softmax", "log_softmax", "sum", "mean", "prod", "cumsum",
    "cumprod", "logsumexp", "norm", "argmax", "argmin", "flatten", "reshape", "transpose", "permute", "squeeze",
    "unsqueeze", "flip", "roll", "tril", "triu", "diag", "diagonal", "gather", "index_select", "masked_select",
    "narrow", "repeat_interleave", "clone", "complex", "polar", "view_as_real", "view_as_complex", "bernoulli",
    "multinomial", "normal", "poisson", "erf", "isnan", "isinf", "isfinite", "nan_to_num", "cdist", "bucketize",
    "searchsorted", "tile", "movedim", "t", "conj", "real", "imag", "atan2", "sin", "cos", "fmod", "remainder")}
    | {"torch.nn.Parameter", "torch.nn.parameter.Parameter", "torch.nn.parameter.Buffer", "torch.nn.Buffer"}
    | {f"torch.nn.functional.{name}" for name in (
        "relu", "gelu", "silu", "elu", "leaky_relu", "sigmoid", "tanh", "softmax", "log_softmax", "softplus",
        "linear", "conv1d", "conv2d", "conv3d", "dropout", "layer_norm", "group_norm", "batch_norm", "normalize",
        "pad", "interpolate", "embedding", "one_hot", "cross_entropy", "mse_loss", "l1_loss", "nll_loss",
        "binary_cross_entropy", "binary_cross_entropy_with_logits", "avg_pool2d", "adaptive_avg_pool2d",
        "scaled_dot_product_attention", "cosine_similarity", "pixel_shuffle", "unfold", "fold")}
    # The legacy typed constructors (``torch.FloatTensor(storage)``, ``torch.cuda.LongTensor(n)``) build tensors too.
    | {f"torch.{prefix}{kind}Tensor" for prefix in ("", "cuda.") for kind in (
        "Float", "Double", "Half", "BFloat16", "Byte", "Char", "Short", "Int", "Long", "Bool")})
TENSOR_TYPES = frozenset({"torch.Tensor", "torch.nn.Parameter", "torch.nn.parameter.Parameter"})
#: Tensor methods that return one tensor.
_TENSOR_METHODS = frozenset({
    "view", "view_as", "reshape", "reshape_as", "t", "contiguous", "clone", "detach", "detach_", "float", "double",
    "half", "bfloat16", "int", "long", "short", "bool", "byte", "char", "to", "cpu", "cuda", "permute", "transpose",
    "squeeze", "unsqueeze", "flatten", "expand", "expand_as", "repeat", "narrow", "select", "index_select",
    "masked_fill", "masked_fill_", "add", "add_", "sub", "sub_", "mul", "mul_", "div", "div_", "matmul", "mm", "bmm",
    "sum", "mean", "abs", "exp", "log", "sqrt", "pow", "clamp", "clamp_", "sigmoid", "tanh", "relu", "softmax",
    "log_softmax", "type_as", "new_zeros", "new_ones", "new_empty", "new_full", "new_tensor", "pin_memory",
    "share_memory_", "requires_grad_", "zero_", "fill_", "copy_", "normal_", "uniform_", "norm", "argmax", "argmin",
    "cumsum", "flip", "roll", "gather", "neg", "sign", "round", "floor", "ceil", "reciprocal", "rsqrt", "square",
    "unfold", "coalesce", "to_dense", "to_sparse", "squeeze_", "unsqueeze_", "t_", "transpose_", "as_strided",
    "tril", "triu", "diag", "prod", "std", "var", "masked_select", "nan_to_num", "float16", "movedim", "conj",
})
#: Methods only torch tensors have among the arrays ML code holds (numpy, pandas, PIL, io and TensorFlow objects
#: have none of them): what they return is a tensor whatever the receiver is known to be (``x.contiguous().view(-1)``).
_TENSOR_ONLY_METHODS = frozenset({"contiguous", "unsqueeze", "masked_fill", "permute"})
#: Attributes that are tensors on a tensor (``x.data``, ``x.grad``) or on a torch.nn module (``.weight``).
_TENSOR_ATTRIBUTES = frozenset({"data", "grad", "T", "mT", "H", "mH", "real", "imag"})
_MODULE_TENSOR_ATTRIBUTES = frozenset({"weight", "bias", "in_proj_weight", "in_proj_bias", "running_mean",
                                       "running_var", "weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0"})
_PARAMETER_LISTS = frozenset({"parameters", "buffers"})
_NAMED_PARAMETER_LISTS = frozenset({"named_parameters", "named_buffers"})
#: Module methods that return the module itself.
_MODULE_METHODS = frozenset({"to", "cuda", "cpu", "float", "double", "half", "bfloat16", "train", "eval",
                             "requires_grad_", "to_empty", "share_memory", "type"})
_MODULE_BASES = frozenset({"torch.nn.Module", "torch.nn.modules.module.Module"})
_SEQUENCE_ANNOTATIONS = frozenset({"typing.List", "typing.Sequence", "typing.Iterable", "typing.Iterator",
                                   "typing.Tuple", "typing.MutableSequence", "list", "tuple", "builtins.list",
                                   "builtins.tuple", "collections.abc.Sequence", "collections.abc.Iterable"})
_OPTIONAL_ANNOTATIONS = frozenset({"typing.Optional"})

# Kinds of value: a tensor, a torch.nn module (or an instance of a class of the file that derives from one), an
# iterable of tensors, an iterable of (name, tensor) pairs, a state dict (names to tensors).
TENSOR, MODULE, TENSORS, NAMED_TENSORS, TENSOR_DICT = "tensor", "module", "tensors", "named-tensors", "tensor-dict"


def is_tensor(ctx, expr: ast.expr) -> bool:
    """Whether ``expr`` is known, from the code alone, to be a torch tensor. Known are: torch factories and ops that
    return one tensor (``torch.randn``, ``torch.matmul``, ``F.relu``, ``nn.Parameter``), tensor methods that return
    one (``x.view(...)``, ``x.float()``, ``x.to(...)``), arithmetic on a known tensor, indexing one, ``.data``/
    ``.grad``/``.T``; names bound only to such values or annotated ``torch.Tensor`` (``Optional[Tensor]`` too) in
    their function; elements of ``List[Tensor]`` arguments, of ``m.parameters()``/``named_parameters()``/
    ``state_dict()`` of a known module (loops, comprehensions, ``list(...)[i]``, ``sd[key]``); ``.weight``/``.bias``
    of a torch.nn module; ``self.x`` in a class whose methods assign it only such values (or ``register_buffer``
    it), ``net.fc.weight`` for an instance of a file's ``nn.Module`` subclass; calls of the file's functions
    annotated ``-> torch.Tensor``. Anything else (other function results, unannotated arguments) is unknown."""
    return _Inference(ctx).kind(expr, enclosing_def_or_module(ctx, expr)) == TENSOR


class _Inference:
    def __init__(self, ctx):
        self.ctx = ctx
        self.classes = _file_classes(ctx)  # the file's nn.Module subclasses
        self.all_classes = {node.name: node for node in ctx.tree.body if isinstance(node, ast.ClassDef)}

    def resolve(self, node: ast.expr) -> str | None:
        return self.ctx.scopes.qualname(node, self.ctx.scope)

    def kind(self, node: ast.expr, scope_node: ast.AST, depth: int = 0) -> str | None:
        if depth > 6:
            return None
        deeper = depth + 1
        if isinstance(node, ast.Call) and isinstance(node.func, (ast.Name, ast.Attribute)):
            return self._call_kind(node, scope_node, deeper)
        if isinstance(node, ast.Attribute):
            if isinstance(node.value, ast.Name) and node.value.id == "self":
                owner = _enclosing_class(self.ctx, scope_node)
                if owner is not None and self.all_classes.get(owner.name) is owner:
                    return self.member_kind(owner.name, node.attr, deeper)
            if node.attr == "data" and isinstance(node.value, ast.Attribute) and node.value.attr == "grad":
                return TENSOR  # p.grad.data: the gradient's tensor, whatever p's type is known to be
            inner = self.kind(node.value, scope_node, deeper)
            if inner == TENSOR and node.attr in _TENSOR_ATTRIBUTES:
                return TENSOR
            if inner == MODULE:
                if node.attr in _MODULE_TENSOR_ATTRIBUTES:
                    return TENSOR
                instance = self._instance_class(node.value, scope_node, deeper)
                if instance is not None:
                    return self.member_kind(instance, node.attr, deeper)
            return None
        if isinstance(node, ast.Subscript):
            inner = self.kind(node.value, scope_node, deeper)
            if inner in (TENSOR, TENSOR_DICT) or inner == TENSORS and not isinstance(node.slice, ast.Slice):
                return TENSOR
            if inner == MODULE:  # nn.Sequential(...)[0], nn.ModuleList(...)[i]
                return MODULE
            return None
        if isinstance(node, ast.BinOp):
            sides = (node.left, node.right)
            if any(isinstance(side, (ast.Constant, ast.JoinedStr)) and isinstance(getattr(side, "value", ""), str)
                   for side in sides):
                return None
            return TENSOR if any(self.kind(side, scope_node, deeper) == TENSOR for side in sides) else None
        if isinstance(node, ast.UnaryOp) and not isinstance(node.op, ast.Not):
            return TENSOR if self.kind(node.operand, scope_node, deeper) == TENSOR else None
        if isinstance(node, ast.IfExp):
            kinds = {self.kind(node.body, scope_node, deeper), self.kind(node.orelse, scope_node, deeper)}
            return kinds.pop() if len(kinds) == 1 else None
        if isinstance(node, ast.Name):
            return self._name_kind(scope_node, node.id, deeper)
        return None

    def _call_kind(self, node: ast.Call, scope_node: ast.AST, depth: int) -> str | None:
        func = node.func
        qualname = self.resolve(func)
        if qualname in TENSOR_FACTORIES:
            return TENSOR
        if qualname and qualname.startswith("torch.nn.") and not qualname.startswith("torch.nn.functional.") \
                and qualname.rpartition(".")[2][:1].isupper():
            return MODULE
        if self._module_output_is_tensor(func, scope_node, depth):
            return TENSOR
        if isinstance(func, ast.Name):
            if func.id in self.classes and self._is_file_definition(func):
                return MODULE
            if func.id in ("list", "tuple", "sorted", "iter") and qualname in (None, func.id) and len(node.args) == 1:
                inner = self.kind(node.args[0], scope_node, depth)
                return inner if inner in (TENSORS, NAMED_TENSORS) else None
            if func.id == "next" and qualname in (None, "next") and node.args:
                return TENSOR if self.kind(node.args[0], scope_node, depth) == TENSORS else None
            returned = _returns_tensor(self.ctx, func.id)
            if returned and self._is_file_definition(func):
                return TENSOR
            return None
        if not isinstance(func, ast.Attribute):
            return None
        if func.attr in _TENSOR_ONLY_METHODS:
            return TENSOR
        receiver = self.kind(func.value, scope_node, depth)
        if receiver == TENSOR and func.attr in _TENSOR_METHODS:
            return TENSOR
        if receiver is None and func.attr in _PARAMETER_LISTS:
            return TENSORS  # ``for p in layer.parameters()``: only modules have them (an unknown ``layer`` too)
        if receiver is None and func.attr in _NAMED_PARAMETER_LISTS:
            return NAMED_TENSORS
        if receiver == MODULE:
            if func.attr in _PARAMETER_LISTS:
                return TENSORS
            if func.attr in _NAMED_PARAMETER_LISTS:
                return NAMED_TENSORS
            if func.attr == "state_dict" and not node.args and not node.keywords:
                return TENSOR_DICT
            if func.attr in _MODULE_METHODS:
                return MODULE
            if func.attr in ("get_parameter", "get_buffer"):
                return TENSOR
        if receiver == TENSOR_DICT:
            if func.attr == "values":
                return TENSORS
            if func.attr == "items":
                return NAMED_TENSORS
        return None

    def _module_output_is_tensor(self, func: ast.expr, scope_node: ast.AST, depth: int) -> bool:
        """``y = self.fc(x)`` / ``y = layer(x)`` where the module is a torch.nn layer built by the code (a name bound
        only to it, ``self.fc = nn.Linear(...)`` in the class) whose forward returns one tensor."""
        values: list[ast.expr] = []
        if isinstance(func, ast.Name) and func.id != "self":
            values = _bindings(self.ctx, scope_node, func.id)
        elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
            owner = _enclosing_class(self.ctx, scope_node)
            if owner is None or self.all_classes.get(owner.name) is not owner:
                return False
            values = _member_values(owner, func.attr)
        if not values:
            return False
        for value in values:
            if not isinstance(value, ast.Call) or not isinstance(value.func, (ast.Name, ast.Attribute)):
                return False
            qualname = self.resolve(value.func) or ""
            name = qualname.rpartition(".")[2]
            if not qualname.startswith("torch.nn.") or qualname.startswith("torch.nn.functional.") \
                    or not name[:1].isupper() or name in _MODULES_NOT_RETURNING_A_TENSOR:
                return False
        return True

    def _is_file_definition(self, name: ast.Name) -> bool:
        """``Net`` is the file's own module-level class or function (not an import or another binding)."""
        binding = self.ctx.scopes.binding_for(name.id, self.ctx.scopes.module_scope, (10**9, 0))
        return binding is None or binding.import_alias is None

    def _instance_class(self, node: ast.expr, scope_node: ast.AST, depth: int) -> str | None:
        """The file's module class that ``node`` is an instance of (``net = Net()`` … ``net``)."""
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in self.classes:
            return node.func.id
        if isinstance(node, ast.Name):
            values = _bindings(self.ctx, scope_node, node.id)
            if values and all(isinstance(v, ast.Call) and isinstance(v.func, ast.Name) for v in values):
                names = {v.func.id for v in values}
                if len(names) == 1 and next(iter(names)) in self.classes:
                    return next(iter(names))
        return None

    def member_kind(self, class_name: str, attribute: str, depth: int) -> str | None:
        """What ``self.<attribute>`` is in the file's module class: every assignment in its methods (and its bases'
        in the file) agrees, or it is registered as a buffer or parameter, or annotated in the class body."""
        found: set[str | None] = set()
        seen: set[str] = set()
        pending = [class_name]
        while pending:
            name = pending.pop()
            if name in seen or name not in self.all_classes:
                continue
            seen.add(name)
            definition = self.all_classes[name]
            pending.extend(base.id for base in definition.bases if isinstance(base, ast.Name))
            for statement in definition.body:
                if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name) \
                        and statement.target.id == attribute:
                    found.add(_annotation_kind(statement.annotation, self.resolve))
            for method in definition.body:
                if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    continue
                for node in ast.walk(method):
                    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                            and node.func.attr in ("register_buffer", "register_parameter") \
                            and isinstance(node.func.value, ast.Name) and node.func.value.id == "self" \
                            and node.args and isinstance(node.args[0], ast.Constant) \
                            and node.args[0].value == attribute:
                        value = node.args[1] if len(node.args) > 1 else None
                        if value is None or isinstance(value, ast.Constant) and value.value is None:
                            found.add(None)
                        else:
                            found.add(TENSOR)
                    targets: list[ast.expr] = []
                    value = None
                    if isinstance(node, ast.Assign):
                        targets, value = node.targets, node.value if len(node.targets) == 1 else None
                    elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
                        targets = [node.target]
                        value = node.value if isinstance(node, ast.AnnAssign) else None
                    for target in targets:
                        for part in ast.walk(target):
                            if isinstance(part, ast.Attribute) and part.attr == attribute \
                                    and isinstance(part.value, ast.Name) and part.value.id == "self":
                                if part is target and value is not None \
                                        and not (isinstance(value, ast.Constant) and value.value is None):
                                    found.add(self.kind(value, method, depth + 1))
                                elif part is target and isinstance(node, ast.AnnAssign):
                                    found.add(_annotation_kind(node.annotation, self.resolve))
                                elif not (part is target and value is not None):
                                    found.add(None)
        return found.pop() if len(found) == 1 else None

    def _name_kind(self, scope_node: ast.AST, name: str, depth: int) -> str | None:
        kinds: set[str | None] = set()
        if isinstance(scope_node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for argument in ast.walk(scope_node.args):
                if isinstance(argument, ast.arg) and argument.arg == name:
                    if argument.arg == "self":
                        owner = _enclosing_class(self.ctx, scope_node)
                        kinds.add(MODULE if owner is not None and owner.name in self.classes else None)
                    else:
                        annotation = argument.annotation
                        kinds.add(_annotation_kind(annotation, self.resolve) if annotation is not None else None)
        for node in _binding_nodes(self.ctx, scope_node).get(name, ()):
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Name) and target.id == name:
                        if len(node.targets) == 1 and _updates_itself(node.value, name):
                            continue  # grad = grad.add(wd, p.data): a tensor method keeps what grad was
                        kinds.add(self.kind(node.value, scope_node, depth) if len(node.targets) == 1 else None)
                    elif any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(target)):
                        kinds.add(None)
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == name:
                kinds.add(_annotation_kind(node.annotation, self.resolve))
            elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
                if any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(node.target)):
                    kinds.add(self._loop_kind(node, name, scope_node, depth))
            elif _rebinds(node, name):
                kinds.add(None)
        return kinds.pop() if len(kinds) == 1 else None

    def _loop_kind(self, node: ast.AST, name: str, scope_node: ast.AST, depth: int) -> str | None:
        """``for p in m.parameters()``, ``for n, p in m.named_parameters()``, ``for k, v in sd.items()``,
        ``for t in tensors`` (``tensors: List[torch.Tensor]``), ``for i, t in enumerate(tensors)`` → a tensor."""
        iterable, target = node.iter, node.target
        if isinstance(iterable, ast.Subscript) and isinstance(iterable.value, ast.Name) and isinstance(target, ast.Name) \
                and isinstance(iterable.slice, ast.Constant) and iterable.slice.value == "params" \
                and _iterates_param_groups(scope_node, iterable.value.id):
            return TENSOR  # for group in optimizer.param_groups: for p in group["params"]
        enumerated = isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name) \
            and iterable.func.id == "enumerate" and len(iterable.args) == 1 and not iterable.keywords
        if enumerated:
            if not (isinstance(target, ast.Tuple) and len(target.elts) == 2):
                return None
            iterable, target = iterable.args[0], target.elts[1]
        kind = self.kind(iterable, scope_node, depth)
        if kind == TENSORS and isinstance(target, ast.Name):
            return TENSOR
        if kind == NAMED_TENSORS and isinstance(target, ast.Tuple) and len(target.elts) == 2 \
                and isinstance(target.elts[1], ast.Name) and target.elts[1].id == name:
            return TENSOR
        if kind == TENSOR_DICT and isinstance(target, ast.Name):
            return None  # the keys
        return None


def _updates_itself(value: ast.expr, name: str) -> bool:
    """``name = name.add(...)`` (a tensor method called on the name itself)."""
    return isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) \
        and value.func.attr in _TENSOR_METHODS and isinstance(value.func.value, ast.Name) \
        and value.func.value.id == name


def _iterates_param_groups(scope_node: ast.AST, group: str) -> bool:
    """``group`` is bound only by loops over ``X.param_groups`` in the scope."""
    loops = [node for node in _walk_scope(scope_node) if isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension))
             and isinstance(node.target, ast.Name) and node.target.id == group]
    other = any(_rebinds(node, group) or isinstance(node, ast.Assign) and any(
        isinstance(n, ast.Name) and n.id == group for t in node.targets for n in ast.walk(t))
        for node in _walk_scope(scope_node))
    return bool(loops) and not other and all(
        isinstance(loop.iter, ast.Attribute) and loop.iter.attr == "param_groups" for loop in loops)


#: torch.nn modules whose forward returns a tuple, whatever it is given, or nothing fixed (containers, Identity).
_MODULES_NOT_RETURNING_A_TENSOR = frozenset({
    "RNN", "LSTM", "GRU", "RNNBase", "MultiheadAttention", "AdaptiveLogSoftmaxWithLoss", "Sequential", "ModuleList",
    "ModuleDict", "ParameterList", "ParameterDict", "Identity", "Module", "MaxPool1d", "MaxPool2d", "MaxPool3d",
    "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "FractionalMaxPool2d", "FractionalMaxPool3d",
    "DataParallel", "Parameter", "Buffer", "Embedding", "EmbeddingBag",
})


def _member_values(owner: ast.ClassDef, attribute: str) -> list[ast.expr]:
    """The values of ``self.<attribute> = value`` in the class's methods (empty when it is bound any other way)."""
    values: list[ast.expr] = []
    for method in owner.body:
        if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(method):
            targets = node.targets if isinstance(node, ast.Assign) else \
                [node.target] if isinstance(node, (ast.AnnAssign, ast.AugAssign)) else []
            for target in targets:
                for part in ast.walk(target):
                    if isinstance(part, ast.Attribute) and part.attr == attribute and isinstance(part.value, ast.Name) \
                            and part.value.id == "self":
                        if part is target and isinstance(node, ast.Assign) and len(node.targets) == 1:
                            values.append(node.value)
                        else:
                            return []
    return values


def _bindings(ctx, scope_node: ast.AST, name: str) -> list[ast.expr]:
    """The values of ``name = value`` in the scope (empty when it is bound any other way too)."""
    values = []
    for node in _binding_nodes(ctx, scope_node).get(name, ()):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and node.targets[0].id == name:
            values.append(node.value)
        elif isinstance(node, ast.Assign) and any(isinstance(n, ast.Name) and n.id == name
                                                  for t in node.targets for n in ast.walk(t)):
            return []
        elif _rebinds(node, name) or isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension, ast.AnnAssign)) \
                and any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(node.target)):
            return []
    return values


_CLASSES: "weakref.WeakKeyDictionary[ast.AST, dict[str, ast.ClassDef]]" = weakref.WeakKeyDictionary()


def _file_classes(ctx) -> dict[str, ast.ClassDef]:
    """The file's module-level classes that derive from ``torch.nn.Module`` (directly or through another of them)."""
    cached = _CLASSES.get(ctx.tree)
    if cached is not None:
        return cached
    definitions = {node.name: node for node in ctx.tree.body if isinstance(node, ast.ClassDef)}
    modules: dict[str, ast.ClassDef] = {}
    changed = True
    while changed:
        changed = False
        for name, definition in definitions.items():
            if name in modules:
                continue
            for base in definition.bases:
                if isinstance(base, ast.Name) and base.id in modules or isinstance(base, (ast.Name, ast.Attribute)) \
                        and (ctx.scopes.qualname(base, ctx.scopes.module_scope) or "") in _MODULE_BASES:
                    modules[name] = definition
                    changed = True
                    break
    _CLASSES[ctx.tree] = modules
    return modules


def _enclosing_class(ctx, scope_node: ast.AST) -> ast.ClassDef | None:
    """The class whose method ``scope_node`` is (directly)."""
    parent = ctx.parent_of(scope_node)
    return parent if isinstance(parent, ast.ClassDef) else None


def _returns_tensor(ctx, name: str) -> bool:
    """The file defines a module-level function ``name`` annotated ``-> torch.Tensor`` (once)."""
    definitions = [node for node in ctx.tree.body
                   if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name]
    if len(definitions) != 1 or isinstance(definitions[0], ast.ClassDef) or definitions[0].returns is None:
        return False
    return _annotation_kind(definitions[0].returns,
                            lambda node: ctx.scopes.qualname(node, ctx.scopes.module_scope)) == TENSOR


def _binding_nodes(ctx, scope_node: ast.AST) -> dict[str, list[ast.AST]]:
    """For each name, the nodes of ``scope_node``'s scope (in ``_walk_scope`` order) that ``_name_kind`` and
    ``_bindings`` read for it: the assignments, annotated assignments, loops and comprehensions with the name
    anywhere in a target, and what ``_rebinds`` counts. Built once per scope and file (they are asked about
    many names of one scope, and walked the whole scope for each)."""
    memo = ctx.memo.setdefault("receivers: binding nodes", {})
    found = memo.get(id(scope_node))
    if found is not None:
        return found
    found = memo[id(scope_node)] = {}

    def add_names_in(target: ast.AST, node: ast.AST) -> None:
        for name in names_read_in(target):
            add(name, node)

    def add(name: str, node: ast.AST) -> None:
        nodes = found.setdefault(name, [])
        if not nodes or nodes[-1] is not node:
            nodes.append(node)

    for node in _walk_scope(scope_node):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                add_names_in(target, node)
        elif isinstance(node, (ast.AnnAssign, ast.For, ast.AsyncFor, ast.comprehension)):
            add_names_in(node.target, node)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                add((alias.asname or alias.name).split(".")[0], node)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            add(node.name, node)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            for name in node.names:
                add(name, node)
        elif isinstance(node, (ast.AugAssign, ast.NamedExpr, ast.With, ast.AsyncWith)):
            for target in _targets(node):
                add_names_in(target, node)
    return found


def _rebinds(node: ast.AST, name: str) -> bool:
    """Another kind of binding of ``name``: an import, a definition, ``+=``, ``:=``, ``with ... as``, ``global``."""
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return any((alias.asname or alias.name).split(".")[0] == name for alias in node.names)
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return node.name == name
    if isinstance(node, (ast.Global, ast.Nonlocal)):
        return name in node.names
    targets = _targets(node) if isinstance(node, (ast.AugAssign, ast.NamedExpr, ast.With, ast.AsyncWith)) else []
    return any(isinstance(n, ast.Name) and n.id == name for target in targets for n in ast.walk(target))


def _annotation_kind(annotation: ast.expr, resolve) -> str | None:
    """``torch.Tensor`` / ``Tensor`` / ``Optional[Tensor]`` / ``Tensor | None`` → a tensor; ``List[Tensor]``,
    ``Sequence[Tensor]``, ``tuple[Tensor, ...]`` → tensors; the same written as strings."""
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        try:
            annotation = ast.parse(annotation.value, mode="eval").body
        except SyntaxError:
            return None
        if isinstance(annotation, ast.Constant):
            return None
        if isinstance(annotation, ast.Attribute) and dotted_name(annotation) == "torch.Tensor":
            return TENSOR
    if isinstance(annotation, (ast.Name, ast.Attribute)):
        return TENSOR if resolve(annotation) in TENSOR_TYPES else None
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        sides = [annotation.left, annotation.right]
        real = [side for side in sides if not (isinstance(side, ast.Constant) and side.value is None)]
        return _annotation_kind(real[0], resolve) if len(real) == 1 else None
    if isinstance(annotation, ast.Subscript) and isinstance(annotation.value, (ast.Name, ast.Attribute)):
        outer = resolve(annotation.value) or (annotation.value.id if isinstance(annotation.value, ast.Name) else None)
        inner = annotation.slice
        if outer in _OPTIONAL_ANNOTATIONS:
            return TENSOR if _annotation_kind(inner, resolve) == TENSOR else None
        if outer in _SEQUENCE_ANNOTATIONS:
            element = inner
            if isinstance(inner, ast.Tuple):
                if len(inner.elts) == 2 and isinstance(inner.elts[1], ast.Constant) and inner.elts[1].value is Ellipsis:
                    element = inner.elts[0]
                else:
                    return None
            return TENSORS if _annotation_kind(element, resolve) == TENSOR else None
    return None


# -- objects built by a torch constructor -----------------------------------------------------------
def built_accesses(scope_node: ast.AST, resolve: Callable[[ast.expr], str | None],
                   built_by: dict[str, tuple[str, int | None]]) -> Iterator[tuple[ast.Attribute, str]]:
    """Each ``X.attr`` (read) in the scope where X is an object a torch call built: ``built_by`` maps the call's
    qualified name to (the type, the position in the tuple it returns, or None for the call's own result).
    ``d = torch.distributions.Normal(0, 1)`` and ``leaves, spec = tree_flatten(x)`` bind such names, as does a
    call read directly (``Normal(0, 1).sample_n(3)``). A name bound more than once in the scope is not known."""
    counts: dict[str, int] = {}
    types: dict[str, str] = {}
    for node in _walk_scope(scope_node):
        for target in _targets(node):
            for name in ast.walk(target):
                if isinstance(name, ast.Name):
                    counts[name.id] = counts.get(name.id, 0) + 1
        if _rebinds_any(node, counts):
            continue
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.value, ast.Call):
            found = built_by.get(resolve(node.value.func) or "")
            if found is None:
                continue
            kind, position = found
            target = node.targets[0]
            if position is None and isinstance(target, ast.Name):
                types[target.id] = kind
            elif position is not None and isinstance(target, ast.Tuple) and position < len(target.elts) \
                    and isinstance(target.elts[position], ast.Name) \
                    and not any(isinstance(e, ast.Starred) for e in target.elts):
                types[target.elts[position].id] = kind
    if isinstance(scope_node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        for argument in ast.walk(scope_node.args):
            if isinstance(argument, ast.arg):
                counts[argument.arg] = 2
    known = {name: kind for name, kind in types.items() if counts.get(name) == 1}
    for node in _walk_scope(scope_node):
        if not (isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load)):
            continue
        value = node.value
        if isinstance(value, ast.Name) and value.id in known:
            yield node, known[value.id]
        elif isinstance(value, ast.Call):
            found = built_by.get(resolve(value.func) or "")
            if found is not None and found[1] is None:
                yield node, found[0]
        elif isinstance(value, ast.Subscript) and isinstance(value.value, ast.Call) \
                and isinstance(value.slice, ast.Constant) and type(value.slice.value) is int:
            found = built_by.get(resolve(value.value.func) or "")  # ``tree_flatten(x)[1].children_specs``
            if found is not None and found[1] is not None and found[1] == value.slice.value:
                yield node, found[0]


def member_built_accesses(owner: ast.ClassDef, resolve: Callable[[ast.expr], str | None],
                          built_by: dict[str, tuple[str, int | None]]) -> Iterator[tuple[ast.Attribute, str]]:
    """Each ``self.x.attr`` read in the methods of ``owner`` where every assignment of ``self.x`` in them is a call
    ``built_by`` knows (``self.data = ConcatDataset([...])`` in ``__init__``, ``self.data.cummulative_sizes``)."""
    kinds: dict[str, set[str | None]] = {}
    methods = [node for node in owner.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]
    for method in methods:
        for node in ast.walk(method):
            targets = node.targets if isinstance(node, ast.Assign) else \
                [node.target] if isinstance(node, (ast.AnnAssign, ast.AugAssign)) else []
            for target in targets:
                for part in ast.walk(target):
                    if isinstance(part, ast.Attribute) and isinstance(part.value, ast.Name) and part.value.id == "self":
                        found = None
                        if part is target and isinstance(node, ast.Assign) and len(node.targets) == 1 \
                                and isinstance(node.value, ast.Call):
                            built = built_by.get(resolve(node.value.func) or "")
                            found = built[0] if built is not None and built[1] is None else None
                        kinds.setdefault(part.attr, set()).add(found)
    known = {name: next(iter(found)) for name, found in kinds.items() if len(found) == 1 and None not in found}
    if not known:
        return
    for method in methods:
        for node in ast.walk(method):
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load) \
                    and isinstance(node.value, ast.Attribute) and node.value.attr in known \
                    and isinstance(node.value.value, ast.Name) and node.value.value.id == "self":
                yield node, known[node.value.attr]


def _rebinds_any(node: ast.AST, counts: dict[str, int]) -> bool:
    """Imports, definitions and ``global``/``nonlocal`` make a name unknown (counted as bound twice)."""
    names: list[str] = []
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        names = [(alias.asname or alias.name).split(".")[0] for alias in node.names]
    elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        names = [node.name]
    elif isinstance(node, (ast.Global, ast.Nonlocal)):
        names = list(node.names)
    for name in names:
        counts[name] = 2
    return bool(names)


#: For rules that follow one name through its scope (TP266's uint8 masks).
walk_scope = _walk_scope
rebinds = _rebinds
