"""Which files are checked: .gitignore/.ignore, gitignore-style globs in exclude and per-file-ignores, --force-exclude."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from torchpatch.frontends.cli import main

LOAD = 'import torch\nstate = torch.load("m.pt")\n'


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".git").mkdir()
    return tmp_path


def write(path: Path, text: str = LOAD) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def checked(capsys, *args: str) -> list[str]:
    main(["check", "--output-format", "json", *args])
    return sorted({Path(f["filename"]).relative_to(Path.cwd().resolve()).as_posix()
                   for f in json.loads(capsys.readouterr().out)})


def test_gitignore_and_ignore_files_are_respected(project, capsys):
    write(project / ".gitignore", "generated/\n*.gen.py\n!keep.gen.py\n")
    write(project / "src" / ".ignore", "scratch.py\n")
    write(project / "src" / "sub" / ".gitignore", "local_*.py\n")
    for name in ("generated/a.py", "src/b.gen.py", "src/keep.gen.py", "src/scratch.py", "src/sub/local_x.py",
                 "src/sub/real.py", "src/main.py"):
        write(project / name)
    assert checked(capsys, ".") == ["src/keep.gen.py", "src/main.py", "src/sub/real.py"]
    assert checked(capsys, "src") == ["src/keep.gen.py", "src/main.py", "src/sub/real.py"]  # the root's file applies
    assert len(checked(capsys, "--no-respect-gitignore", ".")) == 7
    assert checked(capsys, "src/scratch.py") == ["src/scratch.py"]  # a file named explicitly is checked


def test_globs_with_double_star_in_exclude_and_per_file_ignores(project, capsys):
    write(project / "pyproject.toml", '[tool.torchpatch]\nextend-exclude = ["**/fixtures/**/*.py", "/top_only.py"]\n'
                                      '[tool.torchpatch.per-file-ignores]\n"tests/**/test_*.py" = ["TP301"]\n')
    for name in ("pkg/fixtures/deep/er/a.py", "pkg/fixtures.py", "top_only.py", "pkg/top_only.py",
                 "tests/unit/deep/test_a.py", "tests/unit/deep/helper.py", "tests/test_b.py"):
        write(project / name)
    assert checked(capsys, ".") == ["pkg/fixtures.py", "pkg/top_only.py", "tests/unit/deep/helper.py"]


def test_force_exclude_applies_exclusions_to_explicit_files(project, capsys):
    write(project / "torchpatch.toml", 'extend-exclude = ["migrations"]\n')
    write(project / "app" / "migrations" / "m1.py")
    write(project / "app" / "views.py")
    assert checked(capsys, "app/migrations/m1.py", "app/views.py") == ["app/migrations/m1.py", "app/views.py"]
    assert checked(capsys, "--force-exclude", "app/migrations/m1.py", "app/views.py") == ["app/views.py"]
    assert checked(capsys, "--force-exclude", "app/migrations") == []  # an excluded folder, named explicitly
    assert checked(capsys, "app/migrations") == ["app/migrations/m1.py"]


def test_excludes_of_a_sub_configuration_apply_under_it(project, capsys):
    write(project / "pyproject.toml", '[tool.torchpatch]\nextend-exclude = ["vendored"]\n')
    write(project / "lib" / "torchpatch.toml", 'extend-exclude = ["generated"]\n')
    write(project / "lib" / "generated" / "a.py")
    write(project / "lib" / "vendored" / "b.py")  # the root's exclude does not reach a file with its own config
    write(project / "vendored" / "c.py")
    write(project / "generated" / "d.py")
    assert checked(capsys, ".") == ["generated/d.py", "lib/vendored/b.py"]


def test_explicit_files_each_once_whatever_way_they_are_named(project):
    # discover resolves each explicit file's folder once per folder and the file itself only when it is a
    # link or ``..``: what it returns is what resolving every path in full gives.
    import os

    from torchpatch.engine.discover import FileFilter, discover

    write(project / "pkg" / "a.py")
    write(project / "pkg" / "sub" / "b.py")
    os.symlink(project / "pkg", project / "linked")
    os.symlink(project / "pkg" / "a.py", project / "alias.py")
    named = [Path("pkg/a.py"), Path("linked/a.py"), Path("alias.py"), Path("pkg/sub/../a.py"), Path("pkg/sub/b.py"),
             Path("linked/sub/b.py"), Path("missing.py"), Path("pkg/missing.py"), Path("missing.py"), Path("pkg/sub/..")]
    found = discover(named, lambda folder: FileFilter(project, ()))

    seen, expected = set(), []
    for path in named:
        if not path.is_dir() and os.path.realpath(path) not in seen:
            seen.add(os.path.realpath(path))
            expected.append(path)
    assert found == sorted(expected, key=lambda p: f"{os.path.realpath(p.parent)}/{p.name}")
    assert found == [Path("missing.py"), Path("pkg/a.py"), Path("pkg/missing.py"), Path("pkg/sub/b.py")]
