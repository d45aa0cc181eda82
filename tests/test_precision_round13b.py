"""Round 13, part b of issue #8's precision sample (TransformerEngine, tensordict and torchchat snapshots):
each finding whose message was wrong for its call, read on real code, as a synthetic case of the same
shape (no package code)."""

from __future__ import annotations

import pytest

from precision_helpers import findings_of


# -- TP310: an object collective in the source rank's own branch only sends ----------------------------
# (tensordict's broadcast / scatter methods: ``rank = dist.get_rank(group=group)``, then
# ``if rank == src:`` calls ``broadcast_object_list([metadata], src=src, ...)`` and
# ``scatter_object_list(out, metas, src=src, ...)``, the ``else:`` branch the receiving calls. In the
# 2.4.1 and 2.15.0 wheels ``broadcast_object_list`` unpickles only where the rank is not the source, and
# ``scatter_object_list`` on the source unpickles only the share it pickled itself: the message said the
# source's call "unpickles objects from other ranks". Still a finding: every rank must pass the same
# ``weights_only=``.)

@pytest.mark.parametrize("source", [
    "import torch.distributed as dist\n\ndef share(meta, src, group=None):\n"
    "    rank = dist.get_rank(group=group)\n    if rank == src:\n"
    "        dist.broadcast_object_list([meta], src=src, group=group)\n    else:\n        box = [None]\n"
    "        dist.broadcast_object_list(box, src=src, group=group)\n",
    "import torch\n\ndef share(meta):\n    if torch.distributed.get_rank() == 0:\n"
    "        torch.distributed.broadcast_object_list([meta], 0)\n",
    "from torch import distributed as dist\n\ndef split(metas, src):\n    rank = dist.get_rank()\n"
    "    if src == rank:\n        out = [None]\n        dist.scatter_object_list(out, metas, src=src)\n"
    "        return out[0]\n",
])
def test_an_object_collective_in_the_source_branch_is_reported_as_sending(lint, source):
    found = findings_of(lint, source, "TP310", target="2.15", min_torch="2.4")
    assert found, "every rank must still pass weights_only="
    sender = found[0]
    assert "the source rank's branch" in sender.message
    assert "unpickles objects from other ranks" not in sender.message
    assert "(your minimum is 2.4)" in sender.message


@pytest.mark.parametrize("source", [
    # the receiving branch
    "import torch.distributed as dist\n\ndef share(meta, src):\n    rank = dist.get_rank()\n"
    "    if rank == src:\n        pass\n    else:\n        box = [None]\n        dist.broadcast_object_list(box, src=src)\n",
    # another source than the one the test names
    "import torch.distributed as dist\n\ndef share(meta, src, other):\n    rank = dist.get_rank()\n"
    "    if rank == other:\n        dist.broadcast_object_list([meta], src=src)\n",
    # the name compared is not the rank (rebound after get_rank, or never from get_rank)
    "import torch.distributed as dist\n\ndef share(meta, src, rank):\n    if rank == src:\n"
    "        dist.broadcast_object_list([meta], src=src)\n",
    "import torch.distributed as dist\n\ndef share(meta, src, step):\n    rank = dist.get_rank()\n"
    "    rank = step\n    if rank == src:\n        dist.broadcast_object_list([meta], src=src)\n",
    # not an equality test
    "import torch.distributed as dist\n\ndef share(meta, src):\n    if dist.get_rank() != src:\n"
    "        dist.broadcast_object_list([meta], src=src)\n",
    # a call that receives on every rank
    "import torch.distributed as dist\n\ndef share(out, meta):\n    if dist.get_rank() == 0:\n"
    "        dist.all_gather_object(out, meta)\n",
])
def test_other_object_collectives_keep_the_unpickling_message(lint, source):
    found = findings_of(lint, source, "TP310", target="2.15", min_torch="2.4")
    assert found
    assert all("unpickles objects from other ranks" in f.message for f in found)


# -- TP430: ``export_for_training`` first shipped in 2.5 ------------------------------------------------
# (torchchat export.py calls ``export_for_training(model, inputs, dynamic_shapes=...)``; the message said
# "your minimum is 2.4, where it is strict" and the fix "keep the 2.4-2.7 tracing", but the 2.4.1 wheel's
# torch/export/__init__.py has no export_for_training: 2.5.1-2.7.1 declare ``strict: bool = True``,
# 2.8.0-2.10.0 ``False``.)

def test_export_for_training_names_its_first_release(lint):
    source = ("from torch.export import export_for_training\n\n"
              "def lower(model, inputs):\n    return export_for_training(model, inputs, dynamic_shapes=None)\n")
    found = findings_of(lint, source, "TP430", target="2.15", min_torch="2.4")
    assert len(found) == 1
    assert "your minimum is 2.4, where it is strict" not in found[0].message
    assert "strict from its first release, 2.5, to 2.7" in found[0].message
    assert "2.5–2.7" in found[0].fix.message and "2.4" not in found[0].fix.message


@pytest.mark.parametrize(("min_torch", "said", "fix_said"), [
    ("2.6", "your minimum is 2.6, where it is strict", "2.6–2.7"),
    ("2.5", "your minimum is 2.5, where it is strict", "2.5–2.7"),
])
def test_export_for_training_above_its_first_release_names_the_minimum(lint, min_torch, said, fix_said):
    source = "import torch\nep = torch.export.export_for_training(model, (x,))\n"
    found = findings_of(lint, source, "TP430", target="2.15", min_torch=min_torch)
    assert len(found) == 1 and said in found[0].message and fix_said in found[0].fix.message


def test_export_keeps_its_message(lint):
    found = findings_of(lint, "import torch\nep = torch.export.export(model, (x,))\n", "TP430",
                        target="2.15", min_torch="2.4")
    assert len(found) == 1
    assert "your minimum is 2.4, where it is strict" in found[0].message
    assert "2.4–2.7" in found[0].fix.message


# -- TP100: a TorchFix code that torchpatch does not need may still be TorchFix's ----------------------
# (tensordict's tests: ``try: from torch import vmap`` / ``except ImportError: from functorch import vmap
# # noqa: TOR103``, and setup.cfg configures TorchFix codes for flake8. torchpatch's guards accept the
# fallback, so TP100 called the code unused and its *safe* fix removed it; flake8 with TorchFix 0.7.0 then
# reports TOR103 on that line.)

_TORCHFIX_FALLBACK = ("try:\n    from torch import vmap\nexcept ImportError:\n"
                      "    from functorch import vmap  # noqa: TOR103\n")


def test_an_unused_torchfix_code_is_reported_with_an_unsafe_fix_only(lint):
    found = findings_of(lint, _TORCHFIX_FALLBACK, "TP100", target="2.15", min_torch="2.4", select=["ALL"])
    assert len(found) == 1
    assert "TorchFix" in found[0].message
    assert found[0].fix is not None and found[0].fix.applicability == "unsafe"
    assert lint(_TORCHFIX_FALLBACK, fix=True, target="2.15", min_torch="2.4", select=["ALL"]).fixed_text in (
        None, _TORCHFIX_FALLBACK)


def test_an_unused_torchpatch_code_keeps_its_safe_fix(lint):
    found = findings_of(lint, "import torch\nx = torch.zeros(1)  # noqa: TP301\n", "TP100",
                        target="2.15", min_torch="2.4", select=["ALL"])
    assert len(found) == 1 and found[0].fix.applicability == "safe" and "TorchFix" not in found[0].message
