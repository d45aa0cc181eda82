"""Property tests: random code never crashes the engine; every fix parses, defines what it uses, converges."""

from __future__ import annotations

import ast
import builtins
import re
import textwrap

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pathlib import Path

from torchpatch.engine.linter import FileResult, ParseFailure, _fix_to_fixpoint, lint_text
from torchpatch.engine.settings import Settings
from torchpatch.versions import Version


#: A message names a release ("PyTorch 2.6", "in 2.11", "since 1.7"), not merely some digit.
_VERSION_PHRASE = re.compile(r"\b(?:PyTorch |in |since |through |from |before |to |of )?(?:[0-2])\.\d{1,2}\b")


def make_settings(min_torch: str = "2.4", select=None) -> Settings:
    return Settings(min_torch=Version.parse(min_torch), select=select)

IMPORTS = [
    "import torch", "import torch as th", "import torch.cuda.amp as amp", "from torch.cuda import amp",
    "from torch.cuda.amp import autocast, GradScaler", "from torch.cuda.amp import autocast as ac",
    "from torch import load", "from torch.export import export_for_training",
    "import torch.distributed._tensor as dt", "from torch.distributed._tensor import DTensor, Shard",
    "from torch.utils.checkpoint import checkpoint", "import torch.utils._pytree as pytree",
    "from torch.nn.attention.flex_attention import create_block_mask, flex_attention",
    "from torch.nn.attention.varlen import varlen_attn", "import numpy as np", "import apex.amp as apex_amp",
    "from torch.backends.cuda import sdp_kernel", "from torch.distributed.fsdp import FullyShardedDataParallel as FSDP",
]
CALLEES = [
    "torch.load", "th.load", "load", "np.load", "amp.autocast", "autocast", "ac", "GradScaler", "amp.GradScaler",
    "torch.cuda.amp.autocast", "torch.cpu.amp.autocast", "torch.cuda.amp.GradScaler", "torch.jit.script",
    "torch.export.export_for_training", "export_for_training", "torch.hub.load", "checkpoint",
    "torch.utils.checkpoint.checkpoint", "pytree._register_pytree_node", "create_block_mask", "flex_attention",
    "varlen_attn", "torch.onnx.export", "torch.backends.cuda.sdp_kernel", "sdp_kernel", "FSDP",
    "torch._dynamo.error_on_graph_break", "torch.backends.cuda.preferred_linalg_library", "self.amp.autocast",
    "x.storage", "dt.DTensor", "apex_amp.autocast", "torch.nn.utils.weight_norm",
]
ATOMS = ["x", "model", "1", "2.5", "True", "False", "None", '"cuda"', '"magma"', "(-1, 0)", "torch.float16", "[1, 2]", "fn"]
KEYWORDS = ["enabled", "dtype", "weights_only", "map_location", "use_reentrant", "_compile", "is_causal", "fallback",
            "return_lse", "enable_flash", "enable_math", "trust_repo", "init_scale", "cast_inputs", "dynamo", "verbose"]


@st.composite
def expressions(draw, depth=0):
    if depth > 2 or draw(st.booleans()):
        return draw(st.sampled_from(ATOMS))
    callee = draw(st.sampled_from(CALLEES))
    args = draw(st.lists(expressions(depth=depth + 1), max_size=3))
    kwargs = draw(st.lists(st.tuples(st.sampled_from(KEYWORDS), expressions(depth=depth + 1)), max_size=3, unique_by=lambda kv: kv[0]))
    parts = list(args)
    if draw(st.booleans()) and depth == 0:
        parts.append(draw(st.sampled_from(["*args", "**kwargs"])))
    parts += [f"{k}={v}" for k, v in kwargs]
    return f"{callee}({', '.join(parts)})"


@st.composite
def statements(draw, indent=""):
    kind = draw(st.sampled_from(["expr", "assign", "with", "def", "decorator", "if", "lambda", "comp"]))
    expr = draw(expressions())
    if kind == "expr":
        return [f"{indent}{expr}"]
    if kind == "assign":
        return [f"{indent}{draw(st.sampled_from(['y', 'out, lse', 'torch', 'load']))} = {expr}"]
    if kind == "with":
        return [f"{indent}with {expr}:", f"{indent}    pass"]
    if kind == "def":
        param = draw(st.sampled_from(["x", "torch", "amp", "load"]))
        return [f"{indent}def f({param}):", f"{indent}    return {expr}"]
    if kind == "decorator":
        return [f"{indent}@{draw(st.sampled_from(CALLEES))}", f"{indent}def g(x):", f"{indent}    return x"]
    if kind == "if":
        return [f"{indent}if x:", f"{indent}    {expr}  # comment", f"{indent}else:", f"{indent}    pass"]
    if kind == "lambda":
        return [f"{indent}h = lambda x: {expr}"]
    return [f"{indent}zs = [{expr} for x in range(3)]"]


@st.composite
def programs(draw):
    lines = draw(st.lists(st.sampled_from(IMPORTS), min_size=0, max_size=4))
    for _ in range(draw(st.integers(1, 5))):
        lines.extend(draw(statements()))
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    return newline.join(lines) + newline


def unbound_names(text: str) -> set[str]:
    tree = ast.parse(text)
    bound = set(dir(builtins)) | {"args", "kwargs"}
    used = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (used if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, ast.alias):
            bound.add(node.asname or node.name.split(".")[0])
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
    return used - bound


FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(programs(), st.sampled_from(["2.4", "2.9", "2.11", "2.15"]))
def test_engine_never_crashes_and_every_fix_is_sound(source, min_torch):
    ast.parse(source)
    path = Path("fuzz.py")
    options = make_settings(min_torch=min_torch, select=["ALL"])
    diagnostics = lint_text(source, path, options)
    for diagnostic in diagnostics:
        assert 0 <= diagnostic.start <= diagnostic.end <= len(source)
        assert _VERSION_PHRASE.search(diagnostic.message), diagnostic.message
    result = FileResult(path=path)
    fixed, remaining = _fix_to_fixpoint(source, path, options, diagnostics, True, result)
    ast.parse(fixed)  # every applied fix parses
    assert unbound_names(fixed) <= unbound_names(source), "a fix used a name it did not define"
    again = FileResult(path=path)
    refixed, _ = _fix_to_fixpoint(fixed, path, options, lint_text(fixed, path, options), True, again)
    assert refixed == fixed and again.fixed_count == 0, "fixes did not converge"


def _fragments() -> list[str]:
    """Whole statements from every rule's VALID/INVALID examples: real shapes, valid Python."""
    from torchpatch.rules import all_rules
    from torchpatch.rules.base import example_code

    found = []
    for rule in all_rules():
        for example in [*rule.VALID, *rule.INVALID]:
            code = example_code(example)
            try:
                tree = ast.parse(code)
            except SyntaxError:
                continue
            lines = code.splitlines()
            for statement in tree.body:
                found.append("\n".join(lines[statement.lineno - 1:statement.end_lineno]))
    return sorted(set(found))


FRAGMENTS = _fragments()


@st.composite
def fragment_programs(draw):
    """Statements of real rule examples, shuffled, some moved into a function or an if block."""
    chosen = draw(st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=8))
    lines = []
    for fragment in chosen:
        wrapper = draw(st.sampled_from(["", "def wrapped():\n", "if flag:\n", "try:\n", "class C:\n"]))
        if wrapper:
            body = textwrap.indent(fragment, "    ")
            lines.append(wrapper + body + ("\nexcept ImportError:\n    pass" if wrapper == "try:\n" else ""))
        else:
            lines.append(fragment)
    return "\n".join(lines) + "\n"


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fragment_programs(), st.sampled_from(["2.4", "2.6", "2.11", "2.15"]))
def test_real_fragments_in_new_places_never_break(source, min_torch):
    ast.parse(source)  # valid by construction: every input reaches the rules
    path = Path("fragments.py")
    options = make_settings(min_torch=min_torch, select=["ALL"])
    diagnostics = lint_text(source, path, options)
    for diagnostic in diagnostics:
        assert 0 <= diagnostic.start <= diagnostic.end <= len(source)
        assert _VERSION_PHRASE.search(diagnostic.message), diagnostic.message
    result = FileResult(path=path)
    fixed, _ = _fix_to_fixpoint(source, path, options, diagnostics, True, result)
    ast.parse(fixed)
    assert unbound_names(fixed) <= unbound_names(source), "a fix used a name it did not define"


def test_fragments_are_many_and_valid():
    assert len(FRAGMENTS) > 300
    for fragment in FRAGMENTS:
        ast.parse(fragment)


@settings(max_examples=50, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=200))
def test_arbitrary_text_never_crashes(text):
    """Garbage: the only promise is a ParseFailure (a clear reason), never another exception."""
    try:
        lint_text("import torch\n" + text, Path("t.py"), make_settings(select=["ALL"]))
    except ParseFailure as error:
        assert str(error)
