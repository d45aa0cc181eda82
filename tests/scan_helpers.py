"""Generated trees for the large-scan tests: Python files with and without findings, and checkpoints."""

from __future__ import annotations

import io
import json
import pickle
import zipfile
from pathlib import Path

LOAD = 'import torch\nstate = torch.load("m.pt")\n'
CLEAN = "import torch\nx = torch.zeros(3)\n"
SCALER = "import torch\nscaler = torch.cuda.amp.GradScaler()\n"


def python_tree(root: Path, count: int) -> list[Path]:
    """``count`` files in folders of 100: a third with TP301, a third clean, a third with the AMP rule,
    and one syntax error."""
    paths = []
    for index in range(count):
        text = (LOAD, CLEAN, SCALER)[index % 3] + f"value = {index}\n"
        path = root / f"repo{index // 100:03d}" / f"m{index:05d}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        paths.append(path)
    broken = root / "repo000" / "broken.py"
    broken.write_text("def f(:\n")
    paths.append(broken)
    return sorted(paths)


def torch_zip(obj: bytes, storage: bytes = b"\0" * 64, folder: str = "archive") -> bytes:
    """A zip laid out as torch.save writes one: data.pkl, byteorder, a storage record, version."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr(f"{folder}/data.pkl", obj)
        archive.writestr(f"{folder}/byteorder", b"little")
        archive.writestr(f"{folder}/data/0", storage)
        archive.writestr(f"{folder}/version", b"3\n")
    return buffer.getvalue()


SAFE = torch_zip(pickle.dumps({"step": 3, "lr": 0.1}, protocol=2))
# builtins.print("...") at load time: harmless, and what the auditor must call malicious.
MALICIOUS = torch_zip(b"\x80\x02}X\x01\x00\x00\x00xcbuiltins\nprint\n(X\x04\x00\x00\x00demotRs.")


def checkpoint_tree(root: Path, count: int) -> list[Path]:
    """``count`` checkpoints (one in ten malicious) and a README that a folder scan skips."""
    paths = []
    for index in range(count):
        path = root / f"model{index // 100:03d}" / f"ckpt{index:05d}.pt"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(MALICIOUS if index % 10 == 3 else SAFE)
        paths.append(path)
    (root / "model000" / "README.md").write_text("# not a checkpoint\n")
    return paths


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]
