"""A static replay of ``torch._weights_only_unpickler.Unpickler`` for one torch release."""

from __future__ import annotations

import json
import pickletools
import struct
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, lru_cache
from importlib import resources
from pickle import decode_long
from typing import Any

from torchpatch.versions import Version

MAGIC_NUMBER = 0x1950A86A20F9469CFC6C
_U4 = struct.Struct("<I")
_I4 = struct.Struct("<i")
PROTOCOL_VERSION = 1001


@dataclass(frozen=True)
class Rules:
    """What one torch release's weights-only loader accepts (extracted from its wheel)."""

    release: str
    allowlist: frozenset[str]
    import_time_allowlist: frozenset[str]
    blocked_modules: frozenset[str]
    opcodes: frozenset[int]
    setitem_dict_only: bool
    build_allows_default_types: bool
    import_mapping: dict[str, str]
    name_mapping: dict[tuple[str, str], tuple[str, str]]
    torchscript_refused: bool
    tar_refused: bool
    default_weights_only: bool
    safetensors_routed: bool

    @property
    def version(self) -> Version:
        return Version.parse(self.release)


@lru_cache(maxsize=1)
def _data() -> dict[str, dict]:
    text = resources.files("torchpatch.audit").joinpath("data", "weights_only.json").read_text()
    return json.loads(text)


def known_releases() -> list[Version]:
    return sorted(Version.parse(key) for key in _data())


@cache
def rules_for(version: Version) -> Rules:
    """The rules of ``version``, or of the newest extracted release before it."""
    candidates = [v for v in known_releases() if v <= version] or known_releases()[:1]
    entry = _data()[str(candidates[-1])]
    return Rules(
        release=entry["release"],
        allowlist=frozenset(entry["allowlist"]),
        import_time_allowlist=frozenset(entry.get("import_time_allowlist", ())),
        blocked_modules=frozenset(entry["blocked_modules"]),
        opcodes=frozenset(bytes.fromhex(op)[0] for op in entry["opcodes"]),
        setitem_dict_only=entry["setitem_dict_only"],
        build_allows_default_types=entry["build_allows_default_types"],
        import_mapping=dict(entry["import_mapping"]),
        name_mapping={tuple(k): tuple(v) for k, v in entry["name_mapping"]},
        torchscript_refused=entry["torchscript_refused"],
        tar_refused=entry["tar_refused"],
        default_weights_only=entry["default_weights_only"],
        safetensors_routed=entry["safetensors_routed"],
    )


class Refusal(Exception):
    """Why torch would refuse the pickle. ``kind`` says whether an allowlist can help."""

    def __init__(self, kind: str, detail: str, offset: int, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.detail = detail
        self.offset = offset
        self.message = message


@dataclass(frozen=True, eq=False)
class Ref:
    """An allowlisted global pushed by GLOBAL, identified by its allowlist name."""

    name: str


@dataclass(eq=False)
class Obj:
    """An object built during the load; only its exact type (and emptiness) matters to torch's checks."""

    type: str
    filled: bool = False


# Allowlisted C types that have neither __setstate__ nor a __dict__.
_NO_DICT = frozenset({"torch.Size", "torch.device", "set", "builtins.set", "bytearray", "builtins.bytearray", "complex", "builtins.complex"})


def _truthy(state: Any) -> bool:
    if isinstance(state, Obj):
        return state.filled or state.type not in ("dict", "list", "set")
    return bool(state) if not isinstance(state, Ref) else True


def _not_callable(name: str) -> bool:
    """Allowlist entries that are objects, not functions or classes: dtypes, qschemes and the
    legacy storage names (instances of torch.serialization.StorageType)."""
    module, _, last = name.rpartition(".")
    if module in ("torch", "torch.cuda") and last.endswith("Storage"):
        return True
    return module == "torch" and last[:1].islower() and name != "torch.device"


_DICTS = ("dict", "collections.OrderedDict", "collections.Counter")
_NJT_GLOBALS = frozenset({
    "torch.nested._internal.nested_tensor.NestedTensor",
    "torch.nested._internal.nested_tensor._rebuild_njt",
    "torch._dynamo.decorators._DimRange",
})
_PARAMETER = "torch.nn.parameter.Parameter"

# numpy pickles a dtype as numpy.dtype("<kind><itemsize>", False, True) and then BUILDs it, so
# weights_only needs the dtype's class (numpy >= 1.25 exposes them as numpy.dtypes.*DType).
_NUMPY_DTYPES = {
    "f": {2: "Float16", 4: "Float32", 8: "Float64", 16: "LongDouble"},
    "i": {1: "Int8", 2: "Int16", 4: "Int32", 8: "Int64"},
    "u": {1: "UInt8", 2: "UInt16", 4: "UInt32", 8: "UInt64"},
    "c": {8: "Complex64", 16: "Complex128", 32: "CLongDouble"},
}
_NUMPY_KINDS = {"b": "Bool", "O": "Object", "U": "Str", "S": "Bytes", "V": "Void", "M": "DateTime64", "m": "TimeDelta64"}


def numpy_dtype_class(code: Any) -> str:
    """``numpy.dtypes.Float64DType`` for the pickled dtype code ``"f8"``; "?" when unknown."""
    if not isinstance(code, str) or not code:
        return "?"
    kind, size = code[0], code[1:]
    if kind in _NUMPY_KINDS:
        return f"numpy.dtypes.{_NUMPY_KINDS[kind]}DType"
    if kind in _NUMPY_DTYPES and size.isdigit() and int(size) in _NUMPY_DTYPES[kind]:
        return f"numpy.dtypes.{_NUMPY_DTYPES[kind][int(size)]}DType"
    return "?"


def result_type(func: str, args: Any) -> Any:
    """The exact type of ``func(*args)`` as torch's BUILD/SETITEM checks would see it."""
    if func.startswith("torch._utils._rebuild_parameter"):
        return Obj(_PARAMETER)
    if func.startswith("torch._utils._rebuild"):
        return Obj("torch.Tensor")
    if func == "torch._tensor._rebuild_from_type_v2":
        new_type = args[1] if isinstance(args, tuple) and len(args) > 1 else None
        return Obj(new_type.name if isinstance(new_type, Ref) else "?")
    if func in ("numpy.dtype", "numpy.core.multiarray.dtype", "numpy._core.multiarray.dtype"):
        return Obj(numpy_dtype_class(args[0] if isinstance(args, tuple) and args else None))
    if func.endswith("multiarray._reconstruct"):
        cls = args[0] if isinstance(args, tuple) and args else None
        return Obj(cls.name if isinstance(cls, Ref) else "?")
    if func in _NUMPY_RNG_CTORS:
        return Obj(_NUMPY_RNG_CTORS[func])
    if func == "numpy.random._pickle.__bit_generator_ctor":
        # numpy >= 2 passes the BitGenerator class, numpy 1.x its name.
        arg = args[0] if isinstance(args, tuple) and args else "MT19937"
        if isinstance(arg, Ref):
            return Obj(arg.name)
        return Obj(_NUMPY_BIT_GENERATORS.get(arg, "?")) if isinstance(arg, str) else Obj("?")
    if func == "_codecs.encode":
        text = args[0] if isinstance(args, tuple) and args else ""
        return text.encode("latin1", "replace") if isinstance(text, str) else b""
    simple = {
        "builtins.set": "set",
        "builtins.bytearray": "bytearray",
        "builtins.complex": "complex",
        "torch.serialization._get_layout": "torch.layout",
    }
    if func in simple:
        return Obj(simple[func])
    if _is_class_name(func):
        return Obj(func)
    return Obj("?")


def _fixed_result_type(func: str) -> str | None:
    """The type result_type gives ``func(...)`` whatever its arguments, or None when it depends on them."""
    if (func in ("torch._tensor._rebuild_from_type_v2", "numpy.dtype", "numpy.core.multiarray.dtype", "numpy._core.multiarray.dtype",
                 "numpy.random._pickle.__bit_generator_ctor", "_codecs.encode") or func.endswith("multiarray._reconstruct")):
        return None
    return result_type(func, ()).type


# numpy.random's unpickle helpers (numpy/random/_pickle.py) and what each returns, so torch's
# BUILD check sees the real type: it then calls that type's __setstate__ if allowlisted.
_NUMPY_RNG_CTORS = {
    "numpy.random._pickle.__randomstate_ctor": "numpy.random.mtrand.RandomState",
    "numpy.random._pickle.__generator_ctor": "numpy.random._generator.Generator",
    "numpy.random.bit_generator.__pyx_unpickle_SeedSequence": "numpy.random.bit_generator.SeedSequence",
}
_NUMPY_BIT_GENERATORS = {
    "MT19937": "numpy.random._mt19937.MT19937", "PCG64": "numpy.random._pcg64.PCG64",
    "PCG64DXSM": "numpy.random._pcg64.PCG64DXSM", "Philox": "numpy.random._philox.Philox", "SFC64": "numpy.random._sfc64.SFC64",
}


# Classes whose names are lower-case, so the capitalisation rule misses them.
LOWERCASE_CLASSES = frozenset(
    """
    builtins.set builtins.frozenset builtins.bytearray builtins.bytes builtins.complex builtins.slice
    builtins.range builtins.int builtins.float builtins.str builtins.tuple builtins.list builtins.dict
    builtins.bool builtins.object collections.defaultdict collections.deque numpy.dtype numpy.ndarray
    torch.device torch.dtype torch.layout torch.memory_format datetime.datetime datetime.date
    datetime.time datetime.timedelta datetime.timezone functools.partial
    """.split()
)


def _is_class_name(name: str) -> bool:
    return name.rsplit(".", 1)[-1][:1].isupper() or name in LOWERCASE_CLASSES


class Emulator:
    """Replays torch's weights-only Unpickler.load over raw pickle bytes, symbolically."""

    def __init__(self, rules: Rules, user_allowlist: frozenset[str] = frozenset(), has_record: Callable[[str], bool] | None = None) -> None:
        self.rules = rules
        self.user = user_allowlist
        self.has_record = has_record
        # What the replay met, so an accepted pickle need not be walked a second time:
        # (written "module name", mapped module, mapped name, offset) per GLOBAL, (pid, offset) per BINPERSID.
        self.globals_seen: list[tuple[str, str, str, int]] = []
        self.persistent_seen: list[tuple[Any, int]] = []

    def map_name(self, module: str, name: str) -> tuple[str, str]:
        # torch._weights_only_unpickler._read_global_instruction: torch's own copy of the
        # protocol-2 mappings, applied whatever the pickle's protocol.
        if (module, name) in self.rules.name_mapping:
            return self.rules.name_mapping[(module, name)]
        if module in self.rules.import_mapping:
            return self.rules.import_mapping[module], name
        return module, name

    def allowed(self, name: str) -> bool:
        return name in self.rules.allowlist or self.user_allowed(name)

    def user_allowed(self, name: str) -> bool:
        # Modules that `import torch` loads register entries through add_safe_globals, so
        # torch treats them exactly like the caller's own safe_globals.
        return name in self.user or name in self.rules.import_time_allowlist

    def build_allowed(self, type_name: str) -> bool:
        if type_name in ("torch.Tensor", _PARAMETER, "collections.OrderedDict"):
            return True
        if self.user_allowed(type_name):
            return True
        return self.rules.build_allows_default_types and type_name in self.rules.allowlist and _is_class_name(type_name)

    def load(self, data: bytes, base: int = 0, start: int = 0) -> tuple[Any, int]:
        """Run one pickle from ``start``; return (value, end) or raise Refusal."""
        pos = start
        stack: list[Any] = []
        metastack: list[list[Any]] = []
        memo: dict[int, Any] = {}

        def read(n: int) -> bytes:
            nonlocal pos
            chunk = data[pos : pos + n]
            pos += n
            return chunk

        def readline() -> bytes:
            nonlocal pos
            end = data.find(b"\n", pos)
            end = len(data) - 1 if end < 0 else end
            line = data[pos : end + 1]
            pos = end + 1
            return line

        def malformed(message: str, at: int) -> Refusal:
            return Refusal("malformed", message, base + at, f"malformed pickle: {message}")

        end_of_data = len(data)
        allowed_opcodes = self.rules.opcodes
        unpack_u4 = _U4.unpack_from
        unpack_i4 = _I4.unpack_from
        reduce_cache: dict[str, tuple[bool, str | None]] = {}
        while True:
            at = pos
            if pos >= end_of_data:
                raise malformed("pickle ends without STOP", at)
            op = data[pos]
            pos += 1
            if op not in allowed_opcodes:
                raise Refusal("opcode", str(op), base + at, f"Unsupported operand {op} ({_opname(op)}) at byte {base + at}")
            try:
                # The opcodes torch.save's pickles are made of come first: this loop is the cost.
                if op == 0x72:  # LONG_BINPUT
                    (index,) = unpack_u4(data, pos)
                    pos += 4
                    memo[index] = stack[-1]
                elif op == 0x68:  # BINGET
                    index = data[pos]
                    pos += 1
                    if index not in memo:
                        raise malformed(f"memo key {index} was never stored", at)
                    stack.append(memo[index])
                elif op == 0x58:  # BINUNICODE
                    (length,) = unpack_u4(data, pos)
                    chunk = data[pos + 4 : pos + 4 + length]
                    pos += 4 + length
                    if len(chunk) != length:
                        raise malformed("string runs past the end of the pickle", at)
                    stack.append(str(chunk, "utf-8", "surrogatepass"))
                elif op == 0x28:  # MARK
                    metastack.append(stack)
                    stack = []
                elif op == 0x4B:  # BININT1
                    stack.append(data[pos])
                    pos += 1
                elif op == 0x4A:  # BININT
                    stack.append(unpack_i4(data, pos)[0])
                    pos += 4
                elif op == 0x74:  # TUPLE
                    items = stack
                    stack = metastack.pop()
                    stack.append(tuple(items))
                elif op in (0x85, 0x86, 0x87):  # TUPLE1..3
                    count = op - 0x84
                    if len(stack) < count:
                        raise IndexError
                    items = tuple(stack[-count:])
                    del stack[-count:]
                    stack.append(items)
                elif op == 0x71:  # BINPUT
                    index = data[pos]
                    pos += 1
                    memo[index] = stack[-1]
                elif op == 0x63:  # GLOBAL
                    written_module = readline()[:-1].decode("utf-8")
                    written_name = readline()[:-1].decode("utf-8")
                    module, name = self.map_name(written_module, written_name)
                    self.globals_seen.append((f"{written_module}.{written_name}", module, name, base + at))
                    full = f"{module}.{name}"
                    if module in self.rules.blocked_modules:
                        raise Refusal("blocked", full, base + at, f"GLOBAL {full}: module {module} is blocked by torch and can never be allowlisted")
                    if not self.allowed(full):
                        hint = ""
                        if full in _NJT_GLOBALS:
                            # torch asks for these imports instead; importing them registers the names.
                            hint = " (importing torch.nested and torch._dynamo before torch.load also allowlists it)"
                        raise Refusal("global", full, base + at, f"GLOBAL {full} was not an allowed global{hint}")
                    stack.append(Ref(full))
                elif op == 0x81:  # NEWOBJ
                    stack.pop()
                    cls = stack.pop()
                    if not isinstance(cls, Ref) or not (cls.name == _PARAMETER or self.allowed(cls.name)):
                        raise Refusal("newobj", _describe(cls), base + at, f"NEWOBJ of {_describe(cls)}: only allowlisted classes can be created")
                    if _not_callable(cls.name) or not _is_class_name(cls.name) and not self.user_allowed(cls.name):
                        raise malformed(f"NEWOBJ of {cls.name}, which is not a class", at)
                    stack.append(Obj(cls.name))
                elif op == 0x52:  # REDUCE
                    args = stack.pop()
                    func = stack[-1]
                    if not isinstance(func, Ref):
                        raise Refusal("reduce", _describe(func), base + at, f"REDUCE on {_describe(func)}, which is not an allowlisted function")
                    known = reduce_cache.get(func.name)
                    if known is None:
                        known = reduce_cache[func.name] = (_not_callable(func.name), _fixed_result_type(func.name))
                    if known[0]:
                        raise malformed(f"REDUCE calls {func.name}, which is not callable", at)
                    stack[-1] = Obj(known[1]) if known[1] is not None else result_type(func.name, args)
                elif op == 0x62:  # BUILD
                    state = stack.pop()
                    inst = stack[-1]
                    type_name = inst.type if isinstance(inst, Obj) else _literal_type(inst)
                    if not self.build_allowed(type_name):
                        raise Refusal("build", type_name, base + at, f"BUILD on a {type_name} object: only Tensor, Parameter, OrderedDict and allowlisted types can be built")
                    # Without __setstate__, torch falls back to inst.__dict__.update(state), which
                    # fails for these C types whenever the state is not empty.
                    if type_name in _NO_DICT and _truthy(state):
                        raise malformed(f"BUILD with state on a {type_name}, which has no __dict__", at)
                elif op in (0x61, 0x65):  # APPEND, APPENDS
                    if op == 0x61:
                        stack.pop()
                    else:
                        stack = metastack.pop()
                    target = stack[-1]
                    if isinstance(target, Obj):
                        target.filled = True
                    if _type_of(target) != "list":
                        raise Refusal("append", _type_of(target), base + at, f"APPEND to a {_type_of(target)}: torch only appends to lists")
                elif op in (0x73, 0x75):  # SETITEM, SETITEMS
                    if op == 0x73:
                        stack.pop()
                        stack.pop()
                    else:
                        stack = metastack.pop()
                    target = stack[-1]
                    if isinstance(target, Obj):
                        target.filled = True
                    # _check_set_item_target arrived with the CVE-2026-24747 fix (2.10).
                    if self.rules.setitem_dict_only and _type_of(target) not in _DICTS:
                        raise Refusal("setitem", _type_of(target), base + at, f"SETITEM on a {_type_of(target)}: torch only sets items on dict, OrderedDict and Counter")
                    if not self.rules.setitem_dict_only and _type_of(target) in ("list", "tuple", "str", "int", "NoneType", "bytes", "torch.Tensor"):
                        raise malformed(f"SETITEM on a {_type_of(target)}", at)
                elif op == 0x4E:
                    stack.append(None)
                elif op in (0x88, 0x89):
                    stack.append(op == 0x88)
                elif op == 0x29:
                    stack.append(())
                elif op == 0x5D:
                    stack.append(Obj("list"))
                elif op == 0x7D:
                    stack.append(Obj("dict"))
                elif op == 0x8F:
                    stack.append(Obj("set"))
                elif op == 0x4D:
                    stack.append(struct.unpack("<H", read(2))[0])
                elif op == 0x47:
                    stack.append(struct.unpack(">d", read(8))[0])
                elif op == 0x55:  # SHORT_BINSTRING, decoded with torch.load's default encoding
                    size = read(1)[0]
                    stack.append(read(size).decode("utf-8", "strict"))
                elif op == 0x51:  # BINPERSID
                    pid = stack.pop()
                    self.persistent_seen.append((pid, base + at))
                    stack.append(self.persistent(pid, base + at))
                elif op == 0x6A:  # LONG_BINGET
                    index = struct.unpack("<I", read(4))[0]
                    if index not in memo:
                        raise malformed(f"memo key {index} was never stored", at)
                    stack.append(memo[index])
                elif op == 0x8A:  # LONG1
                    size = read(1)[0]
                    stack.append(decode_long(read(size)))
                elif op == 0x80:  # PROTO
                    read(1)
                elif op == 0x2E:  # STOP
                    return stack.pop(), pos
            except Refusal:
                raise
            except (IndexError, struct.error, UnicodeDecodeError, KeyError) as error:
                raise malformed(f"{type(error).__name__} at byte {base + at}", at) from None

    def persistent(self, pid: Any, offset: int) -> Obj:
        if not isinstance(pid, (tuple, int)):
            raise Refusal("persid", type(pid).__name__, offset, f"persistent id must be a tuple or int, got {_type_of(pid)}")
        if isinstance(pid, tuple) and pid:
            typename = pid[0].decode("ascii", "replace") if isinstance(pid[0], bytes) else pid[0]
            if typename != "storage":
                raise Refusal("persid", str(typename), offset, f"only persistent ids of storages are allowed, got {typename!r}")
            if self.has_record is not None:
                if len(pid) != 5:
                    raise Refusal("malformed", "persid", offset, f"storage persistent id has {len(pid)} fields, torch.save writes 5")
                storage_type, key = pid[1], pid[2]
                if not isinstance(storage_type, Ref) or "Storage" not in storage_type.name:
                    raise Refusal("malformed", "persid", offset, f"storage type {_describe(storage_type)} is not a storage class")
                if not self.has_record(str(key)):
                    raise Refusal("malformed", "record", offset, f"storage record data/{key} is missing from the archive")
        elif isinstance(pid, int) and self.has_record is not None:
            raise Refusal("malformed", "persid", offset, "an integer persistent id is not a storage reference in a zip checkpoint")
        return Obj("storage")


def _type_of(value: Any) -> str:
    return value.type if isinstance(value, Obj) else _literal_type(value)


def _literal_type(value: Any) -> str:
    if isinstance(value, Ref):
        return "type" if _is_class_name(value.name) else "function"
    return type(value).__name__


def _describe(value: Any) -> str:
    if isinstance(value, Ref):
        return value.name
    return f"a {_type_of(value)} value"


def _opname(op: int) -> str:
    code = pickletools.code2op.get(chr(op))
    return code.name if code else "unknown opcode"
