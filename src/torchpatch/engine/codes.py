"""The codes the engine reports itself, not a rule: TP001 (a file that was not checked), TP002 (a warning torch
gave at run time that no static rule covers) and TP100 (an unused ``# noqa``). Their docs pages, ``torchpatch rule`` and the output formats all read them from here."""

from __future__ import annotations


from torchpatch._record import FrozenRecord
from torchpatch.rules.base import DOCS_URL


class EngineCode(FrozenRecord):
    """A code the engine reports itself, with the text of its docs page."""

    code: str
    name: str
    summary: str
    what_it_does: str
    why: str
    example: str
    fix_safety: str

    def url(self) -> str:
        return DOCS_URL.format(name=self.name)

    def page(self) -> str:
        """The docs page, in the layout of the rule pages (docs.render_rule_page)."""
        return "\n".join([
            f"# {self.name} ({self.code})", "", self.summary + ".", "",
            "*Reported by the engine itself (not a rule of the database), whatever the target torch.*", "",
            "## What it does", "", self.what_it_does, "", "## Why is this bad?", "", self.why, "",
            "## Example", "", "```python", self.example, "```", "", "## Fix safety", "", self.fix_safety,
        ]) + "\n"


FILE_NOT_CHECKED = EngineCode(
    code="TP001", name="file-not-checked",
    summary="A file that could not be read or parsed, so it was not checked",
    what_it_does=("Reports a file that torchpatch could not read (permissions, bad encoding, binary content), parse "
                  "(a syntax error for the Python torchpatch runs on, a notebook that is not valid JSON or has a cell "
                  "that cannot be parsed) or write back after a fix. The message names the reason, and for a "
                  "notebook the cell and the line inside it."),
    why=("Nothing in such a file was checked, so \"no findings\" would be a false all-clear; the file is never "
         "written. The run exits 1 (2 when the cause is an internal error of torchpatch)."),
    example="def f(:\n    return torch.load(path)",
    fix_safety=("No fix: correct the file, or run torchpatch with a Python that understands the file's syntax "
                "(syntax newer than that Python cannot be checked)."),
)

UNUSED_NOQA = EngineCode(
    code="TP100", name="unused-noqa",
    summary="A `# noqa` directive for a torchpatch rule that suppresses nothing",
    what_it_does=("Reports a `# noqa: TPxxx` (or TorchFix `TORxxx`) directive naming an enabled torchpatch rule that "
                  "reports nothing on that line; codes of other tools (`F401`, `E501`) and rules this run does not "
                  "check are left alone. Like ruff's RUF100, it is off unless selected (`--extend-select TP100`, or "
                  "`--select ALL`)."),
    why=("A stale suppression hides the next real finding on that line, and tells a reader the line needs one."),
    example="import torch\n\nx = torch.ones(3)  # noqa: TP301",
    fix_safety=("The fix is safe (`--fix`): it removes the unused codes from the directive, or the whole comment "
                "when no code is left and the comment says nothing else (a comment with more text gets no fix). "
                "Removing a TorchFix `TORxxx` code is unsafe (`--unsafe-fixes`): TorchFix reads the same codes with "
                "its own analysis, which covers functions torchpatch maps to none of its rules and does not accept "
                "the `try`/`except ImportError` fallbacks that torchpatch does, so it may still report the line."),
)

RUNTIME_WARNING = EngineCode(
    code="TP002", name="torch-runtime-warning",
    summary="A deprecation or behaviour-change warning torch gave while the code ran, that no static rule covers",
    what_it_does=("Reports a line of your code where torch (or torchvision, torchaudio, torchao) gave a deprecation or "
                  "behaviour-change warning during a run: recorded by the pytest plugin (`pytest --torchpatch`) or "
                  "read from a saved log (`torchpatch check --from-warnings LOG`). A warning that a static rule covers "
                  "is reported under that rule's code, with its fix; TP002 is for the rest: the message quotes "
                  "torch's, and the report lists how often it fired and in which tests. When only a torch file is "
                  "known (a plain pytest log, whose warning `stacklevel` pointed inside torch), the finding stands at "
                  "that torch line and says to rerun the tests with `pytest --torchpatch`."),
    why=("Static analysis cannot see everything torch warns about: a `uint8` mask, `x.T` on a 3-D tensor, "
         "`F.softmax(x)` without `dim`, calls through objects built elsewhere. The warning is the ground truth that "
         "the code depends on behaviour the next release changes or removes; tracked as a finding, it can be "
         "counted, gated in CI (`--torchpatch-strict`) and turned into a static rule."),
    example="import torch\n\nx = torch.ones(2, 3, 4)\ny = x.T  # UserWarning: The use of `x.T` on tensors of dimension other than 2 ...",
    fix_safety=("No fix: the warning is only known from a run. Follow torch's message (quoted in the finding); the "
                "`torch_message` field of the report holds it whole."),
)

ENGINE_CODES: dict[str, EngineCode] = {entry.code: entry for entry in (FILE_NOT_CHECKED, RUNTIME_WARNING, UNUSED_NOQA)}


def engine_code(key: str) -> EngineCode | None:
    """The engine code with this code or name (``TP100``, ``unused-noqa``), if any."""
    for entry in ENGINE_CODES.values():
        if entry.code == key.upper() or entry.name == key.lower():
            return entry
    return None
