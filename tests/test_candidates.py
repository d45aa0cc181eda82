"""The walker skips mentions of torch whose chains reach no watched name (engine/candidates.py): that
filter must never hide a finding. Every rule example, fixture and tricky chain is checked twice, with
the filter and with every mention walked, and the results must be the same to the byte."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

import torchpatch.engine.linter as linter
from torchpatch.engine.candidates import watched_mentions
from torchpatch.engine.checker import check_tree, nothing_to_check
from torchpatch.rules import all_rules
from torchpatch.engine.settings import Settings
from torchpatch.rules.base import Invalid, example_code, example_filename
from torchpatch.versions import Version

ROOT = Path(__file__).resolve().parent.parent


def make_settings(select: list[str], target: str | None = None, min_torch: str | None = None) -> Settings:
    settings = Settings()
    settings.select = select
    if target:
        settings.target = Version.parse(target)
    if min_torch:
        settings.min_torch = Version.parse(min_torch)
    return settings


def _results(path: Path, code: str, every_mention: bool, monkeypatch, **options):
    """Findings (with their fixes) and the text after every fix, with or without the filter."""
    path.write_text(code, encoding="utf-8", newline="")
    monkeypatch.setattr(linter, "check_tree", functools.partial(check_tree, every_mention=every_mention))
    if every_mention:  # the tree of every file, not the text's verdict
        monkeypatch.setattr(linter, "nothing_to_check", lambda *arguments: False)
    settings = make_settings(select=["ALL"], **options)
    found = linter.check_file(path, settings)
    fixed = linter.check_file(path, make_settings(select=["ALL"], **options), fix=True, unsafe_fixes=True)
    monkeypatch.setattr(linter, "check_tree", check_tree)
    monkeypatch.setattr(linter, "nothing_to_check", nothing_to_check)

    def shown(result):
        return [(f.code, f.row, f.column, f.end_row, f.end_column, f.message,
                 None if f.fix is None else (f.fix.message, f.fix.applicability, tuple(f.fix.edits)))
                for f in result.findings]

    return found.error, shown(found), fixed.fixed_text, shown(fixed)


def _assert_same(tmp_path, monkeypatch, code: str, name: str = "snippet.py", **options):
    path = tmp_path / name
    walked = _results(path, code, True, monkeypatch, **options)
    filtered = _results(path, code, False, monkeypatch, **options)
    assert filtered == walked
    return filtered


def _examples():
    for rule in all_rules():
        for kind in ("VALID", "INVALID"):
            for number, example in enumerate(getattr(rule, kind)):
                texts = [example_code(example)]
                if isinstance(example, Invalid) and example.fixed:
                    texts.append(example_code(example.fixed))
                options = {key: getattr(example, attribute) for key, attribute in (("target", "target_torch"), ("min_torch", "min_torch"))
                           if getattr(example, attribute, None)}
                for variant, text in enumerate(texts):
                    yield pytest.param(text, example_filename(example), options,
                                       id=f"{rule.code}-{kind.lower()}{number}{'-fixed' if variant else ''}")


@pytest.mark.parametrize("code, name, options", list(_examples()))
def test_rule_examples_same_with_and_without_the_filter(tmp_path, monkeypatch, code, name, options):
    _assert_same(tmp_path, monkeypatch, code, name, **options)


def test_every_invalid_example_is_still_flagged_through_the_filter(tmp_path, monkeypatch):
    missed = []
    for rule in all_rules():
        for number, example in enumerate(rule.INVALID):
            options = {key: getattr(example, attribute) for key, attribute in (("target", "target_torch"), ("min_torch", "min_torch"))
                       if getattr(example, attribute, None)}
            _, findings, _, _ = _results(tmp_path / example_filename(example), example_code(example), False, monkeypatch, **options)
            if rule.code not in [f[0] for f in findings]:
                missed.append(f"{rule.code} invalid{number}")
    assert missed == []


@pytest.mark.parametrize("path", sorted([*(ROOT / "tests" / "fixtures").rglob("*.py"), *(ROOT / "examples").rglob("*.py"),
                                         *(ROOT / "examples").rglob("*.ipynb")]), ids=lambda p: p.name)
def test_fixture_files_same_with_and_without_the_filter(tmp_path, monkeypatch, path):
    _assert_same(tmp_path, monkeypatch, path.read_text(encoding="utf-8"), path.name)


# Chains the text reader must follow, or keep, for the findings to stay: each is flagged.
TRICKY = {
    "alias module": ("import torch as t\nt.load('m.pt')\n", "TP301"),
    "from import of the module": ("from torch import cuda\nwith cuda.amp.autocast():\n    pass\n", "TP202"),
    "assigned alias": ("import torch\nfn = torch.load\nfn('m.pt')\n", "TP301"),
    "alias of an alias": ("import torch\nmodule = torch.cuda\namp = module.amp\nwith amp.autocast():\n    pass\n", "TP202"),
    "parenthesized chain": ("import torch\n(torch).load('m.pt')\n", "TP301"),
    "parenthesized prefix": ("import torch\n(torch.cuda).amp.autocast()\n", "TP202"),
    "nested parentheses": ("import torch\n((torch . cuda)\n ).amp.autocast()\n", "TP202"),
    "chain across lines": ("import torch\nx = (torch\n     .load('m.pt'))\n", "TP301"),
    "comment inside the chain": ("import torch\nx = (torch.  # the loader\n     load('m.pt'))\n", "TP301"),
    "line continuation": ("import torch\nx = torch \\\n    .load('m.pt')\n", "TP301"),
    "spaces around dots": ("import torch\nx = torch . load ( 'm.pt' )\n", "TP301"),
    "function-local import": ("def f():\n    from torch import load\n    return load('m.pt')\n", "TP301"),
    "import in a nested body": ("def f():\n    if True:\n        import torch.cuda.amp\n        torch.cuda.amp.autocast()\n", "TP202"),
    "a body holding only an import": ("def f():\n    from torch.distributed.checkpoint._hf_storage import _HuggingFaceStorageReader\n", "TP104"),
    "shadowed then rebound": ("import torch\ntorch = None\nimport torch as torch\ntorch.load('m.pt')\n", "TP301"),
    "non-ASCII attribute": ("import torch\ntorch.\uff4c\uff4f\uff41\uff44('m.pt')\n", "TP301"),
    "star import then module": ("from torch.cuda.amp import *\nimport torch\ntorch.cuda.amp.autocast()\n", "TP202"),
    "comment before the closing parenthesis": ("import torch\nx = (torch.cuda  # old\n     ).amp.autocast()\n", "TP202"),
}


@pytest.mark.parametrize("name", list(TRICKY))
def test_tricky_chains_are_flagged_and_same(tmp_path, monkeypatch, name):
    code, expected = TRICKY[name]
    _, findings, _, _ = _assert_same(tmp_path, monkeypatch, code, min_torch="2.4")
    assert expected in [f[0] for f in findings], findings


def test_notebook_same_with_and_without_the_filter(tmp_path, monkeypatch):
    import json

    notebook = {"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                           "source": ["import torch as t\n", "%matplotlib inline\n"]},
                          {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                           "source": ["x = t.nn.Linear(2, 2)\n", "state = t.load('m.pt')\n"]}],
                "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    _, findings, _, _ = _assert_same(tmp_path, monkeypatch, json.dumps(notebook), "train.ipynb")
    assert "TP301" in [f[0] for f in findings]


# -- the text reader itself --------------------------------------------------------------------------------

WATCHED = frozenset({"torch.load", "torch.cuda.amp.autocast"})
PREFIXES = frozenset({"torch", "torch.load", "torch.cuda", "torch.cuda.amp", "torch.cuda.amp.autocast"})


def _kept(text: str, bound=None) -> list[str]:
    offsets = watched_mentions(text, bound or {"torch": {"torch"}}, WATCHED, PREFIXES)
    return [text[offset:text.find("\n", offset)] for offset in offsets]


def test_reader_drops_chains_that_leave_every_watched_name():
    assert _kept("x = torch.cat(a)\ny = torch.cuda.is_available()\nz = torch.nn\n") == []


def test_reader_keeps_chains_that_reach_a_watched_name():
    assert _kept("x = torch.load(p)\nwith torch.cuda.amp.autocast():\n") == ["torch.load(p)", "torch.cuda.amp.autocast():"]


def test_reader_keeps_a_live_prefix_before_a_closing_parenthesis_and_a_dot():
    assert _kept("x = (torch.cuda).amp\n") == ["torch.cuda).amp"]
    assert _kept("x = f(torch.cuda)\ny = (torch.cuda)[0]\n") == []


def test_reader_keeps_every_mention_of_a_name_bound_to_a_watched_name():
    assert _kept("load(p)\nx = load\n", {"load": {"torch.load"}}) == ["load(p)", "load"]


def test_reader_skips_names_bound_to_nothing_watched_starts_with():
    assert _kept("F.softmax(x)\nF.load\n", {"F": {"torch.nn.functional"}}) == []


def test_reader_needs_whole_identifiers():
    assert _kept("mytorch.load(p)\ntorch_load(p)\n") == []


def test_reader_word_boundaries_are_those_of_word_offsets_of():
    # The regex pass finds a mention where ``\w`` does not match next to it; word_offsets_of (and so the
    # walker's rows) where the neighbour is neither alphanumeric nor ``_``: the same characters.
    import re

    word = re.compile(r"\w")
    for code in [*range(0x3000), *range(0xFF00, 0xFFF0), 0x1D400, 0x1D7CE, 0x10FFFF]:
        character = chr(code)
        assert bool(word.match(character)) == (character.isalnum() or character == "_"), hex(code)
    text = "torch.load(a)\n\u00e9torch.load(b)\ntorch\u00e9.load(c)\n\u0661torch.load(d)\n\u00b7torch.load(e)\ntorch.load"
    expected = [0, text.index("\u00b7torch") + 1, len(text) - len("torch.load")]
    assert watched_mentions(text, {"torch": {"torch"}}, WATCHED, PREFIXES) == expected


def test_reader_follows_each_written_chain_as_the_gap_reader_does():
    # The same chain written many times, with and without gaps after its parts, and non-ASCII parts.
    text = ("torch.cuda.amp.autocast()\ntorch.cuda .amp.autocast()\ntorch.cuda.amp\n.autocast()\ntorch.cuda.is_available()\n"
            "torch.cuda\ntorch.cuda.amp.autocast()\n(torch.cuda\n).amp\ntorch.\uff4c\uff4f\uff41\uff44(p)\ntorch .load\n"
            "torch.1\ntorch.cuda.amp.other\ntorch.cuda.")
    assert _kept(text) == ["torch.cuda.amp.autocast()", "torch.cuda .amp.autocast()", "torch.cuda.amp", "torch.cuda.amp.autocast()",
                           "torch.cuda", "torch.\uff4c\uff4f\uff41\uff44(p)", "torch .load"]


# -- files not walked at all (candidates.nothing_to_walk): pass 1 is skipped when the walker would visit
# nothing but imports no rule watches. Each case below is one way the walker still sees something there; the
# skip must notice it (each is flagged, and the same as with every mention walked, which never skips).

SKIP_EDGES = {
    "a statement after the import on its row": ("import torch; torch.load('m.pt')\n", "TP301"),
    "a method call after an untracked import on its row": ("# torch\nimport os; t.zero_grad(set_to_none=False)\n", "TP904"),
    "a method call before an untracked import on its row": ("# torch\nt.zero_grad(set_to_none=False); import os\n", "TP904"),
    "a header on the import's row": ("# torch\nif t.storage(): import os\n", "TP906"),
    "a handler type whose header range holds the import's row": (
        "# torch\ntry:\n    import os\nexcept t.storage():\n    pass\n", "TP906"),
    # The text reader finds no mention of the full-width name; only the import row gets the header walked.
    "a handler type the text reader cannot see": (
        "try:\n    import torch\nexcept \uff54orch.cuda.amp.GradScaler:\n    pass\n", "TP202"),
    "an import a rule watches, in a function": (
        "def f():\n    from torch.distributed.checkpoint._hf_storage import _HuggingFaceStorageReader\n", "TP104"),
    "a watched name through an alias in a function": (
        "import torch\ndef f():\n    amp = torch.cuda.amp\n    amp.autocast()\n", "TP202"),
    "a watched method on a tracked file": ("import torch\nstate = model.storage()\n", "TP906"),
    "an attribute a rule watches": ("import torch\nx.require_grad = True\n", "TP520"),
    # super().__init__() counts (rules' methods_with_mention) once a chain reaches a watched name: the base.
    "super().__init__ of a watched torch class": (
        "import torch\nclass SumMSE(torch.nn.MSELoss):\n    def __init__(self):\n"
        "        super().__init__(size_average=False)\n", "TP209"),
    # A rule's words_needed: the name it alone watches counts once the text holds one of its words.
    "a call whose rule's word is in the text": ("import torch\ndevice = torch.device('mkldnn')\n", "TP240"),
    "a call whose rule's word is in a keyword argument": (
        "from torch.utils.data import DataLoader\nloader = DataLoader(ds, pin_memory_device='cuda')\n", "TP231"),
    # A rule's decorators_only: the name counts where a chain after an ``@`` reaches it.
    "a decorator a rule watches": ("import torch\n@torch.no_grad()\nclass Evaluator:\n    pass\n", "TP259"),
    "a decorator in parentheses": ("import torch\n@(torch.no_grad)\nclass Evaluator:\n    pass\n", "TP259"),
    "a decorator after a line continuation": (
        "import torch\n@ \\\n  torch.no_grad()\nclass Evaluator:\n    pass\n", "TP259"),
    "a decorator imported by name": ("from torch import inference_mode\n@inference_mode\nclass P:\n    pass\n", "TP259"),
    "a decorator through an alias": (
        "import torch\nfrozen = torch.no_grad\n@frozen()\nclass Evaluator:\n    pass\n", "TP259"),
    "a decorator with spaces in its chain": (
        "import torch\n@torch . autograd . no_grad()\nclass Evaluator:\n    pass\n", "TP259"),
    # A rule's class_decorators_only: skipped above a def, so every other statement below one is still a class.
    "a class decorator above other decorators": (
        "import torch\n@torch.no_grad()\n@dataclass\nclass Evaluator:\n    pass\n", "TP259"),
    "a class decorator with a comment line before the class": (
        "import torch\n@torch.inference_mode()  # (def)\n# def\nclass P:\n    pass\n", "TP259"),
    "a class decorator whose argument holds a string": (
        "import torch\n@torch.set_grad_enabled(bool('def'))\nclass P:\n    pass\n", "TP259"),
    # Rule.call_needs: a call of a gated name counts where its arguments may meet the need.
    "a gated call whose argument holds a parenthesis in a string": (
        "import torch\nopt = torch.optim.SGD(set(ps), lr=0.1, tag=')')\n", "TP234"),
    "a gated call imported by name": ("from torch.optim import SGD\nopt = SGD({w, b}, lr=0.1)\n", "TP234"),
    "a gated call through an alias": ("import torch\nsgd = torch.optim.SGD\nopt = sgd({w, b})\n", "TP234"),
    "a gated call's keyword across lines": (
        "import torch.nn.functional as F\nloss = F.cross_entropy(p, t,\n    size_average  # legacy\n    = False)\n", "TP216"),
    "a gated call's legacy argument by position": (
        "import torch.nn.functional as F\nloss = F.nll_loss(p, t, w, False)\n", "TP216"),
    "a gated call that leaves out an argument, over lines with comments": (
        "import torch.nn.functional as F\ny = F.softmax(\n    x,  # dim=1 (later)\n)\n", "TP209"),
    "a gated call that passes None": ("import torch.nn.functional as F\ny = F.softmax(x, None)\n", "TP209"),
    "a gated call with a triple-quoted string": (
        "import torch.nn.functional as F\ny = F.softmax(g(\"\"\"dim=1, 2)\n'\"\"\"))\n", "TP209"),
    "a gated call's argument by position after a nested call": (
        "import torch\nfrom torch.nn.parallel import DistributedDataParallel as DDP\n"
        "ddp = DDP(model, [rank], rank, 0, f(a, b))\n", "TP230"),
    "a scheduler's verbose by position": (
        "import torch\nsched = torch.optim.lr_scheduler.StepLR(opt, 10, 0.1, -1, True)\n", "TP111"),
    "a method call that may meet its need": (
        "import torch\nsched = torch.optim.lr_scheduler.StepLR(opt, 1)\nsched.step(epoch)\n", "TP209"),
    "super().__init__ of a watched class imported by name": (
        "from torch.nn import MSELoss as Base\nclass SumMSE(Base):\n    def __init__(self):\n"
        "        super().__init__(size_average=False)\n", "TP209"),
}


def _walks(code: str) -> bool:
    import ast

    from torchpatch.engine.candidates import nothing_to_walk
    from torchpatch.rules._api_db import star_exports

    settings = make_settings(select=["ALL"], min_torch="2.4")
    index = settings.rules_for(Path("snippet.py"))
    return not nothing_to_walk(code, ast.parse(code), index,
                               lambda module: star_exports(module, settings.min_torch, settings.target))


def _same_without_the_skip(tmp_path, monkeypatch, code: str):
    """Findings and fixes with the skip, and with pass 1 run for every file: the same to the byte.
    (Not against every mention walked: that mode leaves import rows out, so it may see less here.)"""
    import torchpatch.engine.checker as checker

    path = tmp_path / "snippet.py"
    skipping = _results(path, code, False, monkeypatch, min_torch="2.4")
    monkeypatch.setattr(checker, "nothing_to_walk", lambda *arguments, **keywords: False)
    monkeypatch.setattr(linter, "nothing_to_check", lambda *arguments: False)
    always = _results(path, code, False, monkeypatch, min_torch="2.4")
    monkeypatch.undo()
    assert skipping == always
    return skipping


@pytest.mark.parametrize("name", list(SKIP_EDGES))
def test_files_the_walker_still_sees_are_walked(tmp_path, monkeypatch, name):
    code, expected = SKIP_EDGES[name]
    assert _walks(code)
    assert _parsed(code)
    _, findings, _, _ = _same_without_the_skip(tmp_path, monkeypatch, code)
    assert expected in [f[0] for f in findings], findings


NOTHING_TO_WALK = {
    "torch used only through names no rule watches": "import torch\nimport torch.nn as nn\nx = torch.cat([a, b])\nlayer = nn.Linear(2, 2)\n",
    "no tracked import at all": "# works with torch tensors\nimport os\nimport numpy as np\nx = np.zeros(3)\n",
    "a try/except ImportError around the import": "try:\n    import torch\nexcept ImportError:\n    torch = None\nx = torch.cat([a])\n",
    "an alias to a name no rule watches": "import torch\nF = torch.nn.functional\ny = F.relu(x)\n",
    "imports inside functions": "def f():\n    import torch\n    return torch.zeros(2)\n",
    "a name watched only as a decorator, used as a context manager": (
        "import torch\nwith torch.no_grad():\n    y = model(x)\n"),
    "a call whose rule needs a word the text lacks": "import torch\ndevice = torch.device('cuda')\nx = torch.ones(2, device=device)\n",
    "a grad-mode decorator above a function": "import torch\n@torch.no_grad()\ndef predict(model, x):\n    return model(x)\n",
    "grad-mode decorators above async and stacked functions": (
        "import torch\nclass M:\n    @torch.inference_mode()  # fast\n    @staticmethod\n\n    async def f(x):\n"
        "        return x\n    @torch.autograd.no_grad\n    @functools.lru_cache(maxsize=2)\n    def g(x):\n        return x\n"),
    "calls that cannot meet their rules' needs": (
        "import torch\nimport torch.nn.functional as F\nopt = torch.optim.Adam(model.parameters(), lr=1e-3)\n"
        "y = F.softmax(x, dim=-1)\nz = F.log_softmax(x, 1)  # (dim)\nloss = F.cross_entropy(p, t, label_smoothing=0.1)\n"
        "head = torch.nn.Softmax(dim=1)\nnorm = torch.nn.BatchNorm1d(8, affine=False)\n"),
    "calls of torch.compile, DDP and a scheduler without the arguments their rules read": (
        "import torch\nfrom torch.nn.parallel import DistributedDataParallel as DDP\nmodel = torch.compile(model)\n"
        "ddp = DDP(model, device_ids=[rank])\nsched = torch.optim.lr_scheduler.StepLR(opt, step_size=1)\n"
        "opt.step()\nsched.step()\nsd = model.state_dict()\nx.add_(y)\n"),
    "super().__init__ of a class no rule watches": (
        "import torch\nfrom torch import nn\nclass Net(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.fc = nn.Linear(2, 2)\n"),
}


@pytest.mark.parametrize("name", list(NOTHING_TO_WALK))
def test_files_with_nothing_to_walk_are_skipped_with_the_same_result(tmp_path, monkeypatch, name):
    code = NOTHING_TO_WALK[name]
    assert not _walks(code)
    assert _same_without_the_skip(tmp_path, monkeypatch, code)[1] == []
    assert _assert_same(tmp_path, monkeypatch, code, min_torch="2.4")[1] == []


# -- files decided from their text (candidates.nothing_to_walk_by_text): not parsed into a tree at all. The text
# may say "nothing to walk" only where the tree would; every way of writing an import or an alias that the text
# cannot read for certain makes it say "unknown" (parse), and each such case below is still flagged.


def _parsed(code: str) -> bool:
    settings = make_settings(select=["ALL"], min_torch="2.4")
    return not nothing_to_check(code, settings.rules_for(Path("snippet.py")), settings.target, settings.min_torch)


@pytest.mark.parametrize("code, name, options", list(_examples()))
def test_the_text_skips_a_rule_example_only_where_the_tree_would(code, name, options):
    if not name.endswith(".py"):
        pytest.skip("a dependency file or a notebook: not a Python text")
    assert _parsed(code) or not _walks(code)


@pytest.mark.parametrize("path", sorted([*(ROOT / "tests" / "fixtures").rglob("*.py"), *(ROOT / "examples").rglob("*.py")]),
                         ids=lambda p: p.name)
def test_the_text_skips_a_fixture_only_where_the_tree_would(path):
    code = path.read_text(encoding="utf-8")
    assert _parsed(code) or not _walks(code)


def test_the_text_skips_a_file_of_torchs_own_sources_only_where_the_tree_would():
    """Real code: every file of the installed torch package (about 2,300, 11 s) that the text decides has nothing
    to walk has none by its tree either (an import-only mention, a try's handler far from the imports)."""
    import ast
    import importlib.util

    from torchpatch.engine.candidates import nothing_to_walk, nothing_to_walk_by_text
    from torchpatch.rules._api_db import star_exports

    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("torch is not installed")
    settings = make_settings(select=["ALL"], min_torch="2.4")
    index = settings.rules_for(Path("snippet.py"))

    def exports(module):
        return star_exports(module, settings.min_torch, settings.target)

    skipped, walked_after_all = 0, []
    for path in sorted(Path(spec.submodule_search_locations[0]).rglob("*.py")):
        text = path.read_text(encoding="utf-8", errors="replace")
        if not nothing_to_walk_by_text(text, index, exports):
            continue
        skipped += 1
        if not nothing_to_walk(text, ast.parse(text), index, exports):
            walked_after_all.append(str(path))
    assert skipped > 500 and walked_after_all == []


TEXT_EDGES = {
    "an alias across lines in parentheses": (
        "import torch\namp = (\n    torch.cuda.amp\n)\nwith amp.autocast():\n    pass\n", "TP202"),
    "an alias with a comment before its value": (
        "import torch\namp = (  # the old module\n    torch.cuda.amp)\nwith amp.autocast():\n    pass\n", "TP202"),
    "an alias with spaces around its dots": ("import torch\namp = torch . cuda . amp\namp.autocast()\n", "TP202"),
    "an annotated alias": ("import torch\namp: object = torch.cuda.amp\namp.autocast()\n", "TP202"),
    "an alias of the module itself": ("import torch\nt = torch\nt.load('m.pt')\n", "TP301"),
    "an alias after a backslash": ("import torch\namp = \\\n    torch.cuda.amp\namp.autocast()\n", "TP202"),
    "an import continued by a backslash": ("from torch.cuda \\\n    import amp\namp.autocast()\n", "TP202"),
    "an import after another statement on its line": ("x = 1; from torch.cuda import amp\namp.autocast()\n", "TP202"),
    "an import in a one-line compound statement": ("if True: from torch.cuda import amp\namp.autocast()\n", "TP202"),
    "an import in parentheses with a comment holding one": (
        "from torch.cuda import (  # amp (autocast)\n    amp,\n)\namp.autocast()\n", "TP202"),
    "a relative star import": ("from .shared import *\ntorch.load('m.pt')\n", "TP301"),
    "an import with a non-ASCII name": ("from torch import cuda as c\u00e9\nc\u00e9.amp.autocast()\n", "TP202"),
    "a lone carriage return": ("import torch\rtorch.load('m.pt')\n", "TP301"),
}


@pytest.mark.parametrize("name", list(TEXT_EDGES))
def test_what_the_text_cannot_read_is_parsed_and_flagged(tmp_path, monkeypatch, name):
    code, expected = TEXT_EDGES[name]
    assert _parsed(code)
    _, findings, _, _ = _same_without_the_skip(tmp_path, monkeypatch, code)
    assert expected in [f[0] for f in findings], findings


TEXT_SKIPS = {
    "torch used only through names no rule watches": NOTHING_TO_WALK["torch used only through names no rule watches"],
    "no tracked import at all": NOTHING_TO_WALK["no tracked import at all"],
    "a try/except ImportError around the import": NOTHING_TO_WALK["a try/except ImportError around the import"],
    "imports inside functions": NOTHING_TO_WALK["imports inside functions"],
    "an import in parentheses over lines": "from torch.nn import (\n    Linear,  # (dense)\n    ReLU,\n)\nlayer = Linear(2, 2)\n",
    "a comparison and a keyword argument": "import torch\nok = x.dtype == torch.float32\ny = torch.zeros(2, dtype=torch.int64)\n",
    "a name watched only as a decorator, not after an @": (
        "import torch\nwith torch.no_grad():\n    y = a @ torch.ones(2)\n"),
    "an import written in a comment": "import torch\n# from torch.cuda import amp: the old way\nx = torch.cat([a])\n",
    "a grad-mode decorator above a function": NOTHING_TO_WALK["a grad-mode decorator above a function"],
    "calls that cannot meet their rules' needs": NOTHING_TO_WALK["calls that cannot meet their rules' needs"],
    "a gated call imported by name": "from torch.optim import SGD\nopt = SGD(model.parameters(), lr=0.1)\n",
    "a method call with more positional arguments than its rule's forms": (
        "import re\nimport torch\nname = re.sub(r'[^a-z]', '_', name)\nx = torch.zeros(2)\n"),
    "a try with a kept handler before the indented imports": (
        "import torch\ntry:\n    x = torch.zeros(2)\nexcept RuntimeError:\n    x = None\n\n"
        "def f():\n    import os\n    return os.getcwd()\n"),
    "a match statement after the indented imports": (
        "import torch\n\ndef f():\n    import os\n    return os.name\n\nmatch f():\n    case 'nt' if torch:\n        pass\n"),
    "watched names mentioned only in their import": (
        "from torch.nn import (\n    BatchNorm1d as BN,\n    MSELoss,\n)\n\n"
        "class Head(Base):\n    def __init__(self):\n        super().__init__()\n"),
}


@pytest.mark.parametrize("code", [
    "try:\n    import torch\nexcept RuntimeError:\n    pass\n",
    "try:\n    pass\nexcept ImportError:\n    import torch\nexcept RuntimeError:\n    pass\n",
    "def f():\n    try:\n        if x:\n            from torch import cuda\n    except (OSError, RuntimeError):\n        pass\n",
    "try:\n    import torch\nexcept* RuntimeError:\n    pass\n",
    "match x:\n    case 1:\n        import torch\n    case y if y > 2:\n        pass\n",
])
def test_an_import_a_try_header_spans_is_parsed(code):
    # The header of a try (the types of its handlers other than ImportError-like ones) spans its body's rows.
    assert _parsed(code)
    assert _walks(code)


@pytest.mark.parametrize("name", list(TEXT_SKIPS))
def test_files_the_text_skips_have_the_same_result(tmp_path, monkeypatch, name):
    code = TEXT_SKIPS[name]
    assert not _parsed(code) and not _walks(code)
    assert _same_without_the_skip(tmp_path, monkeypatch, code)[1] == []


def test_a_file_the_text_skips_is_still_reported_when_it_does_not_parse(tmp_path):
    code = "import torch\nx = torch.cat([a]\n"
    assert not _parsed(code)
    path = tmp_path / "broken.py"
    path.write_text(code, encoding="utf-8")
    assert "syntax error" in linter.check_file(path, make_settings(select=["ALL"])).error


def test_the_text_reads_imports_as_the_tree_holds_them():
    import ast

    from torchpatch.engine.candidates import _text_imports

    code = ("import torch.nn as nn, os\nfrom . import sibling\nfrom ..pkg.mod import (  # why (see below)\n"
            "    first as one,\n    second,\n)\ndef f():\n    from torch . cuda import amp  # the old one\n"
            '"""Text where import is a word, not a statement."""\n')
    statements, spans, indented = _text_imports(code)
    assert [ast.dump(s) for s in statements] == [ast.dump(s) for s in ast.walk(ast.parse(code))
                                                 if isinstance(s, (ast.Import, ast.ImportFrom))]
    assert indented and [code[start:end].split()[0] for start, end in spans] == ["import", "from", "from", "from"]


@pytest.mark.parametrize("code", ["from torch \\\n    import load\n", "x = 1; import torch\n", "import torch; x = 1\n",
                                  "if x: import torch\n", "from torch import (load); x = 1\n", "import torch \\\n    .cuda\n",
                                  "import tor\u00e7h\n", "from \uff54orch import load\n", "\uff46rom torch import load\n"])
def test_the_text_gives_up_on_imports_it_cannot_read_for_certain(code):
    from torchpatch.engine.candidates import _text_imports

    assert _text_imports(code) is None


def test_a_rule_needing_words_reports_only_where_its_text_holds_one():
    """Rule.words_needed is a claim about the rule's own check: each invalid example (what it reports) holds a word."""
    needing = [rule for rule in all_rules() if rule.words_needed]
    assert needing
    for rule in needing:
        for example in rule.INVALID:
            assert any(word in example_code(example) for word in rule.words_needed), rule.code


@pytest.mark.parametrize("arguments, shape", [
    ("()", ((), 0, ())),
    ("(x, 1,)", ((), 2, ())),
    ("(x, dim = -1)", (("dim",), 1, ())),
    ("(x,\n  # a, b\n  dim\n  =1)", (("dim",), 1, ())),
    ("(f(a, b), [c, d], {e: g}, 'h, i', r'\\\\', b\"j)\")", ((), 6, ())),
    ("(x == y, a <= b, (c := 2))", ((), 3, ())),
    ("(x, *rest, y)", ((), 1, ("*",))),
    ("(x, **options)", ((), 1, ("**",))),
    ("([v for k, v in d], {k: v for k, v in d}, f(lambda a, b: a))", ((), 3, ())),
    ("('''a)\n'b''', \\\n y)", ((), 2, ())),
])
def test_the_text_reads_a_call_s_arguments_as_the_parser_does(arguments, shape):
    from torchpatch.engine.candidates import _call_arguments

    text = f"call{arguments}\nrest"
    found = _call_arguments(text, 4)
    assert found is not None and found[0] == arguments
    assert (tuple(sorted(found[1])), found[2], tuple(sorted(found[3]))) == shape


@pytest.mark.parametrize("arguments", ["(f'{x})')", "(x, key=lambda a, b: a)", "(v for k, v in pairs)", "(x, 'open", "(x, [1)", "(x",
                                       "(x, \\ y)", "(x, T'{y}')", "(x, \uff44im=1)", "(x  # comment"])
def test_the_text_gives_up_on_arguments_it_cannot_read_for_certain(arguments):
    from torchpatch.engine.candidates import _call_arguments

    assert _call_arguments(f"call{arguments}", 4) is None


def test_call_gates_are_names_only_rules_with_a_need_call_and_none_references():
    from torchpatch.engine.checker import RuleIndex

    index = RuleIndex(all_rules())
    assert index.call_gates
    for name in index.call_gates:
        assert name in index.calls and name not in index.references
        assert all(name in rule.call_needs for rule in index.calls[name])


def _calls_written_by_name(text: str):
    """(offset of its ``(``, the call node) for each call whose callee is written right before its ``(``."""
    import ast

    starts = [0]
    for line in text.split("\n"):
        starts.append(starts[-1] + len(line) + 1)

    def offset(row: int, column: int) -> int:  # ast columns count UTF-8 bytes
        return starts[row - 1] + len(text[starts[row - 1]:starts[row]].encode()[:column].decode())

    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Call):
            opening = offset(node.func.end_lineno, node.func.end_col_offset)
            if text.startswith("(", opening):
                yield opening, offset(node.end_lineno, node.end_col_offset), node


def test_the_text_reads_every_call_of_real_code_as_the_syntax_tree_holds_it():
    """candidates._call_arguments on every call of torchpatch's own sources, fixtures and examples: where it
    answers, the keywords, the positional arguments before any ``*`` and the unpackings are the tree's."""
    import ast

    from torchpatch.engine.candidates import _call_arguments

    paths = sorted([*(ROOT / "src").rglob("*.py"), *(ROOT / "tests" / "fixtures").rglob("*.py"),
                    *(ROOT / "examples").rglob("*.py")])
    read = 0
    for path in paths:
        text = path.read_text(encoding="utf-8")
        if "\r" in text:
            continue
        try:
            calls = list(_calls_written_by_name(text))
        except SyntaxError:
            continue
        for opening, end, node in calls:
            found = _call_arguments(text, opening)
            if found is None:
                continue
            read += 1
            positional = next((at for at, a in enumerate(node.args) if isinstance(a, ast.Starred)), len(node.args))
            unpacked = {"*"} if positional < len(node.args) else set()
            unpacked |= {"**"} if any(k.arg is None for k in node.keywords) else set()
            assert found == (text[opening:end], frozenset(k.arg for k in node.keywords if k.arg), positional,
                             frozenset(unpacked)), (path, node.lineno)
    assert read > 10_000
