"""One checkpoint in, one report out: format, weights_only decision, verdict, allowlist, findings."""

from __future__ import annotations

import gc
import io
import mmap
import os
from dataclasses import dataclass, field
from typing import Any, BinaryIO

from torchpatch.audit import names
from torchpatch.audit.formats import (
    FORMAT_NAMES,
    STORAGE_ELEMENT_BYTES,
    Finding,
    Member,
    Opened,
    open_checkpoint,
)
from torchpatch.audit.torchscript import analyse, jit_global_status
from torchpatch.audit.pickle_scan import Call, Container, Global, Persistent, Scan, Unresolved, scan_bytes
from torchpatch.audit.weights_only import (
    MAGIC_NUMBER,
    PROTOCOL_VERSION,
    Emulator,
    Ref,
    Refusal,
    Rules,
    known_releases,
    rules_for,
)
from torchpatch.versions import Version

MAX_NESTING = 4

@dataclass
class GlobalUse:
    written: str
    canonical: str
    member: str
    offset: int
    status: str  # "allowlisted", "benign", "review", "malicious"

    def as_dict(self) -> dict[str, Any]:
        return {"written": self.written, "canonical": self.canonical, "member": self.member, "offset": self.offset, "status": self.status}


@dataclass
class Report:
    filename: str
    format: str = "none"
    verdict: str = "unreadable"
    weights_only: str = "reject"
    reason: str = ""
    globals: list[GlobalUse] = field(default_factory=list)
    allowlist: list[str] = field(default_factory=list)
    # Classes the load would also need, which torchpatch cannot vouch for: never in `allowlist`,
    # only as commented-out lines in the snippet, for the user to review and decide.
    review: list[str] = field(default_factory=list)
    snippet: str = ""
    findings: list[Finding] = field(default_factory=list)
    torch_version: str = ""
    needs_full_unpickler: bool = False


def unreviewed(report: Report) -> list[str]:
    """Why torch's unpickler must not be run on the file (empty when every global is reviewed).

    ``--verify`` and ``--convert-to-safetensors`` run torch's weights-only unpickler, which calls
    what the allowlist admits; they only do so when torchpatch has reviewed every global the file
    names (torch's own allowlist, plain-data classes, the short list of harmless functions), so
    no payload runs on the auditing machine (issue 22 §3)."""
    if report.verdict in ("malicious", "unreadable"):
        return [f"it is {report.verdict}"]
    names_left = sorted({g.canonical for g in report.globals if g.status not in ("allowlisted", "benign")} | set(report.review))
    if names_left:
        return [f"{len(names_left)} global(s) torchpatch has not reviewed ({', '.join(names_left[:5])})"]
    if report.needs_full_unpickler:
        return ["it unpickles nested bytes with the full unpickler"]
    return []


def default_allowlist_union() -> frozenset[str]:
    union: set[str] = set()
    for version in known_releases():
        union |= rules_for(version).allowlist | rules_for(version).import_time_allowlist
    return frozenset(union)


def audit_path(path: str, version: Version) -> Report:
    # The symbolic machine allocates an object or two per opcode and frees none until the end;
    # the cyclic collector would walk them all again and again (a fifth of the time on a
    # 20,000-tensor state dict). Whatever cycles a crafted memo makes are collected afterwards.
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _audit_path(path, version)
    finally:
        if collecting:
            gc.enable()


def _audit_path(path: str, version: Version) -> Report:
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as stream:
            if size == 0:
                return audit_stream(stream, size, path, version)
            # Mapped, the thousands of small reads of a large archive's directory and headers
            # are memory copies, not system calls.
            with mmap.mmap(stream.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
                return audit_stream(mapped, size, path, version)
    except OSError as error:
        report = Report(path, torch_version=str(version))
        report.reason = f"cannot read: {error.strerror or error}"
        return report
    except (ValueError, EOFError, RecursionError, MemoryError) as error:
        # Fail closed: a file the auditor cannot take apart is never reported clean.
        report = Report(path, torch_version=str(version))
        report.reason = f"cannot be parsed: {type(error).__name__}: {error}"
        return report


def audit_stream(stream: BinaryIO, size: int, filename: str, version: Version, depth: int = 0,
                 storage_headers: bool = True) -> Report:
    """``storage_headers=False``: see ``open_checkpoint`` (a checkpoint read by byte ranges)."""
    rules = rules_for(version)
    report = Report(filename, torch_version=str(version))
    opened = open_checkpoint(stream, size, storage_headers)
    report.format = opened.format
    report.findings.extend(opened.findings)
    first = None
    if opened.format == "torch-zip" and not opened.unreadable and not opened.torch_error:
        # The replay of torch's unpickler runs first: when it accepts data.pkl with torch's own
        # allowlist, every global it met is in that allowlist, every call is to one of them and
        # every BUILD/SETITEM target passed torch's type checks, so the symbolic walk of the same
        # bytes could only repeat that; its globals and storage ids come from the replay instead.
        replays: list[Emulator] = []
        first = _emulate(opened, rules, frozenset(), filename, replays)
        if first[0] and replays:
            member = next(m for m in opened.members if m.read_by_torch)
            member.scanned = _replayed_scan(replays[0], member)
    judge = _Judge(report, depth, version)
    for member in opened.members:
        judge.member(member)
    _check_storage_sizes(opened, report)
    if opened.format == "none":
        report.reason = opened.unreadable or "not a checkpoint"
        return report
    _decide(opened, report, rules, judge, first)
    _advisories(opened, report, rules)
    return report


def _replayed_scan(emulator: Emulator, member: Member) -> Scan:
    """The Scan of a pickle torch's replay accepted, from what the replay recorded."""
    result = Scan(start=member.base, end=member.base + len(member.data), protocol=2)
    for written, module, name, offset in emulator.globals_seen:
        result.globals.append(Global(written, module, name, offset))

    storage_types: dict[str, Global] = {}

    def symbolic(pid: Any) -> Any:
        # torch.save's ('storage', <storage class>, key, location, numel): only the class is a Ref.
        if isinstance(pid, tuple) and len(pid) == 5 and isinstance(pid[1], Ref):
            name = pid[1].name
            if name not in storage_types:
                module, _, attr = name.rpartition(".")
                storage_types[name] = Global(name, module, attr, 0)
            return (pid[0], storage_types[name], pid[2], pid[3], pid[4])
        if isinstance(pid, tuple):
            return tuple(symbolic(item) if isinstance(item, (tuple, Ref)) else item for item in pid)
        if isinstance(pid, Ref):
            module, _, attr = pid.name.rpartition(".")
            return Global(pid.name, module, attr, 0)
        return pid

    result.persistent = [Persistent(symbolic(pid), offset) for pid, offset in emulator.persistent_seen]
    return result


class _Judge:
    """Decides which globals and calls in a pickle can run code (fail closed)."""

    def __init__(self, report: Report, depth: int, version: Version) -> None:
        self.report = report
        self.depth = depth
        self.version = version
        self.torch_names = default_allowlist_union()
        self.statuses: dict[tuple[str, str, bool], tuple[str, str | None]] = {}
        self.reviewed: set[str] = set()

    def status(self, module: str, name: str, called: bool = True) -> tuple[str, str | None]:
        """("allowlisted" | "benign" | "review" | "malicious", why). A class the pickle builds is
        "benign" only when it is a reviewed plain-data class; any other class is "review": its
        __init__/__setstate__ runs at load, and torchpatch cannot vouch for code it has not read."""
        full = f"{module}.{name}"
        if full in self.torch_names:
            return "allowlisted", None
        if self.report.format == "torchscript" and jit_global_status(full):
            # torch.jit.load's C++ unpickler resolves these itself or compiles them from code/.
            return "benign", None
        key = (module, name, called)
        if key in self.statuses:
            return self.statuses[key]
        resolved = names.resolve(module, name)
        why = names.danger(module, name, resolved)
        if why:
            result = ("malicious", why)
        elif full in names.BENIGN_FUNCTIONS or full in names.BENIGN_IN_DANGEROUS or resolved.name in names.BENIGN_FUNCTIONS:
            result = ("benign", None)
        elif resolved.name in self.torch_names or names.is_plain_data_class(resolved):
            result = ("benign", None)
        elif resolved.kind == "class" or resolved.kind in ("unknown", "attribute") and names.is_class_like(name):
            result = ("review", f"{resolved.name} is a class torchpatch has not reviewed: loading the file runs its "
                                "__init__/__new__ and __setstate__, which can do anything (open files, start processes)")
        elif not called:
            # Stored as a value (a module's activation function, say), but still a callable the
            # load can reach: a BUILD that stores it under __setstate__ makes the next BUILD call
            # it with attacker data (issue 22). Never allowlisted without the user's review.
            result = ("review", f"{resolved.name} is a function torchpatch has not reviewed: the file stores it, and an "
                                "allowlisted function can be called at load (a BUILD that stores it as __setstate__)")
        else:
            result = ("malicious", f"{full} is a function torchpatch cannot prove harmless; the pickle calls it at load time")
        self.statuses[key] = result
        return result

    def flag(self, member: Member, offset: int, message: str) -> None:
        self.report.findings.append(Finding(member.name, offset, "malicious", "TPA001", message))

    def member(self, member: Member) -> None:
        scan = member.scan
        nested_ok: set[int] = set()
        for call in scan.calls:
            is_loader = isinstance(call.func, Global) and call.func.full in names.NESTED_LOADERS
            if is_loader and self.nested(member, call):
                nested_ok.add(id(call.func))
        # A global is "called" when the pickle invokes it or hands it to another call, which may;
        # functools.partial only stores what it is given (it is judged on its own).
        called = {id(call.func) for call in scan.calls}
        for call in scan.calls:
            if isinstance(call.func, Global) and names.canonical(call.func.module, call.func.name) in names.STORING_FORWARDERS:
                continue
            arguments = call.args if isinstance(call.args, tuple) else (call.args,)
            called.update(id(arg) for arg in arguments if isinstance(arg, Global))
        for call in scan.calls:
            for opcode, state in call.state:
                if opcode == "BUILD":
                    self.special_state(member, call, state)
        for glob in scan.globals:
            canonical = names.canonical(glob.module, glob.name)
            status, why = self.status(glob.module, glob.name, id(glob) in called)
            if id(glob) in nested_ok:
                status, why = "benign", None
            self.report.globals.append(GlobalUse(glob.written, canonical, member.name, glob.offset, status))
            if status == "review":
                if canonical not in self.reviewed:
                    self.reviewed.add(canonical)
                    self.report.findings.append(Finding(member.name, glob.offset, "warning", "TPA002", f"global {canonical}: {why}"))
            elif why:
                alias = f" (written {glob.written})" if glob.written != canonical else ""
                self.flag(member, glob.offset, f"global {canonical}{alias}: {why}")
        for unresolved in scan.unresolved:
            self.flag(member, unresolved.offset, f"{unresolved.why}: cannot be resolved to a literal name")
        for violation in scan.frame_violations:
            self.frame_divergence(member, violation)
        for call in scan.calls:
            if isinstance(call.func, (Call, Persistent)):
                self.flag(member, call.offset, f"{call.opcode} calls {_kind(call.func)}, not a named global")
            elif not isinstance(call.func, (Global, Unresolved)):
                # A literal is not callable: the load fails there, but nothing runs.
                self.report.findings.append(Finding(member.name, call.offset, "error", "TPA104",
                                                    f"{call.opcode} calls {_kind(call.func)}: the load fails there"))
        for target, offset in scan.builds:
            if isinstance(target, Global):
                self.flag(member, offset, f"BUILD sets attributes on the global {target.full} itself")
        if scan.error:
            severity = "error" if member.read_by_torch else "warning"
            self.report.findings.append(Finding(member.name, scan.error_offset, severity, "TPA101",
                                                f"pickle breaks at byte {scan.error_offset}: {scan.error} (everything before it would still run)"))

    def special_state(self, member: Member, call: Call, state: Any) -> None:
        """Flag a BUILD state that sets __setstate__, __class__ or __dict__ on the instance.

        torch's weights-only BUILD (torch/_weights_only_unpickler.py, as CPython's load_build)
        calls ``inst.__setstate__(state)`` when the instance has one, else updates its __dict__
        with the state and setattr()s the slot state. So a first BUILD that puts a callable under
        "__setstate__" in the dict makes a second BUILD call it with attacker data: sympify a
        string, build an unreviewed class. No object torch.save writes has such a key."""
        dict_state, slot_state = state, None
        if isinstance(state, tuple) and len(state) == 2:
            dict_state, slot_state = state
        for where, part in (("state", dict_state), ("slot state", slot_state)):
            if not isinstance(part, Container) or part.kind != "dict":
                continue
            for key in part.items[0::2]:
                if isinstance(key, str) and key in names.SPECIAL_STATE_KEYS:
                    target = _describe_target(call)
                    then = (" (a second BUILD then calls it with attacker data)" if key == "__setstate__" and len(call.state) > 1 else
                            " (the next BUILD calls it)" if key == "__setstate__" else "")
                    self.flag(member, call.offset, f"BUILD {where} sets {key} on {target}{then}: torch's weights-only unpickler "
                                                   "calls an instance's own __setstate__, so any callable the file names runs at load")

    def frame_divergence(self, member: Member, violation: tuple) -> None:
        """A FRAME that disagrees with its opcodes: CPython's C unpickler, reading from a file, drops
        buffered bytes at the frame boundary and resumes elsewhere, so the bytes a linear reader
        takes for an operand can run as opcodes. Fail closed, and name what hides there: every
        start inside the disputed operand is scanned as a pickle of its own."""
        offset, message, start = violation[0], violation[1], violation[2]
        end = violation[3] if len(violation) > 3 else start + 1
        found: list[str] = []
        data = member.data
        for at in range(max(start - member.base, 0), min(end - member.base, len(data), start - member.base + 4096)):
            hidden = scan_bytes(data[at : at + 65536], member.base + at)
            for glob in hidden.globals:
                plausible = all(part.isidentifier() for part in glob.full.split("."))
                if not plausible or glob.full in found or names.resolve(glob.module, glob.name).kind == "unknown":
                    continue  # a fragment of some other operand
                status, _ = self.status(glob.module, glob.name)
                if status in ("malicious", "review"):
                    found.append(glob.full)
            if len(found) >= 8:
                break
        hidden_text = f"; a pickle starting inside the disputed bytes names {', '.join(found)}" if found else ""
        self.report.findings.append(Finding(member.name, offset, "malicious", "TPA003",
                                            f"{message}; what it runs cannot be decided statically{hidden_text}"))

    def nested(self, member: Member, call: Call) -> bool:
        """Audit literal bytes handed to a loader; True when they are benign."""
        args = call.args if isinstance(call.args, tuple) else ()
        data = args[0] if args and isinstance(args[0], (bytes, bytearray)) else None
        if data is None or self.depth >= MAX_NESTING:
            return False
        inner = audit_stream(io.BytesIO(bytes(data)), len(data), f"{member.name}@{call.offset}", self.version, self.depth + 1)
        for finding in inner.findings:
            if finding.severity == "malicious":
                self.flag(member, call.offset, f"nested payload in {call.func.full}: {finding.message}")
        if any(f.severity == "malicious" for f in inner.findings) or inner.verdict == "unreadable" and inner.format == "none":
            return False
        self.report.needs_full_unpickler = True
        self.report.findings.append(Finding(member.name, call.offset, "warning", "TPA102",
                                            f"{call.func.full} unpickles nested bytes with the full unpickler; the nested content is benign ({FORMAT_NAMES[inner.format]})"))
        return True


def _describe_target(call: Call) -> str:
    if isinstance(call.func, Global):
        return f"an instance of {names.canonical(call.func.module, call.func.name)}"
    return "an object"


def _kind(value: Any) -> str:
    if isinstance(value, Call):
        return "the result of another call"
    if isinstance(value, Container):
        return f"a {value.kind}"
    if isinstance(value, Persistent):
        return "a persistent-id object"
    return f"a {type(value).__name__} value"


def _decide(opened: Opened, report: Report, rules: Rules, judge: _Judge, first: tuple | None = None) -> None:
    code = analyse(opened.code) if opened.format == "torchscript" else None
    if code is not None and code.load_time_effects():
        # torch.jit.load runs every __setstate__ the archive's code defines (issue 22 §4).
        report.findings.append(Finding("", 0, "malicious", "TPA001",
                                       "TorchScript code that torch.jit.load runs (__setstate__) calls "
                                       f"{'; '.join(code.load_time_effects()[:4])}: operations beyond tensor math and printing"))
    malicious = any(f.severity == "malicious" for f in report.findings)
    torch_members = [m for m in opened.members if m.read_by_torch]
    broken = opened.unreadable or any(m.scan.error for m in torch_members)
    # Storage-size checks may have made the archive unreadable since the first replay.
    accepted, refusal = first if first is not None and not opened.unreadable else _emulate(opened, rules, frozenset(), report.filename)
    report.weights_only = "accept" if accepted else "reject"
    if malicious:
        report.verdict = "malicious"
        report.reason = next(f.message for f in report.findings if f.severity == "malicious")
        if accepted:
            report.reason += " (and torch.load(weights_only=True) would accept the file)"
        return
    if code is not None:
        report.findings.append(Finding("", 0, "warning" if code.worrying else "note", "TPA304",
                                       f"TorchScript code ({len(opened.code)} file(s) in code/): {code.summary()}"
                                       + (f"; __setstate__ runs at load in {', '.join(code.setstate[:4])}" if code.setstate else "")))
        for record, line, operator, method in code.locations[:50]:
            report.findings.append(Finding(record, 0, "warning" if operator in code.file_ops or operator in code.custom_ops else "note",
                                           "TPA304", f"{method} calls {operator}", line=line))
        report.verdict = "needs-allowlist"
        report.reason = (f"TorchScript archive: {code.summary()}; that code runs on torch.jit.load; "
                         + ("torch.load(weights_only=True) refuses it and no allowlist changes that" if rules.torchscript_refused
                            else f"torch {rules.version}'s torch.load(weights_only=True) dispatches it to torch.jit.load and runs that code (CVE-2025-32434)"))
        return
    if opened.format == "numpy" and not opened.members:
        report.verdict = "safe"
        report.reason = f"{opened.torch_error}: nothing in it can run code"
        return
    if broken and not accepted:
        report.verdict = "unreadable"
        report.reason = opened.unreadable or next((f"pickle {m.name} breaks: {m.scan.error}" for m in torch_members if m.scan.error), "unreadable")
        return
    if accepted:
        report.verdict = "safe"
        report.reason = f"torch {rules.version} loads it with weights_only=True as-is"
        if opened.format == "safetensors":
            # torch.serialization.load (2.13) imports safetensors.torch for a *.safetensors path and
            # raises "safetensors is not installed" without it.
            report.reason += " (torch.load hands a *.safetensors file to the safetensors package, which must be installed: pip install safetensors)"
        return
    report.verdict = "needs-allowlist"
    allowlist, dead_end, kinds = _infer_allowlist(opened, rules, report, judge, (accepted, refusal))
    if allowlist is not None and not report.needs_full_unpickler:
        review = [name for name in allowlist if kinds.get(name, "").startswith("review")]
        report.allowlist = [name for name in allowlist if name not in review]
        report.review = review
        refused = refusal.message if refusal else opened.torch_error
        if review:
            report.reason = (f"torch {rules.version} refuses it: {refused}; it loads only if you also trust "
                             f"{len(review)} name(s) torchpatch has not reviewed ({', '.join(review)}): the load runs a class's "
                             "__init__/__setstate__ and can call a function, so read their code first; the snippet leaves them commented out")
        else:
            report.reason = f"benign, but torch {rules.version} refuses it: {refused}; allowlisting {len(allowlist)} name(s) makes it load"
        report.snippet = snippet(allowlist, kinds, report.filename)
    else:
        why = dead_end or (refusal.message if refusal else opened.torch_error) or "refused"
        report.reason = f"benign, but no allowlist can make torch {rules.version} load it with weights_only=True: {why}; {_advice(opened, why)}"


def _advice(opened: Opened, why: str) -> str:
    if "SETITEM" in why:
        return "re-save it with plain dicts (dict(d) instead of a defaultdict or dict subclass)"
    if "Unsupported operand" in why:
        return "re-save it with torch.save's default pickle protocol (2)"
    if opened.format in ("tar", "pickle"):
        return "load it once in a sandbox you trust and re-save it with torch.save, or convert it to safetensors"
    if opened.format == "safetensors":
        return "load it with safetensors.torch.load_file"
    return "load it only if you trust its source, then re-save it as a plain state dict or safetensors"


def _emulate(opened: Opened, rules: Rules, user: frozenset[str], filename: str,
             replays: list | None = None) -> tuple[bool, Refusal | None]:
    """Would torch.load(f, weights_only=True) accept the file? (accepted, refusal)."""
    fmt = opened.format
    if fmt == "safetensors":
        routed = rules.safetensors_routed and filename.endswith(".safetensors")
        if opened.unreadable:
            return False, Refusal("structure", "safetensors", 0, opened.unreadable)
        if routed:
            return True, None
        return False, Refusal("structure", "safetensors", 0, "torch.load only routes files named *.safetensors to safetensors" if rules.safetensors_routed
                              else f"torch {rules.version}'s torch.load cannot read safetensors files")
    if fmt == "torchscript":
        if rules.torchscript_refused:
            return False, Refusal("structure", "torchscript", 0, "Cannot use weights_only=True with TorchScript archives")
        return True, None
    if fmt == "tar":
        return False, Refusal("structure", "tar", 0, "Cannot use weights_only=True with files saved in the legacy .tar format")
    if opened.unreadable:
        return False, Refusal("structure", "unreadable", 0, opened.unreadable)
    if fmt == "torch-zip" and opened.torch_error:
        return False, Refusal("structure", "zip", 0, opened.torch_error)
    members = [m for m in opened.members if m.read_by_torch]
    if not members:
        return False, Refusal("structure", "empty", 0, "nothing for torch to unpickle")
    try:
        if fmt == "torch-zip":
            prefix = members[0].name.rsplit("/", 1)[0] + "/"
            emulator = Emulator(rules, user, lambda key: opened.torch_record(f"{prefix}data/{key}") is not None)
            if replays is not None:
                replays.append(emulator)
            emulator.load(members[0].data, members[0].base)
            return True, None
        emulator = Emulator(rules, user)
        values = []
        for member in members:
            value, _ = emulator.load(member.data, member.base)
            values.append(value)
            if fmt == "pickle" or (len(values) == 1 and value != MAGIC_NUMBER):
                return False, Refusal("structure", "magic", member.base, "Invalid magic number; corrupt file? (not a torch checkpoint)")
            if len(values) == 2 and value != PROTOCOL_VERSION:
                return False, Refusal("structure", "protocol", member.base, f"Invalid protocol version: {value}")
        if len(values) < 5:
            return False, Refusal("structure", "truncated", 0, "legacy checkpoint ends before its five pickles")
        return True, None
    except Refusal as refusal:
        return False, refusal


def _infer_allowlist(opened: Opened, rules: Rules, report: Report, judge: _Judge,
                     first: tuple[bool, Refusal | None]) -> tuple[list[str] | None, str | None, dict[str, str]]:
    """The smallest user allowlist that makes the emulated load succeed, or why none can.
    ``first`` is the replay without a user allowlist, already run."""
    user: list[str] = []
    kinds: dict[str, str] = {}
    for attempt in range(256):
        accepted, refusal = first if attempt == 0 else _emulate(opened, rules, frozenset(user), report.filename)
        if accepted:
            return user, None, kinds
        if refusal is None or refusal.kind not in ("global", "build"):
            return None, refusal.message if refusal else None, kinds
        name = refusal.detail
        if refusal.kind == "build" and (name in ("?", "type", "function") or "." not in name and name not in ("set",)):
            return None, f"{refusal.message} (a type only known at load time; nothing to allowlist)", kinds
        module, _, attr = name.rpartition(".")
        status, why = ("benign", None)
        if refusal.kind == "global":
            uses = [g for g in report.globals if g.canonical == name or g.written == name]
            statuses = {g.status for g in uses}
            status = "malicious" if "malicious" in statuses else "review" if "review" in statuses else "benign"
            why = "it is flagged above" if uses else None
            if not uses:
                status, why = judge.status(module, attr)
        else:
            status, why = judge.status(module, attr)
            if status == "allowlisted":
                status = "benign"
        if status == "malicious":
            return None, f"{name} can run code and must never be allowlisted ({why})", kinds
        if name in user:
            return None, refusal.message, kinds
        user.append(name)
        kinds[name] = refusal.kind if status != "review" else f"review-{refusal.kind}"
    return None, "allowlist search did not converge", kinds


def snippet(allowlist: list[str], kinds: dict[str, str], filename: str) -> str:
    """A safe_globals block for the allowlist. Names torchpatch has not reviewed appear only as
    commented-out lines under a warning, so pasting the snippet never trusts them silently."""
    imports = {"torch"}
    entries = []
    local = []
    for name in allowlist:
        module, _, attr = name.rpartition(".")
        kind = kinds.get(name, "")
        review = kind.startswith("review")
        if module == "__main__":
            expression = attr
            if not review:
                local.append(attr.split(".")[0])
        else:
            expression = name
            if not review:
                imports.add(_importable_module(module))
        # The (obj, "name") form keys the entry by the name written in the pickle, so it works
        # even when the object's __module__ differs (numpy.core vs numpy._core, __main__).
        entry = f'({expression}, "{name}")' if kind.endswith("global") else expression
        if review and not names.is_class_like(attr):
            entries.append(f"    # REVIEW {name}: a function; torch.load can call whatever it allowlists; read its code,")
            entries.append(f"    # and uncomment (and import {_importable_module(module) if module != '__main__' else 'it from your code'}) only if you trust it:")
            entries.append(f"    # {entry},")
        elif review:
            entries.append(f"    # REVIEW {name}: torch.load will run this class's __init__/__setstate__; read its code,")
            entries.append(f"    # and uncomment (and import {_importable_module(module) if module != '__main__' else 'it from your code'}) only if you trust it:")
            entries.append(f"    # {entry},")
        else:
            entries.append(f"    {entry},")
    lines = [f"import {m}" for m in sorted(imports)]
    for cls in sorted(set(local)):
        lines.append(f"from your_module import {cls}  # the class that was __main__.{cls} when the file was saved")
    lines.append("")
    lines.append("with torch.serialization.safe_globals([")
    lines.extend(entries)
    lines.append("]):")
    lines.append(f"    checkpoint = torch.load({filename!r}, weights_only=True)")
    return "\n".join(lines)


def _importable_module(module: str) -> str:
    # A class path such as torch.nn.modules.linear.Linear.Inner: import the module part only.
    parts = module.split(".")
    while len(parts) > 1 and parts[-1][:1].isupper():
        parts.pop()
    return ".".join(parts)


def _check_storage_sizes(opened: Opened, report: Report) -> None:
    if opened.format != "torch-zip":
        return
    asked = Version.parse(report.torch_version)
    for member in opened.members:
        if not member.read_by_torch:
            continue
        prefix = member.name.rsplit("/", 1)[0] + "/"
        for persistent in member.scan.persistent:
            pid = persistent.pid
            if not (isinstance(pid, tuple) and len(pid) == 5 and isinstance(pid[1], Global) and isinstance(pid[4], int)):
                continue
            kind = pid[1].name.replace("Storage", "")
            record = opened.torch_record(f"{prefix}data/{pid[2]}")
            if record is None or kind not in STORAGE_ELEMENT_BYTES:
                continue
            needed = pid[4] * STORAGE_ELEMENT_BYTES[kind]
            if record.size == needed:
                continue
            if asked >= Version(2, 10):
                # The CVE-2026-24747 fix: get_storage_from_record checks the record size (measured on 2.13).
                message = (f"torch {asked} fails: record size ({record.size} bytes) of data/{pid[2]} does not match "
                           f"the {needed} bytes its storage declares")
                report.findings.append(Finding(member.name, persistent.offset, "error", "TPA103", message))
                opened.unreadable = opened.unreadable or message
            elif record.size < needed:
                report.findings.append(Finding(member.name, persistent.offset, "error", "TPA103",
                                               f"storage data/{pid[2]} declares {pid[4]} elements ({needed} bytes) but holds {record.size} bytes: "
                                               "torch < 2.10 reads past the buffer (CVE-2026-24747)"))


def _advisories(opened: Opened, report: Report, rules: Rules) -> None:
    asked = Version.parse(report.torch_version)
    if opened.format == "torchscript":
        report.findings.append(Finding("", 0, "error" if asked < Version(2, 6) else "note", "TPA301",
                                       "TorchScript archive: torch.jit.load runs its scripted code; before torch 2.6 "
                                       "torch.load(weights_only=True) silently dispatched it to torch.jit.load (CVE-2025-32434)"))
    elif asked < Version(2, 6):
        report.findings.append(Finding("", 0, "warning", "TPA302",
                                       f"torch {asked}: weights_only=True is not safe before 2.6 (CVE-2025-32434), and weights_only defaults to False"))
    if asked < Version(2, 10) and opened.format in ("torch-zip", "legacy"):
        report.findings.append(Finding("", 0, "warning", "TPA303",
                                       f"torch {asked}: the weights_only unpickler allows SETITEM on non-dicts and trusts storage sizes (CVE-2026-24747, fixed in 2.10)"))
