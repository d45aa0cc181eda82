"""issue 9 §2: see every pickle the loaders see (duplicates as torch's zip reader picks them,
streams of several pickles, non-torch zips, FRAME divergence, truncated and oversize files)."""

from __future__ import annotations

import io
import json
import pickle
import subprocess
import sys
import warnings
import zipfile

import pytest
from make_corpus import PRINT, call, op_global, op_str, payload_pickle

from torchpatch.audit.auditor import audit_stream
from torchpatch.audit.formats import MinizIndex, _central_directory
from torchpatch.versions import Version

V213 = Version(2, 13)


def audit_bytes(data: bytes, name: str = "file.pt"):
    return audit_stream(io.BytesIO(data), len(data), name, V213)


def zip_of(entries: list[tuple[str, bytes]]) -> bytes:
    buffer = io.BytesIO()
    with warnings.catch_warnings(), zipfile.ZipFile(buffer, "w") as archive:
        warnings.simplefilter("ignore")  # duplicate names are the point
        for name, raw in entries:
            archive.writestr(name, raw)
    return buffer.getvalue()


def copies_layout(count: int, names: tuple[str, ...] = ()) -> bytes:
    entries = [("archive/data.pkl", pickle.dumps(i, protocol=2)) for i in range(count)]
    entries += [(n, pickle.dumps(100 + i, protocol=2)) for i, n in enumerate(names)]
    entries += [("archive/byteorder", b"little"), ("archive/version", b"3\n")]
    return zip_of(entries)


LAYOUTS = {f"{n} copies": copies_layout(n) for n in range(1, 9)}
LAYOUTS["case-folded name"] = zip_of([("archive/Data.pkl", pickle.dumps(7, protocol=2)), ("archive/version", b"3\n")])
LAYOUTS["upper and lower"] = copies_layout(1, ("archive/DATA.PKL",))
LAYOUTS["interleaved"] = zip_of([("archive/data.pkl", pickle.dumps(0, protocol=2)), ("archive/aaa", b"x"),
                                 ("archive/data.pkl", pickle.dumps(1, protocol=2)), ("archive/zzz", b"x"),
                                 ("archive/data.pkl", pickle.dumps(2, protocol=2)), ("archive/version", b"3\n")])


def located_value(data: bytes) -> int:
    records = _central_directory(io.BytesIO(data), len(data))
    record = MinizIndex(records).locate("archive/data.pkl")
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        info = archive.infolist()[record.index]
        return pickle.loads(archive.read(info))


TORCH_READS = r'''
import io, json, sys, torch, warnings
warnings.simplefilter("ignore")
out = {}
for name, hex_data in json.loads(sys.stdin.read()).items():
    out[name] = torch.load(io.BytesIO(bytes.fromhex(hex_data)), weights_only=True)
print(json.dumps(out))
'''


@pytest.mark.torch
def test_the_duplicate_torch_reads_is_the_one_miniz_locates() -> None:
    pytest.importorskip("torch")
    request = json.dumps({name: data.hex() for name, data in LAYOUTS.items()})
    done = subprocess.run([sys.executable, "-c", TORCH_READS], input=request, capture_output=True, text=True, timeout=120, check=True)
    torch_read = json.loads(done.stdout.strip().splitlines()[-1])
    assert {name: located_value(data) for name, data in LAYOUTS.items()} == torch_read
    # Measured on torch 2.13: not always the first copy.
    assert torch_read["2 copies"] == 0 and torch_read["4 copies"] == 3 and torch_read["case-folded name"] == 7


def test_payload_in_the_copy_miniz_reads_is_what_torch_runs() -> None:
    benign = pickle.dumps({"a": 1}, protocol=2)
    # Four copies: torch reads the fourth. Put the payload there and three benign copies first.
    data = zip_of([("archive/data.pkl", benign)] * 3 + [("archive/data.pkl", payload_pickle(PRINT)),
                                                          ("archive/version", b"3\n")])
    report = audit_bytes(data)
    assert report.verdict == "malicious"
    torch_member = [f for f in report.findings if f.code == "TPA001"][0].member
    assert torch_member == "archive/data.pkl"  # the copy torch reads, not "(not read by torch)"
    assert "reads copy #4" in " ".join(f.message for f in report.findings if f.code == "TPA201")


def test_case_folded_data_pkl_is_read_by_torch() -> None:
    report = audit_bytes(LAYOUTS["case-folded name"])
    assert (report.verdict, report.weights_only) == ("safe", "accept")
