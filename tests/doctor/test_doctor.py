"""torchpatch doctor: recorded environments for every finding, planning mode, usage errors and the facts table."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from torchpatch import platform_facts as facts
from torchpatch.frontends.cli import UsageError
from torchpatch.doctor import probes
from torchpatch.frontends import doctor as command
from torchpatch.doctor.checks import FINDINGS, diagnose, extension_abi
from torchpatch.doctor.report import render_full, to_json
from torchpatch.versions import KNOWN_RELEASES

RECORDINGS = Path(__file__).parent / "recordings"
RECORDING_FILES = sorted(RECORDINGS.glob("*.json"))


def run_doctor(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """Run the doctor command as the CLI would (its own parser, so other commands' imports do not matter)."""
    parser = argparse.ArgumentParser(prog="torchpatch doctor")
    command.add_arguments(parser)
    code = command.run(parser.parse_args(argv))
    return code, capsys.readouterr().out


def expectation(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))["expect"]


@pytest.mark.parametrize("path", RECORDING_FILES, ids=[path.stem for path in RECORDING_FILES])
def test_recorded_environment(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    expect = expectation(path)
    code, out = run_doctor(["--environment", str(path), "--output-format", "json"], capsys)
    report = json.loads(out)
    assert code == expect["exit"]
    assert sorted(finding["code"] for finding in report["findings"]) == sorted(expect["codes"])
    by_code: dict[str, dict] = {}
    for finding in report["findings"]:  # the first (most severe) finding of each code
        by_code.setdefault(finding["code"], finding)
    for code_name, fix in expect.get("fix", {}).items():
        assert by_code[code_name]["fix"] == fix
    for code_name, severity in expect.get("severity", {}).items():
        assert by_code[code_name]["severity"] == severity
    for finding in report["findings"]:
        assert set(finding) >= {"code", "severity", "message", "fix"}
        assert finding["message"]


def test_every_finding_code_has_a_recording() -> None:
    recorded = {code for path in RECORDING_FILES for code in expectation(path)["codes"]}
    planned = {"DR001", "DR060"}  # covered by the planning and --target-torch tests below
    assert set(FINDINGS) == recorded | planned


def test_json_has_the_documented_keys() -> None:
    env = probes.load_recording(RECORDINGS / "volta-on-cu130.json")
    report = to_json(env, diagnose(env))
    assert {"python", "torch", "gpus", "packages", "findings"} <= set(report)
    assert report["torch"]["cuda"] == "13.0"
    assert report["gpus"] == [
        {"index": 0, "name": "Tesla V100-SXM2-32GB", "capability": "7.0", "arch": "sm_70", "source": "torch"}
    ]


def test_full_report_shows_the_fix() -> None:
    env = probes.load_recording(RECORDINGS / "driver-too-old.json")
    text = render_full(env, diagnose(env))
    assert "DR030 error" in text
    assert (
        "fix: pip uninstall -y torch && pip install torch==2.12.1 --index-url https://download.pytorch.org/whl/cu126"
        in text
    )
    assert "1 problem(s) found." in text


def test_planning_volta_driver_535_python_312_torch_211(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run_doctor(
        ["--gpu", "sm_70", "--driver", "535", "--python", "3.12", "--target-torch", "2.11", "--output-format", "json"],
        capsys,
    )
    plan = json.loads(out)["plan"]
    assert code == 0
    assert plan["command"] == "pip install torch==2.11.0 --index-url https://download.pytorch.org/whl/cu126"
    assert plan["driver_mode"] == "minor-compat"
    assert any("560.35.05" in note for note in plan["notes"])


@pytest.mark.parametrize(
    ("argv", "command_line"),
    [
        # Ampere with a CUDA 13 driver: the PyPI default cu130 of 2.13.
        (
            ["--gpu", "8.0", "--driver", "580.95.05", "--python", "3.12", "--target-torch", "2.13"],
            "pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cu130",
        ),
        # RTX 5090 (sm_120) in 2.7: only the cu128 build has Blackwell kernels.
        (
            ["--gpu", "sm_120", "--driver", "575.57.08", "--target-torch", "2.7"],
            "pip install torch==2.7.1 --index-url https://download.pytorch.org/whl/cu128",
        ),
        # A driver from the CUDA 11 era: only cu118 runs, and 2.7 is the last release with it.
        (
            ["--gpu", "8.6", "--driver", "470.82.01"],
            "pip install torch==2.7.1 --index-url https://download.pytorch.org/whl/cu118",
        ),
        # No GPU: the CPU build of the newest release for Python 3.11.
        (
            ["--gpu", "none", "--python", "3.11"],
            "pip install torch==2.15.0 --index-url https://download.pytorch.org/whl/cpu",
        ),
        # An exact patch release is kept.
        (
            ["--gpu", "sm_90", "--driver", "580.95.05", "--target-torch", "2.12.0"],
            "pip install torch==2.12.0 --index-url https://download.pytorch.org/whl/cu130",
        ),
    ],
    ids=["ampere-213", "blackwell-27-cu128", "driver-470", "cpu-only", "exact-patch"],
)
def test_planning_chooses_the_build(argv: list[str], command_line: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run_doctor([*argv, "--output-format", "json"], capsys)
    assert code == 0
    assert json.loads(out)["plan"]["command"] == command_line


def test_planning_no_build_fits_the_target(capsys: pytest.CaptureFixture[str]) -> None:
    # 2.15 lists no CUDA 12.6 build (RFC #190385), so nothing has Volta kernels; 2.14.1 cu126 still does.
    code, out = run_doctor(
        ["--gpu", "sm_70", "--driver", "550.54.15", "--target-torch", "2.15", "--output-format", "json"], capsys
    )
    report = json.loads(out)
    assert code == 1
    [finding] = report["findings"]
    assert finding["code"] == "DR060"
    assert "cu132 has no kernels for sm_70" in finding["message"]
    assert finding["fix"] == "pip install torch==2.14.1 --index-url https://download.pytorch.org/whl/cu126"


def test_planning_nothing_fits_at_all(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run_doctor(["--gpu", "sm_50", "--driver", "418.39", "--output-format", "json"], capsys)
    [finding] = json.loads(out)["findings"]
    assert code == 1
    assert finding["code"] == "DR060"
    assert finding["fix"] == ""


def test_planning_python_outside_the_target(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run_doctor(
        ["--gpu", "sm_90", "--python", "3.10", "--target-torch", "2.15", "--output-format", "json"], capsys
    )
    codes = sorted(finding["code"] for finding in json.loads(out)["findings"])
    assert code == 1
    assert codes == ["DR001", "DR060"]


def test_target_torch_against_a_recording(capsys: pytest.CaptureFixture[str]) -> None:
    path = RECORDINGS / "python-310-torch-214.json"
    code, out = run_doctor(["--environment", str(path), "--target-torch", "2.15", "--output-format", "json"], capsys)
    by_code = {finding["code"]: finding for finding in json.loads(out)["findings"]}
    assert code == 1
    assert "outside the target torch 2.15's range 3.11–3.15" in by_code["DR001"]["message"]
    # The installed 2.14.1+cu130 is already the newest torch for Python 3.10: the fix is a newer Python.
    assert by_code["DR001"]["fix"] == ""
    assert by_code["DR001"]["notes"][0] == "use Python 3.11–3.15 for torch 2.15"


@pytest.mark.parametrize(
    "argv",
    [
        ["--gpu", "sm_xx"],
        ["--gpu", "sm_200"],
        ["--python", "2.7"],
        ["--python", "three"],
        ["--target-torch", "1.0"],
        ["--target-torch", "2.16"],
        ["--target-torch", "latest"],
        ["--driver", "abc", "--gpu", "sm_80"],
        ["--driver", "12.4", "--gpu", "sm_80"],
        ["--driver", "535"],
        ["--environment", "/nonexistent/recording.json"],
        ["--record", "x.json", "--gpu", "sm_80"],
        ["--record", "x.json", "--environment", "y.json"],
    ],
)
def test_bad_input_is_a_usage_error(argv: list[str]) -> None:
    parser = argparse.ArgumentParser()
    command.add_arguments(parser)
    with pytest.raises(UsageError) as error:
        command.run(parser.parse_args(argv))
    assert "\n" not in str(error.value)


def test_bad_recording_is_a_usage_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    parser = argparse.ArgumentParser()
    command.add_arguments(parser)
    with pytest.raises(UsageError, match="not a doctor recording"):
        command.run(parser.parse_args(["--environment", str(bad)]))


def test_cli_registers_doctor_with_exit_code_2_on_bad_input(capsys: pytest.CaptureFixture[str]) -> None:
    from torchpatch.frontends import cli

    assert ("doctor", "torchpatch.frontends.doctor") in {(name, module) for name, module, _ in cli.COMMANDS}
    assert cli.main(["doctor", "--gpu", "sm_xx"]) == 2
    assert capsys.readouterr().err.count("\n") == 1


# --- parsing of raw probe output -------------------------------------------------------------------


def test_parse_nvidia_smi_with_and_without_compute_cap() -> None:
    gpus, driver = probes.parse_nvidia_smi(
        "0, NVIDIA A100-SXM4-80GB, 8.0, 580.95.05\n1, NVIDIA A100-SXM4-80GB, 8.0, 580.95.05\n"
    )
    assert [gpu.capability for gpu in gpus] == [(8, 0), (8, 0)] and driver == "580.95.05"
    gpus, driver = probes.parse_nvidia_smi("0, Tesla K80, 470.82.01\n")
    assert gpus[0].capability is None and driver == "470.82.01"
    assert probes.parse_nvidia_smi("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.") == (
        [],
        None,
    )


def test_parse_proc_driver_version() -> None:
    text = "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.95.05  Release Build  (dvs-builder@U16-I3-B03-4-3)\n"
    assert probes.parse_proc_driver_version(text) == "580.95.05"


def test_parse_version_py() -> None:
    text = "__version__ = '2.8.0+cu128'\ncuda: Optional[str] = '12.8'\nhip: Optional[str] = None\n"
    assert probes.parse_version_py(text) == {"__version__": "2.8.0+cu128", "cuda": "12.8", "hip": None}


def test_extension_abi_from_mangled_names() -> None:
    assert extension_abi(("_ZN3c106detail14torchCheckFailEPKcS2_jRKSs",)) == "pre-cxx11"
    new = "_ZN3c106detail14torchCheckFailEPKcS2_jRKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE"
    assert extension_abi((new,)) == "cxx11"
    assert extension_abi(("_ZN2at4_ops10zeros_like4callERKNS_6TensorE",)) is None


# --- the shared facts table ------------------------------------------------------------------------


def test_facts_cover_every_known_release_with_sources() -> None:
    assert [release.version for release in facts.releases()] == list(KNOWN_RELEASES)
    source_keys = set(facts.sources())
    for release in facts.releases():
        cited = {part.strip().split(" ")[0] for part in release.source.split(";")}
        assert cited <= source_keys, release.version
        assert release.build(release.pypi_default) is not None, release.version
        for build in release.builds:
            assert {part.strip() for part in build.source.split(";")} <= source_keys, (release.version, build.tag)
            if build.cuda:
                assert facts.driver_requirement(build.cuda) is not None, build.tag
            if not build.verified:
                assert build.source, (release.version, build.tag)
    for requirement in facts.driver_requirements():
        assert requirement.minor_compat_driver <= requirement.toolkit_driver


def test_facts_match_the_catalog_environment_matrix() -> None:
    assert facts.python_range("2.9") == ((3, 10), (3, 14))
    assert facts.python_range("2.15.0") == ((3, 11), (3, 15))
    assert [release.pypi_default for release in facts.releases()] == [
        "cu121",
        "cu124",
        "cu124",
        "cu126",
        "cu128",
        "cu128",
        "cu128",
        "cu130",
        "cu130",
        "cu130",
        "cu130",
        "cu132",
    ]
    assert not facts.release("2.6").cxx11_abi and facts.release("2.7").cxx11_abi
    # Catalog seed correction: cu128 kept Volta in 2.8–2.10 and dropped it in 2.11.
    assert facts.release("2.10").build("cu128").runs_on((7, 0))
    assert not facts.release("2.11").build("cu128").runs_on((7, 0))
    assert facts.release("2.14").build("cu126").runs_on((6, 1))
    assert [advisory.fixed for advisory in facts.cves() if advisory.severity == "error"] == ["2.6.0", "2.10.0"]


def test_build_kernel_rule_same_major_and_ptx() -> None:
    cu130 = facts.release("2.13").build("cu130")
    assert cu130.runs_on((8, 9))  # sm_86 kernels serve Ada
    assert cu130.runs_on((12, 1))  # sm_120 cubins serve GB10
    assert not cu130.runs_on((7, 0))
    assert cu130.runs_on((13, 0))  # compute_120 PTX is JIT-compiled for newer GPUs


# --- the real machine ------------------------------------------------------------------------------


@pytest.mark.torch
def test_real_probe_against_installed_torch(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    pytest.importorskip("torch")
    from importlib import metadata

    recording = tmp_path / "this-machine.json"
    code, out = run_doctor(["--output-format", "json", "--record", str(recording)], capsys)
    report = json.loads(out)
    # Replaying the recording gives the same report without importing torch again.
    replay_code, replay = run_doctor(["--output-format", "json", "--environment", str(recording)], capsys)
    assert (replay_code, json.loads(replay)) == (code, report)
    torch = report["torch"]
    assert torch["version"] == metadata.version("torch")
    assert torch["importable"] and torch["source"] == "probe"
    assert torch["cxx11_abi"] is True  # every PyPI x86_64 wheel since 2.7
    if torch["build"] == "cpu":
        assert torch["arch_list"] == []
    codes = {finding["code"] for finding in report["findings"]}
    assert not {"DR004", "DR005", "DR020", "DR040", "DR041", "DR050", "DR051"} & codes
    assert code == (1 if any(f["severity"] in ("error", "warning") for f in report["findings"]) else 0)
    # The table's Python range for this release equals the wheel's own classifiers.
    release = facts.release(torch["version"])
    assert release is not None
    classifiers = metadata.metadata("torch").get_all("Classifier") or []
    pythons = sorted(
        tuple(int(part) for part in line.rsplit(":: ", 1)[1].split("."))
        for line in classifiers
        if line.startswith("Programming Language :: Python :: 3.")
    )
    assert (pythons[0], pythons[-1]) == (release.python_min, release.python_max)
    assert report["python"]["supported_range"] == [
        f"{release.python_min[0]}.{release.python_min[1]}",
        f"{release.python_max[0]}.{release.python_max[1]}",
    ]


@pytest.mark.torch
def test_real_elf_symbols_of_libtorch_python() -> None:
    pytest.importorskip("torch")
    from importlib import metadata

    torch_dist = metadata.distribution("torch")
    lib = Path(str(torch_dist.locate_file("torch/lib")))
    python_binding = lib / "libtorch_python.so"
    if not python_binding.is_file():
        pytest.skip("not a Linux torch wheel")
    exports: set[str] = set()
    for library in lib.glob("*.so*"):
        symbols = probes.elf_dynamic_symbols(library)
        if symbols and library != python_binding:
            exports |= symbols.defined
    binding = probes.elf_dynamic_symbols(python_binding)
    imported = binding.undefined
    assert "libtorch_cpu.so" in binding.needed and "libc10.so" in binding.needed
    # libtorch_python.so is itself an extension of libtorch_cpu/libc10: all its torch imports resolve,
    # and its std::string arguments use the CXX11 ABI.
    assert len(imported) > 1000
    assert not [name for name in imported if name not in exports]
    assert extension_abi(tuple(imported)) == "cxx11"


def test_stable_abi_extension_on_an_older_torch() -> None:
    # torchvision 0.29.1's CUDA helpers (aoti_torch_get_current_cuda_stream...) are absent from a CPU torch
    # 2.13; without a CUDA runtime in DT_NEEDED the finding is "needs a newer torch".
    recording = json.loads((RECORDINGS / "companion-links-other-cuda.json").read_text(encoding="utf-8"))
    recording["extensions"][0]["needed"] = ["libc10.so", "libtorch.so"]
    recording["torch_exports"] = ["aoti_torch_abi_version"]
    env = probes.recorded_environment(recording)
    [finding] = [finding for finding in diagnose(env).findings if finding.code == "DR051"]
    assert "needs a newer torch (stable C ABI functions)" in finding.message


def test_cuda_runtime_major_from_dt_needed() -> None:
    assert probes.cuda_runtime_major(["libc10.so", "libcudart.so.13", "libc.so.6"]) == "13"
    assert probes.cuda_runtime_major(["libc10.so"]) is None


def test_readme_section_matches_the_code(capsys: pytest.CaptureFixture[str]) -> None:
    readme = (Path(__file__).parents[2] / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## torchpatch doctor") :]
    for code, (name, meaning) in FINDINGS.items():
        assert f"| `{code}` | `{name}` | {meaning} |" in section
    prompt = "$ torchpatch doctor --gpu sm_70 --driver 535 --python 3.12 --target-torch 2.11\n"
    start = section.index(prompt) + len(prompt)
    shown = section[start : section.index("```", start)].rstrip()
    _, out = run_doctor(["--gpu", "sm_70", "--driver", "535", "--python", "3.12", "--target-torch", "2.11"], capsys)
    assert shown == out.rstrip()


def test_target_that_is_already_installed(capsys: pytest.CaptureFixture[str]) -> None:
    path = RECORDINGS / "healthy-a100-cu130.json"
    code, out = run_doctor(["--environment", str(path), "--target-torch", "2.13", "--output-format", "json"], capsys)
    plan = json.loads(out)["plan"]
    assert code == 0
    assert (plan["version"], plan["build"], plan["command"]) == ("2.13.0", "cu130", "")


def test_old_glibc_rules_out_manylinux_2_28(capsys: pytest.CaptureFixture[str]) -> None:
    path = RECORDINGS / "glibc-217-centos7.json"
    code, out = run_doctor(["--environment", str(path), "--target-torch", "2.11", "--output-format", "json"], capsys)
    [finding] = [finding for finding in json.loads(out)["findings"] if finding["code"] == "DR060"]
    assert code == 1
    assert "cu126 is manylinux_2_28_x86_64: it needs glibc >= 2.28, this system has 2.17" in finding["message"]
    # 2.6.0 cu124 (manylinux1 file name) is the newest wheel CentOS 7 can install; its cu126 build is 2_28.
    assert finding["fix"] == "pip install torch==2.6.0 --index-url https://download.pytorch.org/whl/cu124"
