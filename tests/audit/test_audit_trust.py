"""issue 9 §1: a called class is a call. The auditor never vouches for a class that can run code.

Payloads are harmless: they create a marker file in a temporary folder (torch.distributed's
FileStore creates its file, Popen runs `touch`), and only the tests marked torch load them, in a
throwaway interpreter, to prove what following a snippet does.
"""

from __future__ import annotations

import io
import subprocess
import sys

import pytest
from make_corpus import call, op_global, op_str, payload_pickle, torch_zip

from torchpatch.audit.auditor import audit_stream
from torchpatch.audit.names import resolve
from torchpatch.versions import Version

V213 = Version(2, 13)


def audit_bytes(data: bytes, name: str = "file.pt"):
    return audit_stream(io.BytesIO(data), len(data), name, V213)


def touch_args(marker: str) -> bytes:
    return b"]" + op_str("touch") + b"a" + op_str(marker) + b"a"


def calls(module: str, name: str, args: bytes = b"") -> bytes:
    return torch_zip(payload_pickle(call(op_global(module, name), args)))


@pytest.mark.parametrize(("module", "name"), [
    ("torch.utils.cpp_extension", "subprocess.Popen"),  # a torch module re-exporting subprocess
    ("torch.utils.cpp_extension.subprocess", "Popen"),  # the same, spelled as a module
    ("torch", "os.system"),
    ("torch.distributed", "FileStore"),  # opens its file in __init__
    ("torch.distributed", "TCPStore"),  # opens a socket in __init__
    ("torch._C._distributed_c10d", "FileStore"),
    ("mako.template", "Template"),  # compiles and runs template code
    ("jinja2", "Template"),
    ("subprocess", "Popen"),
    ("mypkg", "tools.subprocess.Popen"),  # a walk through a module name of the denylist
    ("mypkg", "helpers.Runner"),  # a walk through a lower-case attribute nobody can resolve
    ("logging", "FileHandler"),
])
def test_classes_that_run_code_when_built_are_malicious(module: str, name: str) -> None:
    report = audit_bytes(calls(module, name, touch_args("/nonexistent/marker")))
    assert report.verdict == "malicious", report.reason
    assert report.allowlist == [] and report.review == [] and report.snippet == ""


def test_reexports_are_judged_as_what_they_resolve_to() -> None:
    popen = resolve("torch.utils.cpp_extension", "subprocess.Popen")
    assert (popen.name, popen.kind) == ("subprocess.Popen", "class")
    assert resolve("torch.distributed", "FileStore").name == "torch._C._distributed_c10d.FileStore"
    assert resolve("torch.nn", "Linear").name == "torch.nn.modules.linear.Linear"
    report = audit_bytes(calls("torch.utils.cpp_extension", "subprocess.Popen", touch_args("/x")))
    assert "resolves to subprocess.Popen" in report.reason


@pytest.mark.parametrize(("module", "name"), [
    ("__main__", "Launcher"),
    ("mypkg.models", "Wrapper"),
    ("mypkg", "Outer.Inner"),  # a nested class: CapWords all the way
    ("transformers.models.llama", "LlamaForCausalLM"),  # not a reviewed config class
])
def test_unknown_classes_are_left_for_review(module: str, name: str) -> None:
    report = audit_bytes(torch_zip(payload_pickle(op_global(module, name) + b")\x81" + b"}b")))
    assert report.verdict == "needs-allowlist", report.reason
    assert report.allowlist == [] and report.review == [f"{module}.{name}"]
    assert "has not reviewed" in report.reason and "__init__/__setstate__" in report.reason
    active = [line for line in report.snippet.splitlines() if not line.lstrip().startswith("#")]
    assert not any(name.split(".")[-1] in line for line in active)


@pytest.mark.parametrize(("module", "name"), [
    ("argparse", "Namespace"),
    ("collections", "OrderedDict"),
    ("torch.nn.modules.linear", "Linear"),
    ("torch.optim.adam", "Adam"),
    ("torch.utils.hooks", "RemovableHandle"),
    ("transformers.training_args", "TrainingArguments"),
    ("pathlib", "PurePosixPath"),
])
def test_reviewed_plain_data_classes_go_into_the_allowlist(module: str, name: str) -> None:
    report = audit_bytes(torch_zip(payload_pickle(op_global(module, name) + b")\x81" + b"}b")))
    assert report.verdict in ("needs-allowlist", "safe"), report.reason
    assert report.review == []
    if report.verdict == "needs-allowlist":
        assert f"{module}.{name}" in report.allowlist


# What torchpatch's audit printed for these files before issue 9 (copied from its output).
OLD_FILESTORE_SNIPPET = """import torch
import torch.distributed

with torch.serialization.safe_globals([
    (torch.distributed.FileStore, "torch.distributed.FileStore"),
]):
    checkpoint = torch.load(PATH, weights_only=True)
"""
# The old Popen snippet imported torch.utils.cpp_extension.subprocess, which is not a module;
# a user fixing that import got this:
OLD_POPEN_SNIPPET = """import torch
import torch.utils.cpp_extension

with torch.serialization.safe_globals([
    (torch.utils.cpp_extension.subprocess.Popen, "torch.utils.cpp_extension.subprocess.Popen"),
]):
    checkpoint = torch.load(PATH, weights_only=True)
    checkpoint["x"].wait()
"""


def payload_ran(snippet: str, path: str, marker) -> tuple[bool, str]:
    """Run the snippet in a throwaway interpreter; did the marker appear while it ran? (FileStore
    deletes its file when the store is destroyed, so the check runs before the process exits.)"""
    code = ("import warnings; warnings.simplefilter('ignore')\nPATH = " + repr(path) + "\ntry:\n"
            + "".join("    " + line + "\n" for line in snippet.splitlines())
            + "finally:\n    import os\n    print('RAN' if os.path.exists(" + repr(str(marker)) + ") else 'CLEAN')\n")
    done = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True, timeout=120, cwd=str(marker.parent))
    return done.stdout.strip().endswith("RAN"), done.stderr


@pytest.mark.torch
@pytest.mark.parametrize(("module", "name", "args", "old"), [
    ("torch.distributed", "FileStore", lambda m: op_str(m) + b"K\x01", OLD_FILESTORE_SNIPPET),
    ("torch.utils.cpp_extension", "subprocess.Popen", touch_args, OLD_POPEN_SNIPPET),
])
def test_following_the_old_snippet_ran_code_under_weights_only_and_the_new_report_offers_none(tmp_path, module, name, args, old) -> None:
    pytest.importorskip("torch")
    marker = tmp_path / "payload-ran"
    path = tmp_path / "model.pt"
    data = calls(module, name, args(str(marker)))
    path.write_bytes(data)
    ran, stderr = payload_ran(old, str(path), marker)
    assert ran, f"the old allowlist should have let torch.load(weights_only=True) run the payload: {stderr}"
    report = audit_bytes(data, str(path))
    assert report.verdict == "malicious" and report.allowlist == [] and report.review == [] and report.snippet == ""


LAUNCHER = """
import pathlib

class Launcher:
    def __setstate__(self, state):
        pathlib.Path(state["marker"]).touch()  # stands for anything a user class may do
"""


@pytest.mark.torch
def test_new_snippet_for_an_unreviewed_class_runs_nothing_as_pasted(tmp_path) -> None:
    pytest.importorskip("torch")
    (tmp_path / "launcher_mod.py").write_text(LAUNCHER)
    marker = tmp_path / "payload-ran"
    data = torch_zip(payload_pickle(op_global("launcher_mod", "Launcher") + b")\x81" + b"}" + op_str("marker") + op_str(str(marker)) + b"sb"))
    path = tmp_path / "model.pt"
    path.write_bytes(data)
    report = audit_bytes(data, "model.pt")
    assert report.review == ["launcher_mod.Launcher"] and report.allowlist == []
    ran, stderr = payload_ran(report.snippet, str(path), marker)
    assert not ran and "UnpicklingError" in stderr
    # Uncommenting the reviewed line is what the comment warns about: the class's code runs.
    trusting = report.snippet.replace("    # (launcher_mod.Launcher", "    (launcher_mod.Launcher").replace("import torch\n", "import torch\nimport launcher_mod\n", 1)
    ran, stderr = payload_ran(trusting, str(path), marker)
    assert ran, stderr
