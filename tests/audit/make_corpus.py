"""Generate the audit test corpus: benign, allowlist-needing and harmless malicious checkpoints."""

# Usage: python tests/audit/make_corpus.py OUT_DIR   (writes OUT_DIR/labels.json)
# Malicious payloads only name harmless callables (print, os.getcwd, a marker-file touch, shell
# commands that are never run); nothing here loads a file except torch_decisions, which runs real
# torch.load(weights_only=True) in a throwaway subprocess. "expected" is what each file is by
# construction: "safe", "needs-allowlist" (benign but refused) or "malicious".

from __future__ import annotations

import io
import json
import os
import pickle
import struct
import sys
import tarfile
import warnings
import zipfile
import zlib
from pathlib import Path

PRINT_ARG = "torchpatch corpus payload (harmless)"


def op_global(module: str, name: str) -> bytes:
    return b"c" + module.encode() + b"\n" + name.encode() + b"\n"


def op_str(text: str) -> bytes:
    data = text.encode()
    return b"X" + struct.pack("<I", len(data)) + data


def op_short_str(text: str) -> bytes:
    data = text.encode()
    return b"\x8c" + bytes([len(data)]) + data


def call(func: bytes, *args: bytes) -> bytes:
    """func(*args) with MARK/TUPLE/REDUCE."""
    return func + b"(" + b"".join(args) + b"tR"


def payload_pickle(body: bytes, protocol: int = 2) -> bytes:
    """A dict {"x": <body>} pickle, shaped like torch.save's data.pkl."""
    return b"\x80" + bytes([protocol]) + b"}" + op_str("x") + body + b"s."


def torch_zip(data_pkl: bytes, folder: str = "archive", storages: dict[str, bytes] | None = None,
              extra: list[tuple[str, bytes]] | None = None, compress_pkl: bool = False) -> bytes:
    """A zip laid out the way torch.save writes one."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr(f"{folder}/data.pkl", data_pkl, zipfile.ZIP_DEFLATED if compress_pkl else zipfile.ZIP_STORED)
        archive.writestr(f"{folder}/byteorder", b"little")
        for key, raw in (storages or {}).items():
            archive.writestr(f"{folder}/data/{key}", raw)
        archive.writestr(f"{folder}/version", b"3\n")
        archive.writestr(f"{folder}/.data/serialization_id", b"0123456789")
        for name, raw in extra or []:
            archive.writestr(name, raw)
    return buffer.getvalue()


def legacy(object_pickle: bytes, magic: bytes | None = None) -> bytes:
    """The legacy (non-zip) torch format: five pickles, no storages."""
    magic = magic or pickle.dumps(0x1950A86A20F9469CFC6C, protocol=2)
    return magic + pickle.dumps(1001, protocol=2) + pickle.dumps({"protocol_version": 1001, "little_endian": True}, protocol=2) + object_pickle + pickle.dumps([], protocol=2)


def tar_checkpoint(object_pickle: bytes) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, raw in (("sys_info", pickle.dumps({"protocol_version": 1001}, protocol=2)),
                          ("pickle", object_pickle), ("storages", pickle.dumps(0, protocol=2)), ("tensors", pickle.dumps(0, protocol=2))):
            info = tarfile.TarInfo(name)
            info.size = len(raw)
            tar.addfile(info, io.BytesIO(raw))
    return buffer.getvalue()


def _patch_zip(raw: bytes, old: bytes, new: bytes) -> bytes:
    if old not in raw:
        raise ValueError("bytes to patch not found")
    return raw.replace(old, new)


PRINT = call(op_global("builtins", "print"), op_str(PRINT_ARG))


def malicious_files(tmp_marker: str) -> dict[str, bytes]:
    """Crafted payloads, stdlib only. Each names a harmless callable; none is ever run here."""
    files: dict[str, bytes] = {}
    z = torch_zip
    files["mal_print.pt"] = z(payload_pickle(PRINT))
    files["mal_getcwd_posix.pt"] = z(payload_pickle(call(op_global("posix", "getcwd"))))
    files["mal_builtin_alias.pt"] = z(payload_pickle(call(op_global("__builtin__", "print"), op_str(PRINT_ARG))))
    files["mal_commands_alias.pt"] = z(payload_pickle(call(op_global("commands", "getoutput"), op_str("echo never-run"))))
    files["mal_subprocess_popen.pt"] = z(payload_pickle(call(op_global("subprocess", "Popen"), op_str("echo never-run"))))
    stack_global = op_short_str("builtins") + op_short_str("print") + b"\x93"
    files["mal_stack_global.pt"] = z(payload_pickle(call(stack_global, op_str(PRINT_ARG)), protocol=4))
    memo = op_short_str("builtins") + b"q\x01" + b"0" + op_short_str("print") + b"q\x02" + b"0" + b"h\x01h\x02\x93"
    files["mal_memo_stack_global.pt"] = z(payload_pickle(call(memo, op_str(PRINT_ARG)), protocol=4))
    rot13 = call(op_global("_codecs", "encode"), op_str("ohvygvaf"), op_str("rot13")) + call(op_global("_codecs", "encode"), op_str("cevag"), op_str("rot13")) + b"\x93"
    files["mal_rot13_stack_global.pt"] = z(payload_pickle(call(rot13, op_str(PRINT_ARG)), protocol=4))
    dotted = op_short_str("builtins") + op_short_str("print.__self__.exec") + b"\x93"
    files["mal_dotted_exec.pt"] = z(payload_pickle(call(dotted, op_str("print('never-run')")), protocol=4))
    torch_os = op_short_str("torch") + op_short_str("os.system") + b"\x93"
    files["mal_torch_os_system.pt"] = z(payload_pickle(call(torch_os, op_str("echo never-run")), protocol=4))
    files["mal_collect_env.pt"] = z(payload_pickle(call(op_global("torch.utils.collect_env", "run"), op_str("echo never-run"))))
    files["mal_pkgutil.pt"] = z(payload_pickle(call(op_global("pkgutil", "resolve_name"), op_str("os:getcwd"))))
    files["mal_runstring.pt"] = z(payload_pickle(call(op_global("numpy.testing._private.utils", "runstring"), op_str("print('x')"), b"}")))
    files["mal_attrgetter.pt"] = z(payload_pickle(call(op_global("operator", "attrgetter"), op_str("system"))))
    files["mal_partial.pt"] = z(payload_pickle(call(op_global("functools", "partial"), op_global("builtins", "print"), op_str(PRINT_ARG))))
    touch = call(op_global("builtins", "getattr"), call(op_global("pathlib", "PosixPath"), op_str(tmp_marker)), op_str("touch"))
    files["mal_touch_getattr.pt"] = z(payload_pickle(call(touch)))
    files["mal_inst.pt"] = z(b"(" + b"i" + b"os\ngetcwd\n" + b".")
    files["mal_ext1.pt"] = z(payload_pickle(b"\x82\x01" + b")R", protocol=2))
    files["mal_build_on_global.pt"] = z(payload_pickle(op_global("torch", "nn") + b"}" + op_str("Linear") + b"Ns" + b"b"))
    inner = b"\x80\x02" + PRINT + b"."
    files["mal_nested_pickle_loads.pt"] = z(payload_pickle(call(op_global("pickle", "loads"), b"C" + bytes([len(inner)]) + inner)))
    inner_checkpoint = z(payload_pickle(PRINT))
    encoded = call(op_global("_codecs", "encode"), op_str(inner_checkpoint.decode("latin1")), op_short_str("latin1"))
    files["mal_nested_load_from_bytes.pt"] = z(payload_pickle(call(op_global("torch.storage", "_load_from_bytes"), encoded)))
    benign = payload_pickle(b"K\x01")
    injected = b"\x80\x02" + PRINT + b"0" + benign[2:]
    files["mal_injected_pop.pt"] = z(injected)
    dup = io.BytesIO()
    with warnings.catch_warnings(), zipfile.ZipFile(dup, "w") as archive:
        warnings.simplefilter("ignore")  # the duplicate name is the point
        archive.writestr("archive/data.pkl", benign)
        archive.writestr("archive/byteorder", b"little")
        archive.writestr("archive/version", b"3\n")
        archive.writestr("archive/data.pkl", payload_pickle(PRINT))
    files["mal_duplicate_last.pt"] = dup.getvalue()
    dup = io.BytesIO()
    with warnings.catch_warnings(), zipfile.ZipFile(dup, "w") as archive:
        warnings.simplefilter("ignore")  # the duplicate name is the point
        archive.writestr("archive/data.pkl", payload_pickle(PRINT))
        archive.writestr("archive/byteorder", b"little")
        archive.writestr("archive/version", b"3\n")
        archive.writestr("archive/data.pkl", benign)
    files["mal_duplicate_first.pt"] = dup.getvalue()
    raw = z(payload_pickle(PRINT))
    crc = struct.pack("<I", zlib.crc32(payload_pickle(PRINT)))
    files["mal_bad_crc.pt"] = _patch_zip(raw, crc, struct.pack("<I", 0xDEADBEEF))
    files["mal_local_name.pt"] = raw.replace(b"archive/data.pkl", b"archive/data.pkX", 1)
    files["mal_deflated.pt"] = z(payload_pickle(PRINT), compress_pkl=True)
    files["mal_legacy_object.pt"] = legacy(payload_pickle(PRINT))
    files["mal_legacy_magic.pt"] = legacy(pickle.dumps({"a": 1}, protocol=2), magic=b"\x80\x02" + PRINT + b"0" + pickle.dumps(0x1950A86A20F9469CFC6C, protocol=2)[2:])
    files["mal_plain_truncated.pkl"] = b"\x80\x02" + PRINT
    files["mal_plain_pickle.pkl"] = b"\x80\x02" + PRINT + b"."
    files["mal_tar.pt"] = tar_checkpoint(payload_pickle(PRINT))
    files["mal_unusual_extension.txt"] = z(payload_pickle(call(op_global("posix", "getcwd"))))
    files["mal_eval.pt"] = z(payload_pickle(call(op_global("builtins", "eval"), op_str("1 + 1"))))
    files["mal_exec_alias.pt"] = z(payload_pickle(call(op_global("__builtin__", "exec"), op_str("x = 1"))))
    files["mal_import_module.pt"] = z(payload_pickle(call(op_global("importlib", "import_module"), op_str("os"))))
    files["mal_runpy.pt"] = z(payload_pickle(call(op_global("runpy", "run_module"), op_str("this"))))
    files["mal_webbrowser.pt"] = z(payload_pickle(call(op_global("webbrowser", "open"), op_str("http://127.0.0.1:9/"))))
    files["mal_socket.pt"] = z(payload_pickle(call(op_global("socket", "create_connection"), call(op_global("builtins", "tuple"), b"]" + op_str("127.0.0.1") + b"a" + b"K\x09a"))))
    files["mal_shutil_which.pt"] = z(payload_pickle(call(op_global("shutil", "which"), op_str("ls"))))
    files["mal_ctypes.pt"] = z(payload_pickle(call(op_global("ctypes", "CDLL"), b"N")))
    files["mal_asyncio_shell.pt"] = z(payload_pickle(call(op_global("asyncio.subprocess", "create_subprocess_shell"), op_str("echo never-run"))))
    files["mal_pydoc_locate.pt"] = z(payload_pickle(call(op_global("pydoc", "locate"), op_str("os.getcwd"))))
    files["mal_timeit.pt"] = z(payload_pickle(call(op_global("timeit", "timeit"), op_str("print('never-run')"))))
    files["mal_code_interpreter.pt"] = z(payload_pickle(call(op_global("code", "InteractiveInterpreter"))))
    reused = op_global("builtins", "getattr") + b"q\x05" + b"0" + b"h\x05" + b"(" + op_global("builtins", "print") + op_str("__call__") + b"tR)R"
    files["mal_memo_getattr.pt"] = z(payload_pickle(reused))
    files["mal_torch_load_computed.pt"] = z(payload_pickle(call(op_global("torch", "load"), call(op_global("io", "BytesIO"), b"C\x00"))))
    files["mal_numpy_load.pt"] = z(payload_pickle(call(op_global("numpy", "load"), op_str("x.npy"), b"\x88")))
    files["mal_second_folder.pt"] = z(payload_pickle(b"K\x01"), extra=[("other/data.pkl", payload_pickle(PRINT))])
    files["mal_extra_pkl.pt"] = z(payload_pickle(b"K\x01"), extra=[("archive/extra.pkl", payload_pickle(PRINT))])
    files["mal_protocol0_text.pt"] = z(b"cos\ngetcwd\n(tR.")
    files["mal_obj_opcode.pt"] = z(b"(cos\ngetcwd\no.")
    files["mal_newobj_ex.pt"] = z(b"\x80\x04" + op_short_str("subprocess") + op_short_str("Popen") + b"\x93" + b"(" + op_str("echo never-run") + b"t}\x92.")
    files["mal_logging_handler.pt"] = z(payload_pickle(call(op_global("logging", "FileHandler"), op_str(tmp_marker))))
    files.update(peer_techniques(tmp_marker))
    return files


def _zip(entries: list[tuple[str, bytes]]) -> bytes:
    buffer = io.BytesIO()
    with warnings.catch_warnings(), zipfile.ZipFile(buffer, "w") as archive:
        warnings.simplefilter("ignore")  # duplicate names are sometimes the point
        for name, raw in entries:
            archive.writestr(name, raw)
    return buffer.getvalue()


def _npy_object(pickled: bytes) -> bytes:
    header = b"{'descr': '|O', 'fortran_order': False, 'shape': (1,), }"
    header += b" " * (63 - len(header) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header + pickled


def frame_divergence(hidden: bytes) -> bytes:
    """A FRAME whose length disagrees with the BINBYTES inside it: pickle.load(file) runs the
    bytes a linear reader takes for the operand (cpython#154848, fickling's bypass test)."""
    return (b"\x80\x05N" + b"V" + b"a" * (8192 * 16 - 17) + b"\n" + b"0(" + b"\x95" + struct.pack("<Q", 2)
            + b"B" + b"\x07\x01\x00\x00" + b"\x00\x00" + (hidden + b"(").ljust(256 + 5, b"N") + b"1.")


def peer_techniques(tmp_marker: str) -> dict[str, bytes]:
    """The attack techniques of picklescan's, modelscan's and fickling's published samples,
    rebuilt here with harmless payloads (print, a marker-file touch, commands never run)."""
    z = torch_zip
    plain_print = b"\x80\x02" + PRINT + b"."
    touch = b"]" + op_str("touch") + b"a" + op_str(tmp_marker) + b"a"
    files = {
        # picklescan malicious6.pkl: the payload is the second pickle of the stream.
        "mal_second_pickle.pkl": pickle.dumps(["a", "b", "c"], protocol=4) + plain_print,
        # picklescan malicious1_wrong_ext.zip: a pickle in a zip that is not a torch archive.
        "mal_zip_wrong_ext.zip": _zip([("data.txt", plain_print)]),
        # picklescan dns_exfiltration.npy / object_arrays.npz: object arrays carry pickles.
        "mal_object.npy": _npy_object(plain_print),
        "mal_object.npz": _zip([("a.npy", _npy_object(pickle.dumps(["x"], protocol=2))), ("b.npy", _npy_object(plain_print))]),
        # fickling test_frame_boundary_divergence.
        "mal_frame_divergence.pkl": frame_divergence(b"cbuiltins\nprint\n" + b"Vharmless\n" + b"\x85R"),
        # issue 9: classes that run code when built, and re-exports of subprocess.
        "mal_reexported_popen.pt": z(payload_pickle(call(op_global("torch.utils.cpp_extension", "subprocess.Popen"), touch))),
        "mal_filestore.pt": z(payload_pickle(call(op_global("torch.distributed", "FileStore"), op_str(tmp_marker), b"K\x01"))),
        "mal_mako_template.pt": z(payload_pickle(call(op_global("mako.template", "Template"), op_str("${1 + 1}")))),
        "mal_module_walk.pt": z(payload_pickle(call(op_global("mypkg", "tools.subprocess.Popen"), touch))),
        # picklescan io_FileIO / urllib_request_urlopen / types_CodeType / cloudpickle samples.
        "mal_fileio.pt": z(payload_pickle(call(op_global("_io", "FileIO"), op_str(tmp_marker), op_str("w")))),
        "mal_urlopen.pt": z(payload_pickle(call(op_global("urllib.request", "urlopen"), op_str("http://127.0.0.1:9/")))),
        "mal_codetype.pt": z(payload_pickle(call(op_global("types", "CodeType"), b"K\x00"))),
        "mal_cloudpickle.pt": z(payload_pickle(call(op_global("cloudpickle.cloudpickle", "_make_function"), b"N"))),
        # picklescan keyerror/type-confusion exploits: STACK_GLOBAL fed a global as module name.
        "mal_stack_global_confusion.pt": z(payload_pickle(op_global("os", "getcwd") + b"\x94" + op_short_str("getcwd") + b"\x93)R", protocol=4)),
        # picklescan pytorch_magic_bypass.pt: the legacy magic number computed by eval().
        "mal_magic_eval.pt": (b"\x80\x02" + call(op_global("builtins", "eval"), op_str("0x1950A86A20F9469CFC6C")) + b"."
                              + pickle.dumps(1001, protocol=2) + pickle.dumps({}, protocol=2) + pickle.dumps({}, protocol=2)
                              + pickle.dumps([], protocol=2)),
        # picklescan malicious-invalid-bytes.pkl / broken_model.pkl: the payload, then garbage.
        "mal_then_garbage.pkl": b"\x80\x02" + PRINT + b"0\xff\xfe\xfd",
        # torch's zip reader: case-insensitive names, and the 4th of 4 copies is the one it reads.
        "mal_case_folded_data_pkl.pt": _zip([("archive/DATA.PKL", payload_pickle(PRINT)), ("archive/version", b"3\n")]),
        "mal_fourth_copy.pt": _zip([("archive/data.pkl", pickle.dumps({}, protocol=2))] * 3
                                   + [("archive/data.pkl", payload_pickle(PRINT)), ("archive/version", b"3\n")]),
    }
    # picklescan malicious1_0x1/0x20/0x40.zip: general-purpose flag bits torch refuses, others may not.
    raw = z(payload_pickle(PRINT))
    for bit in (0x20, 0x40):
        flagged = bytearray(raw)
        at = flagged.find(b"PK\x01\x02")
        flagged[at + 8] |= bit
        files[f"mal_zip_flag_{bit:#x}.pt"] = bytes(flagged)
    return files


def edge_files() -> dict[str, bytes]:
    """Benign but unusual pickles and containers that probe torch's exact rules (labelled by torch)."""
    z = torch_zip
    size = call(op_global("torch", "Size"), b"]K\x02a")
    counter = call(op_global("collections", "Counter"))
    od = call(op_global("collections", "OrderedDict"))
    files = {
        "edge_build_size_empty.pt": z(payload_pickle(size + b"}b")),
        "edge_build_size_state.pt": z(payload_pickle(size + b"}" + op_str("a") + b"K\x01sb")),
        "edge_build_set_state.pt": z(payload_pickle(call(op_global("builtins", "set")) + b"}" + op_str("a") + b"K\x01sb")),
        "edge_build_ordereddict.pt": z(payload_pickle(od + b"}b")),
        "edge_build_dict.pt": z(payload_pickle(b"}}b")),
        "edge_setitem_counter.pt": z(payload_pickle(counter + op_str("k") + b"K\x01s")),
        "edge_setitem_list.pt": z(payload_pickle(b"]K\x00K\x01s")),
        "edge_append_tuple.pt": z(payload_pickle(b")K\x01a")),
        "edge_persid_module.pt": z(payload_pickle(b"(" + op_str("module") + b"K\x01tQ")),
        "edge_persid_string.pt": z(payload_pickle(op_str("storage") + b"Q")),
        "edge_missing_memo.pt": z(payload_pickle(b"h\x07")),
        "edge_newobj_function.pt": z(payload_pickle(op_global("torch._utils", "_rebuild_tensor_v2") + b")\x81")),
        "edge_reduce_literal.pt": z(payload_pickle(b"K\x01)R")),
        "edge_missing_storage.pt": z(payload_pickle(b"(" + op_str("storage") + op_global("torch", "FloatStorage") + op_str("7") + op_str("cpu") + b"K\x04tQ")),
        "edge_short_binstring.pt": z(payload_pickle(b"U\x03abc")),
        "edge_long1.pt": z(payload_pickle(b"\x8a\x09" + bytes(8) + b"\x01")),
        "edge_additems.pt": z(b"\x80\x04\x8f(K\x01\x90."),
        "edge_proto3.pt": z(b"\x80\x03}" + op_str("a") + b"K\x01s."),
        "edge_no_stop.pt": z(b"\x80\x02}" + op_str("a") + b"K\x01s"),
        "edge_surrogate.pt": z(payload_pickle(b"X\x03\x00\x00\x00\xed\xa0\x80")),
        "edge_dtype_global.pt": z(payload_pickle(op_global("torch", "float32"))),
        "edge_reduce_dtype.pt": z(payload_pickle(call(op_global("torch", "float32")))),
        "edge_deflated_benign.pt": z(payload_pickle(b"K\x01"), compress_pkl=True),
        "edge_nested_tensor_njt.pt": z(payload_pickle(op_global("torch.nested._internal.nested_tensor", "NestedTensor"))),
        "edge_legacy_bad_protocol.pt": pickle.dumps(0x1950A86A20F9469CFC6C, protocol=2) + pickle.dumps(1000, protocol=2) + pickle.dumps({}, protocol=2) * 3,
    }
    raw = z(payload_pickle(b"K\x01"))
    crc = struct.pack("<I", zlib.crc32(payload_pickle(b"K\x01")))
    files["edge_bad_crc_benign.pt"] = raw.replace(crc, struct.pack("<I", 0x12345678))
    no_version = io.BytesIO()
    with zipfile.ZipFile(no_version, "w") as archive:
        archive.writestr("archive/data.pkl", payload_pickle(b"K\x01"))
    files["edge_no_version.pt"] = no_version.getvalue()
    encrypted = bytearray(raw)
    first_central = encrypted.find(b"PK\x01\x02")  # data.pkl's central-directory entry
    encrypted[first_central + 8] |= 0x01  # general-purpose flag bit 0: encrypted
    files["edge_encrypted_flag.pt"] = bytes(encrypted)
    return files


def main_classes() -> dict[str, type]:
    """Classes defined in a training script (``__main__``) when their objects were saved."""
    import collections
    import dataclasses
    import enum

    class Color(enum.Enum):
        RED = 1

    @dataclasses.dataclass
    class Config:
        lr: float = 0.1
        layers: int = 2

    Point = collections.namedtuple("Point", "x y")
    classes = {"Color": Color, "Config": Config, "Point": Point}
    for name, cls in classes.items():
        cls.__module__ = "__main__"
        cls.__qualname__ = name
    return classes


def register_main(classes: dict[str, type]) -> None:
    main = sys.modules["__main__"]
    for name, cls in classes.items():
        setattr(main, name, cls)


def benign_files(classes: dict[str, type]) -> dict[str, tuple[object, str]]:
    """Objects for torch.save, each with the verdict it should get."""
    import argparse
    import collections
    import datetime
    import decimal
    import pathlib

    import numpy as np
    import torch

    torch.manual_seed(0)
    linear = torch.nn.Linear(4, 3)
    seq = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
    optimizer = torch.optim.Adam(seq.parameters())
    seq(torch.randn(2, 4)).sum().backward()
    optimizer.step()
    tied = torch.nn.Linear(3, 3)
    base = torch.randn(6, 6)
    qtensor = torch.quantize_per_tensor(torch.randn(4), 0.1, 0, torch.quint8)
    dtypes = {str(d): torch.ones(3, dtype=d) for d in (torch.float16, torch.bfloat16, torch.int8, torch.uint8, torch.bool,
                                                       torch.complex64, torch.float64, torch.int64, torch.uint16, torch.uint32,
                                                       torch.uint64, torch.float8_e4m3fn, torch.float8_e5m2)}

    batchnorm = torch.nn.BatchNorm1d(3)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2)
    safe = {
        "ok_state_dict.pt": seq.state_dict(),
        "ok_nested.pt": {"model": linear.state_dict(), "epoch": 3, "lr": 0.1, "name": "run", "flags": [True, None], "pair": (1, 2.5)},
        "ok_optimizer.pt": {"model": seq.state_dict(), "optim": optimizer.state_dict()},
        "ok_dtypes.pt": dtypes,
        "ok_parameter.pt": {"p": torch.nn.Parameter(torch.randn(2))},
        "ok_size_device.pt": {"size": torch.Size([2, 3]), "device": torch.device("cpu"), "dtype": torch.float32},
        "ok_sparse.pt": {"s": torch.randn(3, 3).to_sparse()},
        "ok_quantized.pt": {"q": qtensor},
        "ok_views.pt": {"base": base, "t": base.t(), "row": base[1], "cols": base[:, ::2]},
        "ok_tied.pt": {"a": tied.weight, "b": tied.weight},
        "ok_collections.pt": {"counter": collections.Counter("aab"), "set": {1, 2}, "bytes": b"\x00\x01", "bytearray": bytearray(b"xy"), "complex": 1 + 2j},
        "ok_ordered.pt": collections.OrderedDict(a=torch.zeros(2)),
        "ok_large.pt": {"big": torch.zeros(1 << 20)},
        "ok_empty.pt": {},
        "ok_int_keys.pt": {0: torch.ones(1), 1: torch.zeros(1)},
        "ok_scalars.pt": {"zero_dim": torch.tensor(3.5), "empty": torch.empty(0, 4), "frozen": torch.nn.Parameter(torch.ones(2), requires_grad=False)},
        "ok_meta.pt": {"m": torch.empty(5, device="meta")},
        "ok_many_keys.pt": {f"layer{i}.weight": torch.zeros(2) for i in range(400)},
        "ok_lists.pt": {"layers": [torch.ones(1), [torch.zeros(1), (torch.ones(2), 3)]]},
        "ok_batchnorm.pt": batchnorm.state_dict(),
        "ok_trainer_like.pt": {"epoch": 2, "global_step": 10, "state_dict": seq.state_dict(),
                               "optimizer_states": [optimizer.state_dict()], "lr_schedulers": [scheduler.state_dict()],
                               "hparams": {"lr": 0.001, "name": "exp"}},
    }
    needs = {
        "need_numpy.pt": {"arr": np.arange(6.0).reshape(2, 3)},
        "need_numpy_int.pt": {"ids": np.array([1, 2, 3], dtype=np.int64)},
        "need_numpy_scalar.pt": {"best": np.float64(0.5)},
        "need_namespace.pt": {"args": argparse.Namespace(lr=0.1, epochs=3), "model": linear.state_dict()},
        "need_datetime.pt": {"when": datetime.datetime(2026, 1, 1, 12, 0)},
        "need_full_model.pt": linear,
        "need_full_sequential.pt": seq,
        "need_enum.pt": {"color": classes["Color"].RED},
        "need_dataclass.pt": {"config": classes["Config"](), "model": linear.state_dict()},
        "need_namedtuple.pt": {"point": classes["Point"](1, 2)},
        "need_numpy_rng.pt": {"rng": np.random.get_state()},
        "need_numpy_default_rng.pt": {"rng": np.random.default_rng(0)},
        "need_numpy_randomstate.pt": {"rs": np.random.RandomState(0)},
        "need_pathlib.pt": {"path": pathlib.PurePosixPath("/data/run1")},
        "need_decimal.pt": {"value": decimal.Decimal("1.25")},
        "need_njt.pt": {"njt": torch.nested.nested_tensor([torch.ones(2), torch.ones(3)], layout=torch.jagged)},
    }
    dead = {
        "dead_defaultdict.pt": {"d": collections.defaultdict(list, a=[1])},
    }
    out = {}
    for name, obj in safe.items():
        out[name] = (obj, "safe")
    for name, obj in {**needs, **dead}.items():
        out[name] = (obj, "needs-allowlist")
    return out


def generate(out_dir: str) -> dict[str, dict]:
    """Write the corpus; return {filename: {"expected": verdict}}."""
    # torch warns that TorchScript, quantized dtypes and TypedStorage are deprecated; the corpus
    # uses them on purpose.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _generate(out_dir)


def _generate(out_dir: str) -> dict[str, dict]:
    import torch

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    labels: dict[str, dict] = {}
    marker = str(out / "payload-ran.marker")
    for name, raw in malicious_files(marker).items():
        (out / name).write_bytes(raw)
        labels[name] = {"expected": "malicious"}
    for name, raw in edge_files().items():
        (out / name).write_bytes(raw)
        labels[name] = {"expected": "benign"}
    classes = main_classes()
    register_main(classes)
    for name, (obj, expected) in benign_files(classes).items():
        torch.save(obj, out / name)
        labels[name] = {"expected": expected}
    linear = torch.nn.Linear(2, 2)
    torch.save(linear.state_dict(), out / "ok_legacy.pt", _use_new_zipfile_serialization=False)
    labels["ok_legacy.pt"] = {"expected": "safe"}
    torch.save(linear.state_dict(), out / "dead_protocol4.pt", pickle_protocol=4)
    labels["dead_protocol4.pt"] = {"expected": "needs-allowlist"}
    with open(out / "dead_plain_tensor.pkl", "wb") as handle:
        pickle.dump({"t": torch.ones(2)}, handle, protocol=2)
    labels["dead_plain_tensor.pkl"] = {"expected": "needs-allowlist"}
    torch.jit.save(torch.jit.script(linear), out / "dead_torchscript.pt")
    labels["dead_torchscript.pt"] = {"expected": "needs-allowlist"}
    (out / "dead_tar.pt").write_bytes(tar_checkpoint(pickle.dumps({"a": 1}, protocol=2)))
    labels["dead_tar.pt"] = {"expected": "needs-allowlist"}
    from safetensors.torch import save_file

    save_file({"w": torch.ones(2, 2)}, str(out / "ok_weights.safetensors"))
    labels["ok_weights.safetensors"] = {"expected": "safe"}
    (out / "labels.json").write_text(json.dumps(labels, indent=1, sort_keys=True))
    return labels


# Loads every file with real torch's weights_only=True, in this throwaway process only.
TORCH_LABELLER = r'''
import json, sys, warnings
import torch
warnings.simplefilter("ignore")
out = {}
for path in sys.argv[1:]:
    try:
        torch.load(path, weights_only=True)
        out[path] = "accept"
    except Exception as error:
        out[path] = "reject"
print(json.dumps(out))
'''


def torch_decisions(paths: list[str]) -> dict[str, str]:
    """What real torch.load(f, weights_only=True) does with each file, in a throwaway subprocess."""
    import subprocess

    done = subprocess.run([sys.executable, "-c", TORCH_LABELLER, *paths], check=False, capture_output=True, text=True, timeout=600, cwd=os.path.dirname(paths[0]))
    return json.loads(done.stdout.strip().splitlines()[-1])


if __name__ == "__main__":
    target = sys.argv[1] if len(sys.argv) > 1 else "corpus"
    written = generate(target)
    decisions = torch_decisions([str(Path(target) / name) for name in written])
    for name in written:
        written[name]["torch_2_13"] = decisions[str(Path(target) / name)]
    (Path(target) / "labels.json").write_text(json.dumps(written, indent=1, sort_keys=True))
    print(f"wrote {len(written)} files to {target}")
