"""The linter's shortcuts around the analysis must give the answers of the long way, to the byte:
whether a fixed text parses, judged from the top-level statements its edits touch (statement_cuts,
edits_parse_in_place), against a parse of the whole text."""

from __future__ import annotations

import ast
import random
from pathlib import Path

import pytest

from torchpatch.engine.linter import (_parses, apply_edits, edits_parse_in_place, statement_cuts,
                                      withhold_unparsable_fixes)
from torchpatch.engine.source import Locator
from torchpatch.findings import SAFE, Diagnostic, Edit, Fix

ROOT = Path(__file__).resolve().parent.parent
PATH = Path("m.py")


def cuts_of(text: str) -> list[int]:
    return statement_cuts(ast.parse(text), Locator(text), text)


def rows_of_cuts(text: str) -> list[int]:
    """The 1-based rows that start at a cut (the end of the text is not a row)."""
    locator = Locator(text)
    return [locator.position(offset)[0] for offset in cuts_of(text) if offset < len(text)]


def test_cuts_are_where_whole_top_level_statements_start():
    text = ("import torch\n"            # 1
            "x = (1,\n"                 # 2
            "     2)\n"                 # 3
            "a = 1; b = 2\n"            # 4: one cut, before a
            "\n"                        # 5
            "@decorator\n"              # 6: the decorator's row, not the def's
            "def f():\n"                # 7
            "    return 1\n"            # 8
            "c = 1 + \\\n"              # 9
            "    2\n"                   # 10
            "d = 3; \\\n"               # 11: the backslash joins row 12 to this line
            "e = 4\n"                   # 12: no cut
            "# a comment \\\n"          # 13: conservative: a comment ending in a backslash too
            "g = 5\n")                  # 14
    assert rows_of_cuts(text) == [1, 2, 4, 6, 9, 11]
    assert cuts_of(text)[-1] == len(text)


def test_a_parenthesised_decorator_that_starts_on_a_later_row_is_no_cut():
    text = "x = 1\n@(\n    decorator)\ndef f():\n    pass\n"
    assert rows_of_cuts(text) == [1]  # the decorator's node is on row 3, the @ on row 2: no cut at all


def whole_parse(text: str, edits: list[Edit]) -> bool:
    return _parses(apply_edits(text, edits), PATH)


MODULE = ("import torch\n"
          "from torch.cuda.amp import autocast\n"
          "\n"
          "x = torch.cuda.amp.autocast()\n"
          "\n"
          "class M:\n"
          "    def f(self):\n"
          "        if x:\n"
          "            return autocast()\n"
          "        return 1\n"
          "\n"
          "y = 2")  # no line break at the end


def edit_of(old: str, new: str, text: str = MODULE, occurrence: int = 0) -> Edit:
    start = -1
    for _ in range(occurrence + 1):
        start = text.index(old, start + 1)
    return Edit(start, start + len(old), new)


# (edits, what a parse of the whole fixed text says, whether the spans settle it)
CASES = [
    ("module-level fix that parses", [edit_of("torch.cuda.amp.autocast()", 'torch.amp.autocast("cuda")')], True, True),
    ("module-level fix that breaks", [edit_of("torch.cuda.amp.autocast()", "torch.amp.autocast(")], False, False),
    ("nested fix that parses", [edit_of("return autocast()", 'return torch.amp.autocast("cuda")')], True, True),
    ("nested fix that breaks", [edit_of("return autocast()", "return autocast(]")], False, False),
    ("nested fix that breaks the indentation", [edit_of("        return 1", "      return 1")], False, False),
    ("import removed whole, with its line", [edit_of("from torch.cuda.amp import autocast\n", "")], True, True),
    ("a statement at column 0 becomes indented (continues the block above in the whole text)",
     [edit_of("y = 2", "    y = 2")], True, False),
    ("a statement's line break removed, the blank line after it ends the span",
     [edit_of("x = torch.cuda.amp.autocast()\n", "x = 1")], True, True),
    ("a statement's line break removed, the next statement follows at once",
     [edit_of("import torch\n", "import torch")], False, False),
    ("a span that ends in a backslash, the next statement follows at once",
     [edit_of("import torch\n", "import torch \\\n")], False, False),
    ("a backslash continuing a blank line", [edit_of("x = torch.cuda.amp.autocast()\n", "x = 1 \\\n")], True, True),
    ("an insertion at the end of a text without a final line break", [Edit(len(MODULE), len(MODULE), "z = 3\n")],
     False, False),
    ("an insertion between statements", [Edit(MODULE.index("\nclass") + 1, MODULE.index("\nclass") + 1, "import os\n")],
     True, True),
    ("an 'else:' inserted after the class: no statement of its own", [Edit(MODULE.index("y = 2"), MODULE.index("y = 2"),
                                                                          "else:\n    pass\n")], False, False),
    ("a fix at the top and one nested, both parse", [edit_of("from torch.cuda.amp import autocast\n", ""),
                                                     edit_of("return autocast()", 'return torch.amp.autocast("cuda")')],
     True, True),
    ("a fix at the top that parses and one nested that breaks", [
        edit_of("from torch.cuda.amp import autocast\n", ""), edit_of("return autocast()", "return (")], False, False),
]


@pytest.mark.parametrize("name,edits,parses,settled", CASES, ids=[case[0] for case in CASES])
def test_spans_settle_only_what_the_whole_parse_says(name, edits, parses, settled):
    assert whole_parse(MODULE, edits) is parses
    assert edits_parse_in_place(MODULE, edits, cuts_of(MODULE), PATH) is settled


def test_insertion_at_the_end_after_a_final_line_break_is_settled_alone():
    text = "x = 1\n"
    end = len(text)
    assert edits_parse_in_place(text, [Edit(end, end, "y = 2\n")], cuts_of(text), PATH)
    assert not edits_parse_in_place(text, [Edit(end, end, "y = (\n")], cuts_of(text), PATH)


def test_withheld_fix_and_its_reason_are_the_same_with_cuts(tmp_path):
    """A failing span is never the reason: the whole text is parsed for it, so it names the whole file's line."""
    text = "import torch\n\ndef f():\n    a = g(1)\n    return a\n\nb = g(2)\n"

    def diagnostics() -> list[Diagnostic]:
        inner, outer = text.index("g(1)"), text.index("g(2)")
        return [Diagnostic("TP999", "x", "m", inner, inner + 4, Fix("break it", [Edit(inner, inner + 4, "g(1")], SAFE)),
                Diagnostic("TP999", "x", "m", outer, outer + 4, Fix("keep it", [Edit(outer, outer + 4, "h(2)")], SAFE))]

    plain, shortcut = diagnostics(), diagnostics()
    withhold_unparsable_fixes(text, tmp_path / "m.py", plain)
    withhold_unparsable_fixes(text, tmp_path / "m.py", shortcut, cuts_of(text))
    assert plain[0].fix is None and "syntax error at line 4" in plain[0].fix_unavailable
    assert [(d.fix, d.fix_unavailable) for d in shortcut] == [(d.fix, d.fix_unavailable) for d in plain]
    assert shortcut[1].fix is not None


PIECES = ["", ")", "(", "\\\n", "\\", '"""', "'", "    ", "\n", "\r\n", "else:\n", "@d\n", "import x\n", "x = 1\n",
          "    x = 1\n", "pass", ":", "\t", "\f", "# c\n", "#", "f(", "]", "return\n", "\u00e9", "async ", "\n\n",
          "match x:\n    case 1: pass\n"]


def test_spans_never_say_parses_when_the_whole_text_does_not():
    """Random edits, many at or next to the cuts, on the engine's own sources: a "parses" from the spans
    is always the whole parse's answer."""
    chooser = random.Random(12)
    files = sorted((ROOT / "src" / "torchpatch" / "engine").glob("*.py"))[:8]
    settled = 0
    for path in files:
        text = path.read_text(encoding="utf-8")
        cuts = cuts_of(text)
        near = [offset + shift for offset in cuts for shift in (-2, -1, 0, 0, 1, 2)]
        for _ in range(60):
            edits = []
            for _ in range(chooser.choice((1, 1, 2, 3))):
                start = min(max(chooser.choice(near) if chooser.random() < 0.6 else chooser.randrange(len(text) + 1), 0),
                            len(text))
                if chooser.random() < 0.2:  # whole runs of statements removed or replaced
                    end = cuts[min(len(cuts) - 1, cuts.index(max(c for c in cuts if c <= start)) + chooser.choice((1, 2)))]
                    edits.append(Edit(max(c for c in cuts if c <= start), end, chooser.choice(("", "x = 1\n", "("))))
                    continue
                end = min(len(text), start + chooser.choice((0, 0, 1, 2, 5, 40)))
                edits.append(Edit(start, end, chooser.choice(PIECES)))
            edits.sort(key=lambda e: (e.start, e.end))
            if any(a.end > b.start for a, b in zip(edits, edits[1:])):
                continue  # fixes applied together never overlap (select_fixes)
            if edits_parse_in_place(text, edits, cuts, PATH):
                settled += 1
                assert whole_parse(text, edits), (path.name, edits)
    assert settled > 50


# -- the syntax check of files that need no tree (symtable_accepts, check_syntax) ------------------------

from torchpatch.engine.linter import ParseFailure, check_syntax, lint_text, parse_text, symtable_accepts  # noqa: E402
from torchpatch.engine.settings import Settings  # noqa: E402


def reason_of(check, text: str) -> str | None:
    try:
        check(text, PATH)
    except ParseFailure as error:
        return str(error)
    return None


SYNTAX_CASES = [
    "x = 1\n",
    "def f(:\n    pass\n",
    "x = (1,\n",
    "if x:\npass\n",
    "x = 'abc\n",
    "print 'old'\n",
    "x = 1\x00\n",
    "x = '\\d'\n",  # an invalid escape: a SyntaxWarning, not an error
    # symtable rejects these, ast.parse accepts them: parse_text decides
    "def f(x):\n    global x\n",
    "nonlocal x\n",
    "x = 1\nfrom __future__ import annotations\n",
    "from __future__ import braces\n",
    "def f():\n    yield = 1\n",
    "class C:\n    [y for y in (z := range(3))]\n",
]


@pytest.mark.parametrize("text", SYNTAX_CASES)
def test_check_syntax_fails_exactly_when_parse_text_does(text):
    assert reason_of(check_syntax, text) == reason_of(parse_text, text)
    if symtable_accepts(text, PATH):
        assert reason_of(parse_text, text) is None


def test_symtable_rejects_what_parse_text_accepts_and_the_file_is_still_checked():
    text = "def f(x):\n    global x\n"
    assert not symtable_accepts(text, PATH)
    assert lint_text(text, PATH, Settings()) == []


def test_a_file_without_torch_reports_its_syntax_error():
    assert reason_of(lambda t, p: lint_text(t, p, Settings()), "def f(:\n") == reason_of(parse_text, "def f(:\n")


def _as_lint_text_did(text: str, path: Path) -> None:
    parse_text(text, path)


def _as_lint_text_does(text: str, path: Path) -> None:
    if not symtable_accepts(text, path):
        parse_text(text, path)


@pytest.mark.parametrize("make", [lambda n: "x = 1" + "+1" * n + "\n", lambda n: "x = a" + ".b" * n + "\n",
                                  lambda n: "def f():\n    return " + "-" * n + "1\n"], ids=["sum", "attributes", "unary"])
def test_deep_nesting_fails_at_the_same_depth(make):
    """Both recursion limits are relative to the caller's depth; called as lint_text calls them, the
    shortcut gives up exactly where ast.parse did (around 3,000 levels on 3.10-3.12, 10,000 on 3.13)."""
    if reason_of(_as_lint_text_did, make(20000)) is None:
        pytest.skip("this Python parses 20,000 levels")
    low, high = 1, 20000  # the first depth parse_text rejects
    while low < high:
        middle = (low + high) // 2
        low, high = (low, middle) if reason_of(_as_lint_text_did, make(middle)) else (middle + 1, high)
    for depth in range(low - 6, low + 6):
        assert reason_of(_as_lint_text_does, make(depth)) == reason_of(_as_lint_text_did, make(depth)), depth


# -- the uses of obsolete names and their imports, found from the statements that mention them ------------

import ast as _ast  # noqa: E402
from collections import Counter, deque  # noqa: E402

from torchpatch.engine.linter import _bound_name, _import_places, mention_test, walk_mentioning  # noqa: E402


def wanted(nodes, names: set[str]) -> list[ast.AST]:
    """The nodes _attach_import_removals looks for: uses of the names, imports that bind one."""
    return [n for n in nodes if type(n) is ast.Name and n.id in names
            or type(n) in (ast.Import, ast.ImportFrom) and any(_bound_name(a) in names for a in n.names)]


def assert_same_as_the_whole_walk(text: str, names: set[str]) -> None:
    tree = ast.parse(text)
    mentions = mention_test(text, names, Locator(text))
    assert wanted(walk_mentioning(tree, mentions), names) == wanted(_ast.walk(tree), names)  # same nodes, same order
    places, all_places = _import_places(tree, mentions), _import_places(tree)
    for node in wanted(walk_mentioning(tree, mentions), names):
        if type(node) is not ast.Name:
            assert places[id(node)] == all_places[id(node)]


TRICKY = (
    "import torch\n"
    "from torch.cuda.amp import autocast, GradScaler as Scaler\n"
    "@autocast()\n"
    "def f():\n"
    "    from torch.cuda.amp import custom_fwd\n"
    "    return custom_fwd\n"
    "x = 1; y = autocast\n"
    "try:\n"
    "    import apex.amp\n"
    "except ImportError:\n"
    "    from torch.cuda import amp\n"
    "class C(\n"
    "    Scaler):\n"
    "    @staticmethod\n"
    "    def g(): return amp\n"
    "if x:\n"
    "    pass\n"
    "else:\n"
    "    z = [autocast for _ in ()]\n"
)


@pytest.mark.parametrize("names", [{"autocast"}, {"Scaler", "custom_fwd"}, {"amp", "apex"}, {"x"}, {"nothing_here"}])
def test_the_statements_that_mention_a_name_hold_all_its_uses_and_imports(names):
    assert_same_as_the_whole_walk(TRICKY, names)


def test_a_name_spelled_with_other_unicode_characters_is_found():
    """``ｘ`` (fullwidth) is the identifier ``x`` (NFKC): a non-ASCII character marks its statement too."""
    text = "from m import \uff58\ny = 1\nprint(x)\n"
    assert_same_as_the_whole_walk(text, {"x"})
    assert [mention_test(text, {"x"}, Locator(text))(s) for s in ast.parse(text).body] == [True, False, True]


def test_the_same_nodes_as_the_whole_walk_on_real_code():
    for path in sorted((ROOT / "src" / "torchpatch" / "engine").glob("*.py")):
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text)
        common = Counter(n.id for n in _ast.walk(tree) if type(n) is ast.Name)
        imported = [_bound_name(a) for n in _ast.walk(tree) if type(n) in (ast.Import, ast.ImportFrom) for a in n.names]
        for name in [name for name, _ in common.most_common(6)] + imported[:4] + imported[-4:]:
            assert_same_as_the_whole_walk(text, {name})


# -- the import removals of fixes stop early when every obsolete name is still used where no fix edits --

from torchpatch.engine.linter import _used_outside  # noqa: E402


def _uses_outside(text: str, name: str, edits: list[Edit]) -> bool:
    """What the whole walk says: an ast.Name of ``name`` outside every edit."""
    locator = Locator(text)
    return any(not any(e.start <= locator.offset_from_ast(n.lineno, n.col_offset) < e.end for e in edits)
               for n in _ast.walk(ast.parse(text)) if type(n) is ast.Name and n.id == name)


def test_a_use_outside_the_edits_is_found_only_where_the_whole_walk_finds_one():
    texts = [TRICKY, "import torch\nx = torch.cuda.amp.autocast()\n",
             "import torch\n'torch'  # torch\nx.torch = torch_x\n",
             "import torch\n@torch.jit.script\ndef f(torch=1):\n    return torch\n",
             "from m import \uff54orch\n\u00e9 = 1; y = torch\n",
             *[path.read_text(encoding="utf-8") for path in sorted((ROOT / "src" / "torchpatch" / "engine").glob("c*.py"))]]
    found = 0
    for text in texts:
        names = {n.id for n in _ast.walk(ast.parse(text)) if type(n) is ast.Name}
        for name in sorted(names)[:40] + ["torch", "autocast", "nothing_here"]:
            for edits in ([], [Edit(0, len(text) // 2, "")], [Edit(text.find(name), text.find(name) + 1, "")] if name in text else []):
                shortcut = _used_outside(name, edits, text, ast.parse(text), Locator(text))
                if shortcut:
                    found += 1
                    assert _uses_outside(text, name, edits), (name, edits, text[:60])
    assert found > 50  # the shortcut is taken on most of them
