"""Hand-read precision cases for TP310: each false finding, wrong message or wrong fix
read on real code in the pre-registered rounds (bench/trust_samples/), as a synthetic case of the same
shape (no package code), grouped here by rule; the comment above each group names its round."""

from __future__ import annotations

import pytest

from precision_helpers import findings_of


# ---- round 6b -----------------------------------------------------------------------------------
# Issue 8, round 6, sample b (detectron2, pytorch3d, apex): mistakes found by reading real findings.


def test_object_collective_message_says_the_new_keyword_defaults_to_false(lint):
    """detectron2 utils/comm.py: "PyTorch 2.14 added `weights_only=True`" read like torch.load's 2.6 default
    change; the 2.14.1 and 2.15.0 signatures have ``weights_only: bool = False``."""
    code = "import torch.distributed as dist\ndist.all_gather_object(out, obj)\n"
    [finding] = lint(code, target="2.15", min_torch="2.4").findings
    assert finding.code == "TP310"
    assert "added `weights_only=` (default `False`" in finding.message


# ---- round 10a ----------------------------------------------------------------------------------
# Round 10, part a of issue #8's precision sample (the ``colossalai/`` library of a ColossalAI snapshot): each
# false finding (or wrong message, or missed finding) read on real code, as a synthetic case of the same shape
# (no package code).


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


# ---- round 13b ----------------------------------------------------------------------------------
# Round 13, part b of issue #8's precision sample (TransformerEngine, tensordict and torchchat snapshots): each
# finding whose message was wrong for its call, read on real code, as a synthetic case of the same shape (no
# package code).


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


# ---- round 14a ----------------------------------------------------------------------------------
# Round 14, part a of issue #8's precision sample (git snapshots of torchsnapshot and FBGEMM): no false finding
# among the 106. These pin the shapes read there that sit next to compatibility-looking code but are not guards,
# so a later widening of the guard recognition cannot silently drop them (synthetic code of the same shape, no
# package code).


# -- TP310 in a thin process-group wrapper whose guard is about the group, not the torch ----------------

def test_object_collective_in_a_group_wrapper_is_still_reported(lint):
    source = (
        "import torch.distributed as dist\n"
        "class Wrapper:\n"
        "    def broadcast_object_list(self, objs, src=0):\n"
        "        if self.pg is None:\n"
        "            return\n"
        "        dist.broadcast_object_list(objs, src=src, group=self.pg)\n"
    )
    findings = findings_of(lint, source, "TP310", target="2.15", min_torch="2.4")
    assert [f.row for f in findings] == [6]
    assert "2.14" in findings[0].message and findings[0].fix is None


# ---- round 14c ----------------------------------------------------------------------------------
# Round 14, part c of issue #8's precision sample: what reading real packages showed, as synthetic cases of the
# same shape (no package code). All 81 findings of the round were true, so nothing here pins a fix: these cases
# keep the shapes read in text-generation-inference, torcheval, higher and Pearl reported (and their fixes as
# read), so that a later precision fix elsewhere that grows too wide shows up here. Each claim was checked
# against the real wheels (see bench/trust_samples/README.md, sample14c).


def _rows(findings):
    return [f.row for f in findings]


# -- object collectives in a metric sync library --------------------------------------------------------------
# `all_gather_object`, `gather_object` and `broadcast_object_list` have no `weights_only` in 2.13.0 and
# `weights_only: bool = False` in 2.14.1 and 2.15.0: without it the receiving ranks unpickle with full pickle.

def test_object_collectives_of_a_sync_helper_are_reported(lint):
    code = (
        "import torch.distributed as dist\n\n"
        "def sync(state, group, dst):\n"
        "    me = dist.get_rank(group=group)\n"
        "    size = dist.get_world_size(group=group)\n"
        "    receives = dst is None or dst == me\n"
        "    out = [None] * size if receives else None\n"
        "    if dst is None:\n"
        "        dist.all_gather_object(out, state, group=group)\n"
        "    else:\n"
        "        dist.gather_object(state, out, dst=dst, group=group)\n"
        "    picked = [None]\n"
        "    dist.broadcast_object_list(picked, src=max(0, me), group=group)\n"
        "    return out, picked\n"
    )
    findings = findings_of(lint, code, "TP310", target="2.15", min_torch="2.4")
    assert _rows(findings) == [9, 11, 13]
    assert all(f.fix is None for f in findings)  # `weights_only=` does not exist before 2.14
