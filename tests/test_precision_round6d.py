"""Round 6, part d of issue #8's precision sample: each false finding (or wrong message) read on real
packages, as a synthetic case of the same shape (no package code)."""

from __future__ import annotations

import pytest

from precision_helpers import findings_of


# -- an old-torchvision branch is compatibility code (lightning-bolts 0.7.0 retinanet_module) --------

@pytest.mark.parametrize("source", [
    # the flag imported from the project's own utils: judged by its name
    "from mypkg.utils import _TORCHVISION_LESS_THAN_0_13\nfrom torchvision.models import resnet50\n"
    "def build(flag):\n    if _TORCHVISION_LESS_THAN_0_13:\n        return resnet50(pretrained=flag)\n"
    "    return resnet50(weights='DEFAULT' if flag else None)\n",
    # the flag defined in the file with lightning's compare_version
    "import operator\nfrom lightning_utilities.core.imports import compare_version\n"
    "from torchvision.models import resnet50\n"
    "OLD_TV = compare_version('torchvision', operator.lt, '0.13.0')\n"
    "def build(flag):\n    if OLD_TV:\n        return resnet50(pretrained=flag)\n"
    "    return resnet50(weights='DEFAULT' if flag else None)\n",
    # torchvision.__version__ compared directly
    "import torchvision\nfrom packaging.version import Version\nfrom torchvision.models import resnet50\n"
    "def build(flag):\n    if Version(torchvision.__version__) < Version('0.13'):\n"
    "        return resnet50(pretrained=flag)\n    return resnet50(weights='DEFAULT' if flag else None)\n",
])
def test_old_torchvision_branch_is_not_reported(lint, source):
    assert findings_of(lint, source, "TP600") == []


def test_pretrained_without_a_torchvision_check_is_still_reported(lint):
    source = ("from mypkg.utils import _TORCHVISION_AVAILABLE\nfrom torchvision.models import resnet50\n"
              "def build(flag):\n    if _TORCHVISION_AVAILABLE:\n        return resnet50(pretrained=flag)\n")
    assert len(findings_of(lint, source, "TP600")) == 1


# -- TP301 with a restricted pickle module of the project's own (spandrel 0.4.2 loader) --------------

@pytest.mark.parametrize("value", ["RestrictedUnpickle", "self.safe_pickle", "mypkg.unpickler.Restricted"])
def test_tp301_custom_pickle_module_does_not_claim_full_pickle(lint, value):
    (finding,) = findings_of(lint, f"import torch\nx = torch.load(p, map_location='cpu', pickle_module={value})\n",
                           "TP301")
    assert "custom `pickle_module`" in finding.message and "find_class" in finding.message
    assert "full pickle module" not in finding.message and finding.fix is None


@pytest.mark.parametrize("source", [
    "import torch, pickle\nx = torch.load(p, pickle_module=pickle)\n",
    "import torch, dill\nx = torch.load(p, 'cpu', dill)\n",
])
def test_tp301_full_unpicklers_keep_the_full_pickle_message(lint, source):
    (finding,) = findings_of(lint, source, "TP301")
    assert "full pickle module" in finding.message


def test_tp301_pickle_module_none_is_torchs_default(lint):
    # pickle_module=None is what torch.load defaults to: the weights_only default changes at 2.6 as usual.
    (finding,) = findings_of(lint, "import torch\nx = torch.load(p, pickle_module=None)\n", "TP301")
    assert "default became `weights_only=True` in PyTorch 2.6" in finding.message and finding.fix is not None
    assert findings_of(lint, "import torch\nx = torch.load(p, pickle_module=None)\n", "TP301", min_torch="2.6") == []


# -- TP201 on ``torch.distributed._tensor.device_mesh`` (llm-foundry 0.22.0) --------------------------

def test_device_mesh_move_names_its_own_target_and_release(lint):
    source = "def mesh():\n    from torch.distributed._tensor.device_mesh import init_device_mesh\n    return init_device_mesh\n"
    (finding,) = findings_of(lint, source, "TP201", min_torch="2.4")
    # torch.distributed.device_mesh has init_device_mesh in 2.4.1 already (the same object): safe at 2.4
    assert finding.fix.message == "Replace with `torch.distributed.device_mesh`"
    assert finding.fix.applicability == "safe"
    fixed = lint(source, fix=True, min_torch="2.4").fixed_text
    assert "from torch.distributed.device_mesh import init_device_mesh" in fixed


def test_dtensor_move_still_needs_2_5(lint):
    (finding,) = findings_of(lint, "from torch.distributed._tensor import DTensor\n", "TP201", min_torch="2.4")
    assert finding.fix.message == "Replace with `torch.distributed.tensor` (needs PyTorch >= 2.5; your minimum is 2.4)"
    assert finding.fix.applicability == "unsafe"


# -- TP101 under a flag that only an import of a module removed at the same release sets (torchtnt) --

_PROBE = ("import torch\n_EXPORT_UTILS_OK = True\ntry:\n    from torch.ao.quantization.pt2e.export_utils import model_is_exported\n"
          "except Exception:\n    _EXPORT_UTILS_OK = False\n")


@pytest.mark.parametrize("test", ["_EXPORT_UTILS_OK", "_EXPORT_UTILS_OK and model_is_exported(m)"])
def test_removed_api_under_the_flag_of_a_removed_probe_is_not_reported(lint, test):
    source = _PROBE + f"def switch(m):\n    if {test}:\n        return torch.ao.quantization.move_exported_model_to_train(m)\n    return m\n"
    rows = [f.start for f in findings_of(lint, source, "TP101")]
    assert len(rows) == 1  # the probe's own import (gone in 2.11) is still reported


@pytest.mark.parametrize("source", [
    # the else branch runs exactly where the probe failed
    _PROBE + "def switch(m):\n    if _EXPORT_UTILS_OK:\n        return m\n    else:\n        return torch.ao.quantization.move_exported_model_to_train(m)\n",
    # ``or`` does not need the flag
    _PROBE + "def switch(m, x):\n    if _EXPORT_UTILS_OK or x:\n        return torch.ao.quantization.move_exported_model_to_train(m)\n",
    # the flag is also set elsewhere
    _PROBE + "def enable():\n    global _EXPORT_UTILS_OK\n    _EXPORT_UTILS_OK = True\n"
             "def switch(m):\n    if _EXPORT_UTILS_OK:\n        return torch.ao.quantization.move_exported_model_to_train(m)\n",
    # the probe imports a module that stays (torch.export): it says nothing about the removed name
    "import torch\n_HAVE = True\ntry:\n    from torch.export import export\nexcept Exception:\n    _HAVE = False\n"
    "def switch(m):\n    if _HAVE:\n        return torch.ao.quantization.move_exported_model_to_train(m)\n",
])
def test_removed_api_without_such_a_probe_is_still_reported(lint, source):
    messages = [f.message for f in findings_of(lint, source, "TP101")]
    assert any("move_exported_model_to_train" in m for m in messages)
