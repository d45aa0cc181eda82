"""TP441: a C++/CUDA extension build that forces `_GLIBCXX_USE_CXX11_ABI=0` (PyPI wheels use the C++11 ABI since 2.7)."""

from __future__ import annotations

import ast

from torchpatch.rules._file_scan import named_uses
from torchpatch.rules.base import Invalid, Rule, Valid
from torchpatch.versions import v

_MODULE = "torch.utils.cpp_extension"
_BUILDERS = frozenset(f"{_MODULE}.{name}" for name in (
    "CppExtension", "CUDAExtension", "SyclExtension", "BuildExtension", "load", "load_inline"))
_MACRO = "_GLIBCXX_USE_CXX11_ABI"


def _forces_old_abi(node: ast.AST) -> bool:
    """``"-D_GLIBCXX_USE_CXX11_ABI=0"`` (alone or inside a longer flag string) or ``("_GLIBCXX_USE_CXX11_ABI", "0")``."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return f"{_MACRO}=0" in node.value.replace(" ", "")
    if isinstance(node, ast.Tuple) and len(node.elts) == 2:
        name, value = node.elts
        return isinstance(name, ast.Constant) and name.value == _MACRO \
            and isinstance(value, ast.Constant) and value.value in ("0", 0)
    return False


def _mentions_abi(ctx, test: ast.AST) -> bool:
    return _MACRO in ctx.source(test) or "cxx11" in ctx.source(test).lower()


def _old_abi_flags(ctx) -> list[ast.AST]:
    """Every forced-0 flag of the file, except those chosen by a test of the ABI (``if not torch._C._GLIBCXX_…``)."""
    found: list[ast.AST] = []
    pending: list[ast.AST] = [ctx.tree]
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.If, ast.IfExp, ast.While)) and _mentions_abi(ctx, node.test):
            continue  # matched to the installed torch: the right choice on every build
        if isinstance(node, ast.JoinedStr):
            continue  # f"-D_GLIBCXX_USE_CXX11_ABI={int(torch._C._GLIBCXX_USE_CXX11_ABI)}"
        if _forces_old_abi(node):
            found.append(node)
            continue
        pending.extend(ast.iter_child_nodes(node))
    return sorted(found, key=lambda n: (n.lineno, n.col_offset))


class Cxx11AbiForcedOff(Rule):
    """
    ## What it does
    Flags `-D_GLIBCXX_USE_CXX11_ABI=0` (or `define_macros=[("_GLIBCXX_USE_CXX11_ABI", "0")]`) in a
    file that builds a PyTorch C++/CUDA extension with `torch.utils.cpp_extension`
    (`CppExtension`, `CUDAExtension`, `BuildExtension`, `load`, `load_inline`). A flag chosen by
    a test of the ABI (`if not torch._C._GLIBCXX_USE_CXX11_ABI:`) or computed from it in an
    f-string is left alone.

    ## Why is this bad?
    Since PyTorch 2.7 the PyPI x86_64 wheels are built with the C++11 ABI
    (`torch._C._GLIBCXX_USE_CXX11_ABI` is True; in 2.6 only the cu126, aarch64, ROCm and XPU
    builds were). An extension compiled with the old ABI cannot link against them: importing it
    fails with `undefined symbol` errors for functions that take `std::string`. Up to 2.7
    `BuildExtension` appended torch's own `-D_GLIBCXX_USE_CXX11_ABI=<torch's value>` after your
    flags and so overrode a forced 0; from 2.8 it no longer adds the flag (src 2.8
    `cpp_extension.py`), and JIT builds (`load`, `load_inline`) always put your `extra_cflags`
    last, so the forced 0 takes effect. Remove it (the compiler's default is the C++11 ABI), or
    derive it from `torch._C._GLIBCXX_USE_CXX11_ABI`. Prebuilt extension wheels (flash-attn's
    `cxx11abiFALSE`/`cxx11abiTRUE` builds) must match the same way.
    """

    code = "TP441"
    name = "cxx11-abi-forced-off"
    summary = "Extension build forcing `-D_GLIBCXX_USE_CXX11_ABI=0` (PyPI wheels use the C++11 ABI since 2.7)"
    changed_in = v("2.7")
    references = (
        "https://pytorch.org/blog/pytorch2-6/",
        "https://docs.pytorch.org/docs/stable/cpp_extension.html",
    )
    catalog_ids = ("plat.cxx11-abi",)
    references_to = _BUILDERS

    VALID = [
        "from torch.utils.cpp_extension import CppExtension\next = CppExtension('ops', ['ops.cpp'], extra_compile_args=['-O3'])\n",
        "import torch\nfrom torch.utils.cpp_extension import CUDAExtension\n"
        "abi = f\"-D_GLIBCXX_USE_CXX11_ABI={int(torch._C._GLIBCXX_USE_CXX11_ABI)}\"\n"
        "ext = CUDAExtension('ops', ['ops.cu'], extra_compile_args={'cxx': [abi]})\n",
        "import torch\nfrom torch.utils.cpp_extension import load\nflags = []\n"
        "if not torch._C._GLIBCXX_USE_CXX11_ABI:\n    flags.append('-D_GLIBCXX_USE_CXX11_ABI=0')\n"
        "ops = load('ops', ['ops.cpp'], extra_cflags=flags)\n",
        # Not a torch extension build.
        "import torch\nfrom setuptools import Extension\next = Extension('x', ['x.cpp'], extra_compile_args=['-D_GLIBCXX_USE_CXX11_ABI=0'])\n",
        Valid("from torch.utils.cpp_extension import load\nops = load('ops', ['ops.cpp'], extra_cflags=['-D_GLIBCXX_USE_CXX11_ABI=0'])\n",
              target_torch="2.6"),
    ]
    INVALID = [
        Invalid("from torch.utils.cpp_extension import load\n"
                "ops = load('ops', ['ops.cpp'], extra_cflags=['-O2', '-D_GLIBCXX_USE_CXX11_ABI=0'])\n"),
        Invalid("from setuptools import setup\nfrom torch.utils.cpp_extension import BuildExtension, CUDAExtension\n"
                "cxx_flags = ['-O3', '-D_GLIBCXX_USE_CXX11_ABI=0']\n"
                "setup(ext_modules=[CUDAExtension('ops', ['ops.cu'], extra_compile_args={'cxx': cxx_flags})],\n"
                "      cmdclass={'build_ext': BuildExtension})\n"),
        Invalid("import torch.utils.cpp_extension as ext\n"
                "m = ext.CppExtension('ops', ['a.cpp'], define_macros=[('_GLIBCXX_USE_CXX11_ABI', '0')])\n"),
    ]

    def check_reference(self, ctx, reference):
        if reference.in_import or _MACRO not in ctx.text:
            return
        uses = named_uses(ctx, _BUILDERS)
        if not uses or uses[0][0] is not reference.node:
            return  # the file's flags are reported once, from its first use of cpp_extension
        for flag in _old_abi_flags(ctx):
            message = (f"forces the old C++ ABI: PyPI torch wheels use the C++11 ABI since PyTorch {self.changed_in} "
                       f"and `cpp_extension` stopped overriding this flag in 2.8; the extension fails to load "
                       f"(undefined symbols); drop it or use `torch._C._GLIBCXX_USE_CXX11_ABI`")
            yield ctx.diagnostic(flag, message)
