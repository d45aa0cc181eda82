"""Hand-read recall case of round 15 (bench/trust_samples/recall15a.tsv) for TP230 ddp-broadcast-buffers:
torchrec's test_fp_embeddingbag.py calls the composable ``replicate(..., broadcast_buffers=False)``, which hands
its keywords to ``DistributedDataParallel`` (2.4.1 and 2.13 _composable/replicate.py), so 2.13 warns there."""

from __future__ import annotations

from precision_helpers import findings_of


def test_replicate_forwards_broadcast_buffers_to_ddp(lint):
    source = ("import torch\nfrom torch.distributed._composable.replicate import replicate\n\n"
              "def wrap(m, pg):\n    replicate(m, process_group=pg, broadcast_buffers=False)\n")
    [finding] = findings_of(lint, source, "TP230")
    assert finding.fix is not None and finding.fix.applicability == "unsafe"


def test_replicate_true_is_dropped_safely_and_positional_arguments_are_not_ddps(lint):
    source = ("import torch\nfrom torch.distributed._composable import replicate\n\n"
              "def wrap(m, pg):\n    replicate(m, pg, broadcast_buffers=True)\n    replicate(m, None, 0, 0, False)\n")
    [finding] = findings_of(lint, source, "TP230")
    assert finding.row == 5
    assert "replicate(m, pg)\n" in lint(source, fix=True).fixed_text
