"""Compatibility code is recognised from what a condition is, not from words in it (issue: trust, §1).

The shapes are the ones real projects write: pyg's ``torch_geometric.typing.WITH_PT20``, accelerate's
``is_torch_version(">=", "2.4.0")``, timm's ``has_compile = hasattr(torch, "compile")``,
transformers' ``is_torch_greater_or_equal("2.4")``, lightning's ``RequirementCache("torch>=2.1")``.
"""

from __future__ import annotations

import ast

import pytest

from torchpatch.engine.guards import BODY_IS_OLD, BOTH, ELSE_IS_OLD, GuardFacts, module_definitions, name_role, old_branch

OLD_CALL = "torch.cuda.amp.GradScaler()"  # TP202 in every release from 2.4


def rows(lint, code, **options):
    result = lint(code, **options)
    assert result.error is None, result.error
    return [f.row for f in result.findings]


# -- words in a name are not a check ---------------------------------------------------------------

@pytest.mark.parametrize("condition", [
    "not model_path.exists() or force_conversion",  # litgpt eval/evaluate.py: con-VERSION
    "headless", "lossless", "self.stateless", "layer_3_3", "args.less_memory", "use_new",
    "sys.version_info >= (3, 10)",  # Python's version, not torch's
    "torch.version.cuda >= '11.8'",  # CUDA's
    "version > 2",  # an unrelated local called version
    "torch.cuda.is_available()", "hasattr(model, 'compile')", "is_torch_available()",
])
def test_a_condition_that_is_no_torch_check_hides_nothing(lint, condition):
    code = f"import sys\nimport torch\nif {condition}:\n    s = {OLD_CALL}\nelse:\n    t = {OLD_CALL}\n"
    assert rows(lint, code, select=["TP202"]) == [4, 6]


# -- real shapes -----------------------------------------------------------------------------------

@pytest.mark.parametrize("code, expected", [
    # pyg torch_geometric/typing.py, followed to its uses in the same file
    ("import torch\nWITH_PT20 = int(torch.__version__.split('.')[0]) >= 2\n"
     "WITH_PT21 = WITH_PT20 and int(torch.__version__.split('.')[1]) >= 1\n"
     f"def f():\n    if WITH_PT21:\n        s = 1\n    else:\n        s = {OLD_CALL}\n", []),
    # pyg elsewhere: the flag imported (definition not visible): by its name
    (f"import torch\nimport torch_geometric.typing\nif torch_geometric.typing.WITH_PT20:\n    s = 1\nelse:\n    s = {OLD_CALL}\n", []),
    (f"import torch\nfrom torch_geometric.typing import WITH_PT24\nif not WITH_PT24:\n    s = {OLD_CALL}\n", []),
    # accelerate checkpointing.py / data_loader.py
    (f"import torch\nfrom accelerate.utils import is_torch_version\nif is_torch_version('>=', '2.4.0'):\n    s = 1\n"
     f"else:\n    s = {OLD_CALL}\n", []),
    (f"import torch\nfrom accelerate.utils import compare_versions\nif compare_versions('torch', '<', '2.4'):\n    s = {OLD_CALL}\n", []),
    # timm: a module-level feature flag
    (f"import torch\nhas_compile = hasattr(torch, 'compile')\nif not has_compile:\n    s = {OLD_CALL}\n", []),
    # transformers
    (f"import torch\nfrom transformers.utils import is_torch_greater_or_equal\n"
     f"if is_torch_greater_or_equal('2.4'):\n    s = 1\nelse:\n    s = {OLD_CALL}\n", []),
    (f"import torch\nfrom .pytorch_utils import is_torch_greater_or_equal_than_2_4\n"
     f"s = 1 if is_torch_greater_or_equal_than_2_4 else {OLD_CALL}\n", []),
    # lightning
    (f"import torch\nfrom lightning_utilities.core.imports import RequirementCache\n_TORCH_GE_2_4 = RequirementCache('torch>=2.4')\n"
     f"if not _TORCH_GE_2_4:\n    s = {OLD_CALL}\n", []),
    (f"import torch\nfrom packaging.version import Version\nTORCH_VERSION = Version(torch.__version__)\n"
     f"if TORCH_VERSION < Version('2.4'):\n    s = {OLD_CALL}\n", []),
    # else of ``try: import new``: a flag that is True in the try and False in the ImportError handler
    ("import torch\ntry:\n    from torch.nn.attention import sdpa_kernel\n    HAS_SDPA_KERNEL = True\n"
     "except ImportError:\n    HAS_SDPA_KERNEL = False\n\n"
     "def attend():\n    if HAS_SDPA_KERNEL:\n        return 1\n    else:\n        return torch.backends.cuda.sdp_kernel()\n", []),
    # early return: ``if NEW: return new(...)`` then the old form
    (f"import torch\nfrom utils import TORCH_GE_2_4\ndef make():\n    if TORCH_GE_2_4:\n        return torch.amp.GradScaler('cuda')\n"
     f"    return {OLD_CALL}\n", []),
    # ... but an early return on old releases leaves the rest as the new path
    (f"import torch\nfrom utils import TORCH_GE_2_4\ndef make():\n    if not TORCH_GE_2_4:\n        return None\n"
     f"    return {OLD_CALL}\n", [6]),
    # a check combined with an unrelated condition: the else is no longer only old releases
    (f"import torch\nfrom utils import TORCH_GE_2_4\nif TORCH_GE_2_4 and use_amp:\n    s = 1\nelse:\n    s = {OLD_CALL}\n", [6]),
    (f"import torch\nfrom utils import TORCH_GE_2_4\nif not TORCH_GE_2_4 and use_amp:\n    s = {OLD_CALL}\n", []),
    # the new branch of a check is still checked
    (f"import torch\nif is_torch_version('>=', '2.4'):\n    s = {OLD_CALL}\n", [3]),
    ("import torch\nif version.parse(torch.__version__) >= version.parse('2.6'):\n    s = torch.load(p)\n", [3]),
])
def test_real_compatibility_shapes(lint, code, expected):
    assert rows(lint, code, select=["TP202", "TP204", "TP301"]) == expected


def test_early_return_guard_hides_only_what_follows_in_that_body(lint):
    code = (f"import torch\nfrom utils import TORCH_GE_2_4\ndef make():\n    if TORCH_GE_2_4:\n        return 1\n"
            f"    return {OLD_CALL}\n\nscaler = {OLD_CALL}\n")
    assert rows(lint, code, select=["TP202"]) == [8]


def test_a_visible_definition_wins_over_the_name(lint):
    # ``TORCH_GE_2_4`` looks like a check, but here it is a plain user option.
    code = f"import torch\nTORCH_GE_2_4 = os.environ.get('X') == '1'\nif not TORCH_GE_2_4:\n    s = {OLD_CALL}\n"
    assert rows(lint, code, select=["TP202"]) == [4]


@pytest.mark.parametrize("name, role", [
    ("TORCH_GE_2_4", "new"), ("WITH_PT20", "new"), ("_TORCH_2_6", "new"), ("is_torch_greater_or_equal", "new"),
    ("_TORCH_GREATER_EQUAL_2_1", "new"), ("torch_version_at_least", "new"), ("TORCH_LESS_THAN_2_1", "old"),
    ("_PT_LT_2", "old"), ("TORCH_VERSION", "value"), ("headless", None), ("layer_3_3", None),
    ("force_conversion", None), ("lossless", None), ("use_version_2", None), ("is_torch_available", None),
    # PT2E is PyTorch 2 export quantization, not "torch 2 or newer" (round 6d); PT2 alone still is.
    ("_HAVE_PT2E", None), ("PT2E_AVAILABLE", None), ("isPt2eEnabled", None), ("HAS_PT2", "new"),
])
def test_name_roles(name, role):
    assert name_role(name) == role


def test_direction_of_version_comparisons():
    def branch(source):
        tree = ast.parse(source)
        definitions, imported = module_definitions(tree)
        facts = GuardFacts(qualname=lambda e: "torch.__version__" if ast.unparse(e) == "torch.__version__"
                           else ("torch" if ast.unparse(e) == "torch" else None), definitions=definitions, imported=imported)
        return old_branch(tree.body[-1].test, facts)

    assert branch("if torch.__version__ < '2.4': pass") == BODY_IS_OLD
    assert branch("if '2.4' <= torch.__version__: pass") == ELSE_IS_OLD
    assert branch("if torch.__version__ == '2.1.0': pass") == BOTH
    assert branch("if headless: pass") is None


# -- findings about the object, not the name (§2) ------------------------------------------------------

def test_a_variable_holding_one_of_several_classes_is_not_the_deprecated_one(lint):
    code = ("import torch\nfrom torch.distributed.fsdp.sharded_grad_scaler import ShardedGradScaler\n"
            "if use_fsdp:\n    scaler_type = ShardedGradScaler\nelse:\n    scaler_type = torch.cuda.amp.GradScaler\n"
            "scaler = scaler_type()\n")
    result = lint(code, fix=True, unsafe_fixes=True)
    # The reference in the else branch is reported (no fix); the call through the variable is not.
    assert [(f.code, f.row, f.fix) for f in result.findings] == [("TP202", 6, None)]
    assert result.fixed_text == code
    single = "import torch\nscaler_type = torch.cuda.amp.GradScaler\nscaler = scaler_type()\n"
    assert [f.row for f in lint(single).findings] == [2, 3]


def test_silent_re_export_is_not_called_deprecated(lint):
    for line in ("from torch.distributed._composable.fsdp import fully_shard\n",
                 "from torch.distributed._tensor import DTensor\n"):
        (finding,) = lint(line).findings
        assert "deprecated" not in finding.message and "silently re-exports" in finding.message


def test_an_imported_torch_version_in_a_chained_range_is_compatibility_code(lint):
    # mmengine runner/amp.py: ``if digit_version('1.5.0') <= digit_version(TORCH_VERSION) < digit_version('1.10.0'):``
    code = ("import torch\nfrom mmengine.utils import digit_version\nfrom mmengine.utils.dl_utils import TORCH_VERSION\n"
            "if digit_version('1.5.0') <= digit_version(TORCH_VERSION) < digit_version('1.10.0'):\n"
            "    with torch.cuda.amp.autocast(enabled=enabled):\n        pass\n")
    assert rows(lint, code, select=["TP202"]) == []
    attribute = code.replace("from mmengine.utils.dl_utils import TORCH_VERSION\n", "import mmengine.utils.dl_utils as dl\n") \
        .replace("digit_version(TORCH_VERSION)", "digit_version(dl.TORCH_VERSION)")
    assert rows(lint, attribute, select=["TP202"]) == []


def test_early_return_through_try_and_with(lint):
    # pyg torch_geometric/io/fs.py torch_load
    code = ("import pickle\nimport torch\nimport torch_geometric.typing\n\ndef torch_load(path, map_location=None):\n"
            "    if torch_geometric.typing.WITH_PT24:\n        try:\n            with open(path, 'rb') as f:\n"
            "                return torch.load(f, map_location, weights_only=True)\n"
            "        except pickle.UnpicklingError as e:\n            if 'x' in str(e):\n"
            "                return torch.load(path, weights_only=False)\n            else:\n                raise e\n\n"
            "    with open(path, 'rb') as f:\n        return torch.load(f, map_location)\n")
    assert rows(lint, code, select=["TP301"]) == []
    falls_through = code.replace("                raise e\n", "                pass\n")
    assert rows(lint, falls_through, select=["TP301"]) == [17]


def test_a_name_imported_from_one_of_several_devices_is_not_the_cuda_one(lint):
    # mmengine optim/optimizer/amp_optimizer_wrapper.py
    code = ("import torch\nif is_npu_available():\n    from torch.npu.amp import GradScaler\nelif is_mlu_available():\n"
            "    from torch.mlu.amp import GradScaler\nelse:\n    from torch.cuda.amp import GradScaler\n\n"
            "scaler_type = GradScaler\nscaler = GradScaler()\n")
    assert rows(lint, code, select=["TP202"]) == []
    plain = "import torch\nfrom torch.cuda.amp import GradScaler\nscaler = GradScaler()\n"
    assert rows(lint, plain, select=["TP202"]) == [3]


def test_a_local_version_compared_with_an_imported_version_constant_is_compatibility_code(lint):
    # neural_compressor 3.10 torch/export/pt2e_export.py: ``cur_version = get_torch_version()`` (a local)
    # compared with ``TORCH_VERSION_2_8_0 = Version("2.8.0")`` from the project's utils; the else branch
    # (``export_for_training``, no ``strict=``) runs only before 2.8 — not a TP101 or TP430 finding.
    code = ("import torch\nfrom neural_compressor.torch.utils import TORCH_VERSION_2_8_0, get_torch_version\n"
            "def export(model, example_inputs):\n    cur_version = get_torch_version()\n"
            "    if cur_version >= TORCH_VERSION_2_8_0:\n"
            "        ep = torch.export.export(model, args=example_inputs, strict=True)\n"
            "    else:\n        ep = torch.export.export_for_training(model, args=example_inputs)\n"
            "    return ep\n")
    assert rows(lint, code, select=["TP101", "TP430"]) == []
    # The constant on the left: ``2.8 > version`` makes the body the old branch, so the else is reported.
    reversed_test = code.replace("cur_version >= TORCH_VERSION_2_8_0", "TORCH_VERSION_2_8_0 > cur_version")
    assert rows(lint, reversed_test, select=["TP101", "TP430"]) == [8, 8]
    # The same comparison with a plain option, or with a constant that names no torch version, stays a finding.
    for other in ("cur_version >= MIN_LAYERS_2", "cur_version >= 2"):
        assert rows(lint, code.replace("cur_version >= TORCH_VERSION_2_8_0", other),
                    select=["TP101", "TP430"]) == [8, 8]


def test_a_keyword_bound_of_a_torch_version_helper_is_a_version_check(lint):
    # deepspeed 0.19.8 runtime/fp16/fused_optimizer.py: ``if required_torch_version(max_version=0.4):``
    # keeps ``torch.nn.utils.clip_grad_norm`` (deprecated; an API-table rename, TP201) for torch 0.4 only.
    code = ("import torch\nfrom deepspeed.utils.torch import required_torch_version\n"
            "if required_torch_version(max_version=0.4):\n    clip = torch.nn.utils.clip_grad_norm\n"
            "else:\n    clip = torch.nn.utils.clip_grad_norm_\n")
    assert rows(lint, code, select=["TP201"]) == []
    newer = code.replace("max_version=0.4", "min_version=2.1")
    assert rows(lint, newer, select=["TP201"]) == [4]  # the body is the new branch: still checked
    both = code.replace("max_version=0.4", "min_version=0.3, max_version=0.4")
    assert rows(lint, both, select=["TP201"]) == []  # a range: neither branch is reported
    other = code.replace("required_torch_version(max_version=0.4)", "check_limits(max_version=0.4)")
    assert rows(lint, other, select=["TP201"]) == [4]  # no torch in the helper's name: no check


def test_a_parameter_probe_of_a_torch_callable_is_compatibility_code(lint):
    # megatron-core 0.16.1 nccl_allocator.py: ``MemPool(..., symmetric=)`` exists in 2.8 and is gone in
    # 2.9; the call runs only where the signature still has the parameter.
    code = ("import torch\ndef get_func_args(func):\n    import inspect\n"
            "    return [a.name for a in inspect.signature(func).parameters.values()]\n"
            "def pool(allocator):\n    if 'symmetric' in get_func_args(torch.cuda.MemPool):\n"
            "        return torch.cuda.MemPool(allocator, symmetric=True)\n    return torch.cuda.MemPool(allocator)\n")
    assert rows(lint, code, select=["TP105"], min_torch="2.6") == []
    probe = code.replace("'symmetric' in get_func_args(torch.cuda.MemPool)",
                         "'symmetric' in inspect.signature(torch.cuda.MemPool).parameters")
    assert rows(lint, probe, select=["TP105"], min_torch="2.6") == []
    unprobed = code.replace("'symmetric' in get_func_args(torch.cuda.MemPool)", "'symmetric' in options")
    assert rows(lint, unprobed, select=["TP105"], min_torch="2.6") == [7]


def test_a_name_in_dir_of_torch_is_a_feature_probe(lint):
    # colossalai 0.5.0 legacy/communication/collective.py: the private collective only where the public
    # one is missing. ``"x" not in dir(dist)`` is hasattr's negation: its body is the old path, and the
    # else (``all_gather_into_tensor``, deprecated in 2.13) stays checked.
    code = ("import torch.distributed as dist\n"
            "gather = dist._all_gather_base if 'all_gather_into_tensor' not in dir(dist) else dist.all_gather_into_tensor\n")
    assert rows(lint, code, select=["TP201"]) == [2]
    newer = ("import torch.distributed as dist\n"
             "gather = dist.all_gather_single if 'all_gather_single' in dir(dist) else dist.all_gather_into_tensor\n")
    assert rows(lint, newer, select=["TP201"]) == []


# -- fourth hand-read sample (bench/trust_samples/sample4.tsv): fallbacks real projects write -------

def test_code_after_a_try_that_returns_the_new_import_is_the_fallback(lint):
    """unsloth 2026.10.9 ``_fsdp_module_class``: the second try runs only where the new import failed."""
    code = ("def fsdp_class():\n    try:\n        from torch.distributed.fsdp import FSDPModule\n        return FSDPModule\n"
            "    except ImportError:\n        pass\n    from torch.distributed._composable.fsdp import FSDPModule\n"
            "    return FSDPModule\n")
    assert rows(lint, code) == []
    # A handler that returns too does not make the rest a fallback; a try that does not return neither.
    assert rows(lint, code.replace("        pass\n", "        return None\n")) == [7]
    assert rows(lint, code.replace("        return FSDPModule\n    except", "    except")) == [6]


@pytest.mark.parametrize("handler", ["except Exception:", "except:", "except BaseException:"])
def test_a_broad_handler_after_an_import_only_try_is_the_fallback(lint, handler):
    """unsloth 2026.10.9 ``fsdp2_save.py``: ``try: from new import X`` / ``except Exception:`` / the old import."""
    code = (f"try:\n    from torch.distributed.fsdp import FSDPModule\n{handler}\n"
            "    from torch.distributed._composable.fsdp import FSDPModule\n")
    assert rows(lint, code) == []


def test_a_broad_handler_after_a_version_check_is_the_fallback(lint):
    """megatron-core 0.16.1 ``tensor_parallel/layers.py``: the bare ``except:`` runs only if the check failed."""
    code = ("import torch\ntry:\n    if is_torch_min_version('2.4.0a0'):\n        fwd = torch.amp.custom_fwd\n"
            "    else:\n        fwd = torch.cuda.amp.custom_fwd\nexcept:\n    fwd = torch.cuda.amp.custom_fwd\n")
    assert rows(lint, code) == []


def test_a_broad_handler_of_ordinary_code_is_still_checked(lint):
    code = f"import torch\ntry:\n    x = compute()\nexcept Exception:\n    y = {OLD_CALL}\n"
    assert rows(lint, code) == [5]


def test_the_tail_of_an_or_after_a_getattr_probe_on_torch_is_the_fallback(lint):
    """unsloth 2026.10.9 ``reap.py``: ``getattr(accel, "current_device_index", None) or accel.current_device_idx``."""
    code = ("import torch\ndef device():\n    accel = torch.accelerator\n"
            "    return getattr(accel, 'current_device_index', None) or accel.current_device_idx\n")
    assert rows(lint, code) == []
    assert rows(lint, f"import torch\nscaler = make() or {OLD_CALL}\n") == [2]
    assert rows(lint, f"import torch\nscaler = getattr(obj, 'scaler', None) or {OLD_CALL}\n") == [2]


@pytest.mark.parametrize("probe", ["'symmetric' in get_func_args(torch.cuda.MemPool)",
                                   "'symmetric' in inspect.signature(torch.cuda.MemPool).parameters"])
def test_a_parameter_looked_up_in_a_torch_signature_is_a_feature_check(lint, probe):
    """megatron-core 0.16.1 ``nccl_allocator.py``: the branch passes `symmetric=` only where the signature has it."""
    code = (f"import inspect\nimport torch\nif {probe}:\n    pool = torch.cuda.MemPool(a, symmetric=True)\n"
            "else:\n    pool = torch.cuda.MemPool(a)\n")
    assert rows(lint, code) == []
    assert rows(lint, "import torch\npool = torch.cuda.MemPool(a, symmetric=True)\n") == [2]
    assert rows(lint, f"import torch\nif 'x' in names(model):\n    pool = torch.cuda.MemPool(a, symmetric=True)\n") == [3]


# -- a flag defined by a helper that does not say its direction (issue #23) --------------------------------
# ultralytics utils/torch_utils.py: ``TORCH_1_13 = check_version(TORCH_VERSION, "1.13.0")`` ("all default to
# version>=min_version"), then ``if TORCH_1_13: torch.amp.autocast(...) else: torch.cuda.amp.autocast(...)``
# in the same file, and ``... if TORCH_2_4 else torch.cuda.amp.GradScaler(...)`` where it is imported.
ULTRALYTICS_FLAGS = ("import torch\nfrom ultralytics.utils.checks import check_version\n"
                     "TORCH_VERSION = str(torch.__version__)\n"
                     "TORCH_1_13 = check_version(TORCH_VERSION, '1.13.0')\n"
                     "TORCH_2_4 = check_version(torch.__version__, '2.4.0')\n")


@pytest.mark.parametrize("use", [
    f"def autocast(enabled):\n    if TORCH_1_13:\n        return 1\n    else:\n        return {OLD_CALL}\n",
    f"s = 1 if TORCH_2_4 else {OLD_CALL}\n",
    f"s = {OLD_CALL} if not TORCH_1_13 else 1\n",
    f"if not TORCH_2_4:\n    s = {OLD_CALL}\n",
])
def test_a_flag_named_for_a_release_and_defined_by_a_version_helper_is_compatibility_code(lint, use):
    assert rows(lint, ULTRALYTICS_FLAGS + use, select=["TP202"]) == []


def test_the_new_branch_of_a_flag_defined_by_a_version_helper_is_still_checked(lint):
    code = ULTRALYTICS_FLAGS + f"if TORCH_2_4:\n    s = {OLD_CALL}\nt = {OLD_CALL} if TORCH_1_13 else 1\n"
    assert rows(lint, code, select=["TP202"]) == [7, 8]


def test_a_version_helper_called_in_the_condition_hides_both_branches(lint):
    # check_version's direction is not in its name: neither branch is reported.
    code = (f"import torch\nif check_version(torch.__version__, '2.4.0'):\n    s = {OLD_CALL}\n"
            f"else:\n    s = {OLD_CALL}\n")
    assert rows(lint, code, select=["TP202"]) == []


@pytest.mark.parametrize("definition", [
    "TORCH_1_13 = check_version(opencv_version, '1.13.0')",  # another package's version
    "TORCH_1_13 = check_file('1.13.0')",  # no version read at all
    "TORCH_1_13 = os.environ.get('X') == '1'",  # a user option named like a flag
])
def test_a_flag_named_for_a_release_but_defined_otherwise_is_no_check(lint, definition):
    code = f"import torch\nimport os\n{definition}\nif TORCH_1_13:\n    s = 1\nelse:\n    s = {OLD_CALL}\n"
    assert rows(lint, code, select=["TP202"]) == [7]


@pytest.mark.parametrize("flag", ["TORCH_2_4", "IS_TORCH_2_4", "_TORCH_GREATER_EQUAL_2_4", "TORCH_1_13"])
@pytest.mark.parametrize("use", [
    "if {flag}:\n    s = 1\nelse:\n    s = {old}\n",
    "s = 1 if {flag} else {old}\n",
])
def test_a_flag_imported_from_the_project_is_compatibility_code_in_every_form(lint, flag, use):
    code = f"import torch\nfrom .utils import {flag}\n" + use.format(flag=flag, old=OLD_CALL)
    assert rows(lint, code, select=["TP202"]) == []


_UNDIRECTED = ('import torch\nfrom ultralytics.utils.checks import check_version\n'
               'TORCH_VERSION = torch.__version__\n')


@pytest.mark.parametrize("body", [
    # if/else, ternary and early return of a check whose direction cannot be told: none is reported.
    '    if check_version(TORCH_VERSION, "2.4.0"):\n        return torch.amp.autocast("cuda")\n'
    '    else:\n        return torch.cuda.amp.autocast()\n',
    '    return torch.amp.autocast("cuda") if check_version(TORCH_VERSION, "2.4.0") else torch.cuda.amp.autocast()\n',
    '    if check_version(TORCH_VERSION, "2.4.0"):\n        return torch.amp.autocast("cuda")\n'
    '    return torch.cuda.amp.autocast()\n',
    '    if not check_version(TORCH_VERSION, "2.4.0"):\n        return torch.cuda.amp.autocast()\n'
    '    return torch.amp.autocast("cuda")\n',
])
def test_a_check_without_direction_hides_the_same_in_every_form(lint, body):
    result = lint(_UNDIRECTED + "def make():\n" + body)
    assert [f.code for f in result.findings] == []


def test_after_an_early_exit_on_old_releases_the_old_form_is_reported(lint):
    code = ('import torch\nfrom mylib.compat import TORCH_GE_2_4\ndef make():\n    if not TORCH_GE_2_4:\n'
            '        raise RuntimeError("needs 2.4")\n    return torch.cuda.amp.autocast()\n')
    assert [(f.code, f.row) for f in lint(code).findings] == [("TP202", 6)]
