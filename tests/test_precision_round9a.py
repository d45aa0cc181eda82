"""Round 9, part a of issue #8's precision sample: each false finding (or wrong message, or missed finding)
read on real packages, as a synthetic case of the same shape (no package code)."""

from __future__ import annotations

import pytest

from precision_helpers import findings_of


# -- a version check on a name the function itself computes from the torch version ------------------
# (captum 0.9 influence/_utils/common.py: ``version = parse_version(torch.__version__)`` in the function,
# then ``if version < (1, 12, 0): ... elif version >= (1, 12, 0) and version < (2, 0, 0):
# torch.nn.utils.stateless.functional_call(...) else: torch.func.functional_call(...)``; the middle
# branch runs only before 2.0, where the stateless function is not deprecated.)

_RANGES = ("import torch\nfrom mylib.versions import parse_version\n\n"
           "def call(model, params, args):\n"
           "    version = parse_version(torch.__version__)\n"
           "    if version < (1, 12, 0):\n"
           "        return model(*args)\n"
           "    elif version >= (1, 12, 0) and version < (2, 0, 0):\n"
           "        return torch.nn.utils.stateless.functional_call(model, params, args)\n"
           "    else:\n"
           "        return torch.func.functional_call(model, params, args)\n")


@pytest.mark.parametrize(("source", "code"), [
    (_RANGES, "TP201"),
    # one plain test, the old call in the body
    ("import torch\nfrom packaging.version import Version\n\ndef make():\n"
     "    torch_version = Version(torch.__version__)\n"
     "    if torch_version < Version('2.3'):\n        return torch.cuda.amp.GradScaler()\n"
     "    return torch.amp.GradScaler('cuda')\n", "TP202"),
    # the old call in the else of a test for the new releases
    ("import torch\n\ndef make():\n    major = int(torch.__version__.split('.')[0])\n"
     "    if major >= 3:\n        return None\n    else:\n        return torch.cuda.amp.GradScaler()\n", "TP202"),
    # a local flag computed from the torch version
    ("import torch\nfrom packaging import version\n\ndef make():\n"
     "    old_torch = version.parse(torch.__version__) < version.parse('2.3')\n"
     "    if old_torch:\n        return torch.cuda.amp.GradScaler()\n    return torch.amp.GradScaler('cuda')\n",
     "TP202"),
])
def test_a_function_local_torch_version_makes_a_version_check(lint, source, code):
    assert findings_of(lint, source, code) == []


@pytest.mark.parametrize("source", [
    # the new-release branch of the same local check is ordinary code
    "import torch\nfrom packaging.version import Version\n\ndef make():\n"
    "    torch_version = Version(torch.__version__)\n"
    "    if torch_version >= Version('2.3'):\n        return torch.cuda.amp.GradScaler()\n    return None\n",
    # a local called version that is not the torch version (a config field) is no check
    "import torch\n\ndef make(config):\n    version = config.version\n"
    "    if version < (2, 0):\n        return torch.cuda.amp.GradScaler()\n",
    # a parameter called version is not followed
    "import torch\n\ndef make(version):\n    if version < (2, 0):\n        return torch.cuda.amp.GradScaler()\n",
    # the local is the torch version in another function only
    "import torch\n\ndef other():\n    version = torch.__version__\n    return version\n\n"
    "def make(version):\n    if version < '2.0':\n        return torch.cuda.amp.GradScaler()\n",
    # a local that shadows a module-level version name with something else
    "import torch\nVERSION = torch.__version__\n\ndef make(config):\n    VERSION = config.version\n"
    "    if VERSION < (2, 0):\n        return torch.cuda.amp.GradScaler()\n",
])
def test_other_locals_are_no_version_check(lint, source):
    assert len(findings_of(lint, source, "TP202")) == 1


def test_a_known_version_test_beside_a_local_minimum_keeps_the_fallback_unreported(lint):
    # piq 0.8 iw_ssim.py: ``minimum = _parse_version("1.10.0")``, ``torch_version = _parse_version(torch.__version__)``,
    # ``if len(torch_version) != 0 and torch_version >= minimum: linalg.eigh else: torch.symeig`` — the
    # else is the old-release fallback (or an unreadable version); following the locals must not expose it.
    source = ("import torch\nfrom mylib.utils import _parse_version\n\ndef eig(c):\n"
              "    recommended_torch_version = _parse_version('1.10.0')\n"
              "    torch_version = _parse_version(torch.__version__)\n"
              "    if len(torch_version) != 0 and torch_version >= recommended_torch_version:\n"
              "        return torch.linalg.eigh(c)\n"
              "    else:\n        return torch.symeig(c, eigenvectors=True)\n")
    assert findings_of(lint, source, "TP130") == []


def test_a_local_that_reads_itself_or_another_local_version(lint):
    # ``v = torch.__version__`` then ``parsed = parse(v)``: followed through the second local
    chained = ("import torch\nfrom packaging.version import parse\n\ndef make():\n    v = torch.__version__\n"
               "    parsed = parse(v)\n    if parsed < parse('2.3'):\n        return torch.cuda.amp.GradScaler()\n")
    assert findings_of(lint, chained, "TP202") == []
    # ``flag = flag and ...`` is not followed (which binding it reads is not known): the name decides
    looped = ("import torch\n\ndef make(flag):\n    flag = flag and torch.cuda.is_available()\n"
              "    if flag:\n        return torch.cuda.amp.GradScaler()\n")
    assert len(findings_of(lint, looped, "TP202")) == 1
