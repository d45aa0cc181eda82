"""How pickle globals resolve, and which of them can run code."""

from __future__ import annotations

import _compat_pickle
import gzip
import json
import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

# Python's own unpickler (what ``weights_only=False`` runs) maps Python 2 names for protocol < 3,
# so ``commands.Popen`` really imports ``subprocess.Popen``.
PY2_MODULES = dict(_compat_pickle.IMPORT_MAPPING)
PY2_NAMES = dict(_compat_pickle.NAME_MAPPING)

# ``os.system`` pickles as ``posix.system`` (``nt.system`` on Windows).
OS_ALIASES = {"posix": "os", "nt": "os"}

# Modules whose every name is treated as able to run code, read or write files, or reach the
# network; collected from picklescan 1.0.5, modelscan 0.8.8 and fickling 0.1.12 denylists and
# their bypass reports (GHSAs 2025-2026).
DANGEROUS_MODULES = frozenset(
    """
    os sys subprocess runpy importlib pkgutil imp zipimport pickle _pickle cPickle pickletools dill
    cloudpickle joblib marshal shutil socket _socket ssl pty tty code codeop ctypes _ctypes cffi
    webbrowser http urllib urllib2 urllib3 httplib requests aiohttp httpx ftplib smtplib telnetlib
    imaplib poplib nntplib xmlrpc asyncio multiprocessing concurrent threading _thread thread signal
    resource fcntl mmap select selectors tempfile glob shelve dbm sqlite3 tarfile zipfile gzip bz2
    lzma pydoc trace profile cProfile pstats timeit doctest unittest bdb pdb idlelib lib2to3 ensurepip
    pip setuptools distutils venv site sysconfig platform _osx_support _aix_support _pyrepl logging
    gc inspect types functools operator itertools copy io _io codecs builtins __builtin__ _posixsubprocess
    _winapi msvcrt winreg posixpath ntpath linecache tokenize compileall py_compile zipapp
    cgi cgitb wsgiref socketserver SocketServer smtpd asynchat asyncore mailbox mailcap nturl2path
    uuid _sitebuiltins abc weakref atexit faulthandler tracemalloc sched queue
    _pyio typing typing_extensions annotationlib filelock fsspec networkx mpmath
    """.split()
)
# ``_pyio`` is the pure-Python twin of the denied ``io``/``_io`` (``_pyio.FileIO`` creates or
# truncates any file); ``typing.get_type_hints`` evaluates string annotations; filelock creates
# lock files; networkx's readers and writers open files; fsspec opens local and remote files;
# mpmath's functions call what they are given and parse expressions; none is reviewed.

# What a torch install always brings (torch 2.13 Requires-Dist) that evaluates strings as Python:
# sympy.sympify, sympy.parsing.sympy_parser.parse_expr and sympy.S(...) run eval on a string,
# and every sympy class sympifies its arguments when built (sympy.Poly("..."), Function("...")).
# torch's own symbolic
# shape classes (torch.utils._sympy, torch.fx.experimental.symbolic_shapes) are built on sympy:
# ValueRanges(lower, upper) sympifies both bounds.
STRING_EVALUATING_MODULES = frozenset({"sympy"})
STRING_EVALUATING_PREFIXES = ("torch.utils._sympy", "torch.fx.experimental", "torch._inductor", "torch._export.serde")

# Inside otherwise ordinary libraries: loaders of nested pickles, code generators, I/O.
DANGEROUS_PREFIXES = (
    "torch.jit", "torch.hub", "torch.package", "torch.fx", "torch._dynamo", "torch._inductor",
    "torch.utils", "torch.distributed.rpc", "torch._export", "torch.export", "torch.onnx",
    "torch.serialization", "torch.storage", "torch._C", "torch._ops", "torch.ops", "torch.library",
    "torch.cuda", "torch.backends", "torch.compiler", "torch.testing", "torch.multiprocessing",
    "numpy.testing", "numpy.f2py", "numpy.distutils", "numpy.ctypeslib", "numpy.lib", "numpy.load",
    "numpy.save", "numpy.fromfile", "numpy.loadtxt", "numpy.genfromtxt", "numpy.memmap",
    "pandas.io", "pandas.read_", "mlflow", "transformers", "huggingface_hub", "keras", "tensorflow",
    "jinja2", "yaml", "ruamel", "IPython", "jupyter", "nbconvert", "fickling", "picklescan",
    "modelscan", "torchpatch",
)

# Prefixes whose functions run code (collect_env.run, bottleneck, from_pretrained) but whose own
# classes are ordinary state that checkpoints carry (torch.utils.hooks.RemovableHandle, the
# TrainingArguments in a Hugging Face training_args.bin). A class there is only exempt from the
# prefix rule when the name table confirms the module defines it (not a re-export such as
# torch.utils.cpp_extension.subprocess.Popen); it is then judged like any other class.
CLASS_SAFE_PREFIXES = ("torch.utils", "torch.cuda", "torch._dynamo", "transformers")
# ...except these, whose classes do I/O or run code when built.
CLASS_UNSAFE_PREFIXES = ("torch.utils._sympy", "torch.utils.file_baton", "torch.utils.cpp_extension", "torch.utils.tensorboard", "torch.utils.bottleneck",
                         "torch.utils.collect_env", "torch.utils.benchmark", "torch.utils.data.datapipes",
                         "torch.utils._config_module", "torch._dynamo.guards", "torch._dynamo.repro")

# Classes whose construction or __setstate__ does I/O, opens connections or renders templates,
# outside the module denylist: torch.distributed's stores open files and sockets in __init__,
# template engines compile and run template code.
CODE_RUNNING_CLASSES = frozenset(
    """
    torch._C._distributed_c10d.FileStore torch._C._distributed_c10d.TCPStore torch._C._distributed_c10d.HashStore
    torch._C._distributed_c10d.PrefixStore torch.distributed.FileStore torch.distributed.TCPStore
    torch.distributed.PrefixStore torch.distributed.HashStore string.Template
    """.split()
)
CODE_RUNNING_PREFIXES = (
    "torch.distributed", "mako", "jinja2", "Cheetah", "genshi", "chameleon", "tornado", "django", "airspeed",
    "pystache", "chevron", "tempita", "bottle", "flask", "werkzeug", "fabric", "paramiko", "invoke", "sh",
    "plumbum", "pexpect", "docker", "boto3", "botocore", "s3fs", "fsspec", "smart_open", "psutil", "xml",
)

# Names inside dangerous modules that only build plain values.
BENIGN_IN_DANGEROUS = frozenset(
    """
    builtins.set builtins.frozenset builtins.bytearray builtins.bytes builtins.complex builtins.slice
    builtins.range builtins.int builtins.float builtins.str builtins.tuple builtins.list builtins.dict
    builtins.bool builtins.object builtins.NotImplemented builtins.Ellipsis
    copyreg._reconstructor copyreg.__newobj__ copyreg.__newobj_ex__ _codecs.encode functools.partial
    uuid.UUID types.SimpleNamespace io.BytesIO io.StringIO
    torch.serialization._get_layout torch.storage.TypedStorage torch.storage.UntypedStorage
    torch._utils._rebuild_tensor torch._utils._rebuild_tensor_v2 torch._utils._rebuild_tensor_v3
    torch._utils._rebuild_parameter torch._utils._rebuild_parameter_with_state
    torch._utils._rebuild_qtensor torch._utils._rebuild_sparse_tensor
    torch._utils._rebuild_meta_tensor_no_storage torch._utils._rebuild_nested_tensor
    torch._utils._rebuild_wrapper_subclass torch._utils._rebuild_device_tensor_from_numpy
    torch._utils._rebuild_device_tensor_from_cpu_tensor torch._utils._rebuild_xla_tensor
    torch._utils._rebuild_mtia_tensor
    """.split()
)

# Functions (lower-case names) known to rebuild plain data, outside torch's default allowlist.
BENIGN_FUNCTIONS = frozenset(
    """
    numpy.core.multiarray._reconstruct numpy._core.multiarray._reconstruct
    numpy.core.multiarray.scalar numpy._core.multiarray.scalar numpy.dtype numpy.ndarray
    numpy.random._pickle.__randomstate_ctor numpy.random._pickle.__bit_generator_ctor
    numpy.random._pickle.__generator_ctor numpy.core.numeric._frombuffer numpy._core.numeric._frombuffer
    numpy.random.bit_generator.__pyx_unpickle_SeedSequence
    torch._tensor._rebuild_from_type_v2 torch._utils._rebuild_tensor_v2 torch.device torch.dtype
    torch.layout torch.memory_format torch.qscheme torch.finfo torch.iinfo
    datetime.datetime datetime.date datetime.time datetime.timedelta datetime.timezone
    decimal.Decimal fractions.Fraction collections.defaultdict collections.deque collections.Counter
    """.split()
)

# Callables that only forward to another callable the pickle names itself (judged on its own):
# functools.partial stores its function, copyreg's helpers construct the class they are given.
# Their arguments are what the load can call, so a partial of an unreviewed function is as
# reviewed as that function, and one of a reviewed class (nn.LayerNorm) is plain data.
FORWARDERS = frozenset({"functools.partial", "copyreg._reconstructor", "copyreg.__newobj__", "copyreg.__newobj_ex__"})
# Of those, the ones whose arguments are stored, not called, at load.
STORING_FORWARDERS = frozenset({"functools.partial"})

# Instance attributes torch's weights-only BUILD (and CPython's load_build) obey: a __setstate__
# stored in an instance's __dict__ by one BUILD is called with attacker data by the next
# (torch/_weights_only_unpickler.py, load BUILD: hasattr(inst, "__setstate__")), and a
# slot-state __class__ or __dict__ swaps the type or the whole dict. No saved object has them.
SPECIAL_STATE_KEYS = frozenset({"__setstate__", "__class__", "__dict__"})

# Functions that unpickle or load nested bytes: auditable when their argument is a literal.
NESTED_LOADERS = {
    "torch.storage._load_from_bytes": "checkpoint",
    "torch.load": "checkpoint",
    "torch.serialization.load": "checkpoint",
    "pickle.loads": "pickle",
    "_pickle.loads": "pickle",
}

# Attribute walks that reach the interpreter's internals; only the copyreg and numpy
# constructors legitimately carry dunder names.
_DUNDER = re.compile(r"^__\w+__$")
_ALLOWED_DUNDER = frozenset({"__newobj__", "__newobj_ex__", "__randomstate_ctor", "__bit_generator_ctor", "__generator_ctor",
                             "__pyx_unpickle_SeedSequence"})


def python_name(module: str, name: str, protocol: int) -> tuple[str, str]:
    """The (module, name) Python's full unpickler imports for a GLOBAL, as ``pickle.load`` does."""
    if protocol < 3:
        if (module, name) in PY2_NAMES:
            module, name = PY2_NAMES[(module, name)]
        elif module in PY2_MODULES:
            module = PY2_MODULES[module]
    return module, name


def canonical(module: str, name: str) -> str:
    """``module.name`` with the OS-specific module aliases folded (``posix.system`` → ``os.system``)."""
    top, _, rest = module.partition(".")
    top = OS_ALIASES.get(top, top)
    return f"{top}{'.' + rest if rest else ''}.{name}"


def is_class_like(name: str) -> bool:
    """CapWords after any leading underscores: ``Linear``, ``_DimRange``. A hint, never a verdict."""
    last = name.rsplit(".", 1)[-1].lstrip("_")
    return bool(last) and last[0].isupper()


# Classes reviewed as plain data: building one (REDUCE, NEWOBJ, copyreg._reconstructor) and
# restoring its state runs only the library's own attribute-setting code, no I/O, no user code.
PLAIN_DATA_CLASSES = frozenset(
    """
    builtins.set builtins.frozenset builtins.bytearray builtins.bytes builtins.complex builtins.slice builtins.range
    builtins.int builtins.float builtins.str builtins.tuple builtins.list builtins.dict builtins.bool builtins.object
    collections.OrderedDict collections.defaultdict collections.deque collections.Counter
    datetime.datetime datetime.date datetime.time datetime.timedelta datetime.timezone decimal.Decimal fractions.Fraction
    argparse.Namespace types.SimpleNamespace uuid.UUID pathlib.PurePath pathlib.PurePosixPath pathlib.PureWindowsPath
    pathlib.Path pathlib.PosixPath pathlib.WindowsPath pathlib._local.PurePosixPath pathlib._local.PureWindowsPath
    pathlib._local.PosixPath pathlib._local.WindowsPath pathlib._local.Path ipaddress.IPv4Address ipaddress.IPv6Address
    ipaddress.IPv4Network ipaddress.IPv6Network enum.Enum enum.IntEnum enum.Flag enum.IntFlag
    numpy.ndarray numpy.dtype numpy.random.mtrand.RandomState numpy.random._generator.Generator
    numpy.random._mt19937.MT19937 numpy.random._pcg64.PCG64 numpy.random._pcg64.PCG64DXSM numpy.random._philox.Philox
    numpy.random._sfc64.SFC64 numpy.random.bit_generator.SeedSequence
    torch.Size torch.device torch.dtype torch.layout torch.memory_format torch.Tensor torch.finfo torch.iinfo
    torch.utils.hooks.RemovableHandle torch.utils.hooks.BackwardHook torch.utils.data.sampler.SequentialSampler
    torch.utils.data.sampler.RandomSampler torch.utils.data.sampler.BatchSampler torch.utils.data.dataset.TensorDataset
    torch.utils.data.dataset.Subset torch.utils.checkpoint.CheckpointPolicy
    transformers.training_args.TrainingArguments transformers.training_args_seq2seq.Seq2SeqTrainingArguments
    transformers.training_args.OptimizerNames transformers.trainer_utils.IntervalStrategy
    transformers.trainer_utils.SaveStrategy transformers.trainer_utils.HubStrategy transformers.trainer_utils.SchedulerType
    transformers.trainer_utils.EvaluationStrategy transformers.debug_utils.DebugOption
    transformers.trainer_pt_utils.AcceleratorConfig transformers.trainer_callback.TrainerState
    accelerate.utils.dataclasses.DistributedType accelerate.state.DistributedType
    omegaconf.dictconfig.DictConfig omegaconf.listconfig.ListConfig omegaconf.base.ContainerMetadata omegaconf.base.Metadata
    omegaconf.nodes.AnyNode omegaconf.nodes.StringNode omegaconf.nodes.IntegerNode omegaconf.nodes.FloatNode
    omegaconf.nodes.BooleanNode pytorch_lightning.utilities.parsing.AttributeDict
    lightning_fabric.utilities.data.AttributeDict lightning.fabric.utilities.data.AttributeDict
    """.split()
)
REVIEWED_NAMES = BENIGN_IN_DANGEROUS | BENIGN_FUNCTIONS | PLAIN_DATA_CLASSES

# torch packages whose classes (modules, optimizers, schedulers, distributions) restore their state
# with torch's own __setstate__; only classes the name table confirms are defined there count.
PLAIN_DATA_PREFIXES = ("torch.nn.modules", "torch.nn.parameter", "torch.optim", "torch.ao.nn", "torch.nn.intrinsic",
                       "torch.nn.quantized", "torch.distributions", "numpy.dtypes")


@dataclass(frozen=True)
class Resolved:
    """What a pickle global is once its module is imported and its dotted name walked."""

    name: str  # the object's real module.qualname (canonical), or the written name when unknown
    kind: str  # "module", "class", "function" (a module-level non-class), "attribute", "unknown"
    via: str = ""  # how a re-export was followed, for messages


@lru_cache(maxsize=1)
def _table() -> dict:
    """Re-exports and defined classes of the real torch, numpy and stdlib modules (scripts/build_name_table.py)."""
    raw = resources.files("torchpatch.audit").joinpath("data", "names.json.gz").read_bytes()
    table = json.loads(gzip.decompress(raw))
    table["modules"] = frozenset(table["modules"])
    table["classes"] = {module: frozenset(names) for module, names in table["classes"].items()}
    table["string_evaluators"] = frozenset(table.get("string_evaluators", ()))
    return table


def evaluates_strings(target: str) -> bool:
    """Whether building or calling ``target`` (a resolved name) can evaluate a string as code."""
    if target.split(".")[0] in STRING_EVALUATING_MODULES or _under(target, STRING_EVALUATING_PREFIXES):
        return True
    return target in _table()["string_evaluators"]


def _scanned_prefix(parts: list[str], modules: frozenset[str]) -> int:
    for end in range(len(parts) - 1, 0, -1):
        if ".".join(parts[:end]) in modules:
            return end
    return 0


def resolve(module: str, name: str) -> Resolved:
    """Walk ``module`` + the dotted ``name`` the way ``find_class`` does, through the name table."""
    module = canonical_module(module)
    table = _table()
    modules, classes, reexports = table["modules"], table["classes"], table["reexports"]
    parts = f"{module}.{name}".split(".")
    start = _scanned_prefix(parts, modules)
    if not start:
        return Resolved(f"{module}.{name}", "unknown")
    current, kind, via = ".".join(parts[:start]), "module", []
    for part in parts[start:]:
        if kind == "module":
            target = reexports.get(current, {}).get(part)
            if target is not None:
                via.append(f"{current}.{part} is {target}")
                current = target
                kind = "module" if target in modules else _kind_of(target, modules, classes)
            elif f"{current}.{part}" in modules:
                current, kind = f"{current}.{part}", "module"
            else:
                kind = "class" if part in classes.get(current, ()) else "function"
                current = f"{current}.{part}"
        else:
            current, kind = f"{current}.{part}", "attribute"
    return Resolved(canonical_module(current), kind, "; ".join(via))


def _kind_of(full: str, modules: frozenset[str], classes: dict) -> str:
    parts = full.split(".")
    start = _scanned_prefix(parts, modules)
    if not start:
        return "unknown"
    owner, rest = ".".join(parts[:start]), parts[start:]
    if len(rest) == 1:
        return "class" if rest[0] in classes.get(owner, ()) else "function"
    return "attribute"


def canonical_module(dotted: str) -> str:
    top, _, rest = dotted.partition(".")
    top = OS_ALIASES.get(top, top)
    return f"{top}{'.' + rest if rest else ''}"


def _under(full: str, prefixes: tuple[str, ...]) -> str | None:
    for prefix in prefixes:
        if full == prefix or full.startswith(prefix + "."):
            return prefix
    return None


def is_plain_data_class(resolved: Resolved) -> bool:
    if resolved.name in PLAIN_DATA_CLASSES:
        return True
    return resolved.kind == "class" and _under(resolved.name, PLAIN_DATA_PREFIXES) is not None


def danger(module: str, name: str, resolved: Resolved | None = None) -> str | None:
    """Why the global ``module.name`` can run code, or None when it cannot (judged as what it resolves to)."""
    module = PY2_MODULES.get(module, module)
    full = f"{module}.{name}"
    for part in name.split(".")[1:] if "." in name else []:
        if _DUNDER.match(part) or part.startswith("__"):
            return f"attribute walk through {part} reaches interpreter internals"
    if _DUNDER.match(name.split(".")[0]) and name.split(".")[0] not in _ALLOWED_DUNDER:
        return f"{name.split('.')[0]} reaches interpreter internals"
    resolved = resolved or resolve(module, name)
    target = resolved.name
    reexport = f" ({full} resolves to {target}: {resolved.via})" if resolved.via else ""
    if evaluates_strings(target) or evaluates_strings(full):
        return (f"{target} evaluates a string as Python code when it is built or called (sympy's sympify and parse_expr run eval, "
                f"and sympy classes sympify their arguments){reexport}")
    # Reviewed names are judged as what they are: types.SimpleNamespace and uuid.UUID stay plain
    # data whatever module deny list holds their module.
    if target in REVIEWED_NAMES or full in REVIEWED_NAMES:
        return None
    if target in NESTED_LOADERS or full in NESTED_LOADERS:
        return f"{target} unpickles nested data with the full (unsafe) unpickler{reexport}"
    if target in CODE_RUNNING_CLASSES:
        return f"{target} opens files or sockets, or runs template code, when it is built{reexport}"
    top = target.split(".")[0]
    if top == "builtins":
        return f"{target} is a builtin that is not a plain-data constructor; it runs or reaches code at load time{reexport}"
    if top in DANGEROUS_MODULES:
        return f"module {top} can run commands, import code or touch files{reexport}"
    prefix = _under(target, CODE_RUNNING_PREFIXES)
    if prefix:
        return f"{prefix} objects open files, sockets or processes, or run template code, when built or called{reexport}"
    for prefix in DANGEROUS_PREFIXES:
        if target == prefix or target.startswith(prefix + ".") or (prefix.endswith("_") and target.startswith(prefix)):
            if _class_exempt(prefix, target, name, resolved):
                return None
            return f"{prefix} can run code or load files{reexport}"
    walk = _unresolved_walk(module, name, resolved)
    if walk:
        return walk
    return None


def _class_exempt(prefix: str, target: str, name: str, resolved: Resolved) -> bool:
    if prefix not in CLASS_SAFE_PREFIXES or _under(target, CLASS_UNSAFE_PREFIXES):
        return False
    if resolved.kind == "class":
        return True
    # Libraries the table does not cover (transformers): a CapWords name defined at module level.
    return resolved.kind == "unknown" and not target.startswith("torch") and "." not in name and is_class_like(name)


def _unresolved_walk(module: str, name: str, resolved: Resolved) -> str | None:
    """A dotted name whose intermediate parts cannot be shown to be classes: it may walk into a
    re-exported module (``mypkg`` + ``sub.Popen``), so it fails closed."""
    if "." not in name or resolved.kind != "unknown":
        return None
    intermediate = name.split(".")[:-1]
    for part in intermediate:
        if part in DANGEROUS_MODULES or part in OS_ALIASES:
            return f"attribute walk {module}.{name} goes through {part}, the name of a module that can run commands"
    if resolved.kind == "unknown" and any(not is_class_like(part) for part in intermediate):
        return f"attribute walk {module}.{name} goes through a lower-case attribute that cannot be resolved (possibly a re-exported module)"
    return None
