"""Checkpoint containers read the way ``torch.load`` reads them: zip (miniz), tar, legacy, pickle, safetensors."""

from __future__ import annotations

import ast

import io
import json
import struct
import tarfile
import zlib
from dataclasses import dataclass, field
from typing import BinaryIO

from torchpatch.audit.pickle_scan import Scan, scan, scan_data

ZIP_MAGIC = b"PK\x03\x04"
LEGACY_PICKLES = ("magic number", "protocol version", "sys_info", "object", "storage keys")
# A pickle record bigger than this is not something torch.save writes (it would describe millions
# of tensors); refuse to read or inflate it, so memory stays bounded whatever the file claims.
MAX_PICKLE_RECORD = 256 << 20

SAFETENSORS_DTYPES = {
    "BOOL": 1, "U8": 1, "I8": 1, "F8_E5M2": 1, "F8_E4M3": 1, "F8_E8M0": 1, "I16": 2, "U16": 2,
    "F16": 2, "BF16": 2, "I32": 4, "U32": 4, "F32": 4, "F64": 8, "I64": 8, "U64": 8, "C64": 8,
    "F4": 0.5, "F6_E2M3": 0.75, "F6_E3M2": 0.75,
}


@dataclass
class Finding:
    member: str
    offset: int
    severity: str  # "malicious", "error", "warning" or "note"
    code: str
    message: str
    line: int = 0  # 1-based line in a text record (TorchScript code/), 0 for byte offsets


@dataclass
class Member:
    """One pickle inside the file: where it is, its bytes, and whether torch.load reads it."""

    name: str
    data: bytes
    base: int
    scanned: Scan | None = None  # None: scanned on first use (see auditor.audit_stream)
    read_by_torch: bool = True

    @property
    def scan(self) -> Scan:
        if self.scanned is None:
            self.scanned = scan_data(self.data, 0, self.base)
        return self.scanned


@dataclass
class Record:
    name: str
    index: int
    flags: int
    method: int
    crc: int
    compressed_size: int
    size: int
    header_offset: int
    data_offset: int = 0
    local_name: str = ""
    raw_name: bytes = b""


@dataclass
class Opened:
    """A file as torch.load sees it."""

    format: str
    members: list[Member] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    records: dict[str, Record] = field(default_factory=dict)
    unreadable: str | None = None
    torch_error: str | None = None
    safetensors_tensors: int = 0
    index: MinizIndex | None = None
    code: dict[str, str] = field(default_factory=dict)  # a TorchScript archive's code/*.py records

    def torch_record(self, name: str) -> Record | None:
        """The zip record torch reads for ``name`` (case-insensitive, miniz's choice among duplicates)."""
        if self.index is None:
            return self.records.get(name)
        if self.index.unique is not None and name in self.records:
            return self.records[name]  # names are unique even case-folded: the exact name is the one
        return self.index.locate(name)


FORMAT_NAMES = {
    "torch-zip": "torch zip",
    "torchscript": "TorchScript archive",
    "legacy": "legacy (non-zip) torch format",
    "tar": "old tar torch format",
    "pickle": "plain pickle",
    "safetensors": "safetensors",
    "numpy": "numpy .npy with pickled objects",
    "none": "not a checkpoint",
}

# Containers torchpatch cannot look inside: reported as unreadable, never skipped as "not a
# checkpoint", since any of them may hold one.
ARCHIVE_MAGICS = {
    b"7z\xbc\xaf\x27\x1c": "7z archive", b"Rar!\x1a\x07": "RAR archive", b"\x1f\x8b": "gzip stream",
    b"BZh": "bzip2 stream", b"\xfd7zXZ\x00": "xz stream", b"\x28\xb5\x2f\xfd": "zstd stream", b"\x04\x22\x4d\x18": "lz4 frame",
    b"\x89HDF\r\n\x1a\n": "HDF5 file (Keras/h5py; may hold pickled objects)",
}
NPY_MAGIC = b"\x93NUMPY"
# More pickles after the first STOP: `pickle.load` called again on the same file (joblib, a
# training script's loop) runs them; torch.load does not. Bounded so a crafted file stays cheap.
MAX_TRAILING_PICKLES = 64


def open_checkpoint(stream: BinaryIO, size: int, storage_headers: bool = True) -> Opened:
    """Decide the format from the leading bytes in torch.load's order, then read its pickles.

    ``storage_headers=False`` (a checkpoint read by byte ranges) skips the local headers of a torch zip's
    storage records (``data/N``): each costs a ranged read, and their sizes come from the central
    directory. What it skips for those records: TPA207 (no local header), TPA208 (local and central
    names differ) and TPA205 (data not 64-byte aligned)."""
    head = stream.read(16)
    stream.seek(0)
    if head[:4] == ZIP_MAGIC:
        return _open_zip(stream, size, storage_headers)
    for magic, kind in ARCHIVE_MAGICS.items():
        if head.startswith(magic):
            return Opened("none", unreadable=f"{kind}: torchpatch cannot look inside it; extract it and audit what it holds")
    if head.startswith(NPY_MAGIC):
        return _open_npy(stream, size)
    if _is_tar(stream):
        return _open_tar(stream)
    stream.seek(0)
    safetensors = _open_safetensors(stream, size, head)
    if safetensors is not None:
        return safetensors
    stream.seek(0)
    return _open_pickles(stream, size)


def npy_pickle_offset(head: bytes) -> int | None:
    """Where the pickle of an object-dtype .npy starts (numpy.lib.format), or None for plain arrays."""
    if not head.startswith(NPY_MAGIC) or len(head) < 10:
        return None
    major = head[6]
    if major == 1:
        length, start = struct.unpack("<H", head[8:10])[0], 10
    else:
        length, start = struct.unpack("<I", head[8:12])[0], 12
    header = head[start : start + length]
    # The header is a dict literal; an object array's descr is '|O' (or a structured dtype with one).
    if b"'O" not in header and b'"O' not in header and b"|O" not in header:
        return None
    return start + length


def _npy_plain_descr(head: bytes) -> str | None:
    """The dtype of a .npy whose header numpy.lib.format would accept and that has no object fields."""
    major = head[6] if len(head) > 9 else 0
    if major not in (1, 2, 3):
        return None
    length, start = (struct.unpack("<H", head[8:10])[0], 10) if major == 1 else (struct.unpack("<I", head[8:12])[0], 12)
    try:
        header = ast.literal_eval(head[start : start + length].decode("latin1" if major < 3 else "utf-8"))
    except (ValueError, SyntaxError, UnicodeDecodeError, MemoryError, RecursionError):
        return None
    if not isinstance(header, dict) or set(header) != {"descr", "fortran_order", "shape"}:
        return None
    descr = header["descr"]
    if not isinstance(descr, str) or not descr or descr[0] not in "<>|=" or descr[1:2] not in tuple("biufcmMSUV") or "O" in descr:
        return None
    return descr


def _open_npy(stream: BinaryIO, size: int) -> Opened:
    head = stream.read(65536 + 12)
    offset = npy_pickle_offset(head)
    if offset is None:
        descr = _npy_plain_descr(head)
        if descr is None:
            return Opened("none", unreadable="not a checkpoint: a numpy .npy array (no pickled objects)")
        # A plain numeric array holds no pickle: numpy.load (allow_pickle=False, its default)
        # reads it and nothing in it can run code; torch.load cannot read .npy at all.
        return Opened("numpy", torch_error=f"a plain numpy .npy array (dtype {descr}): torch.load cannot read it; numpy.load reads it "
                                           "without unpickling anything")
    member = _read_member(stream, "object array pickle", offset)
    return Opened("numpy", members=[member], torch_error="a numpy .npy file: torch.load cannot read it; numpy.load(allow_pickle=True) runs its pickle")


def _read_member(stream: BinaryIO, name: str, base: int, read_by_torch: bool = True) -> Member:
    stream.seek(base)
    result = scan(stream, 0)
    stream.seek(base)
    data = stream.read(max(result.end - base, 0))
    return Member(name, data, base, result, read_by_torch)


def _open_pickles(stream: BinaryIO, size: int) -> Opened:
    first = _read_member(stream, LEGACY_PICKLES[0], 0)
    if first.scan.error and not first.scan.globals and (not first.data or first.data[:1] != b"\x80"):
        return Opened("none", unreadable="not a checkpoint: no torch or pickle signature in the leading bytes")
    from torchpatch.audit.weights_only import MAGIC_NUMBER

    if first.scan.error is None and first.scan.result == MAGIC_NUMBER:
        opened = Opened("legacy", members=[first])
        offset = first.scan.end
        for role in LEGACY_PICKLES[1:]:
            member = _read_member(stream, role, offset)
            opened.members.append(member)
            if member.scan.error:
                break
            offset = member.scan.end
        if len(opened.members) == len(LEGACY_PICKLES) and not opened.members[-1].scan.error:
            _check_legacy_storages(stream, size, opened)
        return opened
    first.name = "pickle"
    opened = Opened("pickle", members=[first])
    # torch.load runs the leading pickle to completion before it checks the magic number, so
    # whatever it calls runs even though the load then fails.
    opened.torch_error = "not a torch checkpoint: torch.load unpickles the leading pickle, then fails with 'Invalid magic number'"
    offset = first.scan.end
    number = 2
    while not first.scan.error and offset < size and number <= MAX_TRAILING_PICKLES:
        member = _read_member(stream, f"pickle #{number} (after the first STOP: torch.load never reads it, a second pickle.load does)", offset, read_by_torch=False)
        if member.scan.error and not member.scan.globals and not member.scan.calls:
            break  # trailing bytes that are not a pickle
        opened.members.append(member)
        if member.scan.error or member.scan.end <= offset:
            break
        offset = member.scan.end
        number += 1
    return opened


def _check_legacy_storages(stream: BinaryIO, size: int, opened: Opened) -> None:
    """After the five pickles torch reads each storage as an int64 element count plus its bytes
    (``_set_from_file``); predict its 'unexpected EOF' and 'storage has wrong byte size' errors."""
    from torchpatch.audit.pickle_scan import Container, Global

    keys = opened.members[-1].scan.result
    if not isinstance(keys, Container) or not all(isinstance(k, str) for k in keys.items):
        return
    declared: dict[str, tuple[int, int]] = {}
    for persistent in opened.members[3].scan.persistent:
        pid = persistent.pid
        if isinstance(pid, tuple) and len(pid) >= 5 and isinstance(pid[1], Global) and isinstance(pid[4], int):
            element = STORAGE_ELEMENT_BYTES.get(pid[1].name.replace("Storage", ""))
            if element:
                declared[str(pid[2])] = (pid[4], element)
    offset = opened.members[-1].scan.end
    for key in keys.items:
        if key not in declared:
            return
        numel, element = declared[key]
        stream.seek(offset)
        header = stream.read(8)
        if len(header) < 8:
            opened.unreadable = f"torch fails: unexpected EOF, expected {8 - len(header)} more bytes (the file ends inside storage {key}'s header)"
            return
        (count,) = struct.unpack("<q", header)
        if count * element != numel * element:
            opened.unreadable = f"torch fails: storage has wrong byte size: storage {key} declares {numel * element} bytes, its record {count * element}"
            return
        offset += 8 + count * element
        if offset > size:
            opened.unreadable = f"torch fails: unexpected EOF, expected {offset - size} more bytes (the file is cut inside storage {key})"
            return


# Element sizes of the legacy storage classes torch.save names in persistent ids.
STORAGE_ELEMENT_BYTES = {
    "Double": 8, "Float": 4, "Half": 2, "Long": 8, "Int": 4, "Short": 2, "Char": 1, "Byte": 1,
    "Bool": 1, "BFloat16": 2, "ComplexDouble": 16, "ComplexFloat": 8, "QInt8": 1, "QInt32": 4,
    "QUInt8": 1, "QUInt4x2": 1, "QUInt2x4": 1, "Untyped": 1,
}


def _is_tar(stream: BinaryIO) -> bool:
    # torch's _legacy_load tries tarfile.open(mode="r:") first; a valid first header is enough.
    try:
        with tarfile.open(fileobj=stream, mode="r:"):
            return True
    except (tarfile.TarError, EOFError, ValueError, OSError):
        return False
    finally:
        stream.seek(0)


def _open_tar(stream: BinaryIO) -> Opened:
    opened = Opened("tar")
    try:
        with tarfile.open(fileobj=stream, mode="r:") as tar:
            infos = tar.getmembers()
    except (tarfile.TarError, EOFError, ValueError, OSError) as error:
        return Opened("tar", unreadable=f"tar archive is damaged: {error}")
    for info in infos:
        if not info.isfile():
            continue
        if info.name not in ("sys_info", "pickle", "storages", "tensors"):
            opened.findings.append(Finding(info.name, info.offset, "warning", "TPA203", f"unexpected tar member {info.name!r}: torch's tar loader ignores it"))
            continue
        # storages/tensors hold a count pickle followed by records and raw data; the
        # leading pickle is audited, the rest is tensor data.
        member = _read_member(stream, info.name, info.offset_data)
        if member.scan.end > info.offset_data + info.size:
            member.scan.error = member.scan.error or "pickle runs past the end of its tar member"
        opened.members.append(member)
    opened.torch_error = "legacy .tar format: torch.load(weights_only=True) refuses it"
    return opened


def _open_safetensors(stream: BinaryIO, size: int, head: bytes) -> Opened | None:
    if len(head) < 9 or head[8:9] != b"{":
        return None
    (length,) = struct.unpack("<Q", head[:8])
    if length > min(size - 8, 100 << 20):
        return None
    stream.seek(8)
    try:
        header = json.loads(stream.read(length))
    except (UnicodeDecodeError, ValueError):
        return Opened("safetensors", unreadable="safetensors header is not valid JSON")
    if not isinstance(header, dict):
        return Opened("safetensors", unreadable="safetensors header is not a JSON object")
    problem = _check_safetensors(header, size - 8 - length)
    if problem:
        return Opened("safetensors", unreadable=f"invalid safetensors header: {problem}")
    return Opened("safetensors", safetensors_tensors=len([k for k in header if k != "__metadata__"]))


def _check_safetensors(header: dict, data_size: int) -> str | None:
    spans = []
    for name, entry in header.items():
        if name == "__metadata__":
            if not isinstance(entry, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in entry.items()):
                return "__metadata__ must map strings to strings"
            continue
        if not isinstance(entry, dict) or set(entry) - {"dtype", "shape", "data_offsets"}:
            return f"tensor {name!r} has unexpected fields"
        dtype, shape, offsets = entry.get("dtype"), entry.get("shape"), entry.get("data_offsets")
        if dtype not in SAFETENSORS_DTYPES:
            return f"tensor {name!r} has unknown dtype {dtype!r}"
        if not isinstance(shape, list) or not all(isinstance(d, int) and d >= 0 for d in shape):
            return f"tensor {name!r} has an invalid shape"
        if not (isinstance(offsets, list) and len(offsets) == 2 and all(isinstance(o, int) for o in offsets)):
            return f"tensor {name!r} has invalid data_offsets"
        begin, end = offsets
        count = 1
        for dim in shape:
            count *= dim
        if not 0 <= begin <= end <= data_size or end - begin != count * SAFETENSORS_DTYPES[dtype]:
            return f"tensor {name!r}: data_offsets {offsets} do not match its shape and dtype or the file size"
        spans.append((begin, end))
    position = 0
    for begin, end in sorted(spans):
        if begin != position:
            return "tensor data overlaps or leaves gaps"
        position = end
    if position != data_size:
        return "bytes after the last tensor"
    return None


def _is_storage(name: str, prefix: str | None) -> bool:
    short = name[len(prefix):] if prefix and name.startswith(prefix) else None
    return short is not None and short.startswith("data/") and short.count("/") == 1


def _open_zip(stream: BinaryIO, size: int, storage_headers: bool = True) -> Opened:
    opened = Opened("torch-zip")
    try:
        records = _central_directory(stream, size)
    except (ValueError, struct.error) as error:
        return Opened("torch-zip", unreadable=f"zip central directory unreadable: {error}")
    if not records:
        return Opened("torch-zip", unreadable="zip archive has no records")
    # PyTorchStreamReader takes the folder of the first record as the archive name and looks
    # every record up under it ("file in archive is not in a subdirectory" otherwise).
    first = records[0].name
    prefix = first.split("/", 1)[0] + "/" if "/" in first else None
    if prefix is None:
        opened.torch_error = f"torch refuses the archive: first record {first!r} is not in a subdirectory"
    index = MinizIndex(records)
    opened.index = index
    naive: dict[str, Record] = {}
    copies: dict[bytes, list[Record]] = {}
    for record in records:
        naive[record.name] = record
        copies.setdefault(index.keys[record.index], []).append(record)
    if index.unique is not None:
        opened.records = {record.name: record for record in records}
    else:
        for record in records:
            opened.records.setdefault(record.name, index.locate(record.name) or record)
    for group in copies.values():
        if len(group) > 1:
            read = index.locate(group[0].name)
            number = group.index(read) + 1 if read in group else 0
            names = sorted({r.name for r in group})
            opened.findings.append(Finding(group[0].name, group[-1].header_offset, "warning", "TPA201",
                                           f"{len(group)} records named {' / '.join(repr(n) for n in names)}: torch's zip reader (miniz, sorted and "
                                           f"case-insensitive) reads copy #{number}, Python's zipfile the last of each exact name"))
    for record in records:
        if prefix and not record.name.startswith(prefix):
            # PyTorchStreamReader::init checks every record's folder (measured on 2.13).
            opened.findings.append(Finding(record.name, record.header_offset, "warning", "TPA202",
                                           f"record {record.name!r} is outside the archive folder {prefix!r}: torch refuses the archive, other readers may not"))
            opened.torch_error = opened.torch_error or f"torch refuses the archive: {record.name!r} is not in the subdirectory {prefix!r}"
    skipped_headers: set[int] = set()
    for record in records:
        if not storage_headers and _is_storage(record.name, prefix):
            skipped_headers.add(id(record))
            continue
        _check_local_header(stream, record, opened)
    short = {name[len(prefix):]: r for name, r in opened.records.items() if prefix and name.startswith(prefix)}
    if prefix and index.locate(f"{prefix}constants.pkl") is not None:
        opened.format = "torchscript"
        opened.torch_error = "TorchScript archive"
    for name, record in short.items():
        if record.flags & 0x41 or record.flags & 0x20:
            opened.torch_error = f"record {name} is encrypted or patched: torch's zip reader refuses it"
        if name.startswith("data/") and name.count("/") == 1:
            if record.method != 0:
                opened.findings.append(Finding(record.name, record.header_offset, "warning", "TPA204",
                                               f"storage {name} is compressed: torch.save stores storages uncompressed (mmap=True would read wrong bytes)"))
            elif id(record) not in skipped_headers and record.data_offset % 64:
                opened.findings.append(Finding(record.name, record.data_offset, "note", "TPA205",
                                               f"storage {name} is not 64-byte aligned as torch.save writes it"))
    torch_names = [f"{prefix}data.pkl"] if prefix else []
    if opened.format == "torchscript" and prefix:
        torch_names.append(f"{prefix}constants.pkl")
    torch_pickles = {id(r) for r in map(index.locate, torch_names) if r is not None}
    torch_pickle_names = {n.lower() for n in torch_names}
    for record in records:
        if record.method not in (0, 8):
            continue
        is_pickle_name = record.name.lower().endswith(".pkl")
        if not (is_pickle_name or id(record) in torch_pickles):
            continue
        if is_pickle_name and "/data/" in record.name:
            continue
        read_by_torch = id(record) in torch_pickles
        data = _record_bytes(stream, record, opened)
        if data is None:
            if read_by_torch:
                opened.unreadable = f"cannot read {record.name}"
            continue
        if (zlib.crc32(data) & 0xFFFFFFFF) != record.crc:
            opened.findings.append(Finding(record.name, record.header_offset, "warning", "TPA206",
                                           f"CRC-32 mismatch in {record.name}: torch ignores it, Python's zipfile refuses the record (tampering)"))
        if record.method == 8:
            opened.findings.append(Finding(record.name, record.header_offset, "warning", "TPA204",
                                           f"{record.name} is DEFLATE-compressed: torch inflates it, but torch.save never writes that"))
        label = record.name if read_by_torch else f"{record.name} (#{record.index}, not read by torch)"
        member = Member(label, data, record.data_offset, None, read_by_torch)
        if naive.get(record.name) is record and not read_by_torch and record.name.lower() in torch_pickle_names:
            member.name = f"{record.name} (#{record.index}, what Python's zipfile reads)"
        opened.members.append(member)
    if not prefix or index.locate(f"{prefix}data.pkl") is None:
        _scan_other_records(stream, records, opened)
    if opened.format == "torchscript":
        budget = MAX_PICKLE_RECORD
        for record in records:
            if record.name.startswith(f"{prefix}code/") and record.name.endswith(".py") and record.size <= budget:
                data = _record_bytes(stream, record, opened)
                if data is not None:
                    budget -= len(data)
                    opened.code[record.name] = data.decode("utf-8", "replace")
    if prefix and index.locate(f"{prefix}version") is None and index.locate(f"{prefix}.data/version") is None:
        # PyTorchStreamReader::init reads the format version before anything else.
        opened.torch_error = opened.torch_error or "torch refuses the archive: it has no version record"
    if prefix and index.locate(f"{prefix}data.pkl") is None:
        opened.unreadable = opened.unreadable or "zip archive has no data.pkl: not a torch checkpoint"
    return opened


def _scan_other_records(stream: BinaryIO, records: list[Record], opened: Opened) -> None:
    """A zip that is not a torch archive (an .npz, a renamed pickle in a zip): whatever reads it
    unpickles its records, so every record holding a pickle or an object .npy is audited."""
    scanned = {m.base for m in opened.members}
    for record in records:
        if record.method not in (0, 8) or record.flags & 0x1:
            continue
        _check_local_header(stream, record, opened) if not record.data_offset else None
        if record.data_offset in scanned:
            continue
        data = _record_bytes(stream, record, opened)
        if not data:
            continue
        start = npy_pickle_offset(data[: 65536 + 12]) if data.startswith(NPY_MAGIC) else (0 if data[:1] == b"\x80" else None)
        if start is None:
            continue
        body = data[start:]
        member = Member(f"{record.name} (#{record.index})", body, record.data_offset + start, scan(io.BytesIO(body), record.data_offset + start), False)
        opened.members.append(member)


def _record_bytes(stream: BinaryIO, record: Record, opened: Opened) -> bytes | None:
    if record.compressed_size > MAX_PICKLE_RECORD or record.size > MAX_PICKLE_RECORD:
        opened.findings.append(Finding(record.name, record.header_offset, "error", "TPA207", f"{record.name} is larger than 256 MiB; not audited"))
        return None
    stream.seek(record.data_offset)
    raw = stream.read(record.compressed_size)
    if record.method == 0:
        return raw
    try:
        inflater = zlib.decompressobj(-15)
        data = inflater.decompress(raw, MAX_PICKLE_RECORD)
        return data
    except zlib.error as error:
        opened.findings.append(Finding(record.name, record.header_offset, "error", "TPA207", f"cannot inflate {record.name}: {error}"))
        return None


def _check_local_header(stream: BinaryIO, record: Record, opened: Opened) -> None:
    stream.seek(record.header_offset)
    header = stream.read(30)
    if len(header) < 30 or header[:4] != ZIP_MAGIC:
        opened.findings.append(Finding(record.name, record.header_offset, "error", "TPA207", f"record {record.name!r} has no local header"))
        return
    name_length, extra_length = struct.unpack("<HH", header[26:30])
    local_name = stream.read(name_length).decode("utf-8", "replace")
    record.local_name = local_name
    record.data_offset = record.header_offset + 30 + name_length + extra_length
    if local_name != record.name:
        opened.findings.append(Finding(record.name, record.header_offset, "warning", "TPA208",
                                       f"local header names {local_name!r} but the central directory {record.name!r}: torch uses the central name, Python's zipfile refuses"))


def _central_directory(stream: BinaryIO, size: int) -> list[Record]:
    # The end-of-central-directory record is the last 22 bytes unless the zip has a comment: read those
    # (and the 20 before, where a zip64 locator sits) first, and the 64 KiB tail a comment can fill only
    # when they are not a comment-less record. The same record is found either way: the last signature.
    tail_size = min(size, 22 + 20)
    stream.seek(size - tail_size)
    tail = stream.read(tail_size)
    at = tail_size - 22
    if not (at >= 0 and tail[at:at + 4] == b"PK\x05\x06" and tail[-2:] == b"\0\0"
            and tail.rfind(b"PK\x05\x06") == at):
        tail_size = min(size, 65557)
        stream.seek(size - tail_size)
        tail = stream.read(tail_size)
        at = tail.rfind(b"PK\x05\x06")
    if at < 0:
        raise ValueError("no end-of-central-directory record")
    eocd = size - tail_size + at
    _, _, _, _, count, cd_size, cd_offset, _ = struct.unpack("<4sHHHHIIH", tail[at : at + 22])
    if count == 0xFFFF or cd_offset == 0xFFFFFFFF or cd_size == 0xFFFFFFFF:
        stream.seek(eocd - 20)
        locator = stream.read(20)
        if locator[:4] != b"PK\x06\x07":
            raise ValueError("zip64 locator missing")
        (zip64_offset,) = struct.unpack("<Q", locator[8:16])
        stream.seek(zip64_offset)
        record = stream.read(56)
        if record[:4] != b"PK\x06\x06":
            raise ValueError("zip64 end record missing")
        count, cd_size, cd_offset = struct.unpack("<QQQ", record[32:56])
    if cd_size > 1 << 28:
        raise ValueError("central directory larger than 256 MiB")
    stream.seek(cd_offset)
    directory = stream.read(cd_size)
    records = []
    position = 0
    for index in range(count):
        fixed = directory[position : position + 46]
        if len(fixed) < 46 or fixed[:4] != b"PK\x01\x02":
            raise ValueError(f"central directory entry {index} is malformed")
        (_, _, _, flags, method, _, _, crc, csize, usize, nlen, elen, clen, _, _, _, offset) = struct.unpack("<4sHHHHHHIIIHHHHHII", fixed)
        name = directory[position + 46 : position + 46 + nlen].decode("utf-8", "replace")
        extra = directory[position + 46 + nlen : position + 46 + nlen + elen]
        usize, csize, offset = _zip64_sizes(extra, usize, csize, offset)
        raw_name = directory[position + 46 : position + 46 + nlen]
        records.append(Record(name, index, flags, method, crc, csize, usize, offset, raw_name=raw_name))
        position += 46 + nlen + elen + clen
    return records


def _zip64_sizes(extra: bytes, usize: int, csize: int, offset: int) -> tuple[int, int, int]:
    position = 0
    while position + 4 <= len(extra):
        tag, length = struct.unpack("<HH", extra[position : position + 4])
        body = extra[position + 4 : position + 4 + length]
        if tag == 1:
            values = [struct.unpack("<Q", body[i : i + 8])[0] for i in range(0, len(body) - 7, 8)]
            if usize == 0xFFFFFFFF and values:
                usize = values.pop(0)
            if csize == 0xFFFFFFFF and values:
                csize = values.pop(0)
            if offset == 0xFFFFFFFF and values:
                offset = values.pop(0)
        position += 4 + length
    return usize, csize, offset


def _lower(raw: bytes) -> bytes:
    # MZ_TOLOWER: ASCII only.
    return raw.translate(_ASCII_LOWER)


_ASCII_LOWER = bytes(c + 32 if 65 <= c <= 90 else c for c in range(256))


class MinizIndex:
    """Name lookup as torch's zip reader (miniz, ``mz_zip_reader_locate_file``) does it.

    miniz heap-sorts the central directory by case-folded name (an unstable sort) and binary
    searches it, case-insensitively. So among duplicated names the copy torch reads depends on
    the whole directory (measured on torch 2.13: the first of 2 or 3 copies, the 4th of 4, the
    5th of 5 and 6, the 6th of 7 and 8), and ``archive/Data.pkl`` is read as ``archive/data.pkl``.
    """

    def __init__(self, records: list[Record]) -> None:
        self.records = records
        self.keys = [_lower(r.raw_name or r.name.encode("utf-8", "surrogateescape")) for r in records]
        # Without two names equal after folding, every sort order finds the same record, so a
        # dict answers; the heap sort only decides among duplicates.
        unique = dict(zip(self.keys, records))
        self.unique = unique if len(unique) == len(records) else None
        self.sorted = self._heap_sort() if self.unique is None else []

    def _less(self, left: int, right: int) -> bool:
        # mz_zip_reader_filename_less: byte-wise on the folded names, then the shorter first.
        a, b = self.keys[left], self.keys[right]
        common = min(len(a), len(b))
        if a[:common] == b[:common]:
            return len(a) < len(b)
        return a < b

    def _heap_sort(self) -> list[int]:
        # mz_zip_reader_sort_central_dir_offsets_by_filename, step for step.
        size = len(self.records)
        indices = list(range(size))
        if size <= 1:
            return indices
        less = self._less
        start = (size - 2) >> 1
        while True:
            root = start
            while True:
                child = (root << 1) + 1
                if child >= size:
                    break
                if child + 1 < size and less(indices[child], indices[child + 1]):
                    child += 1
                if not less(indices[root], indices[child]):
                    break
                indices[root], indices[child] = indices[child], indices[root]
                root = child
            if not start:
                break
            start -= 1
        end = size - 1
        while end > 0:
            indices[end], indices[0] = indices[0], indices[end]
            root = 0
            while True:
                child = (root << 1) + 1
                if child >= end:
                    break
                if child + 1 < end and less(indices[child], indices[child + 1]):
                    child += 1
                if not less(indices[root], indices[child]):
                    break
                indices[root], indices[child] = indices[child], indices[root]
                root = child
            end -= 1
        return indices

    def locate(self, name: str) -> Record | None:
        """The record torch's ``getRecord(name)`` reads, or None when it has none."""
        key = _lower(name.encode("utf-8"))
        if self.unique is not None:
            return self.unique.get(key)
        low, high = 0, len(self.sorted) - 1
        while low <= high:
            middle = low + ((high - low) >> 1)
            index = self.sorted[middle]
            candidate = self.keys[index]
            common = min(len(candidate), len(key))
            if candidate[:common] == key[:common]:
                compare = len(candidate) - len(key)
            else:
                compare = -1 if candidate < key else 1
            if compare == 0:
                return self.records[index]
            if compare < 0:
                low = middle + 1
            else:
                high = middle - 1
        return None
