"""PyTorch platform facts (Python range, CUDA builds, GPU archs, ABI, drivers, advisories) from data/platform.toml."""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any, Union

from torchpatch.versions import Version

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised only on Python 3.10
    import tomli as tomllib

ReleaseLike = Union[str, Version]

_DOTTED = re.compile(r"^\d+(\.\d+)*$")


def dotted(text: str) -> tuple[int, ...]:
    """``"525.60.13"`` → ``(525, 60, 13)``; raises ValueError on anything else."""
    text = str(text).strip()
    if not _DOTTED.match(text):
        raise ValueError(f"not a dotted version number: {text!r}")
    return tuple(int(part) for part in text.split("."))


def capability(text: str) -> tuple[int, int]:
    """A compute capability from ``"8.6"``, ``"sm_86"``, ``"compute_86"`` or ``"86"``; raises ValueError."""
    text = str(text).strip().lower()
    match = re.fullmatch(r"(\d+)\.(\d+)", text)
    if match:
        return int(match.group(1)), int(match.group(2))
    match = re.fullmatch(r"(?:sm_|compute_)?(\d{2,3})[af]?", text)
    if match:
        digits = match.group(1)
        return int(digits[:-1]), int(digits[-1])
    raise ValueError(f"not a GPU compute capability: {text!r} (expected e.g. sm_86 or 8.6)")


def capability_text(cap: tuple[int, int]) -> str:
    """``(8, 6)`` → ``"sm_86"``."""
    return f"sm_{cap[0]}{cap[1]}"


@dataclass(frozen=True)
class Build:
    """One wheel variant of a release on download.pytorch.org (``cpu``, ``cu126``...)."""

    tag: str
    archs: tuple[tuple[int, int], ...]
    ptx: tuple[int, int] | None
    cxx11_abi: bool
    platform_tag: str
    verified: bool
    source: str
    note: str
    #: The CUDA update the build was made with (``"12.4.1"``), read from the wheel's nvidia-cuda-runtime pin;
    #: empty when nobody read it.
    cuda_update: str = ""

    @property
    def cuda(self) -> str | None:
        """``"cu126"`` → ``"12.6"``; None for CPU builds."""
        match = re.fullmatch(r"cu(\d+)(\d)", self.tag)
        return f"{match.group(1)}.{match.group(2)}" if match else None

    @property
    def index_url(self) -> str:
        return f"{_index_base()}/{self.tag}"

    def runs_on(self, cap: tuple[int, int]) -> bool:
        """Whether a GPU of this compute capability finds kernels in the build.

        A cubin for sm_XY runs on any GPU of the same major X with minor >= Y (sm_86 kernels serve an
        sm_89 Ada GPU); PTX for sm_XY is JIT-compiled by the driver for any GPU >= XY.
        """
        if any(arch[0] == cap[0] and arch[1] <= cap[1] for arch in self.archs):
            return True
        return self.ptx is not None and cap >= self.ptx


@dataclass(frozen=True)
class Release:
    """One PyTorch minor release and the wheels it ships."""

    version: Version
    latest_patch: str
    python_min: tuple[int, int]
    python_max: tuple[int, int]
    pypi_default: str
    cxx11_abi: bool
    platform_tag: str
    triton: str
    rocm: str
    torchvision: str
    torchaudio: str
    builds: tuple[Build, ...]
    source: str
    note: str
    #: Every patch release on PyPI, oldest first (``("2.12.0", "2.12.1")``).
    patches: tuple[str, ...] = ()
    #: The torchao minor release built for this torch (``"0.18"``); empty when none is known.
    torchao: str = ""

    def supports_python(self, python: tuple[int, int]) -> bool:
        return self.python_min <= python[:2] <= self.python_max

    def build(self, tag: str) -> Build | None:
        return next((build for build in self.builds if build.tag == tag), None)

    @property
    def python_range_text(self) -> str:
        return f"{self.python_min[0]}.{self.python_min[1]}–{self.python_max[0]}.{self.python_max[1]}"


@dataclass(frozen=True)
class DriverRequirement:
    """NVIDIA driver minimums (Linux) for one CUDA version."""

    cuda: str
    toolkit_driver: tuple[int, ...]
    minor_compat_driver: tuple[int, ...]
    toolkit_text: str
    minor_compat_text: str
    source: str
    note: str
    #: CUDA update (``"12.8.1"``) → the driver NVIDIA lists for it, for builds that name their update.
    updates: tuple[tuple[str, str], ...] = ()

    def toolkit_for(self, update: str) -> tuple[tuple[int, ...], str]:
        """(driver, its text) for a build made with ``update``; the row's own minimum when the update is unknown."""
        text = dict(self.updates).get(update, self.toolkit_text)
        return dotted(text), text


@dataclass(frozen=True)
class GpuGeneration:
    """The NVIDIA driver branches that can drive a range of compute capabilities."""

    name: str
    first_arch: tuple[int, int]
    last_arch: tuple[int, int]
    #: Oldest driver branch (the major number, e.g. 570) that knows these GPUs.
    first_branch: int
    #: Newest branch that still supports them; None while NVIDIA still supports them.
    last_branch: int | None
    source: str
    note: str

    def covers(self, cap: tuple[int, int]) -> bool:
        return self.first_arch <= cap <= self.last_arch

    def driven_by(self, driver: tuple[int, ...]) -> bool:
        branch = driver[0]
        return branch >= self.first_branch and (self.last_branch is None or branch <= self.last_branch)

    @property
    def branches_text(self) -> str:
        if self.last_branch is None:
            return f"R{self.first_branch} or newer"
        if self.first_branch <= 0:
            return f"R{self.last_branch} or older"
        return f"R{self.first_branch} to R{self.last_branch}"


@dataclass(frozen=True)
class Advisory:
    """A security advisory against torch itself; versions below ``fixed`` are affected."""

    id: str
    alias: str
    fixed: str
    severity: str
    summary: str
    source: str
    #: Read in the official advisory (GitHub Advisory Database, NVD); False for second-hand summaries.
    verified: bool = False
    note: str = ""

    def affects(self, torch_version: str) -> bool:
        return dotted(_release_part(torch_version)) < dotted(self.fixed)


def _release_part(version: str) -> str:
    """``"2.13.0+cpu"`` → ``"2.13.0"``; ``"2.10.0a0+git"`` → ``"2.10.0"``."""
    match = re.match(r"\s*(\d+(?:\.\d+)*)", str(version))
    if not match:
        raise ValueError(f"not a version: {version!r}")
    return match.group(1)


@lru_cache(maxsize=1)
def _table() -> dict[str, Any]:
    text = resources.files("torchpatch").joinpath("data").joinpath("platform.toml").read_text(encoding="utf-8")
    return tomllib.loads(text)


def _index_base() -> str:
    return str(_table()["index"]["base_url"]).rstrip("/")


def _python(text: str) -> tuple[int, int]:
    major, minor = dotted(text)[:2]
    return major, minor


def _build(row: dict[str, Any], release_abi: bool, release_tag: str) -> Build:
    return Build(
        tag=row["tag"],
        archs=tuple(capability(arch) for arch in row.get("archs", [])),
        ptx=capability(row["ptx"]) if row.get("ptx") else None,
        cxx11_abi=bool(row.get("cxx11_abi", release_abi)),
        platform_tag=row.get("platform_tag", release_tag),
        verified=bool(row.get("verified", False)),
        source=row["source"],
        note=row.get("note", ""),
        cuda_update=row.get("cuda_update", ""),
    )


@lru_cache(maxsize=1)
def releases() -> tuple[Release, ...]:
    """Every release in the table, oldest first."""
    rows = []
    for row in _table()["release"]:
        abi = bool(row["cxx11_abi"])
        rows.append(
            Release(
                version=Version.parse(row["version"]),
                latest_patch=row["latest_patch"],
                python_min=_python(row["python_min"]),
                python_max=_python(row["python_max"]),
                pypi_default=row["pypi_default"],
                cxx11_abi=abi,
                platform_tag=row["platform_tag"],
                triton=row["triton"],
                rocm=row.get("rocm", ""),
                torchvision=row.get("torchvision", ""),
                torchaudio=row.get("torchaudio", ""),
                builds=tuple(_build(build, abi, row["platform_tag"]) for build in row["builds"]),
                source=row["source"],
                note=row.get("note", ""),
                patches=tuple(row.get("patches", [row["latest_patch"]])),
                torchao=row.get("torchao", ""),
            )
        )
    return tuple(sorted(rows, key=lambda release: release.version))


def release(version: ReleaseLike) -> Release | None:
    """The row of a release (``"2.11"``, ``"2.11.0"``, ``"2.13.0+cpu"`` or a Version); None if unknown."""
    wanted = version if isinstance(version, Version) else Version.parse(str(version))
    return next((row for row in releases() if row.version == wanted), None)


def python_range(version: ReleaseLike) -> tuple[tuple[int, int], tuple[int, int]] | None:
    """(oldest, newest) CPython with wheels for the release, e.g. ``((3, 10), (3, 14))``."""
    row = release(version)
    return (row.python_min, row.python_max) if row else None


def builds(version: ReleaseLike) -> tuple[Build, ...]:
    """The wheel variants of a release (empty for an unknown release)."""
    row = release(version)
    return row.builds if row else ()


@lru_cache(maxsize=1)
def driver_requirements() -> tuple[DriverRequirement, ...]:
    return tuple(
        DriverRequirement(
            cuda=row["cuda"],
            toolkit_driver=dotted(row["toolkit_driver"]),
            minor_compat_driver=dotted(row["minor_compat_driver"]),
            toolkit_text=row["toolkit_driver"],
            minor_compat_text=row["minor_compat_driver"],
            source=row["source"],
            note=row.get("note", ""),
            updates=tuple(sorted((str(key), str(value)) for key, value in row.get("updates", {}).items())),
        )
        for row in _table()["cuda_driver"]
    )


def driver_requirement(cuda: str) -> DriverRequirement | None:
    """Driver minimums for a CUDA version such as ``"12.6"`` (``"12.6.3"`` is matched on major.minor)."""
    major_minor = ".".join(str(cuda).split(".")[:2])
    return next((row for row in driver_requirements() if row.cuda == major_minor), None)


def is_known_patch(version: str) -> bool:
    """Whether ``"2.11.0"`` is a torch release on PyPI (``"2.11.7"`` is not); local labels are ignored."""
    try:
        row = release(version)
        public = _release_part(version)
    except ValueError:
        return False
    return row is not None and public in row.patches


@lru_cache(maxsize=1)
def gpu_generations() -> tuple[GpuGeneration, ...]:
    """Which driver branches drive which GPUs, oldest generation first."""
    return tuple(
        GpuGeneration(
            name=row["name"],
            first_arch=capability(row["first_arch"]),
            last_arch=capability(row["last_arch"]),
            first_branch=int(row["first_branch"]),
            last_branch=int(row["last_branch"]) if row.get("last_branch") else None,
            source=row["source"],
            note=row.get("note", ""),
        )
        for row in _table()["gpu_generation"]
    )


def gpu_generation(cap: tuple[int, int]) -> GpuGeneration | None:
    """The generation of a compute capability (sm_89 → Ada); None when the table has no row for it."""
    return next((row for row in gpu_generations() if row.covers(cap)), None)


@lru_cache(maxsize=1)
def cves() -> tuple[Advisory, ...]:
    """Advisories against torch, with the first fixed release."""
    return tuple(
        Advisory(
            id=row["id"],
            alias=row.get("alias", ""),
            fixed=row["fixed"],
            severity=row["severity"],
            summary=row["summary"],
            source=row["source"],
            verified=bool(row.get("verified", False)),
            note=row.get("note", ""),
        )
        for row in _table()["advisory"]
    )


@dataclass(frozen=True)
class GpuName:
    """A GPU as people name it ("RTX 4090", "H100") and its architecture: an NVIDIA compute capability or an AMD gfx target."""

    name: str
    names: tuple[str, ...]
    arch: tuple[int, int] | None  # NVIDIA compute capability
    gfx: str | None  # AMD LLVM target (ROCm builds)
    source: str

    @property
    def vendor(self) -> str:
        return "amd" if self.gfx else "nvidia"


#: Words that do not tell GPUs apart: the vendor and brand, form factors and memory sizes ("H100 SXM5 80GB").
_GPU_NOISE = re.compile(r"\b(?:nvidia|amd|geforce|tesla|radeon|instinct|quadro(?= rtx)|sxm\d?|pcie|nvl|hgx|dgx(?! spark)"
                        r"|hbm\d*e?|blackwell|generation|mezzanine|oam|max-q|mobile|laptop|workstation( edition)?|server( edition)?|\d+ ?gb|gpu)\b")


def gpu_name_key(text: str) -> str:
    """``"NVIDIA GeForce RTX 4090"`` → ``"rtx4090"``: the name without vendor, brand, form factor or spacing."""
    text = _GPU_NOISE.sub(" ", str(text).lower().replace("-", " "))
    return re.sub(r"[^a-z0-9]+", "", text)


@lru_cache(maxsize=1)
def gpu_names() -> tuple[GpuName, ...]:
    """The GPU name table: marketing names → architecture, oldest first."""
    return tuple(
        GpuName(name=row["name"], names=tuple(row["names"]),
                arch=capability(row["arch"]) if "arch" in row else None, gfx=row.get("gfx"), source=row["source"])
        for row in _table().get("gpu_name", ())
    )


@lru_cache(maxsize=None)
def gpu_by_name(text: str) -> GpuName | None:
    """The row a GPU name such as "V100", "Tesla T4", "RTX 5090" or "H100 SXM5 80GB" names; None if unknown."""
    key = gpu_name_key(text)
    if not key:
        return None
    return next((row for row in gpu_names() if key in {gpu_name_key(name) for name in row.names}), None)


def sources() -> dict[str, str]:
    """Source keys used in the rows → what each one is."""
    return dict(_table()["sources"])
