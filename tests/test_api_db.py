"""The API database read from the wheels (rules/data/api_db.json.gz), checked against the installed torch.

CI installs torch 2.13.0 (CPU): every name the database says 2.13 no longer has must be missing at run
time, every name it says a later release removed must still be there, and the deprecations it records
for 2.13 must exist (deprecated names still work) and carry a warning.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import random
import warnings

import pytest

from torchpatch.rules import _api_db
from torchpatch.versions import Version

INSTALLED_RELEASE = Version(2, 13)
CPU_BUILD_LACKS = frozenset({"torch.GreenContext", "torch.cuda.GreenContext", "torch.get_num_thread"})


def _torch():
    torch = pytest.importorskip("torch")
    if Version.parse(torch.__version__) != INSTALLED_RELEASE:
        pytest.skip("these checks describe torch 2.13")
    return torch


def _module_exists(name: str) -> bool | None:
    """Whether the module is there; None when its package cannot be imported here (a CUDA-only import)."""
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError as error:
        return False if error.name and name.startswith(error.name) else None
    except Exception:
        return None


_MISSING = object()


def _lookup(qualname: str):
    """The object, _MISSING when it is certainly not there, None when its module cannot be imported here."""
    parts = qualname.split(".")
    for cut in range(len(parts), 0, -1):
        module_name = ".".join(parts[:cut])
        exists = _module_exists(module_name)
        if exists is None:
            return None
        if not exists:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                value = importlib.import_module(module_name)
            except Exception:  # an optional dependency (tensorboard, onnx, …) is not installed here
                return None
        for attribute in parts[cut:]:
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    value = getattr(value, attribute)
            except AttributeError:
                return _MISSING
            except Exception:
                return None
        return value
    return _MISSING


def test_database_shape():
    assert [str(r) for r in _api_db.releases()] == [f"2.{minor}" for minor in range(4, 16)]
    assert len(_api_db.removed_names()) > 300
    assert len(_api_db.deprecations()) > 100


@pytest.mark.torch
def test_names_removed_by_2_13_are_missing_at_run_time():
    _torch()
    checked = 0
    wrong = []
    for name, removal in sorted(_api_db.removed_names().items()):
        if removal.removed_in > INSTALLED_RELEASE or removal.back_in is not None and removal.back_in <= INSTALLED_RELEASE:
            continue
        if removal.is_module:
            exists = _module_exists(name)
            if exists is None:
                continue
            if exists:
                wrong.append(name)
            checked += 1
            continue
        value = _lookup(name)
        if value is None:
            continue
        checked += 1
        if value is not _MISSING:
            wrong.append(name)
    assert checked > 150
    assert wrong == []


@pytest.mark.torch
def test_names_removed_after_2_13_are_still_there():
    _torch()
    checked = 0
    wrong = []
    for name, removal in sorted(_api_db.removed_names().items()):
        if removal.removed_in <= INSTALLED_RELEASE or removal.first_in is None or removal.first_in > INSTALLED_RELEASE:
            continue  # gone by 2.13, or new after it
        if removal.is_module:
            exists = _module_exists(name)
            missing = exists is False
        else:
            value = _lookup(name)
            exists, missing = value, value is _MISSING
        if exists is None:
            continue
        checked += 1
        if missing:
            wrong.append(name)
    assert checked > 10
    # Declared only in torch/_C's stubs: the CUDA wheels the database reads export them, the CPU build
    # this test runs on does not (torch.GreenContext, torch.cuda.GreenContext) or never did (a stub typo).
    assert set(wrong) <= CPU_BUILD_LACKS, sorted(set(wrong) - CPU_BUILD_LACKS)


def _warns_or_marked(value) -> bool:
    if getattr(value, "__deprecated__", None):
        return True
    target = value.fget if isinstance(value, property) else value
    target = getattr(target, "__wrapped__", target)
    try:
        source = inspect.getsource(target)
    except (TypeError, OSError):
        return True  # a C function or a module: the text was read from the wheel, nothing to compare
    return "warn" in source or "deprecated" in source


@pytest.mark.torch
def test_deprecations_of_2_13_exist_and_warn():
    _torch()
    removed = _api_db.removed_names()
    sample = [d for d in _api_db.deprecations().values() if d.deprecated_in <= INSTALLED_RELEASE
              and not (d.qualname in removed and removed[d.qualname].removed_in <= INSTALLED_RELEASE)]
    random.Random(11).shuffle(sample)
    checked = 0
    wrong = []
    for deprecation in sample[:150]:
        parts = deprecation.qualname.split(".")
        owner = _lookup(".".join(parts[:-1]))
        if owner is None or owner is _MISSING:
            value = _lookup(deprecation.qualname)
            if value is None:
                continue
            if value is _MISSING:
                wrong.append(deprecation.qualname)
                continue
        else:
            value = inspect.getattr_static(owner, parts[-1], _MISSING)
            if value is _MISSING:
                value = _lookup(deprecation.qualname)
                if value is None:
                    continue
                if value is _MISSING:
                    wrong.append(deprecation.qualname)
                    continue
        checked += 1
        if not _warns_or_marked(value):
            wrong.append(deprecation.qualname)
    assert checked > 50
    assert wrong == []


@pytest.mark.parametrize("target", ["2.13", "2.14", "2.15"])
def test_mkldnn_classes_served_by_getattr_are_not_reported(lint, target):
    """2.14.1 and 2.15.0 serve torch.utils.mkldnn.Mkldnn* from a module __getattr__ (TP101 used to say removed)."""
    code = "from torch.utils.mkldnn import MkldnnLinear, MkldnnConv2d\nlayer = MkldnnLinear(linear, torch.float)\n"
    assert [f.code for f in lint(code, target=target).findings] == []


@pytest.mark.torch
def test_mkldnn_classes_still_import_on_torch():
    _torch()
    from torch.utils.mkldnn import MkldnnBatchNorm, MkldnnConv2d, MkldnnLinear, MkldnnPrelu  # noqa: F401


def _signature_of(callable_name: str):
    value = _lookup(callable_name)
    if value is None or value is _MISSING:
        return None
    try:
        return inspect.signature(value)
    except (TypeError, ValueError):
        return None


@pytest.mark.torch
def test_keyword_changes_hold_on_2_13():
    """Removed keywords are not in 2.13's signatures; keyword-only ones are keyword-only there."""
    _torch()
    from torchpatch.rules._wheel_rules import keyword_changes_by_callable

    checked = 0
    wrong = []
    for callable_name, keywords in sorted(keyword_changes_by_callable().items()):
        signature = None
        for keyword, change in keywords.items():
            for kind in ("removed", "keyword_only"):
                if kind not in change or Version.parse(change[kind][0]) > INSTALLED_RELEASE:
                    continue
                signature = signature or _signature_of(callable_name)
                if signature is None:
                    continue
                parameter = signature.parameters.get(keyword)
                checked += 1
                if kind == "removed" and parameter is not None:
                    wrong.append((callable_name, keyword, kind))
                if kind == "keyword_only" and (parameter is None or parameter.kind is not parameter.KEYWORD_ONLY):
                    wrong.append((callable_name, keyword, kind))
    assert checked >= 10
    assert wrong == []


@pytest.mark.parametrize("code, target, name", [
    ("import torch\ntorch.align_tensors(a, b)\n", "2.13", "torch.align_tensors"),
    ("from torch.export.dynamic_shapes import dynamic_dim\n", "2.5", "torch.export.dynamic_shapes.dynamic_dim"),
    ("import torch\ns = torch.onnx.utils.export_to_pretty_string(m, (x,))\n", "2.6",
     "torch.onnx.utils.export_to_pretty_string"),
    ("def f():\n    from torch.distributed.checkpoint._hf_storage import _HuggingFaceStorageReader\n", "2.8",
     "torch.distributed.checkpoint._hf_storage"),
])
def test_removed_names_under_every_spelling(lint, code, target, name):
    """Issue 11 §2: spellings the API table missed are found from the wheels, from the removing release on."""
    findings = [f for f in lint(code, target=target).findings if f.code == "TP104"]
    assert len(findings) == 1 and f"`{name}`" in findings[0].message and f"removed in {target}" in findings[0].message
    before = f"2.{int(target.split('.')[1]) - 1}"
    assert [f for f in lint(code, target=before).findings if f.code == "TP104"] == []
