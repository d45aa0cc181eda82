"""torchpatch audit without torch: formats, the pickle scan, the weights_only emulator, the CLI."""

from __future__ import annotations

import io
import json
import pickle
import subprocess
import sys
import zipfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from make_corpus import (
    PRINT,
    call,
    legacy,
    malicious_files,
    op_global,
    op_str,
    payload_pickle,
    tar_checkpoint,
    torch_zip,
)

from torchpatch.audit.auditor import audit_path, audit_stream
from torchpatch.audit.names import canonical, python_name
from torchpatch.audit.weights_only import known_releases, numpy_dtype_class, rules_for
from torchpatch.frontends.cli import main
from torchpatch.versions import Version

V213 = Version(2, 13)

DEFAULTDICT = (
    b"\x80\x02}" + op_str("d")
    + op_global("collections", "defaultdict") + op_global("builtins", "list") + b"\x85R"
    + b"(" + op_str("a") + b"]K\x01a" + b"u" + b"s."
)


def audit_bytes(data: bytes, name: str = "file.pt", version: Version = V213):
    return audit_stream(io.BytesIO(data), len(data), name, version)


MALICIOUS = malicious_files("/nonexistent/marker")


@pytest.mark.parametrize("name", sorted(MALICIOUS))
def test_every_crafted_payload_is_malicious(name: str) -> None:
    report = audit_bytes(MALICIOUS[name], name)
    assert report.verdict == "malicious", report.reason
    assert any(f.severity == "malicious" for f in report.findings)


def test_plain_state_dict_pickle_is_safe() -> None:
    report = audit_bytes(torch_zip(pickle.dumps({"a": 1, "b": [1.5, "x"], "c": None}, protocol=2)))
    assert (report.format, report.verdict, report.weights_only) == ("torch-zip", "safe", "accept")


def test_protocol_4_is_benign_but_unloadable() -> None:
    report = audit_bytes(torch_zip(pickle.dumps({"a": 1}, protocol=4)))
    assert report.verdict == "needs-allowlist"
    assert report.allowlist == []
    assert "Unsupported operand 149 (FRAME)" in report.reason and "protocol (2)" in report.reason


def test_defaultdict_is_a_dead_end_since_2_10_but_allowlistable_before() -> None:
    report = audit_bytes(torch_zip(DEFAULTDICT))
    assert report.verdict == "needs-allowlist" and report.allowlist == []
    assert "SETITEM on a collections.defaultdict" in report.reason and "plain dicts" in report.reason
    old = audit_bytes(torch_zip(DEFAULTDICT), version=Version(2, 9))
    assert old.allowlist == ["collections.defaultdict", "builtins.list"]


def test_names_resolve_like_the_unpickler() -> None:
    assert python_name("commands", "getoutput", 2) == ("subprocess", "getoutput")
    assert python_name("__builtin__", "print", 2) == ("builtins", "print")
    assert python_name("commands", "getoutput", 3) == ("commands", "getoutput")
    assert canonical("posix", "system") == "os.system"
    report = audit_bytes(MALICIOUS["mal_commands_alias.pt"])
    written = {g.written: g.canonical for g in report.globals}
    assert written["commands.getoutput"] == "subprocess.getoutput"


def test_rot13_stack_global_fails_closed() -> None:
    report = audit_bytes(MALICIOUS["mal_rot13_stack_global.pt"])
    assert any("cannot be resolved to a literal name" in f.message for f in report.findings)


def test_nested_payload_is_named() -> None:
    report = audit_bytes(MALICIOUS["mal_nested_load_from_bytes.pt"])
    assert any("nested payload" in f.message and "builtins.print" in f.message for f in report.findings)


def test_nested_benign_bytes_are_not_malicious() -> None:
    inner = torch_zip(pickle.dumps({"a": 1}, protocol=2))
    encoded = call(op_global("_codecs", "encode"), op_str(inner.decode("latin1")), op_str("latin1"))
    outer = torch_zip(payload_pickle(call(op_global("torch.storage", "_load_from_bytes"), encoded)))
    report = audit_bytes(outer)
    assert report.verdict == "needs-allowlist" and report.allowlist == []
    assert any(f.code == "TPA102" for f in report.findings)


@pytest.mark.parametrize(("name", "code"), [
    ("mal_duplicate_last.pt", "TPA201"),
    ("mal_bad_crc.pt", "TPA206"),
    ("mal_local_name.pt", "TPA208"),
    ("mal_deflated.pt", "TPA204"),
])
def test_zip_differentials_are_reported_as_tampering(name: str, code: str) -> None:
    assert code in {f.code for f in audit_bytes(MALICIOUS[name]).findings}


def test_duplicate_read_by_torch_is_the_first() -> None:
    report = audit_bytes(MALICIOUS["mal_duplicate_last.pt"])
    assert report.weights_only == "accept"  # torch reads the benign first copy
    assert report.verdict == "malicious"  # ...but a naive reader runs the second


@pytest.mark.parametrize(("data", "fmt"), [
    (torch_zip(pickle.dumps({}, protocol=2)), "torch-zip"),
    (torch_zip(pickle.dumps({}, protocol=2), extra=[("archive/constants.pkl", pickle.dumps((), protocol=2))]), "torchscript"),
    (legacy(pickle.dumps({"a": 1}, protocol=2)), "legacy"),
    (tar_checkpoint(pickle.dumps({"a": 1}, protocol=2)), "tar"),
    (pickle.dumps({"a": 1}, protocol=2), "pickle"),
    (b"hello, this is a README\n", "none"),
])
def test_format_comes_from_the_leading_bytes(data: bytes, fmt: str) -> None:
    assert audit_bytes(data, "whatever.bin").format == fmt


def test_legacy_safe_and_tar_refused() -> None:
    assert audit_bytes(legacy(pickle.dumps({"a": 1}, protocol=2))).verdict == "safe"
    tar = audit_bytes(tar_checkpoint(pickle.dumps({"a": 1}, protocol=2)))
    assert (tar.verdict, tar.weights_only) == ("needs-allowlist", "reject")


def test_torchscript_is_version_aware() -> None:
    data = torch_zip(pickle.dumps({}, protocol=2), extra=[("archive/constants.pkl", pickle.dumps((), protocol=2))])
    new, old = audit_bytes(data), audit_bytes(data, version=Version(2, 5))
    assert new.weights_only == "reject" and old.weights_only == "accept"
    assert any(f.code == "TPA301" and f.severity == "error" for f in old.findings)
    assert any(f.code == "TPA302" for f in audit_bytes(legacy(pickle.dumps({}, protocol=2)), version=Version(2, 5)).findings)
    assert any(f.code == "TPA303" for f in audit_bytes(torch_zip(pickle.dumps({}, protocol=2)), version=Version(2, 9)).findings)


def _safetensors(header: dict, data: bytes) -> bytes:
    text = json.dumps(header).encode()
    return len(text).to_bytes(8, "little") + text + data


def test_safetensors_header_is_validated() -> None:
    good = _safetensors({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}, b"\x00" * 8)
    assert audit_bytes(good, "w.safetensors").verdict == "safe"
    assert audit_bytes(good, "w.bin").weights_only == "reject"
    bad = _safetensors({"w": {"dtype": "F32", "shape": [4], "data_offsets": [0, 8]}}, b"\x00" * 8)
    assert audit_bytes(bad, "w.safetensors").verdict == "unreadable"


def test_truncated_benign_pickle_is_unreadable_not_clean() -> None:
    report = audit_bytes(torch_zip(pickle.dumps({"a": [1, 2, 3]}, protocol=2)[:-3]))
    assert report.verdict == "unreadable"


def test_numpy_dtype_classes() -> None:
    assert numpy_dtype_class("f8") == "numpy.dtypes.Float64DType"
    assert numpy_dtype_class("i8") == "numpy.dtypes.Int64DType"
    assert numpy_dtype_class("b1") == "numpy.dtypes.BoolDType"


def test_rules_cover_the_required_releases() -> None:
    releases = {str(v) for v in known_releases()}
    assert {"2.4", "2.6", "2.10", "2.13", "2.15"} <= releases
    assert "torch._utils._rebuild_tensor_v2" in rules_for(V213).allowlist
    assert rules_for(V213).blocked_modules == {"sys", "os", "posix", "nt"}
    assert rules_for(Version(2, 13)).setitem_dict_only and not rules_for(Version(2, 9)).setitem_dict_only


def test_sparse_multi_gigabyte_legacy_file_reads_only_the_pickles(tmp_path) -> None:
    path = tmp_path / "huge.pt"
    with open(path, "wb") as handle:
        handle.write(legacy(pickle.dumps({"a": 1}, protocol=2)))
        handle.truncate(6 << 30)  # 6 GiB of (sparse) storage bytes after the pickles
    report = audit_path(str(path), V213)  # how long it takes is bench/audit_bench.py's to measure
    assert report.verdict == "safe"


def _cli(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["audit", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_exit_codes_and_json(tmp_path, capsys) -> None:
    safe = tmp_path / "safe.pt"
    safe.write_bytes(torch_zip(pickle.dumps({"a": 1}, protocol=2)))
    needs = tmp_path / "needs.pt"
    needs.write_bytes(torch_zip(pickle.dumps({"a": 1}, protocol=4)))
    bad = tmp_path / "bad.pt"
    bad.write_bytes(MALICIOUS["mal_print.pt"])
    assert _cli(capsys, str(safe), "--torch-version", "2.13")[0] == 0
    assert _cli(capsys, str(safe), str(needs), "--torch-version", "2.13")[0] == 1
    code, out, _ = _cli(capsys, str(tmp_path), "--output-format", "json", "--torch-version", "2.13")
    assert code == 3
    rows = json.loads(out)
    assert {r["filename"].rsplit("/", 1)[-1] for r in rows} == {"safe.pt", "needs.pt", "bad.pt"}
    for row in rows:
        assert set(row) >= {"filename", "format", "verdict", "weights_only", "reason", "globals", "allowlist", "snippet", "findings"}
        assert row["weights_only"] in ("accept", "reject")
    bad_row = next(r for r in rows if r["filename"].endswith("bad.pt"))
    assert {"member", "offset", "severity", "message"} <= set(bad_row["findings"][0])


def test_sarif(tmp_path, capsys) -> None:
    bad = tmp_path / "bad.pt"
    bad.write_bytes(MALICIOUS["mal_print.pt"])
    code, out, _ = _cli(capsys, str(bad), "--output-format", "sarif")
    sarif = json.loads(out)
    assert code == 3 and sarif["version"] == "2.1.0"
    results = sarif["runs"][0]["results"]
    assert any(r["ruleId"] == "TPA001" and r["level"] == "error" for r in results)
    rule_ids = {rule["id"] for rule in sarif["runs"][0]["tool"]["driver"]["rules"]}
    assert {r["ruleId"] for r in results} <= rule_ids


@pytest.mark.parametrize("args", [
    ["/nonexistent/file.pt"],
    ["x.pt", "--torch-version", "banana"],
    ["x.pt", "--torch-version", "1.13"],
    ["x.pt", "--torch-version", "9.0"],
])
def test_usage_errors_are_one_line(tmp_path, capsys, monkeypatch, args) -> None:
    (tmp_path / "x.pt").write_bytes(torch_zip(pickle.dumps({}, protocol=2)))
    monkeypatch.chdir(tmp_path)
    code, _, err = _cli(capsys, *args)
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_not_a_checkpoint_named_explicitly_is_unreadable(tmp_path, capsys) -> None:
    (tmp_path / "notes.txt").write_text("not a checkpoint\n")
    assert _cli(capsys, str(tmp_path / "notes.txt"))[0] == 3
    (tmp_path / "ok.pt").write_bytes(torch_zip(pickle.dumps({}, protocol=2)))
    code, out, _ = _cli(capsys, str(tmp_path), "--torch-version", "2.13")
    assert code == 0 and "1 non-checkpoint file(s) skipped" in out


def test_audit_never_imports_torch(tmp_path) -> None:
    path = tmp_path / "x.pt"
    path.write_bytes(MALICIOUS["mal_nested_load_from_bytes.pt"])
    probe = (
        "import sys; from torchpatch.frontends.cli import main; code = main(['audit', sys.argv[1], '--output-format', 'json']);"
        "print('TORCH' if 'torch' in sys.modules or 'numpy' in sys.modules else 'CLEAN', code)"
    )
    done = subprocess.run([sys.executable, "-c", probe, str(path)], check=False, capture_output=True, text=True, timeout=60)
    assert done.stdout.strip().splitlines()[-1] == "CLEAN 3"


def test_zip_without_folder_is_refused_by_torch() -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("data.pkl", pickle.dumps({}, protocol=2))
        archive.writestr("version", b"3\n")
    assert audit_bytes(buffer.getvalue()).weights_only == "reject"


def test_payload_ahead_of_the_magic_number_is_caught() -> None:
    report = audit_bytes(MALICIOUS["mal_legacy_magic.pt"])
    assert report.verdict == "malicious"
    assert any("builtins.print" in f.message for f in report.findings)


def test_print_payload_offsets_point_into_the_pickle() -> None:
    data = torch_zip(payload_pickle(PRINT))
    report = audit_bytes(data)
    finding = next(f for f in report.findings if f.severity == "malicious")
    assert data[finding.offset : finding.offset + 1] == b"c"


def _sparse_zip(path, numel: int) -> None:
    """A torch-style zip whose float32 storage record is ``4 * numel`` bytes of sparse zeros (zip64)."""
    import struct
    import zlib

    tensor = (
        op_global("torch._utils", "_rebuild_tensor_v2")
        + b"((" + op_str("storage") + op_global("torch", "FloatStorage") + op_str("0") + op_str("cpu")
        + b"J" + struct.pack("<i", numel) + b"t" + b"Q"
        + b"K\x00" + b"J" + struct.pack("<i", numel) + b"\x85" + b"K\x01\x85" + b"\x89"
        + op_global("collections", "OrderedDict") + b")R" + b"tR"
    )
    data_pkl = b"\x80\x02}" + op_str("w") + tensor + b"s."
    entries = []
    with open(path, "wb") as handle:
        def local(name: str, data: bytes | None, size: int) -> None:
            offset = handle.tell()
            crc = zlib.crc32(data) if data is not None else 0
            extra = struct.pack("<HHQQ", 1, 16, size, size) if data is None else b""
            stored = 0xFFFFFFFF if data is None else size
            handle.write(struct.pack("<4sHHHHHIIIHH", b"PK\x03\x04", 45, 0, 0, 0, 0, crc, stored, stored, len(name), len(extra)))
            handle.write(name.encode() + extra)
            if data is None:
                handle.seek(size, 1)
            else:
                handle.write(data)
            entries.append((name, crc, size, offset, data is None))
        local("archive/data.pkl", data_pkl, len(data_pkl))
        local("archive/data/0", None, 4 * numel)
        local("archive/version", b"3\n", 2)
        cd_offset = handle.tell()
        for name, crc, size, offset, big in entries:
            fields = ([size, size] if big else []) + ([offset] if offset >= 0xFFFFFFFF else [])
            extra = struct.pack(f"<HH{len(fields)}Q", 1, 8 * len(fields), *fields) if fields else b""
            stored = 0xFFFFFFFF if big else size
            handle.write(struct.pack("<4sHHHHHHIIIHHHHHII", b"PK\x01\x02", 45, 45, 0, 0, 0, 0, crc, stored, stored,
                                     len(name), len(extra), 0, 0, 0, 0, min(offset, 0xFFFFFFFF)))
            handle.write(name.encode() + extra)
        cd_size = handle.tell() - cd_offset
        zip64_end = handle.tell()
        handle.write(struct.pack("<4sQHHIIQQQQ", b"PK\x06\x06", 44, 45, 45, 0, 0, len(entries), len(entries), cd_size, cd_offset))
        handle.write(struct.pack("<4sIQI", b"PK\x06\x07", 0, zip64_end, 1))
        handle.write(struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0))


def test_sparse_multi_gigabyte_zip_checkpoint_reads_only_data_pkl(tmp_path) -> None:
    path = tmp_path / "huge.pt"
    _sparse_zip(path, 1 << 30)  # a 4 GiB float32 storage
    assert path.stat().st_size > 4 << 30
    report = audit_path(str(path), V213)  # how long it takes is bench/audit_bench.py's to measure
    assert (report.verdict, report.weights_only) == ("safe", "accept"), report.reason


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(sorted(MALICIOUS)), st.integers(min_value=0), st.binary(min_size=1, max_size=8))
def test_mutated_files_never_crash_the_auditor(name: str, position: int, patch: bytes) -> None:
    data = bytearray(MALICIOUS[name])
    at = position % len(data)
    data[at : at + len(patch)] = patch
    report = audit_bytes(bytes(data), name)
    assert report.verdict in ("safe", "needs-allowlist", "malicious", "unreadable")
    assert report.weights_only in ("accept", "reject")


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=300))
def test_random_bytes_never_crash_the_auditor(data: bytes) -> None:
    report = audit_bytes(data)
    assert report.verdict in ("safe", "needs-allowlist", "malicious", "unreadable")


def test_a_stored_function_is_for_review_and_a_called_one_is_malicious() -> None:
    # issue 22 §1: a function the file only stores is still a callable the load can reach (a
    # BUILD that stores it as __setstate__ makes the next BUILD call it), so it is never
    # allowlisted: it is left for the user's review, commented out.
    stored = audit_bytes(torch_zip(payload_pickle(op_global("mylib.activations", "gelu"))))
    assert stored.verdict == "needs-allowlist" and stored.allowlist == [] and stored.review == ["mylib.activations.gelu"]
    assert "# REVIEW mylib.activations.gelu: a function" in stored.snippet
    called = audit_bytes(torch_zip(payload_pickle(call(op_global("mylib.activations", "gelu"), b"K\x01"))))
    assert called.verdict == "malicious" and called.allowlist == []


def test_user_class_is_for_review_never_a_paste_ready_allowlist_line() -> None:
    # issue 9 §1: a class torchpatch has not reviewed runs its __setstate__ under weights_only=True
    # once allowlisted, so it is never put in the allowlist nor in an active snippet line.
    data = torch_zip(payload_pickle(op_global("__main__", "Config") + b")\x81" + b"}" + op_str("lr") + b"G?\xb9\x99\x99\x99\x99\x99\x9a" + b"sb"))
    report = audit_bytes(data, "run.pt")
    assert report.verdict == "needs-allowlist" and report.allowlist == [] and report.review == ["__main__.Config"]
    assert "__init__/__setstate__" in report.reason
    assert "TPA002" in {f.code for f in report.findings}
    active = [line for line in report.snippet.splitlines() if not line.lstrip().startswith("#")]
    assert not any("Config" in line for line in active)
    assert '    # (Config, "__main__.Config"),' in report.snippet and "REVIEW __main__.Config" in report.snippet
    assert "torch.load('run.pt', weights_only=True)" in report.snippet


def test_release_differences_follow_the_extracted_rules() -> None:
    # bytes pickle as _codecs.encode(text, "latin1"), allowlisted by default only since 2.5.
    data = torch_zip(payload_pickle(call(op_global("_codecs", "encode"), op_str("ab"), op_str("latin1"))))
    assert audit_bytes(data).verdict == "safe"
    old = audit_bytes(data, version=Version(2, 4))
    assert (old.verdict, old.allowlist) == ("needs-allowlist", ["_codecs.encode"])
    # torch 2.15 no longer allowlists nested jagged tensors at import time.
    njt = torch_zip(payload_pickle(op_global("torch.nested._internal.nested_tensor", "NestedTensor")))
    assert audit_bytes(njt).weights_only == "accept"
    assert audit_bytes(njt, version=Version(2, 15)).weights_only == "reject"


@pytest.mark.parametrize(("module", "name", "malicious"), [
    ("transformers.training_args", "TrainingArguments", False),
    ("transformers.modeling_utils.PreTrainedModel", "from_pretrained", True),
    ("torch.utils.hooks", "RemovableHandle", False),
    ("torch.utils.collect_env", "run", True),
    ("numpy.random._pickle", "__randomstate_ctor", False),
    ("builtins", "print.__self__.exec", True),
    ("copy_reg", "_reconstructor", False),
])
def test_classes_are_state_and_functions_are_code(module: str, name: str, malicious: bool) -> None:
    report = audit_bytes(torch_zip(payload_pickle(call(op_global(module, name)))))
    assert (report.verdict == "malicious") is malicious, report.reason
