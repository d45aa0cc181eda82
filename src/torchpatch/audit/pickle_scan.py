"""A symbolic pickle machine: every opcode, the stack and memo modelled, nothing imported or called."""

from __future__ import annotations

import io
import mmap
import pickletools
import struct
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
    error_offset_is_end: bool = False  # the data ran out (a file window may just be too short)
    opcode_bytes: bytes = b""  # the opcodes used, as bytes (set at STOP)
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


class _View:
    """What pickletools' operand readers need (read, readline) over bytes or a mapping, in place,
    refusing operands larger than MAX_OPERAND."""

    def __init__(self, data: Any) -> None:
        self.data = data
        self.position = 0

    def read(self, size: int = -1) -> bytes:
        if size < 0 or size > MAX_OPERAND:
            raise ValueError(f"operand of {size} bytes exceeds the {MAX_OPERAND >> 20} MiB limit")
        chunk = bytes(self.data[self.position : self.position + size])
        self.position += len(chunk)
        return chunk

    def readline(self) -> bytes:
        end = self.data.find(b"\n", self.position, self.position + MAX_OPERAND)
        end = len(self.data) if end < 0 else end + 1
        line = bytes(self.data[self.position : end])
        self.position = end
        return line

    def tell(self) -> int:
        return self.position


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
    start = stream.tell()
    if isinstance(stream, (io.BytesIO, mmap.mmap)):
        # In memory or mapped: indexed in place, nothing copied.
        data = stream.getvalue() if isinstance(stream, io.BytesIO) else stream
        result = scan_data(data, start, base)
        stream.seek(result.end - base)
        return result
    # A file (legacy, tar, .npy): the pickle is followed by tensor data, so read only as much as
    # the pickle needs, growing the window until it reaches STOP or the operand limit.
    window = 1 << 20
    while True:
        stream.seek(start)
        data = stream.read(window)
        result = scan_data(data, 0, base + start)
        # An error in a full window may only mean the window was too short (an operand's
        # reader fails on missing bytes before the loop sees the end): read more and redo.
        if result.error is None or len(data) < window or window >= MAX_OPERAND:
            stream.seek(result.end - base)
            return result
        window *= 4


def scan_data(data: bytes, start: int = 0, base: int = 0) -> Scan:
    """The symbolic machine over ``data[start:]``; offsets are ``base`` + index into ``data``."""
    result = Scan(start=base + start)
    result.last_offset = base + start
    stack: list[Any] = []
    memo: dict[Any, Any] = {}
    try:
        with warnings.catch_warnings():
            # pickletools decodes protocol-0 STRING operands with codecs.escape_decode, which
            # warns on a crafted escape; the auditor reports the pickle, not the warning.
            warnings.simplefilter("ignore", DeprecationWarning)
            position = _run(result, data, start, stack, memo, base)
        result.end = base + position
    except _EndOfData as error:
        result.error = str(error)
        result.error_offset = result.last_offset
        result.error_offset_is_end = True
        result.end = base + len(data)
    except (ValueError, IndexError, KeyError, TypeError, EOFError, UnicodeDecodeError, struct.error, OverflowError) as error:
        result.error = str(error) or type(error).__name__
        result.error_offset = result.last_offset
        result.end = base + min(result.last_offset - base + 1, len(data))
    return result


class _EndOfData(ValueError):
    pass


_U4 = struct.Struct("<I")
_I4 = struct.Struct("<i")
_U2 = struct.Struct("<H")
_U8 = struct.Struct("<Q")
_F8 = struct.Struct(">d")
# Opcodes the fast loop does not decode itself: pickletools' own operand readers, run on a view.
_RARE = {code[0]: op for code, op in ((op.code.encode("latin-1"), op) for op in pickletools.opcodes)}


def _run(result: Scan, data: bytes, position: int, stack: list, memo: dict, base: int) -> int:
    """The frequent opcodes of torch.save's pickles are decoded and modelled inline, most frequent
    first (this loop is the auditor's cost); every other opcode goes through pickletools' operand
    reader and _step. ``result.last_offset`` is kept exact for error messages."""
    size = len(data)
    push = stack.append
    pop = stack.pop
    seen = bytearray(256)
    frame_end = -1
    previous_op, previous_at = 0, -1
    view = None
    u4, i4, u2, u8 = _U4.unpack_from, _I4.unpack_from, _U2.unpack_from, _U8.unpack_from
    at = position
    try:
        while True:
            at = position
            op = data[at]
            position = at + 1
            seen[op] = 1
            if frame_end >= 0:
                if previous_at < frame_end < at:
                    name = _RARE[previous_op].name if previous_op in _RARE else "?"
                    _frame_violation(result, (name, base + previous_at), base + frame_end, base + at)
                if at >= frame_end:
                    frame_end = -1
                previous_op, previous_at = op, at
            if op == 0x72:  # LONG_BINPUT
                (index,) = u4(data, position)
                position += 4
                memo[index] = stack[-1]
            elif op == 0x68:  # BINGET
                push(memo[data[position]])
                position += 1
            elif op == 0x4B:  # BININT1
                push(data[position])
                position += 1
            elif op == 0x28:  # MARK
                push(MARK)
            elif op == 0x58 or op == 0x8C:  # BINUNICODE, SHORT_BINUNICODE
                if op == 0x58:
                    (length,) = u4(data, position)
                    position += 4
                else:
                    length = data[position]
                    position += 1
                if length > MAX_OPERAND:
                    raise ValueError(f"operand of {length} bytes exceeds the {MAX_OPERAND >> 20} MiB limit")
                if position + length > size:
                    raise _EndOfData("string runs past the end of the data")
                push(str(data[position : position + length], "utf-8", "surrogatepass"))
                position += length
            elif op == 0x74:  # TUPLE
                push(tuple(_pop_mark(stack)))
            elif op == 0x85 or op == 0x86 or op == 0x87:  # TUPLE1..3
                count = op - 0x84
                items = tuple(stack[-count:])
                if len(items) != count or MARK in items:
                    raise IndexError(f"TUPLE{count} needs {count} items")
                del stack[-count:]
                push(items)
            elif op == 0x52:  # REDUCE
                args = pop()
                func = pop()
                push(_call(result, func, args, base + at, "REDUCE"))
            elif op == 0x51:  # BINPERSID
                persistent = Persistent(pop(), base + at)
                result.persistent.append(persistent)
                push(persistent)
            elif op == 0x89 or op == 0x88:  # NEWFALSE, NEWTRUE
                push(op == 0x88)
            elif op == 0x29:  # EMPTY_TUPLE
                push(())
            elif op == 0x71:  # BINPUT
                memo[data[position]] = stack[-1]
                position += 1
            elif op == 0x6A:  # LONG_BINGET
                (index,) = u4(data, position)
                position += 4
                push(memo[index])
            elif op == 0x4A:  # BININT
                push(i4(data, position)[0])
                position += 4
            elif op == 0x4D:  # BININT2
                push(u2(data, position)[0])
                position += 2
            elif op == 0x4E:  # NONE
                push(None)
            elif op == 0x94:  # MEMOIZE
                memo[len(memo)] = stack[-1]
            elif op == 0x75 or op == 0x65:  # SETITEMS, APPENDS
                items = _pop_mark(stack)
                target = stack[-1]
                if isinstance(target, Container):
                    target.items.extend(items)
                elif isinstance(target, Call):
                    target.state.append(("SETITEMS" if op == 0x75 else "APPENDS", items))
            elif op == 0x7D:  # EMPTY_DICT
                push(Container("dict"))
            elif op == 0x5D:  # EMPTY_LIST
                push(Container("list"))
            elif op == 0x95:  # FRAME
                (length,) = u8(data, position)
                position += 8
                if frame_end >= 0:
                    result.frame_violations.append((base + at, f"FRAME at byte {base + at} opens inside the frame that ends at byte {base + frame_end}", base + at))
                frame_end = position + length
                previous_op, previous_at = op, at
            elif op == 0x2E:  # STOP
                result.result = pop()
                result.opcodes = {_RARE[code].name for code in range(256) if seen[code] and code in _RARE}
                result.opcode_bytes = bytes(code for code in range(256) if seen[code])
                result.last_offset = base + at
                return position
            else:
                opcode = _RARE.get(op)
                if opcode is None:
                    raise ValueError(f"at position {base + at}, opcode {bytes([op])!r} unknown")
                arg = None
                if opcode.arg is not None:
                    if view is None:
                        view = _View(data)
                    view.position = position
                    arg = opcode.arg.reader(view)
                    position = view.position
                    if position > size:
                        raise _EndOfData(f"{opcode.name} runs past the end")
                result.last_offset = base + at
                _step(result, stack, memo, opcode.name, arg, base + at)
            if position > size:
                raise _EndOfData("an operand runs past the end of the data")
    except IndexError:
        result.last_offset = base + at
        if position >= size or at >= size:
            raise _EndOfData("pickle ends without STOP" if at >= size else "an operand runs past the end of the data") from None
        raise
    except struct.error:
        result.last_offset = base + at
        raise _EndOfData("an operand runs past the end of the data") from None
    except BaseException:
        result.last_offset = base + at
        raise


def _frame_violation(result: Scan, previous: tuple[str, int], frame_end: int, next_offset: int) -> None:
    name, offset = previous
    result.frame_violations.append((offset, f"{name} at byte {offset} runs {next_offset - frame_end} byte(s) past the end of its FRAME "
                                            f"(byte {frame_end}): CPython's unpickler reading a file takes a different path through "
                                            "these bytes than a linear reader does (cpython#154848)", frame_end, next_offset))


def scan_bytes(data: bytes, base: int = 0) -> Scan:
    return scan_data(data, 0, base)


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
