"""Round 14, part d of issue #8's precision sample: what reading real packages showed, as synthetic
cases of the same shape (no package code)."""

from __future__ import annotations

import pytest

from precision_helpers import findings_of

# -- `from torch.distributed._composable.fsdp.fully_shard import fully_shard, MixedPrecisionPolicy` ---------
# (PiPPy's composability test.) The 2.4.1/2.5.1 submodule `_composable/fsdp/fully_shard.py` held all of FSDP2,
# `MixedPrecisionPolicy` included; the 2.6.0-2.15.0 one (the same file in every wheel) only re-exports
# `FSDPModule`, `UnshardHandle`, `fully_shard` and `register_fsdp_forward_method` from `torch.distributed.fsdp`.
# Importing another name from it raises ImportError from 2.6: "silently re-exports the public module" was wrong
# for that import. The package `torch.distributed._composable.fsdp` still has every name, and an import of the
# submodule's four names is the silent re-export the message describes.

_POLICY_FROM_THE_SUBMODULE = '''from torch.distributed._composable.fsdp.fully_shard import (
    fully_shard,
    MixedPrecisionPolicy,
)


def shard(model):
    return fully_shard(model, mp_policy=MixedPrecisionPolicy())
'''


def test_a_name_the_submodule_lost_is_reported_as_an_import_error(lint):
    [finding] = findings_of(lint, _POLICY_FROM_THE_SUBMODULE, "TP201", target="2.15", min_torch="2.4")
    assert "silently" not in finding.message
    assert "`MixedPrecisionPolicy` from it raises ImportError" in finding.message
    assert "from PyTorch 2.6" in finding.message
    assert "use `torch.distributed.fsdp`" in finding.message
    assert finding.fix is None  # the public path needs 2.6; the minimum is 2.4


def test_the_lost_names_are_named_and_the_kept_ones_are_not(lint):
    code = ("from torch.distributed._composable.fsdp.fully_shard import FSDPModule, OffloadPolicy, "
            "MixedPrecisionPolicy\n")
    [finding] = findings_of(lint, code, "TP201", target="2.15", min_torch="2.6")
    assert "importing `OffloadPolicy`, `MixedPrecisionPolicy` from it raises ImportError" in finding.message


@pytest.mark.parametrize("code", [
    "from torch.distributed._composable.fsdp.fully_shard import FSDPModule\n",
    "from torch.distributed._composable.fsdp.fully_shard import fully_shard, register_fsdp_forward_method\n",
    "from torch.distributed._composable.fsdp import fully_shard, MixedPrecisionPolicy\n",
])
def test_names_the_old_paths_still_hold_keep_the_re_export_message(lint, code):
    [finding] = findings_of(lint, code, "TP201", target="2.15", min_torch="2.4")
    assert "silently re-exports the public module of PyTorch 2.6" in finding.message
    assert "ImportError" not in finding.message


def test_before_2_6_nothing_is_reported(lint):
    assert findings_of(lint, _POLICY_FROM_THE_SUBMODULE, "TP201", target="2.5", min_torch="2.4") == []


@pytest.mark.torch
def test_real_torch_submodule_lacks_the_policy_but_the_package_has_it():
    torch = pytest.importorskip("torch")
    from packaging.version import Version

    if Version(torch.__version__.split("+")[0]) < Version("2.6"):
        pytest.skip("the submodule held every FSDP2 name before 2.6")
    pytest.importorskip("torch.distributed._composable.fsdp")
    import importlib

    submodule = importlib.import_module("torch.distributed._composable.fsdp.fully_shard")
    package = importlib.import_module("torch.distributed._composable.fsdp")
    assert not hasattr(submodule, "MixedPrecisionPolicy")
    assert package.MixedPrecisionPolicy is importlib.import_module("torch.distributed.fsdp").MixedPrecisionPolicy
    for name in ("FSDPModule", "UnshardHandle", "fully_shard", "register_fsdp_forward_method"):
        assert hasattr(submodule, name)
