"""Round 10, part b of issue #8's precision sample: what reading real packages showed, as synthetic
cases of the same shape (no package code)."""

from __future__ import annotations

import pytest

from precision_helpers import findings_of




# -- a type test against the old GradScaler subclass ------------------------------------------------------
# (mmf: the trainer builds `torch.cuda.amp.GradScaler(enabled=...)`, which TP202 safely rewrites to
# `torch.amp.GradScaler("cuda", ...)`, and two CUDA tests in other modules assert
# `isinstance(trainer.scaler, torch.cuda.amp.GradScaler)`.) The rewritten scaler is an instance of the
# base class only (2.4.1-2.15.0 torch/cuda/amp/grad_scaler.py subclasses torch.amp.GradScaler), so after
# `--fix` those tests fail; the finding on the type test must say so instead of only "the signature differs".

@pytest.mark.parametrize("test", [
    "isinstance(trainer.scaler, torch.cuda.amp.GradScaler)",
    "isinstance(trainer.scaler, (ShardedGradScaler, torch.cuda.amp.GradScaler))",
    "issubclass(type(trainer.scaler), torch.cuda.amp.GradScaler)",
])
def test_a_gradscaler_type_test_says_the_fixed_construction_no_longer_passes_it(lint, test):
    findings = findings_of(lint, f"import torch\nassert {test}\n", "TP202")
    assert len(findings) == 1
    message = findings[0].message
    assert 'a scaler built with `torch.amp.GradScaler("cuda", ...)`' in message
    assert "is not an instance of `torch.cuda.amp.GradScaler`" in message
    assert "the new signature differs" not in message
    assert findings[0].fix is None


def test_the_cpu_gradscaler_type_test_says_the_same(lint):
    findings = findings_of(lint, "import torch\nok = isinstance(s, torch.cpu.amp.GradScaler)\n", "TP203")
    assert len(findings) == 1
    assert "is not an instance of `torch.cpu.amp.GradScaler`" in findings[0].message


@pytest.mark.parametrize("code", [
    "import torch\nmake_scaler = torch.cuda.amp.GradScaler\n",  # a factory reference, not a type test
    "import torch\nok = isinstance(torch.cuda.amp.GradScaler, type)\n",  # the object, not the class argument
])
def test_other_gradscaler_references_keep_the_signature_note(lint, code):
    findings = findings_of(lint, code, "TP202")
    assert len(findings) == 1
    assert "the new signature differs" in findings[0].message
    assert "is not an instance of" not in findings[0].message


def test_the_construction_fix_is_unsafe(lint):
    # Decided in session 6: the fixed object is the base class, and mmf's type tests live in other files,
    # which a per-file linter cannot see, so blind `--fix` must not rewrite the construction.
    source = "import torch\nscaler = torch.cuda.amp.GradScaler(enabled=use_amp)\n"
    (finding,) = lint(source, min_torch="2.4").findings
    assert finding.fix.applicability == "unsafe"
    assert "isinstance(scaler, torch.cuda.amp.GradScaler)" in finding.fix.message
    assert lint(source, fix=True, min_torch="2.4").fixed_text == source
    fixed = lint(source, fix=True, unsafe_fixes=True, min_torch="2.4").fixed_text
    assert fixed == 'import torch\nscaler = torch.amp.GradScaler("cuda", enabled=use_amp)\n'


@pytest.mark.torch
def test_the_fixed_construction_is_not_an_instance_of_the_old_class():
    torch = pytest.importorskip("torch")
    scaler = torch.amp.GradScaler("cuda", enabled=False)
    assert isinstance(scaler, torch.amp.GradScaler)
    assert not isinstance(scaler, torch.cuda.amp.GradScaler)


# -- `from torch.nn.utils.weight_norm import weight_norm` ------------------------------------------------
# (mmf modules/decoders.py and layers.py.) The deprecated function's name is also the submodule that
# defines it, so the finding sits on the import's module path; the unsafe fix replaced the whole import
# statement with the bare new name (an expression), leaving `weight_norm` undefined (bench/fix_check.py:
# "new undefined names"). It must rewrite the import instead, or offer no fix.

@pytest.mark.parametrize(("line", "fixed"), [
    ("from torch.nn.utils.weight_norm import weight_norm",
     "from torch.nn.utils.parametrizations import weight_norm"),
    ("from torch.nn.utils.weight_norm import weight_norm as wn",
     "from torch.nn.utils.parametrizations import weight_norm as wn"),
])
def test_the_weight_norm_submodule_import_is_rewritten_not_dropped(lint, line, fixed):
    local = line.rpartition(" ")[2]
    code = f"import torch\n{line}\nfc = {local}(torch.nn.Linear(2, 2), dim=None)\n"
    findings = findings_of(lint, code, "TP201")
    assert len(findings) == 1 and findings[0].fix is not None
    result = lint(code, fix=True, unsafe_fixes=True, min_torch="2.4", select=["TP201"])
    assert result.fixed_text == f"import torch\n{fixed}\nfc = {local}(torch.nn.Linear(2, 2), dim=None)\n"


def test_a_weight_norm_submodule_import_of_other_names_gets_no_fix(lint):
    code = "import torch\nfrom torch.nn.utils.weight_norm import WeightNorm\nWeightNorm.apply(m, 'weight', 0)\n"
    findings = findings_of(lint, code, "TP201")
    assert len(findings) == 1
    assert findings[0].fix is None
