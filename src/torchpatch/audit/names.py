"""How pickle globals resolve, and which of them can run code."""

from __future__ import annotations

import _compat_pickle
import re

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
    """.split()
)

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

# Prefixes whose functions run code (collect_env.run, bottleneck, from_pretrained) but whose
# classes are ordinary state that checkpoints carry (torch.utils.hooks.RemovableHandle, the
# TrainingArguments in a Hugging Face training_args.bin).
CLASS_SAFE_PREFIXES = ("torch.utils", "torch.cuda", "torch._dynamo", "transformers")

# Names inside dangerous modules that only build plain values.
BENIGN_IN_DANGEROUS = frozenset(
    """
    builtins.set builtins.frozenset builtins.bytearray builtins.bytes builtins.complex builtins.slice
    builtins.range builtins.int builtins.float builtins.str builtins.tuple builtins.list builtins.dict
    builtins.bool builtins.object builtins.NotImplemented builtins.Ellipsis
    copyreg._reconstructor copyreg.__newobj__ copyreg.__newobj_ex__ _codecs.encode
    uuid.UUID io.BytesIO io.StringIO
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
    torch._tensor._rebuild_from_type_v2 torch._utils._rebuild_tensor_v2 torch.device torch.dtype
    torch.layout torch.memory_format torch.qscheme torch.finfo torch.iinfo
    datetime.datetime datetime.date datetime.time datetime.timedelta datetime.timezone
    decimal.Decimal fractions.Fraction collections.defaultdict collections.deque collections.Counter
    """.split()
)

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
_ALLOWED_DUNDER = frozenset({"__newobj__", "__newobj_ex__", "__randomstate_ctor", "__bit_generator_ctor", "__generator_ctor"})


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
    """CapWords after any leading underscores: ``Linear``, ``_DimRange``."""
    last = name.rsplit(".", 1)[-1].lstrip("_")
    return bool(last) and last[0].isupper()


def danger(module: str, name: str) -> str | None:
    """Why the global ``module.name`` (canonical) can run code, or None when it cannot."""
    module = PY2_MODULES.get(module, module)
    full = f"{module}.{name}"
    for part in name.split(".")[1:] if "." in name else []:
        if _DUNDER.match(part) or part.startswith("__"):
            return f"attribute walk through {part} reaches interpreter internals"
    if _DUNDER.match(name.split(".")[0]) and name.split(".")[0] not in _ALLOWED_DUNDER:
        return f"{name.split('.')[0]} reaches interpreter internals"
    if full in BENIGN_IN_DANGEROUS or full in BENIGN_FUNCTIONS:
        return None
    if full in NESTED_LOADERS:
        return f"{full} unpickles nested data with the full (unsafe) unpickler"
    top = module.split(".")[0]
    if top == "builtins":
        return f"{full} is a builtin that is not a plain-data constructor; it runs or reaches code at load time"
    if top in DANGEROUS_MODULES:
        return f"module {top} can run commands, import code or touch files"
    for prefix in DANGEROUS_PREFIXES:
        if full == prefix or full.startswith(prefix + ".") or (prefix.endswith("_") and full.startswith(prefix)):
            if prefix in CLASS_SAFE_PREFIXES and is_class_like(name):
                return None
            return f"{prefix} can run code or load files"
    return None
