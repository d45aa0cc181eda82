"""What doctor looks at: the live machine (subprocess torch probe, nvidia-smi, metadata, ELF symbols) or a recording."""

from __future__ import annotations

import importlib.util
import json
import os
import platform
import re
import shutil
import signal
import struct
import subprocess
import sys
from dataclasses import asdict, dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any, Iterable

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

#: Packages reported even when their metadata does not mention torch.
COMPANIONS = ("torchvision", "torchaudio", "torchao", "triton", "pytorch-triton", "flash-attn", "xformers")

PROBE_MARKER = "TORCHPATCH-TORCH-PROBE "
PROBE_TIMEOUT_S = 90
NVIDIA_SMI_TIMEOUT_S = 20
MAX_EXTENSION_FILES = 200

# Runs in a child interpreter so a broken or slow torch never enters doctor's own process.
# torch.cuda.get_arch_list() returns [] without a usable GPU, so the compiled arch flags are read
# from torch._C._cuda_getArchFlags(), which needs no device.
TORCH_PROBE_SCRIPT = r"""
import json, sys, warnings
marker = sys.argv[1]
caught = []
try:
    with warnings.catch_warnings(record=True) as at_import:
        warnings.simplefilter("always")
        import torch
    caught.extend(at_import)
except BaseException as error:
    print(marker + json.dumps({"importable": False, "error": "%s: %s" % (type(error).__name__, error)}))
    sys.exit(0)
result = {
    "importable": True,
    "version": torch.__version__,
    "cuda": getattr(torch.version, "cuda", None),
    "hip": getattr(torch.version, "hip", None),
    "xpu": getattr(torch.version, "xpu", None),
    "cxx11_abi": bool(getattr(torch._C, "_GLIBCXX_USE_CXX11_ABI", False)),
    "arch_flags": None,
    "cudnn": None,
    "devices": [],
    "warnings": [],
    "cuda_error": None,
    "companion_imports": {},
}
try:
    if hasattr(torch._C, "_cuda_getArchFlags"):
        result["arch_flags"] = torch._C._cuda_getArchFlags()
    with warnings.catch_warnings(record=True) as at_init:
        warnings.simplefilter("always")
        if torch.version.cuda and torch.cuda.is_available():
            for index in range(torch.cuda.device_count()):
                major, minor = torch.cuda.get_device_capability(index)
                result["devices"].append(
                    {"index": index, "name": torch.cuda.get_device_name(index), "capability": "%d.%d" % (major, minor)}
                )
        if torch.version.cuda:
            result["cudnn"] = torch.backends.cudnn.version()
    caught.extend(at_init)
except BaseException as error:
    result["cuda_error"] = "%s: %s" % (type(error).__name__, error)
result["warnings"] = sorted({str(item.message).strip() for item in caught if issubclass(item.category, UserWarning)})
print(marker + json.dumps(result), flush=True)
# Companions after torch's own line, one line each: a companion that hangs leaves torch's facts intact.
for name in sys.argv[2:]:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            __import__(name)
        error = None
    except BaseException as exc:
        error = "%s: %s" % (type(exc).__name__, exc)
    print(marker + "companion " + json.dumps([name, error]), flush=True)
"""


@dataclass
class GPU:
    """One NVIDIA GPU: where it was seen and its compute capability, e.g. (8, 6)."""

    index: int
    name: str
    capability: tuple[int, int] | None
    source: str


@dataclass
class TorchInstall:
    """The installed torch, as far as it could be seen."""

    version: str
    build: str  # "cpu", "cuda", "rocm", "xpu"
    cuda: str | None
    hip: str | None
    arch_list: tuple[str, ...]
    cxx11_abi: bool | None
    importable: bool
    import_error: str
    source: str  # "probe" (subprocess import) or "metadata" (static)
    probe_warnings: tuple[str, ...] = ()

    @property
    def public_version(self) -> str:
        return self.version.split("+", 1)[0]


@dataclass
class Package:
    """An installed distribution that is a torch companion or depends on torch."""

    name: str
    version: str
    requires: tuple[str, ...]
    #: How it was installed: {"kind": "index" | "editable" | "local" | "vcs" | "archive" | "unknown",
    #: "path" or "url", "commit", "vcs", "installer"} (from direct_url.json, INSTALLER and RECORD).
    install: dict[str, str] = field(default_factory=dict)


@dataclass
class Extension:
    """A compiled module of a torch-dependent distribution and the torch symbols it imports."""

    distribution: str
    distribution_version: str
    path: str
    torch_symbols: tuple[str, ...]
    missing_symbols: tuple[str, ...]
    cuda_runtime: str | None = None  # CUDA major of the libcudart.so it needs


@dataclass
class Environment:
    """Everything the checks need, from the live machine or a recording."""

    python: tuple[int, ...] | None  # (3, 12) or (3, 12, 4); None: not given in planning mode
    platform: dict[str, str]
    torch: TorchInstall | None
    gpus: list[GPU]
    driver: str | None
    driver_source: str
    packages: list[Package]
    extensions: list[Extension]
    notes: list[str] = field(default_factory=list)
    planning: bool = False
    #: Companion → the error its import raised under the installed torch (the probe imports each one).
    import_errors: dict[str, str] = field(default_factory=dict)
    #: What collect_env reports: OS, kernel, glibc, compilers, CUDA runtime, cuDNN, numpy, CPU.
    system: dict[str, Any] = field(default_factory=dict)

    @property
    def python_text(self) -> str:
        return ".".join(str(part) for part in self.python) if self.python else ""

    def package(self, name: str) -> Package | None:
        wanted = canonicalize_name(name)
        return next((package for package in self.packages if canonicalize_name(package.name) == wanted), None)

    def marker_environment(self) -> dict[str, str]:
        python = self.python or (sys.version_info.major, sys.version_info.minor, 0)
        return {
            "python_version": f"{python[0]}.{python[1]}",
            "python_full_version": ".".join(map(str, python)),
            "sys_platform": self.platform.get("sys_platform", sys.platform),
            "platform_system": self.platform.get("platform_system", platform.system()),
            "platform_machine": self.platform.get("platform_machine", platform.machine()),
            "extra": "",
        }

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


# --- parsing shared by the live probes and the recordings -------------------------------------------


def parse_nvidia_smi(output: str) -> tuple[list[GPU], str | None]:
    """GPUs and driver from ``nvidia-smi --query-gpu=index,name,compute_cap,driver_version --format=csv,noheader``."""
    gpus: list[GPU] = []
    driver = None
    for line in output.splitlines():
        cells = [cell.strip() for cell in line.split(",")]
        if len(cells) < 3 or not cells[0].isdigit():
            continue
        if len(cells) == 3:  # the fallback query without compute_cap
            index, name, compute_cap, driver_version = cells[0], cells[1], "", cells[2]
        else:
            index, name, compute_cap, driver_version = cells[0], ",".join(cells[1:-2]), cells[-2], cells[-1]
        cap = None
        match = re.fullmatch(r"(\d+)\.(\d+)", compute_cap)
        if match:
            cap = (int(match.group(1)), int(match.group(2)))
        gpus.append(GPU(index=int(index), name=name, capability=cap, source="nvidia-smi"))
        if re.fullmatch(r"\d+(\.\d+)*", driver_version):
            driver = driver_version
    return gpus, driver


def parse_proc_driver_version(text: str) -> str | None:
    """Driver version from /proc/driver/nvidia/version (``NVRM version: ... Kernel Module  535.104.05 ...``)."""
    match = re.search(r"Kernel Module(?:\s+for\s+\S+)?\s+(\d+\.\d+(?:\.\d+)?)", text)
    return match.group(1) if match else None


def parse_version_py(text: str) -> dict[str, str | None]:
    """``torch/version.py`` → its ``__version__``, ``cuda``, ``hip`` and ``xpu`` assignments."""
    values: dict[str, str | None] = {}
    for key in ("__version__", "cuda", "hip", "xpu"):
        match = re.search(rf"^{re.escape(key)}\s*(?::[^=]*)?=\s*(?:'([^']*)'|\"([^\"]*)\"|None)", text, re.MULTILINE)
        if match:
            values[key] = match.group(1) if match.group(1) is not None else match.group(2)
    return values


def torch_from_probe(probe: dict[str, Any]) -> TorchInstall:
    """A TorchInstall from the child probe's JSON (see TORCH_PROBE_SCRIPT)."""
    cuda, hip, xpu = probe.get("cuda"), probe.get("hip"), probe.get("xpu")
    build = "cuda" if cuda else "rocm" if hip else "xpu" if xpu else "cpu"
    arch_flags = probe.get("arch_flags") or ""
    return TorchInstall(
        version=str(probe["version"]),
        build=build,
        cuda=cuda,
        hip=hip,
        arch_list=tuple(arch_flags.split()),
        cxx11_abi=probe.get("cxx11_abi"),
        importable=True,
        import_error="",
        source="probe",
        probe_warnings=tuple(probe.get("warnings") or ()),
    )


def torch_from_metadata(version: str, version_py: dict[str, str | None], import_error: str) -> TorchInstall:
    """A TorchInstall read statically, when torch cannot be imported."""
    cuda, hip, xpu = version_py.get("cuda"), version_py.get("hip"), version_py.get("xpu")
    build = "cuda" if cuda else "rocm" if hip else "xpu" if xpu else "cpu"
    return TorchInstall(
        version=version_py.get("__version__") or version,
        build=build,
        cuda=cuda,
        hip=hip,
        arch_list=(),
        cxx11_abi=None,
        importable=False,
        import_error=import_error,
        source="metadata",
    )


def gpus_from_probe(probe: dict[str, Any]) -> list[GPU]:
    gpus = []
    for device in probe.get("devices") or []:
        major, minor = (int(part) for part in str(device["capability"]).split("."))
        gpus.append(
            GPU(index=int(device["index"]), name=str(device["name"]), capability=(major, minor), source="torch")
        )
    return gpus


# torch's C++ API (mangled names in the c10, at and torch namespaces) and its stable C ABI
# (aoti_torch_* / torch_* functions, what torchvision 0.29 and torchaudio 2.11 link against).
_TORCH_SYMBOL = re.compile(rb"^(?:_Z(?:T[VIS])?N?K?(?:3c10|2at|5torch)[A-Z0-9_]|aoti_torch_|torch_)")
_CUDA_RUNTIME = re.compile(r"^libcudart\.so\.(\d+)")


def is_torch_symbol(name: str) -> bool:
    """Whether a symbol belongs to torch's C++ API or its stable C ABI."""
    return bool(_TORCH_SYMBOL.match(name.encode()))


def cuda_runtime_major(needed: Iterable[str]) -> str | None:
    """``"13"`` when a library needs libcudart.so.13; None when it links no CUDA runtime."""
    for library in needed:
        match = _CUDA_RUNTIME.match(library)
        if match:
            return match.group(1)
    return None


@dataclass(frozen=True)
class ElfSymbols:
    """The torch symbols a shared library defines and imports, and the libraries it needs (DT_NEEDED)."""

    defined: frozenset[str]
    undefined: frozenset[str]
    needed: tuple[str, ...]


def _c_string(table: bytes, offset: int) -> bytes:
    end = table.find(b"\0", offset)
    return table[offset : end if end >= 0 else len(table)]


def elf_dynamic_symbols(path: Path) -> ElfSymbols | None:
    """Read a 64-bit ELF file's dynamic symbol table and DT_NEEDED entries; None if not such a file."""
    try:
        with open(path, "rb") as handle:
            header = handle.read(64)
            if len(header) < 64 or header[:4] != b"\x7fELF" or header[4] != 2:
                return None
            endian = "<" if header[5] == 1 else ">"
            section_offset = struct.unpack_from(endian + "Q", header, 0x28)[0]
            entry_size, count, _ = struct.unpack_from(endian + "HHH", header, 0x3A)
            handle.seek(section_offset)
            table = handle.read(entry_size * count)
            # (name, type, flags, addr, offset, size, link, info, addralign, entsize)
            sections = [struct.unpack_from(endian + "IIQQQQIIQQ", table, i * entry_size) for i in range(count)]

            def read(section: tuple[int, ...]) -> bytes:
                handle.seek(section[4])
                return handle.read(section[5])

            dynsym = next((section for section in sections if section[1] == 11), None)  # SHT_DYNSYM
            dynamic = next((section for section in sections if section[1] == 6), None)  # SHT_DYNAMIC
            strings = read(sections[dynsym[6]]) if dynsym is not None else b""
            symbols = read(dynsym) if dynsym is not None else b""
            needed: list[str] = []
            if dynamic is not None:
                dynamic_strings = read(sections[dynamic[6]])
                for tag, value in struct.iter_unpack(endian + "qQ", read(dynamic)):
                    if tag == 0:  # DT_NULL
                        break
                    if tag == 1:  # DT_NEEDED
                        needed.append(_c_string(dynamic_strings, value).decode("utf-8", "replace"))
    except (OSError, struct.error, IndexError):
        return None
    defined: set[str] = set()
    undefined: set[str] = set()
    for name_offset, _info, _other, section_index, _value, _size in struct.iter_unpack(endian + "IBBHQQ", symbols):
        if not name_offset:
            continue
        name = _c_string(strings, name_offset)
        if not _TORCH_SYMBOL.match(name):
            continue
        (undefined if section_index == 0 else defined).add(name.decode("utf-8", "replace"))
    return ElfSymbols(frozenset(defined), frozenset(undefined), tuple(needed))


def mentions_torch(requires: Iterable[str]) -> bool:
    """Whether a distribution needs torch outside any extra (``torch; extra == "gpu"`` does not count)."""
    for text in requires:
        try:
            requirement = Requirement(text)
        except InvalidRequirement:
            continue
        if canonicalize_name(requirement.name) == "torch" and "extra" not in str(requirement.marker or ""):
            return True
    return False


# --- the live machine -------------------------------------------------------------------------------


def _run(command: list[str], timeout: int) -> subprocess.CompletedProcess[str] | None:
    try:
        return subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)
    except (OSError, subprocess.SubprocessError):
        return None


#: What a signal that kills the probe means for `import torch`.
_SIGNAL_MEANING = {
    "SIGBUS": "bus error: a memory-mapped file went away or is truncated (a torch .so changed or was cut short "
    "while being read, or /dev/shm is full)",
    "SIGSEGV": "segmentation fault: usually a compiled library built for another torch, CUDA or C++ ABI",
    "SIGILL": "illegal instruction: the CPU lacks an instruction set the build needs (e.g. AVX2)",
    "SIGKILL": "killed (out of memory?)",
    "SIGABRT": "aborted (a C++ exception or assertion in a library torch loads)",
}


def crash_text(returncode: int, stderr: str) -> str:
    """Why the probe died: the signal by name and meaning, or the last line of its stderr."""
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        meaning = _SIGNAL_MEANING.get(name, "killed by a signal")
        return f"killed by {name} ({meaning})"
    return (stderr.strip().splitlines() or [f"exit code {returncode}"])[-1]


def probe_torch_subprocess(
    python: str = sys.executable, companions: Iterable[str] = (), timeout: float = PROBE_TIMEOUT_S
) -> tuple[dict[str, Any] | None, str]:
    """Import torch (then each companion) in a child interpreter; (probe JSON or None, error text).

    The child gets its own process group, so when it hangs the whole group is killed: nothing it
    started outlives doctor."""
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    try:
        child = subprocess.Popen(
            [python, "-c", TORCH_PROBE_SCRIPT, PROBE_MARKER, *companions],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            start_new_session=True,
        )
    except OSError as error:
        return None, f"could not start {python}: {error}"
    timed_out = False
    try:
        stdout, stderr = child.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        stdout, stderr = _kill_group(child)
    else:
        _kill_group(child)  # anything the import left running in the background
    probe: dict[str, Any] | None = None
    imported: set[str] = set()
    for line in stdout.splitlines():
        if not line.startswith(PROBE_MARKER):
            continue
        payload = line[len(PROBE_MARKER) :]
        if payload.startswith("companion "):
            name, error = json.loads(payload[len("companion ") :])
            imported.add(name)
            if probe is not None and error:
                probe.setdefault("companion_imports", {})[name] = error
        else:
            probe = json.loads(payload)
    if probe is not None:
        if timed_out:
            for name in companions:
                if name not in imported:
                    probe.setdefault("companion_imports", {})[name] = f"importing it took longer than {timeout:g} s"
        return probe, ""
    if timed_out:
        return None, f"importing torch took longer than {timeout:g} s (the probe and its children were killed)"
    return None, f"the torch probe crashed: {crash_text(child.returncode, stderr)}"


def _kill_group(child: subprocess.Popen[str]) -> tuple[str, str]:
    """Kill the probe's whole process group; what it wrote so far."""
    try:
        os.killpg(child.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, OSError):
        pass
    try:
        stdout, stderr = child.communicate(timeout=5)
    except (subprocess.TimeoutExpired, ValueError, OSError):
        return "", ""
    return stdout or "", stderr or ""


def install_of(dist: metadata.Distribution) -> dict[str, str]:
    """How a distribution was installed, from PEP 610's direct_url.json, INSTALLER and RECORD."""
    installer = (dist.read_text("INSTALLER") or "").strip()
    text = dist.read_text("direct_url.json")
    if text:
        try:
            direct = json.loads(text)
        except ValueError:
            direct = {}
        url = str(direct.get("url", ""))
        path = url[len("file://") :] if url.startswith("file://") else ""
        if isinstance(direct.get("dir_info"), dict):
            kind = "editable" if direct["dir_info"].get("editable") else "local"
            return {"kind": kind, "path": path or url, "installer": installer}
        if isinstance(direct.get("vcs_info"), dict):
            vcs = direct["vcs_info"]
            return {
                "kind": "vcs",
                "url": url,
                "vcs": str(vcs.get("vcs", "git")),
                "commit": str(vcs.get("commit_id", "")),
                "installer": installer,
            }
        if "archive_info" in direct:
            return {"kind": "archive", "url": path or url, "installer": installer}
    if dist.read_text("RECORD") is None:
        # `setup.py develop` leaves an .egg-info in the source tree: that tree is where it rebuilds.
        location = Path(str(getattr(dist, "_path", "")))
        tree = location.parent
        if location.suffix == ".egg-info" and ((tree / "setup.py").is_file() or (tree / "pyproject.toml").is_file()):
            return {"kind": "editable", "path": str(tree), "installer": installer or "setuptools develop"}
        return {"kind": "unknown", "installer": installer}
    if installer in ("pip", "uv"):
        return {"kind": "index", "installer": installer}
    return {"kind": "unknown", "installer": installer}


def _torch_requirement_names(requires: Iterable[str]) -> set[str]:
    names = set()
    for text in requires:
        try:
            names.add(canonicalize_name(Requirement(text).name))
        except InvalidRequirement:
            continue
    return names


def _installed_packages() -> list[Package]:
    dists = {}
    for dist in metadata.distributions():
        name = dist.metadata.get("Name")
        if name:
            dists.setdefault(canonicalize_name(name), dist)
    torch_needs = _torch_requirement_names(dists["torch"].requires or ()) if "torch" in dists else set()
    seen: list[Package] = []
    for key, dist in dists.items():
        requires = tuple(dist.requires or ())
        # torch, its companions, what needs torch, and what torch pins (triton, nvidia-*, cuda-toolkit, as
        # `pip check` would see them); numpy is reported as collect_env does.
        if (
            key == "torch"
            or key in COMPANIONS
            or key in torch_needs
            or key.startswith(("nvidia-", "cuda-"))
            or key == "numpy"
            or mentions_torch(requires)
        ):
            seen.append(
                Package(name=dist.metadata["Name"], version=dist.version, requires=requires, install=install_of(dist))
            )
    return sorted(seen, key=lambda package: canonicalize_name(package.name))


def _torch_exports(torch_dist: metadata.Distribution) -> set[str]:
    exports: set[str] = set()
    lib = Path(str(torch_dist.locate_file("torch/lib")))
    for library in sorted(lib.glob("*.so*")):
        symbols = elf_dynamic_symbols(library)
        if symbols:
            exports |= symbols.defined
    return exports


def _extension_files(dist: metadata.Distribution) -> list[Path]:
    """The compiled modules of a distribution: those RECORD lists, else those the import system finds in
    its top-level packages (an editable install or one without RECORD keeps them in the source tree)."""
    files = [Path(str(file.locate())) for file in dist.files or [] if file.name.endswith(".so") or ".so." in file.name]
    if files or (dist.files is not None and install_of(dist).get("kind") != "editable"):
        return files  # RECORD lists every file of a regular install
    tops = (dist.read_text("top_level.txt") or "").split()
    if not tops:
        name = dist.metadata.get("Name") or ""
        tops = [canonicalize_name(name).replace("-", "_")]
    found: list[Path] = []
    for top in tops:
        try:
            spec = importlib.util.find_spec(top)  # a top-level name: found, not imported
        except (ImportError, ValueError, AttributeError):
            continue
        if spec is None:
            continue
        if spec.origin and spec.origin.endswith(".so"):
            found.append(Path(spec.origin))
        for location in spec.submodule_search_locations or []:
            for path in sorted(Path(location).rglob("*.so")):
                found.append(path)
                if len(found) >= MAX_EXTENSION_FILES:
                    return found
    return found


def scan_extensions(packages: list[Package]) -> tuple[list[dict[str, Any]], list[str]]:
    """Recording rows for the compiled modules of torch-dependent distributions, and the torch exports
    (plus each distribution's own exports) that those modules import."""
    try:
        torch_dist = metadata.distribution("torch")
    except metadata.PackageNotFoundError:
        return [], []
    candidates: list[tuple[Package, Path]] = []
    for package in packages:
        if canonicalize_name(package.name) in ("torch", "triton") or not mentions_torch(package.requires):
            continue
        try:
            dist = metadata.distribution(package.name)
        except metadata.PackageNotFoundError:
            continue
        candidates.extend((package, path) for path in _extension_files(dist))
    candidates = candidates[:MAX_EXTENSION_FILES]
    if not candidates:
        return [], []
    exports = _torch_exports(torch_dist)
    read = [(package, path, elf_dynamic_symbols(path)) for package, path in candidates]
    # A distribution's own libraries may export torch_* helpers that its other modules import.
    own: dict[str, set[str]] = {}
    for package, _, symbols in read:
        if symbols:
            own.setdefault(package.name, set()).update(symbols.defined)
    rows: list[dict[str, Any]] = []
    provided: set[str] = set()
    for package, path, symbols in read:
        if not symbols or not (symbols.undefined or cuda_runtime_major(symbols.needed)):
            continue
        rows.append(
            {
                "distribution": package.name,
                "version": package.version,
                "path": str(path),
                "undefined": sorted(symbols.undefined),
                "needed": list(symbols.needed),
            }
        )
        provided |= {name for name in symbols.undefined if name in exports or name in own.get(package.name, set())}
    return rows, sorted(provided)


def _nvidia_smi_output() -> tuple[str, list[str]]:
    smi = shutil.which("nvidia-smi")
    if not smi:
        return "", []
    done = _run(
        [smi, "--query-gpu=index,name,compute_cap,driver_version", "--format=csv,noheader"], NVIDIA_SMI_TIMEOUT_S
    )
    if done is not None and done.returncode == 0:
        return done.stdout, []
    # nvidia-smi of drivers older than ~510 has no compute_cap field: keep names and driver.
    done = _run([smi, "--query-gpu=index,name,driver_version", "--format=csv,noheader"], NVIDIA_SMI_TIMEOUT_S)
    if done is not None and done.returncode == 0:
        return done.stdout, []
    return "", ["nvidia-smi is present but failed; GPUs could not be listed"]


def live_recording(scan_compiled: bool = True) -> dict[str, Any]:
    """What the probes see on this machine, in the recording format that ``recorded_environment`` reads."""
    packages = _installed_packages()
    recording: dict[str, Any] = {
        "description": "recorded by torchpatch doctor --record",
        "python": platform.python_version(),
        "platform": {
            "sys_platform": sys.platform,
            "platform_system": platform.system(),
            "platform_machine": platform.machine(),
            "glibc": platform.libc_ver()[1] if platform.libc_ver()[0] == "glibc" else "",
        },
        "packages": [
            {"name": p.name, "version": p.version, "requires": list(p.requires), "install": p.install} for p in packages
        ],
    }
    try:
        torch_dist = metadata.distribution("torch")
    except metadata.PackageNotFoundError:
        torch_dist = None
    if torch_dist is not None:
        importable = [
            package.name.replace("-", "_")
            for package in packages
            if canonicalize_name(package.name) in ("torchvision", "torchaudio", "torchao")
        ]
        probe, error = probe_torch_subprocess(companions=importable)
        if probe is not None and probe.get("importable"):
            recording["torch_probe"] = probe
        else:
            version_file = Path(str(torch_dist.locate_file("torch/version.py")))
            recording["torch_metadata"] = {
                "version": torch_dist.version,
                "version_py": version_file.read_text(errors="replace") if version_file.is_file() else "",
                "import_error": (probe or {}).get("error") or error,
            }
    recording["nvidia_smi"], recording["notes"] = _nvidia_smi_output()
    proc = Path("/proc/driver/nvidia/version")
    if proc.is_file():
        try:
            recording["proc_driver_version"] = proc.read_text(errors="replace")
        except OSError:
            pass
    if scan_compiled and torch_dist is not None and sys.platform.startswith("linux"):
        recording["extensions"], recording["torch_exports"] = scan_extensions(packages)
    recording["system"] = system_facts()
    return recording


def _first_line(command: list[str]) -> str:
    if not shutil.which(command[0]):
        return ""
    done = _run(command, 10)
    if done is None or done.returncode != 0:
        return ""
    lines = (done.stdout or done.stderr).strip().splitlines()
    return lines[0].strip() if lines else ""


def _nvcc_version() -> str:
    if not shutil.which("nvcc"):
        return ""
    done = _run(["nvcc", "--version"], 10)
    lines = (done.stdout if done is not None else "").strip().splitlines()
    # "Cuda compilation tools, release 13.0, V13.0.88"
    release = [line.strip() for line in lines if "release" in line]
    return release[0] if release else (lines[-1].strip() if lines else "")


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text(errors="replace").splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def system_facts() -> dict[str, Any]:
    """What `python -m torch.utils.collect_env` reports besides torch: OS, kernel, C library, compilers, CPU."""
    uname = platform.uname()
    os_name = ""
    try:
        os_name = platform.freedesktop_os_release().get("PRETTY_NAME", "")
    except (OSError, AttributeError):
        os_name = ""
    libc = platform.libc_ver()
    return {
        "os": os_name or f"{uname.system} {uname.release}",
        "kernel": f"{uname.system} {uname.release}",
        "machine": uname.machine,
        "libc": f"{libc[0]} {libc[1]}".strip(),
        "gcc": _first_line(["gcc", "--version"]),
        "clang": _first_line(["clang", "--version"]),
        "cmake": _first_line(["cmake", "--version"]),
        "nvcc": _nvcc_version(),
        "cpu": _cpu_model(),
        "cpu_count": os.cpu_count() or 0,
    }


def live_environment(scan_compiled: bool = True) -> Environment:
    """Inspect the interpreter running torchpatch and the machine it runs on."""
    return recorded_environment(live_recording(scan_compiled))


# --- recordings -------------------------------------------------------------------------------------


#: Recording keys and the JSON type each must have (validated before anything reads them).
RECORDING_TYPES: dict[str, tuple[type, ...]] = {
    "description": (str,),
    "python": (str,),
    "platform": (dict,),
    "torch_probe": (dict, type(None)),
    "torch_metadata": (dict, type(None)),
    "nvidia_smi": (str,),
    "proc_driver_version": (str,),
    "packages": (list,),
    "extensions": (list,),
    "torch_exports": (list,),
    "notes": (list,),
    "system": (dict,),
    "expect": (dict,),
}
_ROW_TYPES: dict[str, dict[str, tuple[type, ...]]] = {
    "packages": {"name": (str,), "version": (str,), "requires": (list,), "install": (dict,)},
    "extensions": {"distribution": (str,), "version": (str,), "path": (str,), "undefined": (list,), "needed": (list,)},
}
_TYPE_NAMES = {str: "a string", dict: "an object", list: "a list", type(None): "null"}


def validate_recording(recording: Any) -> None:
    """Raise TypeError or ValueError naming the first key that is wrong (``"nvidia_smi": 5``)."""
    if not isinstance(recording, dict):
        raise TypeError("the file is not a JSON object")
    if "python" not in recording:
        raise ValueError("no 'python' key")
    for key, types in RECORDING_TYPES.items():
        if key in recording and not isinstance(recording[key], types):
            wanted = " or ".join(_TYPE_NAMES[t] for t in types)
            raise TypeError(f"'{key}' must be {wanted}, not {type(recording[key]).__name__}")
    if not re.fullmatch(r"3\.\d+(\.\d+)?\S*", recording["python"].strip()):
        raise ValueError(f"'python' is not a CPython 3 version: {recording['python']!r}")
    for key, fields in _ROW_TYPES.items():
        for index, row in enumerate(recording.get(key, [])):
            if not isinstance(row, dict):
                raise TypeError(f"'{key}[{index}]' must be an object")
            for name, types in fields.items():
                if name in row and not isinstance(row[name], types):
                    raise TypeError(f"'{key}[{index}].{name}' must be {_TYPE_NAMES[types[0]]}")
            required = ("name", "version") if key == "packages" else ("distribution", "version", "path", "undefined")
            for name in required:
                if name not in row:
                    raise ValueError(f"'{key}[{index}]' has no '{name}'")
    probe = recording.get("torch_probe")
    if probe and probe.get("importable"):
        if not isinstance(probe.get("version"), str):
            raise ValueError("'torch_probe.version' must be a string")
        for name in ("cuda", "hip", "xpu", "arch_flags"):
            if probe.get(name) is not None and not isinstance(probe[name], str):
                raise ValueError(f"'torch_probe.{name}' must be a string or null")
        for name in ("devices", "warnings"):
            if not isinstance(probe.get(name, []), list):
                raise TypeError(f"'torch_probe.{name}' must be a list")
        for index, device in enumerate(probe.get("devices", [])):
            if (
                not isinstance(device, dict)
                or not isinstance(device.get("capability"), str)
                or not re.fullmatch(r"\d+\.\d+", device["capability"])
                or not isinstance(device.get("name"), str)
                or not isinstance(device.get("index"), int)
            ):
                raise ValueError(
                    f"'torch_probe.devices[{index}]' needs an index, a name and a capability such as \"8.6\""
                )
        if not isinstance(probe.get("companion_imports", {}), dict):
            raise ValueError("'torch_probe.companion_imports' must be an object")
    meta = recording.get("torch_metadata")
    if meta:
        if not isinstance(meta.get("version"), str):
            raise ValueError("'torch_metadata.version' must be a string")
        for name in ("version_py", "import_error"):
            if not isinstance(meta.get(name, ""), str):
                raise TypeError(f"'torch_metadata.{name}' must be a string")


def recorded_environment(recording: dict[str, Any]) -> Environment:
    """An Environment from a recording: the raw outputs the live probes would have seen.

    Keys: ``python`` ("3.12.4"), ``platform`` (marker values), ``torch_probe`` (the child probe's JSON),
    or ``torch_metadata`` ({"version", "version_py", "import_error"}) when torch does not import,
    ``nvidia_smi`` (CSV text), ``proc_driver_version`` (text), ``packages`` ([{name, version, requires}]),
    ``extensions`` ([{distribution, version, path, undefined, needed}]) and ``torch_exports`` ([symbol, ...]).
    """
    validate_recording(recording)
    python = tuple(int(part) for part in re.findall(r"\d+", str(recording["python"]))[:3])
    torch = None
    gpus: list[GPU] = []
    probe = recording.get("torch_probe")
    if probe and probe.get("importable"):
        torch = torch_from_probe(probe)
        gpus = gpus_from_probe(probe)
    elif recording.get("torch_metadata"):
        meta = recording["torch_metadata"]
        torch = torch_from_metadata(
            meta["version"], parse_version_py(meta.get("version_py", "")), meta.get("import_error", "")
        )
    smi_gpus, driver = parse_nvidia_smi(recording.get("nvidia_smi", ""))
    driver_source = "nvidia-smi" if driver else ""
    if not driver and recording.get("proc_driver_version"):
        driver = parse_proc_driver_version(recording["proc_driver_version"])
        driver_source = "/proc/driver/nvidia/version" if driver else ""
    if not gpus:
        gpus = smi_gpus
    packages = [
        Package(
            name=row["name"],
            version=row["version"],
            requires=tuple(row.get("requires", ())),
            install={str(key): str(value) for key, value in row.get("install", {}).items()},
        )
        for row in recording.get("packages", [])
    ]
    exports = set(recording.get("torch_exports", ()))
    extensions = []
    for row in recording.get("extensions", []):
        imported = tuple(sorted(name for name in row["undefined"] if is_torch_symbol(name)))
        extensions.append(
            Extension(
                distribution=row["distribution"],
                distribution_version=row["version"],
                path=row["path"],
                torch_symbols=imported,
                missing_symbols=tuple(name for name in imported if name not in exports),
                cuda_runtime=cuda_runtime_major(row.get("needed", ())),
            )
        )
    return Environment(
        python=python,  # type: ignore[arg-type]
        platform=dict(
            recording.get(
                "platform", {"sys_platform": "linux", "platform_system": "Linux", "platform_machine": "x86_64"}
            )
        ),
        torch=torch,
        gpus=gpus,
        driver=driver,
        driver_source=driver_source,
        packages=packages,
        extensions=extensions,
        notes=[str(note) for note in recording.get("notes", [])],
        import_errors={
            str(name).replace("_", "-"): str(error)
            for name, error in ((probe or {}).get("companion_imports") or {}).items()
        },
        system={**dict(recording.get("system", {})), **_torch_libraries(probe)},
    )


def _torch_libraries(probe: dict[str, Any] | None) -> dict[str, Any]:
    if not probe or not probe.get("importable"):
        return {}
    cudnn = probe.get("cudnn")
    return {"cuda_runtime": probe.get("cuda") or "", "cudnn": str(cudnn) if cudnn else ""}


def load_recording(path: str | Path) -> Environment:
    return recorded_environment(json.loads(Path(path).read_text(encoding="utf-8")))
