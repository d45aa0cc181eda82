"""Discovery tells the settings resolver what each folder holds (issue 27: no second stat or listing per
folder); every file's settings are the same as those found with the resolver's own stats and listings."""

from __future__ import annotations

from pathlib import Path

from torchpatch.engine.config import Overrides, SettingsResolver
from torchpatch.engine.discover import discover
from torchpatch.frontends.check import file_filter


def _tree(root: Path) -> None:
    files = {
        "a/setup.py": "from setuptools import setup\nsetup(install_requires=['torch>=2.6'])\n",
        "a/pkg/m.py": "import torch\n",
        "a/pkg/sub/torchpatch.toml": 'select = ["TP3"]\n',
        "a/pkg/sub/n.py": "import torch\n",
        "a/pkg/sub/deeper/o.py": "import torch\n",
        "b/pyproject.toml": '[project]\nname = "b"\ndependencies = ["torch>=2.8"]\n',
        "b/src/p.py": "import torch\n",
        "b/src/q/.torchpatch.toml": 'ignore = ["TP301"]\n',
        "b/src/q/r.py": "import torch\n",
        "c/requirements.txt": "torch==2.7.1\n",
        "c/x/y.py": "import torch\n",
        "d/pyproject.toml/README": "a folder named pyproject.toml\n",
        "d/e.py": "import torch\n",
        "f/pyproject.toml": '[tool.torchpatch]\nmin-torch = "2.5"\n',
        "f/g/h.py": "import torch\n",
        "a/pkg/sub/deeper/more/p.py": "import torch\n",  # settings inherited from a folder with a configuration
        "c/x/w/v.py": "import torch\n",  # inherited from a project root with a requirements file
        "z/k/n.py": "import torch\n",  # no packaging file anywhere above: each folder is its own root
        "z/k/l/m.py": "import torch\n",
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def _settings(root: Path, hinted: bool) -> dict[str, tuple]:
    resolver = SettingsResolver(Overrides())
    found = discover([root], lambda folder: file_filter(resolver.for_folder(folder)),
                     note_listing=resolver.note_listing if hinted else None)
    if hinted:
        assert resolver._listed  # the hints were taken
    answers = {}
    for path in found:
        settings = resolver.for_file(path)
        answers[str(path)] = (settings.min_torch, settings.min_torch_source, settings.target, settings.config_path,
                              settings.project_root, settings.result_key(path))
    return answers


def test_listing_hints_give_every_file_the_same_settings(tmp_path):
    _tree(tmp_path)
    plain, hinted = _settings(tmp_path, False), _settings(tmp_path, True)
    assert plain == hinted and len(plain) >= 9
    assert len({answer[1] for answer in plain.values()}) >= 4  # several pins and configurations took part
    assert plain[str(tmp_path / "z" / "k" / "l" / "m.py")][4] != plain[str(tmp_path / "z" / "k" / "n.py")][4]


def test_a_relative_or_linked_root_gets_the_settings_of_the_resolved_folders(tmp_path, monkeypatch):
    """for_file takes a listed folder as resolved when the path spells it so (relative to the working folder
    included); through a link or ``..`` it resolves, and the answers are those of the real paths."""
    _tree(tmp_path / "real")
    (tmp_path / "link").symlink_to(tmp_path / "real")
    (tmp_path / "other").mkdir()
    monkeypatch.chdir(tmp_path)
    expected = {Path(path).relative_to(tmp_path / "real"): answer[:5]
                for path, answer in _settings(tmp_path / "real", True).items()}
    for root in (Path("real"), Path("link"), Path("other/../real"), tmp_path / "link"):
        found = {Path(path).relative_to(root): answer[:5] for path, answer in _settings(root, True).items()}
        assert found == expected, root
