"""TP435: a C++ extension build that forces `-std=c++17` (or older) while PyTorch 2.12+ builds with C++20."""

from __future__ import annotations

import ast
import re
import weakref

from torchpatch.rules._helpers import remove_element
from torchpatch.rules.base import UNSAFE, Edit, Fix, Invalid, Rule, Valid
from torchpatch.versions import v

_MODULE = "torch.utils.cpp_extension"
#: Keywords whose list (or dict of lists, for setuptools extensions) reaches the compiler command line.
_FLAG_KEYWORDS = {
    **{f"{_MODULE}.{name}": ("extra_compile_args",) for name in ("CppExtension", "CUDAExtension", "SyclExtension")},
    **{f"{_MODULE}.{name}": ("extra_cflags", "extra_cuda_cflags", "extra_sycl_cflags") for name in ("load", "load_inline")},
}
_REPORTED: "weakref.WeakKeyDictionary[ast.AST, set[int]]" = weakref.WeakKeyDictionary()
_OLD_STANDARD = re.compile(r"^(?:-std=(?:c|gnu)\+\+(?:98|03|0x|11|1y|14|1z|17)|/std:c\+\+1[47])$")


class CppExtensionStdFlag(Rule):
    """
    ## What it does
    Flags `-std=c++17` (and `-std=gnu++17`, `/std:c++17`, or an older standard) written as a literal in
    the compiler flags of `torch.utils.cpp_extension.CppExtension` / `CUDAExtension` /
    `SyclExtension` (`extra_compile_args`, a list or a `{"cxx": [...], "nvcc": [...]}` dict) and of
    `load` / `load_inline` (`extra_cflags`, `extra_cuda_cflags`, `extra_sycl_cflags`): in the call,
    or in what a name passed there is assigned in the same function or module (through `+` and
    helper calls such as `append_nvcc_threads([...])`).

    ## Why is this bad?
    PyTorch 2.12 builds extensions with `-std=c++20` (`/std:c++20` on MSVC): the 2.11.0 wheel's
    `cpp_extension.py` says `-std=c++17` eight times, the 2.12.1 one `-std=c++20`, and its headers
    use C++20 (g++ 12 warns `-Wc++20-extensions` on `c10/core/AutogradState.h` of torch 2.13 under
    `-std=c++17`; a compiler that enforces the standard rejects it). torch adds its own `-std` only
    when the flags have none ("NVCC does not allow multiple -std"), so a forced `-std=c++17`
    replaces the standard torch needs. Drop the flag: every release adds the right one itself.
    """

    code = "TP435"
    name = "cpp-extension-std-flag"
    summary = "`-std=c++17` in a C++ extension's flags (PyTorch 2.12+ builds and ships headers for C++20)"
    changed_in = v("2.12")
    fix_safety = UNSAFE
    fix_safety_note = (
        "Dropping the flag lets torch pick the standard: `-std=c++17` on 2.4-2.11 (the same as before for a "
        "`-std=c++17` flag, newer than an older one such as `-std=c++14`) and "
        "`-std=c++20` from 2.12, which is the point but changes how your sources compile: check that they build "
        "as C++20."
    )
    references = ("https://docs.pytorch.org/docs/stable/cpp_extension.html",)
    catalog_ids = ("cpp.cxx20",)
    calls = frozenset(_FLAG_KEYWORDS)

    VALID = [
        "from torch.utils.cpp_extension import CppExtension\n"
        "ext = CppExtension(\"ext\", [\"ext.cpp\"], extra_compile_args=[\"-O3\"])\n",
        "from torch.utils import cpp_extension\n"
        "mod = cpp_extension.load(\"ext\", [\"ext.cpp\"], extra_cflags=[\"-std=c++20\"])\n",
        Valid("from torch.utils.cpp_extension import CppExtension\n"
              "ext = CppExtension(\"ext\", [\"ext.cpp\"], extra_compile_args=[\"-std=c++17\"])\n", target_torch="2.11"),
        "from setuptools import Extension\next = Extension(\"ext\", [\"ext.cpp\"], extra_compile_args=[\"-std=c++17\"])\n",
    ]
    INVALID = [
        Invalid("from torch.utils.cpp_extension import CUDAExtension\n"
                "ext = CUDAExtension(\"ext\", [\"ext.cu\"],\n"
                "                    extra_compile_args={\"cxx\": [\"-O3\", \"-std=c++17\"], \"nvcc\": [\"-std=c++17\", \"-O3\"]})\n",
                fixed="from torch.utils.cpp_extension import CUDAExtension\n"
                      "ext = CUDAExtension(\"ext\", [\"ext.cu\"],\n"
                      "                    extra_compile_args={\"cxx\": [\"-O3\"], \"nvcc\": [\"-O3\"]})\n"),
        Invalid("from torch.utils.cpp_extension import CUDAExtension\n"
                "extra_compile_args = {\"cxx\": [\"-O3\", \"-std=c++17\"], \"nvcc\": threads([\"-O3\"]) + cc_flag}\n"
                "ext = CUDAExtension(\"ext\", [\"ext.cu\"], extra_compile_args=extra_compile_args)\n"),
        Invalid("import torch.utils.cpp_extension\n"
                "mod = torch.utils.cpp_extension.load_inline(\"ext\", src, extra_cflags=[\"-std=c++17\"])\n",
                fixed="import torch.utils.cpp_extension\n"
                      "mod = torch.utils.cpp_extension.load_inline(\"ext\", src, extra_cflags=[])\n"),
    ]

    def check_call(self, ctx, call, qualname):
        reported = _REPORTED.setdefault(ctx.tree, set())
        for item in call.keywords:
            if item.arg not in _FLAG_KEYWORDS[qualname]:
                continue
            for flags in _flag_lists(ctx, call, item.value, depth=0):
                for index, flag in enumerate(flags.elts):
                    if not (isinstance(flag, ast.Constant) and isinstance(flag.value, str)
                            and _OLD_STANDARD.match(flag.value)) or id(flag) in reported:
                        continue
                    reported.add(id(flag))
                    # (A two-element tuple would become a parenthesized string: no fix.)
                    two_tuple = isinstance(flags, ast.Tuple) and len(flags.elts) == 2
                    fix = None if two_tuple else Fix(f"Drop `{flag.value}`", [_remove_element(ctx, flags, index)], UNSAFE)
                    # MSVC spells it `/std:c++20` (2.12.1 wheel's cpp_extension.py), gcc/nvcc `-std=c++20`.
                    standard = "/std:c++20" if flag.value.startswith("/") else "-std=c++20"
                    yield ctx.diagnostic(flag, (
                        f"`{flag.value}` overrides the C++ standard torch builds extensions with: `{standard}` "
                        f"since PyTorch {self.changed_in}, whose headers use C++20; drop it"), fix)


def _flag_lists(ctx, call: ast.Call, value: ast.expr, depth: int):
    """The list literals whose strings reach the compiler: the value itself, a dict's values, both sides of `+`,
    the arguments of a helper call (`append_nvcc_threads([...])`), and what a plain name is assigned in the
    call's own function (or module)."""
    if depth > 6:
        return
    if isinstance(value, (ast.List, ast.Tuple)):
        yield value
    elif isinstance(value, ast.Dict):
        for item in value.values:
            yield from _flag_lists(ctx, call, item, depth + 1)
    elif isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add):
        yield from _flag_lists(ctx, call, value.left, depth + 1)
        yield from _flag_lists(ctx, call, value.right, depth + 1)
    elif isinstance(value, ast.Call):
        for argument in value.args:
            yield from _flag_lists(ctx, call, argument, depth + 1)
    elif isinstance(value, ast.Name):
        for assigned in _assignments(ctx, call, value.id):
            yield from _flag_lists(ctx, call, assigned, depth + 1)


def _assignments(ctx, call: ast.Call, name: str):
    scope = ctx.parent_of(call)
    while scope is not None and not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)):
        scope = ctx.parent_of(scope)
    pending = list(ast.iter_child_nodes(scope or ctx.tree))
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            yield node.value
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            pending.extend(ast.iter_child_nodes(node))


def _remove_element(ctx, sequence: ast.List | ast.Tuple, index: int) -> Edit:
    """The edit that removes one element of a list literal with its separating comma (comments kept)."""
    if isinstance(sequence, ast.List):
        return remove_element(ctx, sequence, index)
    elements = sequence.elts
    element = elements[index]
    if index + 1 < len(elements):
        return Edit(ctx.start(element), ctx.start(elements[index + 1]), "")
    if index > 0:
        return Edit(ctx.end(elements[index - 1]), ctx.end(element), "")
    end = ctx.end(element)
    rest = ctx.text[end:ctx.end(sequence) - 1]
    return Edit(ctx.start(element), end + len(rest) - len(rest.lstrip(", \t")), "")
