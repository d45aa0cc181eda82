"""Run code snippets under the installed torch and record what torch says about each (the test oracle).

Reads a JSON list of ``{"id": ..., "code": ...}`` on standard input and writes, for each snippet, every
warning it emitted (category, message, file and line) and the error it raised, if any, as JSON on standard
output. Each snippet runs in a fresh namespace and a fresh temporary directory, on CPU, with every warning
shown every time (Python's filters set to "always" and ``torch.set_warn_always(True)``, so warnings torch
gives once per process are seen by every snippet). The snippets' file name is ``snippet.py``.

    python scripts/torch_oracle.py < examples.json > results.json

tests/test_torch_oracle.py runs the rules' examples through it under the tests' torch (2.13);
``--torch-version`` prints the version it ran under, for recorded runs of other releases.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
import tempfile
import warnings


def run_snippet(code: str) -> dict:
    import torch

    record: dict = {"warnings": [], "error": None}
    with tempfile.TemporaryDirectory() as workdir, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        previous = os.getcwd()
        environment = dict(os.environ)  # a snippet that sets TORCH_HUB must not reach the next one
        os.chdir(workdir)
        torch.set_warn_always(True)
        # TypedStorage's warning keeps its own once-per-process flag, which set_warn_always does not reach.
        getattr(torch.storage, "_set_always_warn_typed_storage_removal", lambda always: None)(True)
        try:
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                exec(compile(code, "snippet.py", "exec"), {"__name__": "__snippet__"})
        except BaseException as error:  # a snippet may raise anything, SystemExit included
            record["error"] = {"type": type(error).__name__, "message": str(error)[:2000]}
        finally:
            torch.set_warn_always(False)
            os.chdir(previous)
            os.environ.clear()
            os.environ.update(environment)
    for item in caught:
        record["warnings"].append({"category": item.category.__name__, "message": str(item.message)[:2000],
                                   "filename": os.path.basename(item.filename), "lineno": item.lineno})
    return record


def main(argv: list[str]) -> int:
    if "--torch-version" in argv:
        import torch

        print(torch.__version__)
        return 0
    snippets = json.load(sys.stdin)
    results = {snippet["id"]: run_snippet(snippet["code"]) for snippet in snippets}
    json.dump(results, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
