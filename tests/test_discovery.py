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


# -- a path named on the command line is checked, whatever an ignore file above it says (issue #25) --------

def test_a_named_folder_under_a_gitignored_parent_is_checked(project, capsys, monkeypatch):
    write(project / ".gitignore", "vendor/\n*.gen.py\n")
    write(project / "vendor" / "lib" / "a.py")
    write(project / "vendor" / "lib" / "b.gen.py")  # the parent's patterns still filter the folder's contents
    write(project / "vendor" / "lib" / ".gitignore", "local.py\n")
    write(project / "vendor" / "lib" / "local.py")
    write(project / "main.py")
    assert checked(capsys, ".") == ["main.py"]
    assert checked(capsys, "vendor/lib") == ["vendor/lib/a.py"]
    assert checked(capsys, "vendor") == ["vendor/lib/a.py"]
    assert main(["check", "vendor/lib"]) == 1
    capsys.readouterr()
    monkeypatch.chdir(project / "vendor" / "lib")
    assert main(["check", "--output-format", "json", "."]) == 1
    assert [Path(f["filename"]).name for f in json.loads(capsys.readouterr().out)] == ["a.py"]


def test_a_pattern_matching_the_named_folder_still_matches_deeper_entries(project, capsys):
    # ruff: `lib/` in the repository's .gitignore does not hide `check lib`, but a `lib/` inside it is hidden.
    write(project / ".gitignore", "lib/\n")
    write(project / "lib" / "a.py")
    write(project / "lib" / "sub" / "lib" / "deep.py")
    assert checked(capsys, "lib") == ["lib/a.py"]


def test_force_exclude_keeps_excluding_a_named_folder_under_an_excluded_parent(project, capsys):
    write(project / "torchpatch.toml", 'extend-exclude = ["vendor/"]\n')
    write(project / "vendor" / "lib" / "a.py")
    assert checked(capsys, "vendor/lib") == ["vendor/lib/a.py"]
    assert main(["check", "--force-exclude", "vendor/lib/a.py"]) == 0
    assert "No Python files found" in capsys.readouterr().err


def test_gitignore_outside_a_git_repository_means_nothing(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no .git anywhere: git and ruff ignore .gitignore files here
    write(tmp_path / ".gitignore", "vendor/\n")
    write(tmp_path / "sub" / ".gitignore", "x.py\n")
    write(tmp_path / "vendor" / "lib" / "a.py")
    write(tmp_path / "sub" / "x.py")
    write(tmp_path / "b.py")
    assert checked(capsys, ".") == ["b.py", "sub/x.py", "vendor/lib/a.py"]
    write(tmp_path / ".ignore", "vendor/\n")  # .ignore applies in or out of a repository
    assert checked(capsys, ".") == ["b.py", "sub/x.py"]
    assert checked(capsys, "vendor/lib") == ["vendor/lib/a.py"]


def test_a_repository_found_below_the_named_folder_brings_its_gitignore(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    write(tmp_path / "repo" / ".gitignore", "generated/\n")
    write(tmp_path / "repo" / "generated" / "g.py")
    write(tmp_path / "repo" / "m.py")
    assert checked(capsys, ".") == ["repo/m.py"]


def test_gitignore_files_above_the_working_directory_up_to_the_repository_root_apply(project, capsys, monkeypatch):
    write(project / ".gitignore", "*_pb2.py\n")
    write(project / "pkg" / "sub" / "m_pb2.py")
    write(project / "pkg" / "sub" / "m.py")
    monkeypatch.chdir(project / "pkg")
    main(["check", "--output-format", "json", "sub"])
    assert [Path(f["filename"]).name for f in json.loads(capsys.readouterr().out)] == ["m.py"]


def test_plain_name_excludes_decide_as_pathspec_does_without_it(tmp_path):
    """FileFilter.excludes answers plain-name patterns (the default excludes) by path components, without
    importing pathspec (issue 27: a warm rerun's start-up); the answers are pathspec's."""
    import itertools

    import pathspec

    from torchpatch.engine.discover import DEFAULT_EXCLUDE, FileFilter

    for patterns in (DEFAULT_EXCLUDE, ("build", "docs/", "x"), ("tests/",)):
        file_filter = FileFilter(tmp_path, tuple(patterns))
        assert file_filter._names_only
        spec = pathspec.PathSpec.from_lines("gitignore", list(patterns))
        names = ["a", "build", "docs", "tests", ".git", "x", "env", "b.py"]
        for depth in (1, 2, 3):
            for parts in itertools.product(names, repeat=depth):
                relative = "/".join(parts)
                for is_dir in (True, False):
                    expected = spec.match_file(relative + "/" if is_dir else relative)
                    assert file_filter.excludes(tmp_path.resolve() / relative, is_dir=is_dir) == expected, relative
        for is_dir in (True, False):  # the base itself
            assert file_filter.excludes(tmp_path.resolve(), is_dir=is_dir) == spec.match_file("./" if is_dir else ".")
    assert not FileFilter(tmp_path, ("*.py", "build"))._rest_patterns == []  # a glob: pathspec decides
