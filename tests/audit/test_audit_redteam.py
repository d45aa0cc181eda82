"""Issue 22: no allowlist torchpatch prints, and nothing audit does, runs a payload (real torch 2.13)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from make_corpus import op_global, op_str, payload_pickle, torch_zip
from redteam import JIT_LOAD, NAIVE_LOAD, TORCHSCRIPT_WRITER, pickle_payloads

from torchpatch.audit.auditor import audit_path
from torchpatch.versions import Version

V213 = Version(2, 13)


def _python(script: str, *argv: str, stdin: str = "") -> str:
    done = subprocess.run([sys.executable, "-c", script, *argv], input=stdin, capture_output=True, text=True, timeout=300, check=True)
    return done.stdout.strip().splitlines()[-1]


@pytest.fixture(scope="module")
def planted(tmp_path_factory) -> dict[str, dict]:
    """Every pickle payload written to disk, with the proof that it runs under real torch."""
    pytest.importorskip("torch")
    pytest.importorskip("sympy")
    folder = tmp_path_factory.mktemp("redteam")
    files = {}
    for name in pickle_payloads("unused"):
        marker = str(folder / f"{name}.marker")
        raw, naive, weights_only = pickle_payloads(marker)[name]
        path = folder / f"{name}.pt"
        path.write_bytes(raw)
        files[name] = {"path": str(path), "marker": marker, "naive": naive, "weights_only": weights_only}
    request = json.dumps([[f["path"], f["marker"], f["weights_only"], f["naive"]] for f in files.values()])
    ran = json.loads(_python(NAIVE_LOAD, stdin=request))
    for entry, proof in zip(files.values(), ran):
        entry["ran"] = proof
        Path(entry["marker"]).unlink(missing_ok=True)
    return files


def test_every_payload_runs_under_real_torch_with_the_naive_allowlist(planted) -> None:
    # The regression proof: torch 2.13 runs each payload once its names are allowlisted
    # (weights_only=True; NEWOBJ_EX only under the full unpickler, weights_only=False).
    assert {name: entry["ran"] for name, entry in planted.items()} == {name: True for name in planted}


@pytest.mark.parametrize("name", sorted(pickle_payloads("unused")))
def test_payload_is_malicious_and_nothing_is_left_to_allowlist(planted, name) -> None:
    report = audit_path(planted[name]["path"], V213)
    assert report.verdict == "malicious", report.reason
    # No snippet, no allowlist, no commented # REVIEW line a user could uncomment.
    assert (report.allowlist, report.review, report.snippet) == ([], [], "")
    assert not Path(planted[name]["marker"]).exists()


def test_verify_and_convert_never_run_a_payload(planted, tmp_path, capsys) -> None:
    from torchpatch.frontends.cli import main

    paths = [entry["path"] for entry in planted.values()]
    assert main(["audit", *paths, "--verify", "--torch-version", "2.13", "--output-format", "json"]) == 3
    rows = json.loads(capsys.readouterr().out)
    assert all(any(f["code"] == "TPA400" and "not handed to torch" in f["message"] for f in r["findings"]) for r in rows)
    for entry in planted.values():
        out = tmp_path / (Path(entry["path"]).stem + ".safetensors")
        assert main(["audit", entry["path"], "--convert-to-safetensors", str(out)]) == 2
        assert "is not converted" in capsys.readouterr().err and not out.exists()
    assert not any(Path(entry["marker"]).exists() for entry in planted.values())


def test_the_stored_setstate_callable_is_named_in_the_headline(planted) -> None:
    report = audit_path(planted["setstate_namespace_sympify"]["path"], V213)
    assert "sets __setstate__ on an instance of argparse.Namespace" in report.reason
    assert any("sympy.sympify" in f.message and "evaluates a string" in f.message for f in report.findings)


@pytest.fixture(scope="module")
def scripted(tmp_path_factory) -> dict[str, tuple[str, str]]:
    pytest.importorskip("torch")
    folder = tmp_path_factory.mktemp("torchscript")
    archives = {}
    for name, effect in (("from_file", "1"), ("math", "0")):
        path, marker = str(folder / f"{name}.pt"), str(folder / f"{name}.marker")
        subprocess.run([sys.executable, "-c", TORCHSCRIPT_WRITER, path, marker, effect], check=True, capture_output=True, timeout=300)
        archives[name] = (path, marker)
    return archives


def test_torchscript_setstate_with_from_file_runs_on_jit_load_and_is_malicious(scripted, tmp_path) -> None:
    path, marker = scripted["from_file"]
    assert _python(JIT_LOAD, path, marker) == "RAN"  # the regression proof
    Path(marker).unlink()
    report = audit_path(path, V213)
    assert report.verdict == "malicious" and "aten::from_file" in report.reason and "__setstate__" in report.reason
    from torchpatch.frontends.cli import main

    assert main(["audit", path, "--verify", "--torch-version", "2.13"]) == 3
    assert main(["audit", path, "--convert-to-safetensors", str(tmp_path / "x.safetensors")]) == 2
    assert not Path(marker).exists()


def test_torchscript_setstate_with_tensor_math_only_is_not_malicious(scripted) -> None:
    path, marker = scripted["math"]
    assert _python(JIT_LOAD, path, marker) == "CLEAN"
    report = audit_path(path, V213)
    assert report.verdict == "needs-allowlist", report.reason


# ---- no false alarms on what users really save (issue 22 §5) ----

LOADS_WITH_SNIPPET = r'''
import sys, warnings
import torch
warnings.simplefilter("ignore")
exec(sys.stdin.read())
print(type(checkpoint).__name__)
'''


def _save(tmp_path, name: str, build: str) -> str:
    path = str(tmp_path / name)
    subprocess.run([sys.executable, "-c", f"import functools, types, uuid, torch\nobj = {build}\ntorch.save(obj, {path!r})"],
                   check=True, capture_output=True, timeout=300)
    return path


@pytest.mark.parametrize(("name", "build"), [
    ("partial_config.pt", "{'norm_layer': functools.partial(torch.nn.LayerNorm, eps=1e-6), 'depth': 12}"),
    ("timm_like_model.pt", "torch.nn.Sequential(torch.nn.Linear(2, 2))\nobj.norm_layer = functools.partial(torch.nn.LayerNorm, eps=1e-6)"),
    ("namespace_config.pt", "{'cfg': types.SimpleNamespace(lr=0.1, name='run'), 'id': uuid.UUID(int=7)}"),
])
def test_ordinary_configs_get_a_snippet_that_loads(tmp_path, name, build) -> None:
    pytest.importorskip("torch")
    path = _save(tmp_path, name, build)
    report = audit_path(path, V213)
    assert report.verdict == "needs-allowlist" and report.review == [] and report.allowlist, report.reason
    assert not any(f.severity == "malicious" for f in report.findings)
    assert _python(LOADS_WITH_SNIPPET, stdin=report.snippet) in ("dict", "Sequential")


def test_a_partial_of_an_unreviewed_function_is_left_for_review() -> None:
    from make_corpus import call

    from torchpatch.audit.auditor import audit_stream
    import io

    raw = torch_zip(payload_pickle(call(op_global("functools", "partial"), op_global("mylib.act", "gelu"))))
    report = audit_stream(io.BytesIO(raw), len(raw), "x.pt", V213)
    assert report.verdict == "needs-allowlist" and report.review == ["mylib.act.gelu"] and "functools.partial" in report.allowlist


def test_a_plain_numeric_npy_is_safe(tmp_path) -> None:
    numpy = pytest.importorskip("numpy")
    path = tmp_path / "weights.npy"
    numpy.save(path, numpy.arange(6, dtype=numpy.float32))
    report = audit_path(str(path), V213)
    assert report.verdict == "safe" and "<f4" in report.reason and report.format == "numpy"


def test_a_safetensors_verdict_says_torch_needs_the_package(tmp_path) -> None:
    torch = pytest.importorskip("torch")
    from safetensors.torch import save_file

    path = tmp_path / "w.safetensors"
    save_file({"w": torch.ones(2)}, str(path))
    report = audit_path(str(path), V213)
    assert report.verdict == "safe" and "pip install safetensors" in report.reason


def test_a_special_key_in_a_build_state_is_malicious_even_without_a_second_build() -> None:
    import io

    from torchpatch.audit.auditor import audit_stream

    body = op_global("argparse", "Namespace") + b")\x81}" + op_str("__class__") + op_global("argparse", "Namespace") + b"sb"
    raw = torch_zip(payload_pickle(body))
    report = audit_stream(io.BytesIO(raw), len(raw), "x.pt", V213)
    assert report.verdict == "malicious" and "sets __class__" in report.reason
