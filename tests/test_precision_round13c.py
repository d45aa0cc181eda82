"""Round 13, part c of issue #8's precision sample (ogb, openai jukebox with its vendored apex and
tensorboardX, and co-tracker snapshots): 119 findings read, none false, no wrong safe fix. These tests keep
shapes read there that sit next to compatibility-code detection or an unusual argument layout: each is a
true finding (or a fix) whose surroundings are *not* a torch version check, so a guard that hid it, or a fix
that moved an argument, would be a regression. Synthetic code of the same shape (no package code)."""

from __future__ import annotations

from precision_helpers import findings_of


# -- torch.norm in the try of a try/except TypeError fallback -------------------------------------------
# (apex's fp16 optimizer: the try calls torch.norm with dtype=, the except falls back for torch <= 1.0.1.
# The try runs on every 2.4+ release, so it is reported; the except body only runs where the try failed.)

def test_norm_in_the_try_of_an_old_torch_type_error_fallback_is_reported(lint):
    source = (
        "import torch\n"
        "def grad_norm(flat):\n"
        "    try:\n"
        "        n = float(torch.norm(flat, 2.0, dtype=torch.float32))\n"
        "    except TypeError:\n"
        "        n = float(torch.norm(flat.float(), 2.0))\n"
        "    return n\n"
    )
    found = findings_of(lint, source, "TP252", target="2.15", min_torch="2.4")
    assert [f.row for f in found] == [4]
    assert found[0].fix is not None and found[0].fix.applicability == "unsafe"
    fixed = lint(source, fix=True, unsafe_fixes=True, target="2.15", min_torch="2.4", select=["TP252"]).fixed_text
    # The positional order and dtype= are kept: torch.norm makes exactly this call for dense tensors.
    assert "torch.linalg.vector_norm(flat, 2.0, dtype=torch.float32)" in fixed
    assert "torch.norm(flat.float(), 2.0)" in fixed


# -- torch.load under a literal-False toggle the user flips ---------------------------------------------
# (jukebox notebook: "set to True to load the previous checkpoint" above an ``if False:`` block; a user
# switch, not a version check: when switched on, the load is a full pickle at the 2.4 minimum.)

def test_load_under_a_literal_false_user_toggle_is_reported(lint):
    source = (
        "import torch as t\n"
        "# Set to True to reload the saved codes:\n"
        "if False:\n"
        "    zs = t.load('codes.t')\n"
    )
    found = findings_of(lint, source, "TP301", target="2.15", min_torch="2.4")
    assert [f.row for f in found] == [4] and "2.6" in found[0].message


# -- torch.load with a positional second argument -----------------------------------------------------
# (ogb datasets pass a mode string in torch.load's second slot, which is map_location; the fix must add the
# keyword after it, not put anything in that slot.)

def test_load_with_a_positional_map_location_gets_the_keyword_after_it(lint):
    source = (
        "import torch\n"
        "def read(path):\n"
        "    return torch.load(path, 'rb')\n"
    )
    found = findings_of(lint, source, "TP301", target="2.15", min_torch="2.4")
    assert len(found) == 1 and found[0].fix is not None and found[0].fix.applicability == "unsafe"
    fixed = lint(source, fix=True, unsafe_fixes=True, target="2.15", min_torch="2.4", select=["TP301"]).fixed_text
    assert "torch.load(path, 'rb', weights_only=True)" in fixed


# -- torchvision's old pretrained flag passed by position ---------------------------------------------
# (tensorboardX demo: ``models.resnet18(False)``; torchvision 0.19.1's handle_legacy_interface maps a
# positional bool to the legacy flag and False to weights=None, so the safe fix writes exactly that.)

def test_positional_false_pretrained_flag_becomes_weights_none(lint):
    source = (
        "import torchvision.models as models\n"
        "net = models.resnet18(False)\n"
    )
    found = findings_of(lint, source, "TP600", target="2.15", min_torch="2.4")
    assert len(found) == 1 and found[0].fix is not None and found[0].fix.applicability == "safe"
    fixed = lint(source, fix=True, target="2.15", min_torch="2.4", select=["TP600"]).fixed_text
    assert fixed == "import torchvision.models as models\nnet = models.resnet18(weights=None)\n"


# -- a TorchScript call inside a with-block that is not a version check -------------------------------
# (tensorboardX graph(): the with uses a long-removed torch.onnx helper and a try/except RuntimeError that
# re-raises; neither selects a torch release, so torch.jit.trace inside is reported.)

def test_jit_trace_inside_a_with_and_reraising_try_is_reported(lint):
    source = (
        "import torch\n"
        "def graph(model, args):\n"
        "    with torch.onnx.select_model_mode_for_export(model, None):\n"
        "        try:\n"
        "            trace = torch.jit.trace(model, args)\n"
        "        except RuntimeError as e:\n"
        "            print(e)\n"
        "            raise e\n"
        "    return trace.graph\n"
    )
    found = findings_of(lint, source, "TP210", target="2.15", min_torch="2.4")
    assert [f.row for f in found] == [5] and "2.10" in found[0].message
