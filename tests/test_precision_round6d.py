"""Round 6, part d of issue #8's precision sample: each false finding (or wrong message) read on real
packages, as a synthetic case of the same shape (no package code)."""

from __future__ import annotations

import pytest


def _findings(lint, source: str, code: str, **options):
    result = lint(source, **options)
    assert result.error is None, result.error
    return [f for f in result.findings if f.code == code]


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
    assert _findings(lint, source, "TP600") == []


def test_pretrained_without_a_torchvision_check_is_still_reported(lint):
    source = ("from mypkg.utils import _TORCHVISION_AVAILABLE\nfrom torchvision.models import resnet50\n"
              "def build(flag):\n    if _TORCHVISION_AVAILABLE:\n        return resnet50(pretrained=flag)\n")
    assert len(_findings(lint, source, "TP600")) == 1


# -- TP301 with a restricted pickle module of the project's own (spandrel 0.4.2 loader) --------------

@pytest.mark.parametrize("value", ["RestrictedUnpickle", "self.safe_pickle", "mypkg.unpickler.Restricted"])
def test_tp301_custom_pickle_module_does_not_claim_full_pickle(lint, value):
    (finding,) = _findings(lint, f"import torch\nx = torch.load(p, map_location='cpu', pickle_module={value})\n",
                           "TP301")
    assert "custom `pickle_module`" in finding.message and "find_class" in finding.message
    assert "full pickle module" not in finding.message and finding.fix is None


@pytest.mark.parametrize("source", [
    "import torch, pickle\nx = torch.load(p, pickle_module=pickle)\n",
    "import torch, dill\nx = torch.load(p, 'cpu', dill)\n",
])
def test_tp301_full_unpicklers_keep_the_full_pickle_message(lint, source):
    (finding,) = _findings(lint, source, "TP301")
    assert "full pickle module" in finding.message


def test_tp301_pickle_module_none_is_torchs_default(lint):
    # pickle_module=None is what torch.load defaults to: the weights_only default changes at 2.6 as usual.
    (finding,) = _findings(lint, "import torch\nx = torch.load(p, pickle_module=None)\n", "TP301")
    assert "default became `weights_only=True` in PyTorch 2.6" in finding.message and finding.fix is not None
    assert _findings(lint, "import torch\nx = torch.load(p, pickle_module=None)\n", "TP301", min_torch="2.6") == []


# -- TP201 on ``torch.distributed._tensor.device_mesh`` (llm-foundry 0.22.0) --------------------------

def test_device_mesh_move_names_its_own_target_and_release(lint):
    source = "def mesh():\n    from torch.distributed._tensor.device_mesh import init_device_mesh\n    return init_device_mesh\n"
    (finding,) = _findings(lint, source, "TP201", min_torch="2.4")
    # torch.distributed.device_mesh has init_device_mesh in 2.4.1 already (the same object): safe at 2.4
    assert finding.fix.message == "Replace with `torch.distributed.device_mesh`"
    assert finding.fix.applicability == "safe"
    fixed = lint(source, fix=True, min_torch="2.4").fixed_text
    assert "from torch.distributed.device_mesh import init_device_mesh" in fixed


def test_dtensor_move_still_needs_2_5(lint):
    (finding,) = _findings(lint, "from torch.distributed._tensor import DTensor\n", "TP201", min_torch="2.4")
    assert finding.fix.message == "Replace with `torch.distributed.tensor` (needs PyTorch >= 2.5; your minimum is 2.4)"
    assert finding.fix.applicability == "unsafe"
