"""A symbolic pickle machine: every opcode, the stack and memo modelled, nothing imported or called."""

from __future__ import annotations

import io
import pickletools
import warnings
from dataclasses import dataclass, field
from typing import Any, BinaryIO

from torchpatch.audit.names import python_name


@dataclass(eq=False)
class Global:
    """A global as written in the pickle and as Python's full unpickler would import it."""

    written: str
    module: str
    name: str
    offset: int

    @property
    def full(self) -> str:
        return f"{self.module}.{self.name}"


@dataclass(eq=False)
class Unresolved:
    """A value the machine cannot know statically (the result of something computed)."""

    why: str
    offset: int


@dataclass(eq=False)
class Call:
    """``func(*args)`` as REDUCE, NEWOBJ, NEWOBJ_EX, INST or OBJ would run it."""

    func: Any
    args: Any
    offset: int
    opcode: str
    state: list = field(default_factory=list)


@dataclass(eq=False)
class Persistent:
    pid: Any
    offset: int


@dataclass(eq=False)
class Container:
    """A list, dict or set built by the pickle; items are symbolic values."""

    kind: str
    items: list = field(default_factory=list)


@dataclass
class Scan:
    """What one pickle does, up to STOP or up to the byte where it breaks."""

    globals: list[Global] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)
    builds: list[tuple[Any, int]] = field(default_factory=list)
    persistent: list[Persistent] = field(default_factory=list)
    unresolved: list[Unresolved] = field(default_factory=list)
    opcodes: set[str] = field(default_factory=set)
    protocol: int = 0
    result: Any = None
    error: str | None = None
    error_offset: int = 0
    last_offset: int = 0
    # (offset, message, first byte of the disputed region[, its end]): FRAME lengths that disagree
    # with the opcodes. torch.save never writes FRAME; pickle.dump never writes these.
    frame_violations: list[tuple] = field(default_factory=list)
    start: int = 0
    end: int = 0


class _Mark:
    pass


# No string or bytes operand torch.save writes comes near this; a larger length field is a
# crafted file, and reading it would cost memory proportional to the claim.
MAX_OPERAND = 256 << 20


class _Bounded:
    """A read-only view of a stream that refuses reads larger than MAX_OPERAND."""

    def __init__(self, stream: BinaryIO) -> None:
        self.stream = stream

    def read(self, size: int = -1) -> bytes:
        if size < 0 or size > MAX_OPERAND:
            raise ValueError(f"operand of {size} bytes exceeds the {MAX_OPERAND >> 20} MiB limit")
        return self.stream.read(size)

    def readline(self) -> bytes:
        return self.stream.readline(MAX_OPERAND)

    def tell(self) -> int:
        return self.stream.tell()


MARK = _Mark()


def literal_bytes(value: Any) -> bytes | None:
    """The bytes a value certainly holds: a bytes literal, or ``_codecs.encode(str, "latin1")``."""
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    return None


def _pop_mark(stack: list) -> list:
    for index in range(len(stack) - 1, -1, -1):
        if stack[index] is MARK:
            items = stack[index + 1 :]
            del stack[index:]
            return items
    raise ValueError("MARK not found")


def scan(stream: BinaryIO, base: int = 0) -> Scan:
    """Walk one pickle from the stream's position; offsets are ``base`` + stream position.

    Never raises on malformed input: the error and the byte where it happened are recorded.
    """
    result = Scan(start=base + stream.tell())
    result.last_offset = result.start
    stack: list[Any] = []
    memo: dict[Any, Any] = {}
    try:
        # In-memory records are already bounded; files (legacy, tar) are read through the guard.
        source = stream if isinstance(stream, io.BytesIO) else _Bounded(stream)
        with warnings.catch_warnings():
            # pickletools decodes protocol-0 STRING operands with codecs.escape_decode, which
            # warns on a crafted escape; the auditor reports the pickle, not the warning.
            warnings.simplefilter("ignore", DeprecationWarning)
            _run(result, source, stack, memo, base)
    except (ValueError, IndexError, KeyError, TypeError, EOFError, UnicodeDecodeError) as error:
        result.error = str(error) or type(error).__name__
        result.error_offset = result.last_offset
    result.end = base + stream.tell()
    return result


def _run(result: Scan, source: Any, stack: list, memo: dict, base: int) -> None:
    frame_end = -1  # absolute end of the current FRAME, -1 outside frames
    previous = None  # (name, offset) of the opcode before
    for opcode, arg, pos in pickletools.genops(source):
        offset = base + (pos or 0)
        result.last_offset = offset
        name = opcode.name
        if frame_end >= 0:
            if previous is not None and previous[1] < frame_end < offset:
                _frame_violation(result, previous, frame_end, offset)
            if offset >= frame_end:
                frame_end = -1
        if name == "FRAME":
            if frame_end >= 0:
                result.frame_violations.append((offset, f"FRAME at byte {offset} opens inside the frame that ends at byte {frame_end}", offset))
            frame_end = offset + 9 + arg
        _step(result, stack, memo, name, arg, offset)
        previous = (name, offset)
        if name == "STOP":
            return
    raise ValueError("pickle ends without STOP")


def _frame_violation(result: Scan, previous: tuple[str, int], frame_end: int, next_offset: int) -> None:
    name, offset = previous
    result.frame_violations.append((offset, f"{name} at byte {offset} runs {next_offset - frame_end} byte(s) past the end of its FRAME "
                                            f"(byte {frame_end}): CPython's unpickler reading a file takes a different path through "
                                            "these bytes than a linear reader does (cpython#154848)", frame_end, next_offset))


def scan_bytes(data: bytes, base: int = 0) -> Scan:
    return scan(io.BytesIO(data), base)


def _step(result: Scan, stack: list, memo: dict, name: str, arg: Any, offset: int) -> None:
    result.opcodes.add(name)
    push = stack.append
    if name == "PROTO":
        result.protocol = arg
    elif name in ("FRAME", "STOP"):
        if name == "STOP":
            result.result = stack.pop()
    elif name == "MARK":
        push(MARK)
    elif name in ("INT", "BININT", "BININT1", "BININT2", "LONG", "LONG1", "LONG4", "BINFLOAT", "FLOAT") or name in ("STRING", "BINSTRING", "SHORT_BINSTRING") or name in ("UNICODE", "BINUNICODE", "SHORT_BINUNICODE", "BINUNICODE8") or name in ("BINBYTES", "SHORT_BINBYTES", "BINBYTES8", "BYTEARRAY8"):
        push(arg)
    elif name == "NONE":
        push(None)
    elif name in ("NEWTRUE", "NEWFALSE"):
        push(name == "NEWTRUE")
    elif name == "EMPTY_TUPLE":
        push(())
    elif name == "EMPTY_LIST":
        push(Container("list"))
    elif name == "EMPTY_DICT":
        push(Container("dict"))
    elif name == "EMPTY_SET":
        push(Container("set"))
    elif name == "TUPLE":
        push(tuple(_pop_mark(stack)))
    elif name in ("TUPLE1", "TUPLE2", "TUPLE3"):
        count = int(name[-1])
        items = tuple(stack[-count:]) if count else ()
        if len(items) != count or any(i is MARK for i in items):
            raise IndexError(f"{name} needs {count} items")
        del stack[-count:]
        push(items)
    elif name == "LIST":
        push(Container("list", _pop_mark(stack)))
    elif name == "DICT":
        push(Container("dict", _pop_mark(stack)))
    elif name == "FROZENSET":
        push(Container("frozenset", _pop_mark(stack)))
    elif name in ("APPEND", "SETITEM", "APPENDS", "SETITEMS", "ADDITEMS"):
        if name in ("APPEND",):
            items = [stack.pop()]
        elif name == "SETITEM":
            value = stack.pop()
            items = [stack.pop(), value]
        else:
            items = _pop_mark(stack)
        target = stack[-1]
        if isinstance(target, Container):
            target.items.extend(items)
        elif isinstance(target, Call):
            target.state.append((name, items))
    elif name == "POP":
        stack.pop()
    elif name == "POP_MARK":
        _pop_mark(stack)
    elif name == "DUP":
        push(stack[-1])
    elif name in ("GET", "BINGET", "LONG_BINGET"):
        push(memo[arg])
    elif name in ("PUT", "BINPUT", "LONG_BINPUT"):
        memo[arg] = stack[-1]
    elif name == "MEMOIZE":
        memo[len(memo)] = stack[-1]
    elif name in ("GLOBAL", "INST"):
        module, _, attr = arg.partition(" ")
        value = _global(result, module, attr, f"{module}.{attr}", offset)
        if name == "GLOBAL":
            push(value)
        else:
            call = Call(value, tuple(_pop_mark(stack)), offset, name)
            result.calls.append(call)
            push(call)
    elif name == "STACK_GLOBAL":
        attr = stack.pop()
        module = stack.pop()
        if isinstance(module, str) and isinstance(attr, str):
            push(_global(result, module, attr, f"{module}.{attr}", offset))
        else:
            unresolved = Unresolved("STACK_GLOBAL with a name computed at load time", offset)
            result.unresolved.append(unresolved)
            push(unresolved)
    elif name in ("EXT1", "EXT2", "EXT4"):
        unresolved = Unresolved(f"{name} {arg}: a global named through the copyreg extension registry", offset)
        result.unresolved.append(unresolved)
        push(unresolved)
    elif name == "REDUCE":
        args = stack.pop()
        func = stack.pop()
        push(_call(result, func, args, offset, name))
    elif name == "NEWOBJ":
        args = stack.pop()
        cls = stack.pop()
        push(_call(result, cls, args, offset, name))
    elif name == "NEWOBJ_EX":
        kwargs = stack.pop()
        args = stack.pop()
        cls = stack.pop()
        push(_call(result, cls, (args, kwargs), offset, name))
    elif name == "OBJ":
        items = _pop_mark(stack)
        if not items:
            raise IndexError("OBJ without a class")
        push(_call(result, items[0], tuple(items[1:]), offset, name))
    elif name == "BUILD":
        state = stack.pop()
        target = stack[-1]
        result.builds.append((target, offset))
        if isinstance(target, Call):
            target.state.append(("BUILD", state))
    elif name in ("PERSID", "BINPERSID"):
        pid = arg if name == "PERSID" else stack.pop()
        persistent = Persistent(pid, offset)
        result.persistent.append(persistent)
        push(persistent)
    elif name in ("NEXT_BUFFER", "READONLY_BUFFER"):
        if name == "NEXT_BUFFER":
            unresolved = Unresolved("out-of-band buffer (protocol 5) supplied at load time", offset)
            result.unresolved.append(unresolved)
            push(unresolved)
    else:
        raise ValueError(f"opcode {name} is not modelled")


def _global(result: Scan, module: str, attr: str, written: str, offset: int) -> Global:
    module, attr = python_name(module, attr, result.protocol)
    value = Global(written, module, attr, offset)
    result.globals.append(value)
    return value


def _call(result: Scan, func: Any, args: Any, offset: int, opcode: str) -> Any:
    call = Call(func, args, offset, opcode)
    result.calls.append(call)
    # Protocol 2 writes bytes as _codecs.encode(text, "latin1"); keep the value so nested
    # pickles inside torch.storage._load_from_bytes can be audited.
    if (
        isinstance(func, Global)
        and func.full == "_codecs.encode"
        and isinstance(args, tuple)
        and len(args) == 2
        and isinstance(args[0], str)
        and args[1] in ("latin1", "latin-1")
    ):
        try:
            return args[0].encode("latin1")
        except UnicodeEncodeError:
            return call
    return call
