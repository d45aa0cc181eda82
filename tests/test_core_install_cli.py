"""A core install (no extras) answers --help, --version and `torchpatch mcp` without a traceback."""

from __future__ import annotations

import subprocess
import sys

_WITHOUT_PYDANTIC = """\
import sys
sys.modules["pydantic"] = None  # as on an install without the mcp extra: importing it raises ImportError
sys.modules["mcp"] = None
from torchpatch.frontends.cli import main
sys.exit(main(sys.argv[1:]))
"""


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", _WITHOUT_PYDANTIC, *args], capture_output=True, text=True, timeout=120)


def test_help_and_version_need_no_extra():
    version = _run("--version")
    assert version.returncode == 0 and version.stdout.startswith("torchpatch "), version.stderr
    usage = _run("--help")
    assert usage.returncode == 0 and "mcp" in usage.stdout and "Traceback" not in usage.stderr


def test_mcp_without_its_extra_says_how_to_install_it():
    served = _run("mcp")
    assert served.returncode == 2 and "Traceback" not in served.stderr
    assert "pip install 'torchpatch[mcp]" in served.stderr
