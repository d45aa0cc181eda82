"""Round 10, part a of issue #8's precision sample (the ``colossalai/`` library of a ColossalAI snapshot):
each false finding (or wrong message, or missed finding) read on real code, as a synthetic case of the
same shape (no package code)."""

from __future__ import annotations

import pytest

from precision_helpers import findings_of


# -- a legacy storage class's private ``_from_buffer``: torch's own non-warning path --------------------
# (ColossalAI utils/safetensors.py copies torch.distributed's ``_object_to_tensor``: pickle into a
# BytesIO, ``torch.ByteStorage._from_buffer(buf.getvalue())``, then ``torch.ByteTensor(storage)``.
# ``_from_buffer`` builds the storage with ``TypedStorage(..., _internal=True)`` in every wheel 2.4.1 …
# 2.15.0, so no deprecation warning is raised, and torch 2.15's own ``_object_to_tensor`` still calls it.)

@pytest.mark.parametrize("source", [
    "import io\nimport torch\n\ndef to_tensor(obj_bytes):\n"
    "    storage = torch.ByteStorage._from_buffer(obj_bytes)\n"
    "    return torch.ByteTensor(storage)\n",
    "import torch\nstorage = torch.TypedStorage._from_buffer(data, dtype=torch.uint8)\n",
    "from torch import ByteStorage\nstorage = ByteStorage._from_buffer(data)\n",
])
def test_the_private_from_buffer_of_a_storage_class_is_not_reported(lint, source):
    assert findings_of(lint, source, "TP223") == []


@pytest.mark.parametrize("source", [
    # the public ``from_buffer`` warns (TypedStorage.from_buffer calls _warn_typed_storage_removal)
    "import torch\nstorage = torch.ByteStorage.from_buffer(data)\n",
    # the class passed on as a value, then used who knows how
    "import torch\nmake = torch.ByteStorage\n",
    "import torch\nsize = torch.ByteStorage(4)._from_buffer\n",
])
def test_other_uses_of_a_storage_class_stay_reported(lint, source):
    assert len(findings_of(lint, source, "TP223")) == 1


@pytest.mark.torch
def test_from_buffer_warns_and_the_private_one_does_not():
    torch = pytest.importorskip("torch")
    import pickle
    import warnings

    data = pickle.dumps({"a": 1})
    torch.storage._reset_warn_typed_storage_removal()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.ByteTensor(torch.ByteStorage._from_buffer(data))
    assert not [w for w in caught if "TypedStorage is deprecated" in str(w.message)]
    torch.storage._reset_warn_typed_storage_removal()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.ByteStorage.from_buffer(data)
    assert [w for w in caught if "TypedStorage is deprecated" in str(w.message)]


# -- a call that only sends: the message must not say it unpickles ------------------------------------
# (ColossalAI checkpoint_io/utils.py: ``if rank == dst: dist.gather_object(meta, gathered, dst=...)``
# ``else: dist.gather_object(meta, dst=..., group=...)``. Without an ``object_gather_list`` the call can
# only run on a non-destination rank (2.4.1 … 2.15.0 raise ValueError on the destination), where it
# pickles and sends; it still has to pass ``weights_only=`` once the receiver does.)

@pytest.mark.parametrize("source", [
    "import torch.distributed as dist\n\ndef send_meta(meta, group):\n    dist.gather_object(meta, dst=0, group=group)\n",
    "import torch.distributed as dist\ndist.gather_object(meta, None, 0)\n",
    "import torch.distributed as dist\ndist.gather_object(meta, object_gather_list=None, dst=0)\n",
    "from torch.distributed import send_object_list\nsend_object_list([config], dst=1)\n",
])
def test_a_call_that_only_sends_is_reported_as_a_sender(lint, source):
    (finding,) = findings_of(lint, source, "TP310")
    assert "this call only sends" in finding.message
    assert "unpickles objects from other ranks" not in finding.message
    assert "your minimum is 2.4" in finding.message


@pytest.mark.parametrize("source", [
    "import torch.distributed as dist\ndist.gather_object(meta, gathered, dst=0)\n",
    "import torch.distributed as dist\ndist.gather_object(meta, gathered if rank == 0 else None, dst=0)\n",
    "import torch.distributed as dist\ndist.gather_object(meta, object_gather_list=out, dst=0)\n",
    "import torch.distributed as dist\ndist.broadcast_object_list(objects, src=0)\n",
    "import torch.distributed as dist\ndist.recv_object_list(objects, src=0)\n",
])
def test_a_call_that_may_receive_keeps_the_unpickling_message(lint, source):
    (finding,) = findings_of(lint, source, "TP310")
    assert "unpickles objects from other ranks" in finding.message


def test_a_sender_gets_the_same_unsafe_fix_from_2_14(lint):
    source = "import torch.distributed as dist\ndist.gather_object(meta, dst=0)\n"
    (finding,) = findings_of(lint, source, "TP310", min_torch="2.14")
    assert finding.fix is not None and "weights_only=True" in finding.fix.message
