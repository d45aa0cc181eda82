"""torchpatch audit checked against real torch 2.13 on the generated corpus."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.torch

# Loads each file with real torch and the suggested allowlist, in a throwaway process. Classes
# that were __main__.X when saved are supplied the way a user would: defined in __main__.
ALLOWLIST_CHECK = r'''
import importlib, json, sys, warnings
import torch
warnings.simplefilter("ignore")
sys.path.insert(0, sys.argv[1])
from make_corpus import main_classes, register_main
register_main(main_classes())

def resolve(name):
    module, _, attr = name.rpartition(".")
    parts = attr.split(".")
    while True:
        try:
            obj = importlib.import_module(module)
            break
        except ImportError:
            module, _, head = module.rpartition(".")
            parts.insert(0, head)
    for part in parts:
        obj = getattr(obj, part)
    return obj

out = {}
for path, names in json.loads(sys.stdin.read()).items():
    try:
        with torch.serialization.safe_globals([(resolve(n), n) for n in names]):
            torch.load(path, weights_only=True)
        out[path] = "loaded"
    except Exception as error:
        out[path] = f"{type(error).__name__}: {error}"[:300]
print(json.dumps(out))
'''


def test_every_malicious_file_is_caught(corpus) -> None:
    pytest.importorskip("torch")
    missed = [n for n, l in corpus.items() if l["expected"] == "malicious" and l["report"].verdict != "malicious"]
    assert not missed


def test_no_false_alarm_on_benign_files(corpus) -> None:
    pytest.importorskip("torch")
    alarms = [n for n, l in corpus.items() if l["expected"] != "malicious" and l["report"].verdict == "malicious"]
    assert not alarms


def test_verdicts_match_the_construction(corpus) -> None:
    pytest.importorskip("torch")
    # "benign" edge cases probe torch's rules; their verdict depends on what torch does with them.
    wrong = {n: l["report"].verdict for n, l in corpus.items() if l["expected"] != "benign" and l["report"].verdict != l["expected"]}
    assert not wrong


def test_weights_only_decision_equals_torch_for_every_file(corpus) -> None:
    pytest.importorskip("torch")
    differ = {n: (l["report"].weights_only, l["torch_2_13"]) for n, l in corpus.items() if l["report"].weights_only != l["torch_2_13"]}
    assert not differ


def test_every_suggested_allowlist_loads_with_real_torch(corpus) -> None:
    pytest.importorskip("torch")
    # With the classes left for review uncommented, as a user who trusts them would.
    requests = {l["path"]: l["report"].allowlist + l["report"].review for l in corpus.values() if l["report"].allowlist or l["report"].review}
    assert len(requests) >= 6
    here = str(Path(__file__).parent)
    done = subprocess.run([sys.executable, "-c", ALLOWLIST_CHECK, here], check=False, input=json.dumps(requests), capture_output=True, text=True, timeout=300)
    results = json.loads(done.stdout.strip().splitlines()[-1])
    assert {path: r for path, r in results.items() if r != "loaded"} == {}


def test_numpy_allowlist_includes_the_build_only_dtype_class(corpus) -> None:
    pytest.importorskip("torch")
    report = corpus["need_numpy.pt"]["report"]
    assert "numpy.dtypes.Float64DType" in report.allowlist
    assert "torch.serialization.safe_globals([" in report.snippet


def test_main_class_gets_the_tuple_form(corpus) -> None:
    pytest.importorskip("torch")
    report = corpus["need_enum.pt"]["report"]
    assert report.allowlist == [] and report.review == ["__main__.Color"]
    assert '# (Color, "__main__.Color")' in report.snippet


def test_static_rules_equal_the_installed_torch() -> None:
    pytest.importorskip("torch")
    from torchpatch.audit.weights_only import rules_for
    from torchpatch.versions import Version

    # A fresh interpreter: other tests import torch._dynamo, which registers more safe globals.
    probe = (
        "import json, torch; from torch import _weights_only_unpickler as w;"
        "print(json.dumps([torch.__version__, sorted(w._get_allowed_globals()), sorted(w._get_user_allowed_globals()),"
        " w._blocklisted_modules]))"
    )
    done = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True, text=True, timeout=120)
    version, allowed, import_time, blocked = json.loads(done.stdout.strip().splitlines()[-1])
    rules = rules_for(Version.parse(version))
    assert rules.allowlist == frozenset(allowed)
    assert rules.import_time_allowlist == frozenset(import_time)
    assert rules.blocked_modules == frozenset(blocked)


def test_verify_agrees_with_the_static_verdicts(corpus, capsys) -> None:
    pytest.importorskip("torch")
    from torchpatch.frontends.cli import main

    benign = [l["path"] for l in corpus.values() if l["expected"] in ("safe", "needs-allowlist")]
    code = main(["audit", *benign, "--verify", "--output-format", "json", "--torch-version", "2.13"])
    captured = capsys.readouterr()
    rows = json.loads(captured.out)
    assert code == 1
    verdicts = {r["filename"]: [f["message"] for f in r["findings"] if f["code"] == "TPA400"] for r in rows}
    assert all(len(v) == 1 for v in verdicts.values()), verdicts
    # issue 22 §3: only files whose every global is reviewed are handed to torch; the rest
    # (classes of a training script's __main__) are refused, never run.
    refused = {name for name, messages in verdicts.items() if "not handed to torch because" in messages[0]}
    assert {Path(name).name for name in refused} == {"need_enum.pt", "need_dataclass.pt", "need_namedtuple.pt", "need_njt.pt",
                                                     "dead_plain_tensor.pkl"}
    assert all("agrees" in verdicts[name][0] for name in set(verdicts) - refused), verdicts
    assert "did not hand some files to torch" in captured.err


def test_convert_to_safetensors(corpus, tmp_path, capsys) -> None:
    torch = pytest.importorskip("torch")
    from safetensors.torch import load_file

    from torchpatch.frontends.cli import main

    out = tmp_path / "views.safetensors"
    assert main(["audit", corpus["ok_views.pt"]["path"], "--convert-to-safetensors", str(out)]) == 0
    loaded = load_file(str(out))
    original = torch.load(corpus["ok_views.pt"]["path"], weights_only=True)
    assert torch.equal(loaded["t"], original["t"]) and torch.equal(loaded["cols"], original["cols"])
    assert main(["audit", corpus["ok_views.pt"]["path"], "--convert-to-safetensors", str(out)]) == 2  # never overwrites
    tied = tmp_path / "tied.safetensors"
    assert main(["audit", corpus["ok_tied.pt"]["path"], "--convert-to-safetensors", str(tied)]) == 0
    assert json.loads(Path(str(tied) + ".json").read_text())["shared"] == {"b": "a"}
    sparse = tmp_path / "mixed.safetensors"
    assert main(["audit", corpus["ok_sparse.pt"]["path"], "--convert-to-safetensors", str(sparse)]) == 0
    assert "stored dense" in capsys.readouterr().err
    numpy_out = tmp_path / "numpy.safetensors"
    assert main(["audit", corpus["need_numpy.pt"]["path"], "--convert-to-safetensors", str(numpy_out)]) == 1
    assert json.loads(Path(str(numpy_out) + ".json").read_text())["values"]["arr"]["repr"].startswith("array(")
    quantized = tmp_path / "quantized.safetensors"
    assert main(["audit", corpus["ok_quantized.pt"]["path"], "--convert-to-safetensors", str(quantized)]) == 0
    assert "stored dequantized" in capsys.readouterr().err
    assert load_file(str(quantized))["q"].dtype == torch.float32
    bad = tmp_path / "bad.safetensors"
    assert main(["audit", corpus["mal_print.pt"]["path"], "--convert-to-safetensors", str(bad)]) == 2
    assert not bad.exists()


def test_sparse_multi_gigabyte_zip_is_a_real_checkpoint(tmp_path) -> None:
    torch = pytest.importorskip("torch")
    from test_audit_static import _sparse_zip

    path = tmp_path / "huge.pt"
    _sparse_zip(path, 1 << 30)
    loaded = torch.load(path, weights_only=True, mmap=True)  # mmap: the 4 GiB stays on disk
    assert loaded["w"].shape == (1 << 30,) and loaded["w"].dtype == torch.float32


@pytest.mark.parametrize("name", ["need_numpy_default_rng.pt", "need_numpy_randomstate.pt"])
def test_numpy_rng_state_is_benign_and_allowlistable(corpus, name: str) -> None:
    # issue 9 §3: numpy's unpickle helpers return a Generator / RandomState, whose BUILD torch
    # allows once the type is allowlisted (the allowlist is loaded with real torch above).
    pytest.importorskip("torch")
    report = corpus[name]["report"]
    assert report.verdict == "needs-allowlist" and report.review == [], report.reason
    assert "no allowlist" not in report.reason and report.allowlist
    if name == "need_numpy_randomstate.pt":
        assert "numpy.random.mtrand.RandomState" in report.allowlist
