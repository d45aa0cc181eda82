"""Minimal, complete fix edits (issue 8 §3, "Minimal edits"), each case a shape read on real code
(detectron2, pytorch3d): the JSON ``fix.edits`` taken together are exactly what ``--fix`` writes, an
import removal leaves no stray blank line, and a removed keyword never takes a user's comment along."""

from __future__ import annotations

import pytest

from torchpatch.engine import linter
from torchpatch.engine.source import Locator
from torchpatch.output.formats import finding_json
from torchpatch.rules import all_rules
from torchpatch.rules.base import Invalid, example_code, example_filename


def _fix(lint, code, unsafe=False, **options):
    result = lint(code, fix=True, unsafe_fixes=unsafe, **options)
    assert result.error is None, result.error
    return result


def _apply_json_edits(text: str, edits: list[dict]) -> str:
    """What a JSON consumer does: the union of the edits (an edit two findings share counts once), applied."""
    locator = Locator(text)
    spans = {(locator.offset(e["location"]["row"], e["location"]["column"] - 1),
              locator.offset(e["end_location"]["row"], e["end_location"]["column"] - 1), e["content"]) for e in edits}
    ordered = sorted(spans, key=lambda span: (span[0], span[1]))
    for (_, end, _), (start, _, _) in zip(ordered, ordered[1:]):
        assert end <= start, f"overlapping edits in the JSON: {ordered}"
    for start, end, content in reversed(ordered):
        text = text[:start] + content + text[end:]
    return text


def _json_union_matches_one_fix_pass(lint, monkeypatch, code: str, name: str = "snippet.py", **options) -> bool:
    """For safe-only and for unsafe fixes: the union of the JSON edits equals what one ``--fix`` pass writes.
    False when the fixes overlap (then ``--fix`` needs several passes and the comparison says nothing)."""
    checked = lint(code, name=name, **options)
    assert checked.error is None, checked.error
    with_fixes = [f for f in checked.findings if f.fix is not None]
    if not with_fixes:
        return False
    entries = [(f.fix.applicability, finding_json(f, checked)["fix"]["edits"]) for f in with_fixes]
    diagnostics = [linter.Diagnostic(f.code, f.name, f.message, f.start, f.end, f.fix) for f in with_fixes]
    if len(linter.select_fixes(diagnostics)) != len(diagnostics):
        return False
    monkeypatch.setattr(linter, "_MAX_FIX_ROUNDS", 1)
    for unsafe in (False, True):
        wanted = [e for applicability, edits in entries if unsafe or applicability == "safe" for e in edits]
        fixed = lint(code, name=name, fix=True, unsafe_fixes=unsafe, **options).fixed_text
        assert _apply_json_edits(code, wanted) == fixed, f"unsafe={unsafe}"
    return True


def _fixed_examples():
    for rule in all_rules():
        for number, example in enumerate(rule.INVALID):
            if isinstance(example, Invalid) and example.fixed and example_filename(example).endswith(".py"):
                options = {"select": ["ALL"]}
                if example.min_torch:
                    options["min_torch"] = example.min_torch
                if example.target_torch:
                    options["target"] = example.target_torch
                yield pytest.param(example_code(example), options, id=f"{rule.code}-{number}")


# -- 1. the JSON edits, taken together, are what --fix writes ---------------------------------------

#: detectron2 tests/layers/test_blocks.py and tests/modeling/test_model_e2e.py: one local import, two uses.
LOCAL_IMPORT_TWO_USES = (
    "import torch\n\n\nclass T:\n    def test_fp16(self):\n        from torch.cuda.amp import autocast\n\n"
    "        x = torch.ones(1)\n        with autocast():\n            y = x + 1\n\n        with autocast():\n"
    "            y = x + 2\n        return y\n")


def test_json_edits_remove_an_import_that_only_two_fixes_together_leave_unused(lint, monkeypatch, tmp_path, capsys):
    assert _json_union_matches_one_fix_pass(lint, monkeypatch, LOCAL_IMPORT_TWO_USES)
    fixed = _fix(lint, LOCAL_IMPORT_TWO_USES).fixed_text
    assert "from torch.cuda.amp" not in fixed


def test_the_shared_removal_is_in_one_finding_only_and_no_single_fix_applies_it(tmp_path, capsys):
    import json

    from torchpatch.frontends.cli import main
    path = tmp_path / "m.py"
    path.write_text(LOCAL_IMPORT_TWO_USES)
    assert main(["check", "--isolated", "--output-format", "json", str(path)]) == 1
    findings = json.loads(capsys.readouterr().out)
    removal = {"content": "", "location": {"row": 6, "column": 1}, "end_location": {"row": 8, "column": 1}}
    assert [removal in f["fix"]["edits"] for f in findings] == [False, True]
    # A single finding's own fix (what an editor's quick fix applies) keeps the import the other use needs.
    from torchpatch.engine.linter import apply_edits, check_file
    from torchpatch.engine.settings import Settings
    for finding in check_file(path, Settings()).findings:
        assert "from torch.cuda.amp import autocast" in apply_edits(LOCAL_IMPORT_TWO_USES, finding.fix.edits)


@pytest.mark.parametrize("code", [
    LOCAL_IMPORT_TWO_USES,
    # a module-level import, three uses, one of them in another function (all three fixes safe)
    "from torch.cuda.amp import autocast, custom_fwd\n\n\ndef f():\n    with autocast():\n        pass\n\n\n"
    "@custom_fwd\ndef g(ctx, x):\n    with autocast():\n        return x\n",
    # one use with a safe fix, one with an unsafe fix: safe-only --fix keeps the import
    "import torch\nfrom torch.cuda.amp import autocast\n\nwith autocast():\n    pass\nctx = autocast(**options)\n",
    # the import is noqa'd away from one use: that use keeps it
    "from torch.cuda.amp import autocast\n\nwith autocast():\n    pass\nwith autocast():  # noqa: TP202\n    pass\n",
])
def test_json_edits_equal_one_fix_pass_for_shared_imports(lint, monkeypatch, code):
    assert _json_union_matches_one_fix_pass(lint, monkeypatch, code)


@pytest.mark.parametrize("code, options", list(_fixed_examples()))
def test_json_edits_equal_one_fix_pass_for_every_rule_example(lint, monkeypatch, code, options):
    _json_union_matches_one_fix_pass(lint, monkeypatch, code, **options)


def test_a_rewritten_module_path_in_a_new_import_is_not_a_use_of_the_old_name(lint, monkeypatch):
    # TP201: ``functorch.grad`` becomes ``from torch.func import grad``: the ``import functorch`` it
    # leaves unused goes in the same edits, not only in a second --fix pass.
    code = "import torch\nimport functorch\ndf = functorch.grad(f)(x)\n"
    assert _json_union_matches_one_fix_pass(lint, monkeypatch, code, select=["TP201"])
    (finding,) = lint(code, select=["TP201"]).findings
    assert any(edit.start == len("import torch\n") and edit.content == "" for edit in finding.fix.edits)


# -- 2. an import removal leaves no stray blank line ------------------------------------------------

@pytest.mark.parametrize("before, after", [
    # detectron2 engine/train_loop.py: the import opens the block, a blank line follows it
    ("import torch\n\n\ndef f(grad_scaler=None):\n    if grad_scaler is None:\n        from torch.cuda.amp import GradScaler\n\n"
     "        grad_scaler = GradScaler()\n    return grad_scaler\n",
     'import torch\n\n\ndef f(grad_scaler=None):\n    if grad_scaler is None:\n        grad_scaler = torch.amp.GradScaler("cuda")\n'
     "    return grad_scaler\n"),
    # several blank lines, then a comment: the comment now opens the block
    ("import torch\n\n\ndef f():\n    from torch.cuda.amp import GradScaler\n\n\n    # the scaler\n    return GradScaler()\n",
     'import torch\n\n\ndef f():\n    # the scaler\n    return torch.amp.GradScaler("cuda")\n'),
    # a trailing comment goes with its import's line
    ("import torch\n\n\ndef f():\n    from torch.cuda.amp import GradScaler  # old API\n\n    return GradScaler()\n",
     'import torch\n\n\ndef f():\n    return torch.amp.GradScaler("cuda")\n'),
    # after other code: the blank line separates that code from what follows, and stays
    ("import torch\n\n\ndef f():\n    x = 1\n    from torch.cuda.amp import GradScaler\n\n    return GradScaler(), x\n",
     'import torch\n\n\ndef f():\n    x = 1\n\n    return torch.amp.GradScaler("cuda"), x\n'),
    # after a docstring: the same
    ('import torch\n\n\ndef f():\n    """Doc."""\n    from torch.cuda.amp import GradScaler\n\n    return GradScaler()\n',
     'import torch\n\n\ndef f():\n    """Doc."""\n\n    return torch.amp.GradScaler("cuda")\n'),
    # a comment above the import stays, and so does the blank line under it
    ("import torch\n\n\ndef f():\n    # setup\n    from torch.cuda.amp import GradScaler\n\n    return GradScaler()\n",
     'import torch\n\n\ndef f():\n    # setup\n\n    return torch.amp.GradScaler("cuda")\n'),
    # between blank lines: one of them goes
    ("import torch\n\n\ndef f():\n    x = 1\n\n    from torch.cuda.amp import GradScaler\n\n    return GradScaler(), x\n",
     'import torch\n\n\ndef f():\n    x = 1\n\n    return torch.amp.GradScaler("cuda"), x\n'),
    # two imports that both go, a blank line between them, at the top of a block
    ("import torch\n\n\ndef f():\n    from torch.cuda.amp import GradScaler\n\n    from torch.cuda.amp import autocast\n\n"
     "    with autocast():\n        return GradScaler()\n",
     'import torch\n\n\ndef f():\n    with torch.amp.autocast("cuda", dtype=torch.float16):\n        return torch.amp.GradScaler("cuda")\n'),
])
def test_import_removal_reads_as_if_the_import_was_never_there(lint, monkeypatch, before, after):
    # GradScaler's construction fix is unsafe (it builds the base class): the edits are what is tested here
    assert _fix(lint, before, unsafe=True).fixed_text == after
    _json_union_matches_one_fix_pass(lint, monkeypatch, before)


def test_a_block_whose_imports_all_go_keeps_a_pass(lint):
    code = ("import torch\n\n\ndef f():\n    try:\n        from torch.cuda.amp import GradScaler\n"
            "        from torch.cuda.amp import autocast\n    except ImportError:\n        return None\n"
            "    return torch.ones(1)\n")
    # Nothing uses the names: only a fix that made them obsolete removes them, so nothing changes here.
    assert _fix(lint, code).fixed_text == code
    from pathlib import Path
    fixed = linter.remove_unused_imports(code, Path("m.py"), {"GradScaler", "autocast"})
    assert fixed == ("import torch\n\n\ndef f():\n    try:\n        pass\n    except ImportError:\n        return None\n"
                     "    return torch.ones(1)\n")


# -- 3. a removed keyword never takes a user's comment along ----------------------------------------

#: pytorch3d projects/implicitron_trainer/impl/optimizer_factory.py: a type-checker comment above the keyword.
PYREFLY = ("import torch\nscheduler = torch.optim.lr_scheduler.LambdaLR(\n    optimizer,\n    lambda epoch: 0.5 ** epoch,\n"
           "    # pyrefly: ignore [unexpected-keyword]\n    verbose=False,\n)\n")


@pytest.mark.parametrize("before, after", [
    (PYREFLY, PYREFLY.replace("    verbose=False,\n", "")),
    # the last argument without a trailing comma: the comma before it goes, the comment line stays
    ("import torch\ns = torch.optim.lr_scheduler.StepLR(\n    opt,\n    10,  # every ten epochs\n    # quiet\n    verbose=False\n)\n",
     "import torch\ns = torch.optim.lr_scheduler.StepLR(\n    opt,\n    10  # every ten epochs\n    # quiet\n)\n"),
    # a comment at the end of the keyword's own line goes with it; the next argument's comment line stays
    ("import torch\ns = torch.optim.lr_scheduler.StepLR(\n    opt,\n    verbose=False,  # noisy\n    # decay\n    gamma=0.5,\n)\n",
     "import torch\ns = torch.optim.lr_scheduler.StepLR(\n    opt,\n    # decay\n    gamma=0.5,\n)\n"),
    # the previous argument's trailing comment stays
    ("import torch\ns = torch.optim.lr_scheduler.StepLR(opt,  # the optimizer\n                                    verbose=False)\n",
     "import torch\ns = torch.optim.lr_scheduler.StepLR(opt  # the optimizer\n                                    )\n"),
    # a comment after the comma that ends the line belongs to the line, not only to the keyword
    ("import torch\ns = torch.optim.lr_scheduler.StepLR(opt, 10, verbose=False,  # see below\n                                    gamma=0.5)\n",
     "import torch\ns = torch.optim.lr_scheduler.StepLR(opt, 10,  # see below\n                                    gamma=0.5)\n"),
    # one line: as before
    ("import torch\ns = torch.optim.lr_scheduler.StepLR(opt, 10, verbose=False, gamma=0.5)\n",
     "import torch\ns = torch.optim.lr_scheduler.StepLR(opt, 10, gamma=0.5)\n"),
    ("import torch\ns = torch.optim.lr_scheduler.StepLR((opt), verbose=False)\n",
     "import torch\ns = torch.optim.lr_scheduler.StepLR((opt))\n"),
])
def test_removed_keyword_keeps_the_comments_around_it(lint, before, after):
    assert _fix(lint, before, select=["TP111"]).fixed_text == after


@pytest.mark.parametrize("before, after, code", [
    # every rule that drops an argument uses the same removal (rules/_helpers.py remove_argument)
    ("import torch\nwith torch.profiler.profile(\n    activities=acts,\n    # legacy flag\n    use_cuda=True,\n) as prof:\n    step()\n",
     "import torch\nwith torch.profiler.profile(\n    activities=acts,\n    # legacy flag\n) as prof:\n    step()\n", "TP112"),
    ("import torch\nmodel = torch.nn.parallel.DistributedDataParallel(\n    model,\n    device_ids=[rank],\n"
     "    # the default\n    broadcast_buffers=True,\n)\n",
     "import torch\nmodel = torch.nn.parallel.DistributedDataParallel(\n    model,\n    device_ids=[rank],\n"
     "    # the default\n)\n", "TP230"),
    ('from torch.utils.data import DataLoader\nloader = DataLoader(\n    ds,\n    pin_memory=True,\n    # for CUDA\n'
     '    pin_memory_device="cuda",\n)\n',
     'from torch.utils.data import DataLoader\nloader = DataLoader(\n    ds,\n    pin_memory=True,\n    # for CUDA\n)\n', "TP231"),
])
def test_every_argument_removal_keeps_comment_lines(lint, before, after, code):
    result = _fix(lint, before, unsafe=True, select=[code])
    assert result.fixed_text == after


def test_a_lone_keyword_on_its_own_line_leaves_empty_parentheses(lint):
    code = "import torch\ns = torch.optim.lr_scheduler.ExponentialLR(\n    verbose=False,\n)\n"
    # (not valid for the scheduler, but the shape is what matters: no dangling layout)
    assert _fix(lint, code, select=["TP111"]).fixed_text == "import torch\ns = torch.optim.lr_scheduler.ExponentialLR()\n"


@pytest.mark.parametrize("before, after", [
    # TP435 drops a list element with the same removal: the comment lines stay
    ('from torch.utils.cpp_extension import CUDAExtension\next = CUDAExtension("e", ["e.cu"], extra_compile_args={"cxx": [\n'
     '    "-O3",\n    # the standard our code needs\n    "-std=c++17",\n]})\n',
     'from torch.utils.cpp_extension import CUDAExtension\next = CUDAExtension("e", ["e.cu"], extra_compile_args={"cxx": [\n'
     '    "-O3",\n    # the standard our code needs\n]})\n'),
    ('from torch.utils.cpp_extension import CUDAExtension\next = CUDAExtension("e", ["e.cu"], extra_compile_args={"cxx": [\n'
     '    "-O3",  # fast\n    "-std=c++17"\n]})\n',
     'from torch.utils.cpp_extension import CUDAExtension\next = CUDAExtension("e", ["e.cu"], extra_compile_args={"cxx": [\n'
     '    "-O3"  # fast\n]})\n'),
])
def test_list_element_removal_keeps_comment_lines(lint, before, after):
    assert _fix(lint, before, unsafe=True, select=["TP435"]).fixed_text == after


def test_a_two_element_tuple_of_flags_gets_no_fix_that_would_make_it_a_string(lint):
    code = 'from torch.utils.cpp_extension import CppExtension\next = CppExtension("e", ["e.cpp"], extra_compile_args=("-O3", "-std=c++17"))\n'
    result = _fix(lint, code, unsafe=True, select=["TP435"])
    assert [f.code for f in result.findings] == ["TP435"] and result.fixed_text == code


# -- names in the file's own style -------------------------------------------------------------------

@pytest.mark.parametrize("before, after", [
    # allennlp modules/vision/grid_embedder.py: the call spells the module; the enum lives there too
    ("import torchvision\nm = torchvision.models.detection.fasterrcnn_resnet50_fpn(pretrained=True)\n",
     "import torchvision\nm = torchvision.models.detection.fasterrcnn_resnet50_fpn("
     "weights=torchvision.models.detection.FasterRCNN_ResNet50_FPN_Weights.COCO_V1)\n"),
    ("import torchvision.models as tvm\nm = tvm.resnet.resnet50(pretrained=True)\n",
     "import torchvision.models as tvm\nm = tvm.resnet.resnet50(weights=tvm.resnet.ResNet50_Weights.IMAGENET1K_V1)\n"),
])
def test_torchvision_weights_use_the_calls_own_module_prefix(lint, before, after):
    assert _fix(lint, before, select=["TP600"]).fixed_text == after


def test_crlf_files_get_the_same_minimal_edits(lint):
    removal = ("import torch\n\n\ndef f(grad_scaler=None):\n    if grad_scaler is None:\n        from torch.cuda.amp import GradScaler\n\n"
               "        grad_scaler = GradScaler()\n    return grad_scaler\n")
    fixed = _fix(lint, removal.replace("\n", "\r\n"), unsafe=True).fixed_text
    assert fixed == _fix(lint, removal, unsafe=True).fixed_text.replace("\n", "\r\n")
    assert "None:\r\n        grad_scaler = torch.amp.GradScaler" in fixed
    keyword = _fix(lint, PYREFLY.replace("\n", "\r\n"), select=["TP111"]).fixed_text
    assert keyword == PYREFLY.replace("    verbose=False,\n", "").replace("\n", "\r\n")


def test_two_shared_imports_each_go_with_their_own_group(lint, monkeypatch):
    # autocast is shared by the first two uses, GradScaler by the last two: each removal rides on the last
    # fix of its group, and --fix applies it only with every fix of that group.
    code = ("from torch.cuda.amp import autocast\nfrom torch.cuda.amp import GradScaler\n\n\ndef f():\n"
            "    with autocast():\n        pass\n    with autocast():\n        s = GradScaler()\n    return s, GradScaler()\n")
    assert _json_union_matches_one_fix_pass(lint, monkeypatch, code)
    fixed = _fix(lint, code, unsafe=True).fixed_text
    assert "torch.cuda.amp" not in fixed


def test_an_enum_member_of_a_renamed_object_is_fixed_safely(lint):
    # apex examples/imagenet/main_amp.py: ``dist.all_reduce(rt, op=dist.reduce_op.SUM)``; `reduce_op.SUM` is
    # `ReduceOp.SUM` (the same object on 2.13), so the rename is safe although `reduce_op` itself is not called.
    code = "import torch.distributed as dist\ndist.all_reduce(rt, op=dist.reduce_op.SUM)\n"
    assert lint(code, select=["TP201"], fix=True).fixed_text == \
        "import torch.distributed as dist\ndist.all_reduce(rt, op=dist.ReduceOp.SUM)\n"
    handed_around = "import torch.distributed as dist\nops = dist.reduce_op\n"
    (finding,) = lint(handed_around, select=["TP201"]).findings
    assert finding.fix is None or finding.fix.applicability != "safe"
