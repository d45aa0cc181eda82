"""Dependency files: requirements are found where they are written, pins feed min-torch and TP304."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from torchpatch.frontends.cli import main
from torchpatch.engine.config import min_torch_from_pins
from torchpatch.dependency_files import is_dependency_file, requirements_in


@pytest.mark.parametrize("name, text, expected", [
    ("requirements.txt", "# comment\n-r base.txt\nnumpy>=1.26\ntorch==2.5.1 --hash=sha256:ab  # pinned\n\n",
     [("numpy", "numpy>=1.26"), ("torch", "torch==2.5.1")]),
    ("constraints-gpu.txt", "torch>=2.6 ; sys_platform == 'linux'\n", [("torch", "torch>=2.6 ; sys_platform == 'linux'")]),
    ("pyproject.toml", '[project]\nname = "x"\ndependencies = [\n  "numpy",\n  \'torch>=2.6\',\n]\n'
                       '[project.optional-dependencies]\ngpu = ["torch[cuda]==2.8.0"]\n',
     [("numpy", "numpy"), ("torch", "torch>=2.6"), ("torch", "torch[cuda]==2.8.0")]),
    ("setup.cfg", "[metadata]\nname = x\n[options]\ninstall_requires =\n    numpy\n    torch>=2.7  # min\n"
                  "[options.extras_require]\ndev =\n    torch==2.9.1\n",
     [("numpy", "numpy"), ("torch", "torch>=2.7"), ("torch", "torch==2.9.1")]),
    ("pyproject.toml", "not toml [", []),
])
def test_requirements_are_located(name, text, expected):
    spans = requirements_in(Path(name), text)
    assert [(span.name, text[span.start:span.end]) for span in spans] == expected


def test_dependency_file_names():
    assert all(is_dependency_file(Path(n)) for n in ("requirements.txt", "requirements-dev.txt", "constraints.txt",
                                                     "pyproject.toml", "setup.cfg"))
    assert not any(is_dependency_file(Path(n)) for n in ("setup.py", "req.txt", "README.md"))


def test_requirement_folders_hold_dependency_files(tmp_path, monkeypatch, capsys):
    # lightning 2.6.6 and torchmetrics 1.9.0 keep their pins in requirements/base.txt and
    # requirements/<part>/base.txt; torchmetrics' `torch >=2.0.0, <2.9.0` allows only affected releases.
    assert all(is_dependency_file(Path(n)) for n in ("requirements/base.txt", "requirements/pytorch/base.txt",
                                                     "constraints/pins.txt"))
    assert not any(is_dependency_file(Path(n)) for n in ("requirements/notes.md", "docs/requirements/a/b/c.txt",
                                                         "data/base.txt"))
    (tmp_path / "requirements" / "pytorch").mkdir(parents=True)
    (tmp_path / "requirements" / "base.txt").write_text("numpy\ntorch >=2.0.0, <2.9.0\n")
    (tmp_path / "requirements" / "pytorch" / "test.txt").write_text("torch>=2.1\n")
    monkeypatch.chdir(tmp_path)
    assert main(["check", "--isolated", "--output-format", "json", "."]) == 1
    findings = json.loads(capsys.readouterr().out)
    assert [(Path(f["filename"]).relative_to(tmp_path).as_posix(), f["code"], f["location"]["row"]) for f in findings] == [
        ("requirements/base.txt", "TP304", 2)]


def test_min_torch_combines_every_pin(tmp_path):
    (tmp_path / "requirements.txt").write_text("torch>=2.5\n")
    (tmp_path / "constraints.txt").write_text("torch>=2.7,<3\n")
    version, where = min_torch_from_pins(tmp_path)
    assert (str(version), where) == ("2.7", "constraints.txt, requirements.txt")


def test_min_torch_is_the_oldest_install_any_requirements_file_allows(tmp_path):
    # torchmetrics 1.9.0: typing.txt pins torch for the type checker; base.txt is what users install.
    (tmp_path / "requirements").mkdir()
    (tmp_path / "requirements" / "base.txt").write_text("numpy\ntorch >=2.0.0, <2.9.0\n")
    (tmp_path / "requirements" / "typing.txt").write_text("mypy==1.17.1\ntorch ==2.8.0\n")
    (tmp_path / "requirements-docs.txt").write_text("torch\n")  # no version: says nothing
    version, where = min_torch_from_pins(tmp_path)
    assert (str(version), where) == ("2.4", "requirements/base.txt")  # named from the project root


def test_constraint_files_bound_every_install(tmp_path):
    (tmp_path / "requirements.txt").write_text("torch>=2.4\n")
    (tmp_path / "requirements-gpu.txt").write_text("torch>=2.6\n")
    (tmp_path / "constraints.txt").write_text("torch>=2.5\n")
    assert min_torch_from_pins(tmp_path) == (min_torch_from_pins(tmp_path)[0], "constraints.txt, requirements.txt")
    assert str(min_torch_from_pins(tmp_path)[0]) == "2.5"


def test_pins_are_reported_with_noqa_and_json(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "requirements.txt").write_text("numpy\ntorch==2.5.1\n")
    (tmp_path / "requirements-old.txt").write_text("torch==2.5.1  # noqa: TP304 (reproducing a paper)\n")
    assert main(["check", "--output-format", "json", "."]) == 1
    findings = json.loads(capsys.readouterr().out)
    assert [(Path(f["filename"]).name, f["code"], f["location"], f["fix"]) for f in findings] == [
        ("requirements.txt", "TP304", {"row": 2, "column": 1}, None)]
    assert "CVE-2025-32434" in findings[0]["message"] and "CVE-2026-24747" in findings[0]["message"]


def test_fix_never_touches_dependency_files(tmp_path):
    path = tmp_path / "requirements.txt"
    path.write_text("torch==2.5.1\n")
    assert main(["check", "--isolated", "--fix", "--unsafe-fixes", str(tmp_path)]) == 1
    assert path.read_text() == "torch==2.5.1\n"


# -- issue 8 §5 / issue 11 §4: every place a project writes its torch pin feeds min-torch ---------------------
def test_min_torch_follows_requirement_includes(tmp_path):
    (tmp_path / "requirements").mkdir()
    (tmp_path / "requirements.txt").write_text("-r requirements/base.txt\n-c constraints/pins.txt\nnumpy\n")
    (tmp_path / "requirements" / "base.txt").write_text("--requirement=gpu.txt\ntorch>=2.4\n")
    (tmp_path / "requirements" / "gpu.txt").write_text("-r ../requirements.txt\n")  # a cycle is followed once
    (tmp_path / "constraints").mkdir()
    (tmp_path / "constraints" / "pins.txt").write_text("torch>=2.8,<3\n")
    version, where = min_torch_from_pins(tmp_path)
    assert (str(version), where) == ("2.8", "base.txt, pins.txt")


def test_min_torch_without_includes_is_unchanged(tmp_path):
    (tmp_path / "requirements.txt").write_text("-r missing.txt\ntorch>=2.5\n")
    assert str(min_torch_from_pins(tmp_path)[0]) == "2.5"


@pytest.mark.parametrize("pyproject, expected", [
    ('[dependency-groups]\ndev = ["pytest", {include-group = "gpu"}]\ngpu = ["torch>=2.7"]\n', "2.7"),
    ('[tool.poetry.dependencies]\npython = "^3.10"\ntorch = "^2.6"\n', "2.6"),
    ('[tool.poetry.dependencies]\ntorch = { version = ">=2.9,<3", source = "pytorch" }\n', "2.9"),
    ('[tool.poetry.group.train.dependencies]\ntorch = "~2.10.0"\n', "2.10"),
    ('[tool.poetry.dependencies]\ntorch = "2.11.0"\n', "2.11"),
    ('[tool.pdm.dev-dependencies]\ntest = ["torch>=2.12"]\n', "2.12"),
])
def test_min_torch_reads_groups_poetry_and_pdm(tmp_path, pyproject, expected):
    (tmp_path / "pyproject.toml").write_text(pyproject)
    assert str(min_torch_from_pins(tmp_path)[0]) == expected


@pytest.mark.parametrize("constraint, specifier", [
    ("^2.4", ">=2.4,<3"), ("^0.19.1", ">=0.19.1,<0.20"), ("~2.4.1", ">=2.4.1,<2.5"), ("~2", ">=2,<3"),
    ("2.5.1", "==2.5.1"), (">=2.4,<2.6", ">=2.4,<2.6"), ("*", ""), ("2.5.*", "==2.5.*"), ("^2.4 || ^3.0", None),
])
def test_poetry_constraints(constraint, specifier):
    from torchpatch.dependency_files import poetry_constraint

    assert poetry_constraint(constraint) == specifier


def test_poetry_pins_point_at_their_line():
    text = '[tool.poetry.dependencies]\npython = "^3.10"\ntorch = {version = "^2.5", optional = true}\n'
    spans = requirements_in(Path("pyproject.toml"), text)
    assert [(span.name, str(span.requirement.specifier), text[span.start:span.end]) for span in spans] == [
        ("torch", "<3,>=2.5", 'torch = {version = "^2.5"')]


ENVIRONMENT = """\
name: train
channels:
  - pytorch
  - nvidia
  - conda-forge
dependencies:
  - python=3.11
  - pytorch=2.5.1  # the conda build
  - "torchvision>=0.20"
  - conda-forge::numpy
  - pip
  - pip:
      - torchao==0.7.0
      - -r requirements-extra.txt
"""


def test_conda_environment_is_read():
    from torchpatch.dependency_files import conda_environment

    environment = conda_environment(ENVIRONMENT)
    assert [(s.name, str(s.requirement.specifier), ENVIRONMENT[s.start:s.end]) for s in environment.requirements] == [
        ("torch", "==2.5.1.*", "pytorch=2.5.1"), ("torchvision", ">=0.20", "torchvision>=0.20"),
        ("numpy", "", "conda-forge::numpy"), ("pip", "", "pip"), ("torchao", "==0.7.0", "torchao==0.7.0")]
    assert [name for name, _, _ in environment.channels] == ["pytorch", "nvidia", "conda-forge", "conda-forge"]
    assert ENVIRONMENT[environment.python.start:environment.python.end] == "python=3.11"
    assert is_dependency_file(Path("environment.yml")) and is_dependency_file(Path("environment-gpu.yaml"))


def test_min_torch_from_conda_environment(tmp_path):
    (tmp_path / "environment.yml").write_text(ENVIRONMENT)
    assert str(min_torch_from_pins(tmp_path)[0]) == "2.5"


@pytest.mark.parametrize("setup_py, expected", [
    ('from setuptools import setup\nsetup(name="p", install_requires=["numpy", "torch>=2.6"])\n', "2.6"),
    ('import setuptools\nREQUIRED = ["torch>=2.7,<3"]\nsetuptools.setup(install_requires=REQUIRED)\n', "2.7"),
    ('from setuptools import setup\nsetup(install_requires=["numpy"], extras_require={"train": ["torch>=2.8"]})\n',
     "2.8"),
    ('from setuptools import setup\nEXTRAS = {"gpu": ("torch~=2.9.0",)}\nsetup(extras_require=EXTRAS)\n', "2.9"),
])
def test_min_torch_reads_setup_py_literals(tmp_path, setup_py, expected):
    (tmp_path / "setup.py").write_text(setup_py, encoding="utf-8")
    version, where = min_torch_from_pins(tmp_path)
    assert (str(version), where) == (expected, "setup.py")


@pytest.mark.parametrize("setup_py", [
    # Computed requirements say nothing (setup.py is never run).
    'from setuptools import setup\nsetup(install_requires=open("requirements.txt").read().splitlines())\n',
    'from setuptools import setup\nREQS = ["numpy"]\nREQS += ["torch>=2.6"]\nsetup(install_requires=REQS)\n',
    'from setuptools import setup\nREQS = ["torch>=2.6"]\nREQS = ["torch>=2.8"]\nsetup(install_requires=REQS)\n',
    'from setuptools import setup\nsetup(install_requires=["torch" + ">=2.6"])\n',
    'def setup(:\n',  # not valid Python: no pins, no error
    'from setuptools import setup\nsetup(tests_require=["torch>=2.6"])\n',
])
def test_setup_py_without_literal_torch_pins_says_nothing(tmp_path, setup_py):
    (tmp_path / "setup.py").write_text(setup_py, encoding="utf-8")
    assert min_torch_from_pins(tmp_path) is None


def test_setup_py_and_requirements_are_separate_installs(tmp_path):
    """Each describes an install of its own: the oldest release either allows is the floor."""
    (tmp_path / "setup.py").write_text('from setuptools import setup\nsetup(install_requires=["torch>=2.9"])\n',
                                       encoding="utf-8")
    (tmp_path / "requirements.txt").write_text("torch>=2.5\n", encoding="utf-8")
    assert str(min_torch_from_pins(tmp_path)[0]) == "2.5"
    assert min_torch_from_pins(tmp_path)[1] == "requirements.txt"


def test_setup_py_pin_sets_min_torch_of_a_check(tmp_path, monkeypatch, capsys):
    """End to end: TP301's message names the minimum the setup.py pin sets (2.4 without it)."""
    (tmp_path / "setup.py").write_text('from setuptools import setup\nsetup(install_requires=["torch>=2.5"])\n',
                                       encoding="utf-8")
    (tmp_path / "model.py").write_text("import torch\nstate = torch.load(path)\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main(["check", "--output-format", "json", "model.py"]) == 1
    [finding] = json.loads(capsys.readouterr().out)
    assert finding["code"] == "TP301" and "your minimum is 2.5" in finding["message"]


@pytest.mark.parametrize("text", [
    "[isort]\nknown_third_party=torch,numpy\n",
    "[options]\nInstall_Requires =\n    torch>=2.4\n",
    "[options]\npython_requires = >=3.9\n[options.extras_require]\ngpu = torch>=2.6\n",
    "[DEFAULT]\ninstall_requires = torch==2.5\n[options]\nzip_safe = False\n",
    "[metadata]\nname = x\n",
    "not [ an ini file",
])
def test_a_setup_cfg_said_to_hold_no_requirement_holds_none(text):
    """Issue 27: the settings skip parsing (configparser) a setup.cfg with no install_requires and no extras."""
    from torchpatch.dependency_files import core_requirements_in
    from torchpatch.engine.config import _setup_cfg_may_require

    path = Path("setup.cfg")
    if not _setup_cfg_may_require(text):
        assert requirements_in(path, text) == [] and core_requirements_in(path, text) == []
    else:
        assert "torch>=2" in text or "torch==" in text
        assert requirements_in(path, text), text


def test_dependency_file_names_match_as_fnmatch_of_each_pattern():
    """Issue 27: one regex for the patterns (asked for every file discovery lists) answers as fnmatch does."""
    import fnmatch

    from torchpatch.dependency_names import DEPENDENCY_FILE_PATTERNS, _dependency_name_match

    names = ["requirements.txt", "requirements-dev.txt", "requirements", "constraints.txt", "constraints-ci.txt",
             "pyproject.toml", "pyproject.toml.bak", "setup.cfg", "xsetup.cfg", "environment.yml",
             "environment-gpu.yaml", "environment.yml\n", "Requirements.txt", "a.txt", "setup.py", "environment.ymlx"]
    for name in names:
        assert bool(_dependency_name_match(name)) == any(fnmatch.fnmatch(name, p) for p in DEPENDENCY_FILE_PATTERNS)


# -- dependency_files._parse: plain requirements without packaging's Requirement (its import costs 30 ms) --------

def _requirement_fields(requirement) -> tuple | None:
    if requirement is None:
        return None
    marker = str(requirement.marker) if requirement.marker is not None else None
    return requirement.name, sorted(requirement.extras), str(requirement.specifier), requirement.url, marker


def _requirement_texts(count: int) -> list[str]:
    """Near-PEP 508 texts, valid and not: names, blanks, extras, specifier lists, parentheses, trailing rests."""
    import random

    generator = random.Random(11)
    blanks = ["", " ", "\t", "  "]
    names = ["torch", "torch_", "Torch_Vision", "a.b", "x-y", "A9", "t.", "_t", "9", "é"]
    operators = ["==", ">=", "<=", "~=", "!=", "<", ">", "===", "=", "=>", "~"]
    versions = ["2", "2.4", "2.4.*", "2.*", "v2.4", "2.4rc1", "2.4.post1", "1!2.0", "2.4+cpu", "abc", "2..4", "*", "02.4"]
    texts = ["git+https://github.com/x/y.git", "https://download.pytorch.org/whl/cpu/torch-1.8.1%2Bcpu-cp37-none.whl",
             "./local/pkg", "file:///tmp/x", "torch @ file:///x.whl", "torch@https://x", "torch;", "torch>=2.4,",
             "torch ; python_version<'3.9'", "torch()", "torch[]", "torch>=2.4 <3", "torch>==2", ""]
    for _ in range(count):
        text = generator.choice(blanks) + generator.choice(names) + generator.choice(blanks)
        if generator.random() < 0.3:
            listed = ",".join(generator.choice(names) for _ in range(generator.randint(0, 3)))
            text += f"[{generator.choice(blanks)}{listed}{generator.choice(blanks)}{generator.choice([']', '', ',]'])}"
        parted = generator.choice(blanks) + generator.choice([",", ", ", " ,", ""]) + generator.choice(blanks)
        body = parted.join(generator.choice(operators) + generator.choice(blanks) + generator.choice(versions)
                           for _ in range(generator.randint(0, 3)))
        if generator.random() < 0.3:
            body = f"({generator.choice(blanks)}{body}{generator.choice(blanks)}{generator.choice([')', ''])}"
        text += body + generator.choice(blanks)
        if generator.random() < 0.1:
            text += generator.choice([";", "; python_version<'3.9'", ",", ")", "@", "x", ":", "+cpu"])
        texts.append(text)
    return texts


def test_requirements_read_without_packagings_parser_are_what_packaging_reads():
    from packaging.requirements import InvalidRequirement, Requirement

    from torchpatch.dependency_files import PlainRequirement, _parse

    def packaging_reads(text):
        try:
            return _requirement_fields(Requirement(text))
        except InvalidRequirement:
            return None

    texts = _requirement_texts(6000)
    assert [text for text in texts if _requirement_fields(_parse(text)) != packaging_reads(text)] == []
    assert sum(isinstance(_parse(text), PlainRequirement) for text in texts) > 500  # the fast path is taken


def test_a_requirements_file_without_a_marker_or_url_does_not_import_packagings_requirement_parser(tmp_path):
    import subprocess
    import sys

    (tmp_path / "requirements.txt").write_text("numpy>=1.26\ntorch==2.5.1\ngit+https://github.com/x/y.git\n")
    code = ("import sys; from pathlib import Path; from torchpatch.dependency_files import requirements_in; "
            "spans = requirements_in(Path('requirements.txt'), Path('requirements.txt').read_text()); "
            "print([str(s.requirement) for s in spans], 'packaging.requirements' in sys.modules)")
    run = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True)
    assert run.stdout.split() == ["['numpy>=1.26',", "'torch==2.5.1']", "False"]
