"""What doctor looks at: the live machine (subprocess torch probe, nvidia-smi, metadata, ELF symbols) or a recording."""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
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
try:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import torch
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
    "devices": [],
    "warnings": [],
    "cuda_error": None,
}
try:
    if hasattr(torch._C, "_cuda_getArchFlags"):
        result["arch_flags"] = torch._C._cuda_getArchFlags()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if torch.version.cuda and torch.cuda.is_available():
            for index in range(torch.cuda.device_count()):
                major, minor = torch.cuda.get_device_capability(index)
                result["devices"].append(
                    {"index": index, "name": torch.cuda.get_device_name(index), "capability": "%d.%d" % (major, minor)}
                )
    result["warnings"] = [str(item.message).strip() for item in caught]
except BaseException as error:
    result["cuda_error"] = "%s: %s" % (type(error).__name__, error)
print(marker + json.dumps(result))
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


def probe_torch_subprocess(python: str = sys.executable) -> tuple[dict[str, Any] | None, str]:
    """Import torch in a child interpreter; (probe JSON or None, error text)."""
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    try:
        done = subprocess.run(
            [python, "-c", TORCH_PROBE_SCRIPT, PROBE_MARKER],
            capture_output=True,
            text=True,
            timeout=PROBE_TIMEOUT_S,
            check=False,
            env=env,
        )
    except subprocess.TimeoutExpired:
        return None, f"importing torch took longer than {PROBE_TIMEOUT_S} s"
    except OSError as error:
        return None, f"could not start {python}: {error}"
    for line in done.stdout.splitlines():
        if line.startswith(PROBE_MARKER):
            return json.loads(line[len(PROBE_MARKER) :]), ""
    last = (done.stderr.strip().splitlines() or [f"exit code {done.returncode}"])[-1]
    return None, f"the torch probe crashed: {last}"


def _installed_packages() -> list[Package]:
    seen: dict[str, Package] = {}
    for dist in metadata.distributions():
        name = dist.metadata.get("Name")
        if not name:
            continue
        requires = tuple(dist.requires or ())
        key = canonicalize_name(name)
        if key == "torch" or key in COMPANIONS or mentions_torch(requires):
            seen.setdefault(key, Package(name=name, version=dist.version, requires=requires))
    return sorted(seen.values(), key=lambda package: canonicalize_name(package.name))


def _torch_exports(torch_dist: metadata.Distribution) -> set[str]:
    exports: set[str] = set()
    lib = Path(str(torch_dist.locate_file("torch/lib")))
    for library in sorted(lib.glob("*.so*")):
        symbols = elf_dynamic_symbols(library)
        if symbols:
            exports |= symbols.defined
    return exports


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
            files = metadata.distribution(package.name).files or []
        except metadata.PackageNotFoundError:
            continue
        for file in files:
            if file.name.endswith(".so") or ".so." in file.name:
                candidates.append((package, Path(str(file.locate()))))
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
        "packages": [{"name": p.name, "version": p.version, "requires": list(p.requires)} for p in packages],
    }
    try:
        torch_dist = metadata.distribution("torch")
    except metadata.PackageNotFoundError:
        torch_dist = None
    if torch_dist is not None:
        probe, error = probe_torch_subprocess()
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
    return recording


def live_environment(scan_compiled: bool = True) -> Environment:
    """Inspect the interpreter running torchpatch and the machine it runs on."""
    return recorded_environment(live_recording(scan_compiled))


# --- recordings -------------------------------------------------------------------------------------


def recorded_environment(recording: dict[str, Any]) -> Environment:
    """An Environment from a recording: the raw outputs the live probes would have seen.

    Keys: ``python`` ("3.12.4"), ``platform`` (marker values), ``torch_probe`` (the child probe's JSON),
    or ``torch_metadata`` ({"version", "version_py", "import_error"}) when torch does not import,
    ``nvidia_smi`` (CSV text), ``proc_driver_version`` (text), ``packages`` ([{name, version, requires}]),
    ``extensions`` ([{distribution, version, path, undefined, needed}]) and ``torch_exports`` ([symbol, ...]).
    """
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
        Package(name=row["name"], version=row["version"], requires=tuple(row.get("requires", ())))
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
        notes=list(recording.get("notes", [])),
    )


def load_recording(path: str | Path) -> Environment:
    return recorded_environment(json.loads(Path(path).read_text(encoding="utf-8")))
