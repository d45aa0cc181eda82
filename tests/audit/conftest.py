"""Shared fixtures for the audit tests: the generated corpus (torch-built files, once per session)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from make_corpus import generate, torch_decisions


@pytest.fixture(scope="session")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """{filename: {"expected", "torch_2_13", "path", "report"}} for the full generated corpus."""
    pytest.importorskip("torch")
    pytest.importorskip("safetensors")
    pytest.importorskip("numpy")
    from torchpatch.audit.auditor import audit_path
    from torchpatch.versions import Version

    folder = tmp_path_factory.mktemp("corpus")
    labels = generate(str(folder))
    paths = {name: str(Path(folder) / name) for name in labels}
    decisions = torch_decisions(list(paths.values()))
    for name, label in labels.items():
        label["path"] = paths[name]
        label["torch_2_13"] = decisions[paths[name]]
        label["report"] = audit_path(paths[name], Version(2, 13))
    (Path(folder) / "labels.json").write_text(json.dumps({n: {k: v for k, v in l.items() if k != "report"} for n, l in labels.items()}))
    return labels
