"""torchpatch doctor: recorded environments for every finding, planning mode, usage errors and the facts table."""

from __future__ import annotations

import argparse
import json
import re
import shlex
from pathlib import Path

import pytest

from torchpatch import platform_facts as facts
from torchpatch.doctor import probes
from torchpatch.doctor.checks import FINDINGS, diagnose, extension_abi
from torchpatch.doctor.report import render_full, to_json
from torchpatch.frontends import doctor as command
from torchpatch.frontends.cli import UsageError
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
    target = ["--target-torch", expect["target"]] if "target" in expect else []
    code, out = run_doctor(["--environment", str(path), "--output-format", "json", *target], capsys)
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
        "fix: pip uninstall -y torch && pip install 'torch==2.12.1' --index-url https://download.pytorch.org/whl/cu126"
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
    assert plan["command"] == "pip install 'torch==2.11.0' --index-url https://download.pytorch.org/whl/cu126"
    assert plan["driver_mode"] == "minor-compat"
    assert any("560.35.05" in note for note in plan["notes"])


@pytest.mark.parametrize(
    ("argv", "command_line"),
    [
        # Ampere with a CUDA 13 driver: the PyPI default cu130 of 2.13.
        (
            ["--gpu", "8.0", "--driver", "580.95.05", "--python", "3.12", "--target-torch", "2.13"],
            "pip install 'torch==2.13.0' --index-url https://download.pytorch.org/whl/cu130",
        ),
        # RTX 5090 (sm_120) in 2.7: only the cu128 build has Blackwell kernels.
        (
            ["--gpu", "sm_120", "--driver", "575.57.08", "--target-torch", "2.7"],
            "pip install 'torch==2.7.1' --index-url https://download.pytorch.org/whl/cu128",
        ),
        # A driver from the CUDA 11 era: only cu118 runs, and 2.7 is the last release with it.
        (
            ["--gpu", "8.6", "--driver", "470.82.01"],
            "pip install 'torch==2.7.1' --index-url https://download.pytorch.org/whl/cu118",
        ),
        # No GPU: the CPU build of the newest release for Python 3.11.
        (
            ["--gpu", "none", "--python", "3.11"],
            "pip install 'torch==2.15.0' --index-url https://download.pytorch.org/whl/cpu",
        ),
        # An exact patch release is kept.
        (
            ["--gpu", "sm_90", "--driver", "580.95.05", "--target-torch", "2.12.0"],
            "pip install 'torch==2.12.0' --index-url https://download.pytorch.org/whl/cu130",
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
    assert finding["fix"] == "pip install 'torch==2.14.1' --index-url https://download.pytorch.org/whl/cu126"


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
    # The real 2.13.0 cu130 wheel's arch flags are sm_75 ... sm_120 with no compute_120: no PTX, so a
    # GPU newer than sm_12x finds no kernel.
    assert cu130.ptx is None and not cu130.runs_on((13, 0))


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
    # The table's Python range for this release is where PyPI has wheels (2.13.0's classifiers say 3.15,
    # but no cp315 wheel exists: wheel-facts.json, from bench/doctor_wheel_facts.py).
    release = facts.release(torch["version"])
    assert release is not None
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


def test_doctor_page_matches_the_code(capsys: pytest.CaptureFixture[str]) -> None:
    section = (Path(__file__).parents[2] / "docs" / "doctor.md").read_text(encoding="utf-8")
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
    assert finding["fix"] == "pip install 'torch==2.6.0' --index-url https://download.pytorch.org/whl/cu124"


# --- issue 14: one plan, builds that exist, drivers that drive, breakages reported ------------------

WHEEL_FACTS = json.loads((Path(__file__).parent / "wheel-facts.json").read_text(encoding="utf-8"))


def load(name: str, **changes: object) -> probes.Environment:
    recording = json.loads((RECORDINGS / f"{name}.json").read_text(encoding="utf-8"))
    recording.update(changes)
    return probes.recorded_environment(recording)


def test_python_range_is_where_wheels_exist() -> None:
    for release in facts.releases():
        pythons = [
            tuple(int(part) for part in python.split("."))
            for python, versions in WHEEL_FACTS["cp_wheels"].items()
            if any(version in release.patches for version in versions)
        ]
        assert (min(pythons), max(pythons)) == (release.python_min, release.python_max), release.version
    assert facts.python_range("2.13") == ((3, 10), (3, 14))  # no cp315 wheel, whatever the classifiers say


def test_default_builds_match_the_real_wheels() -> None:
    for version, wheel in WHEEL_FACTS["default_builds"].items():
        release = facts.release(version)
        assert release is not None and version in release.patches
        tag = wheel["version_py"].split("+")[1]
        build = release.build(tag)
        assert build is not None and build.verified, version
        flags = wheel["arch_flags"].split()
        assert not [flag for flag in flags if flag.startswith("compute_")]  # no PTX in any of them
        assert build.ptx is None
        assert [facts.capability(flag) for flag in flags] == list(build.archs), version
        # The CUDA update the build was made with picks its toolkit driver (cu124 → 550.54.15, cu128 → 570.124.06).
        requirement = facts.driver_requirement(build.cuda)
        assert requirement is not None
        runtime = wheel["cuda_runtime_pin"].split("==")[1]
        assert build.cuda_update.startswith(build.cuda)
        if build.cuda_update in dict(requirement.updates):
            assert requirement.toolkit_for(build.cuda_update)[0] <= requirement.toolkit_driver
        assert runtime.startswith(build.cuda), version
    assert facts.driver_requirement("12.4").toolkit_text == "550.54.15"
    assert facts.driver_requirement("12.8").toolkit_text == "570.124.06"


@pytest.mark.parametrize(
    ("gpu", "driver", "generation"),
    [
        ("sm_100", "535", "Blackwell"),
        ("sm_120", "565.57.01", "Blackwell"),
        ("sm_90", "515.65.01", "Hopper"),
        ("sm_89", "510.47.03", "Ada"),
        ("sm_70", "590.44.01", "Volta"),
        ("sm_61", "595.58.03", "Pascal"),
    ],
)
def test_driver_that_cannot_drive_the_gpu_refuses_every_plan(
    gpu: str, driver: str, generation: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = run_doctor(["--gpu", gpu, "--driver", driver, "--output-format", "json"], capsys)
    report = json.loads(out)
    assert code == 1 and report["plan"] is None
    [finding] = report["findings"]
    assert finding["code"] == "DR060" and finding["fix"] == ""
    assert f"driver {driver} cannot drive {gpu}: {generation} GPUs need driver branch" in finding["message"]


def test_blackwell_with_r570_fits(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run_doctor(["--gpu", "sm_100", "--driver", "570.124.06", "--output-format", "json"], capsys)
    plan = json.loads(out)["plan"]
    # 2.11 is the last release with a CUDA 12.8 build; the CUDA 13 builds need R580.
    assert code == 0 and (plan["version"], plan["build"], plan["driver_mode"]) == ("2.11.0", "cu128", "full")


def test_python_315_plans_the_release_that_has_its_wheel(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run_doctor(
        ["--gpu", "sm_90", "--driver", "580.95.05", "--python", "3.15", "--output-format", "json"], capsys
    )
    assert code == 0 and json.loads(out)["plan"]["version"] == "2.15.0"
    code, out = run_doctor(
        ["--gpu", "none", "--python", "3.15", "--target-torch", "2.13", "--output-format", "json"], capsys
    )
    [finding] = [f for f in json.loads(out)["findings"] if f["code"] == "DR060"]
    assert code == 1 and "3.10–3.14 only" in finding["message"]


def test_driver_text_is_printed_as_given(capsys: pytest.CaptureFixture[str]) -> None:
    _, out = run_doctor(["--gpu", "sm_70", "--driver", "580.95.05", "--target-torch", "2.15"], capsys)
    assert "driver 580.95.05" in out and "580.95.5" not in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--target-torch", "2.11.7"], "torch 2.11 has no such release on PyPI (its releases: 2.11.0)"),
        (["--python", "3.99"], "--python 3.99: no torch release"),
        (["--gpu", ""], "--gpu needs an architecture"),
        (["--gpu", " , "], "--gpu needs an architecture"),
    ],
)
def test_more_bad_input(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    from torchpatch.frontends import cli

    assert cli.main(["doctor", *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"nvidia_smi": 5}, "'nvidia_smi' must be a string, not int"),
        ({"packages": {"torch": "2.13.0"}}, "'packages' must be a list"),
        ({"packages": [{"name": "torch"}]}, "'packages[0]' has no 'version'"),
        ({"python": 3.12}, "'python' must be a string"),
        ({"python": "2.7.18"}, "not a CPython 3 version"),
        (
            {"torch_probe": {"importable": True, "version": "2.13.0", "devices": [{"index": 0, "capability": 8.6}]}},
            "torch_probe.devices[0]",
        ),
        (
            {"extensions": [{"distribution": "x", "version": "1", "path": "x.so", "undefined": "abc"}]},
            "'extensions[0].undefined' must be a list",
        ),
    ],
)
def test_recording_with_wrong_types_is_a_one_line_error(
    change: dict, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from torchpatch.frontends import cli

    recording = json.loads((RECORDINGS / "healthy-a100-cu130.json").read_text(encoding="utf-8"))
    recording.update(change)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(recording), encoding="utf-8")
    assert cli.main(["doctor", "--environment", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err and "internal error" not in err


def test_every_fix_in_one_run_is_the_plan_or_part_of_it() -> None:
    # torch 2.5.1 (cu124) on an A100 (driver 550.54.15, Python 3.10) with torchvision 0.20.1 and torchaudio
    # 2.5.1: every finding moves to the same release, build and companion versions.
    env = load("glibc-217-centos7")
    env.platform["glibc"] = "2.35"
    env.packages.extend(
        [
            probes.Package("torchvision", "0.20.1", ("torch==2.5.1",)),
            probes.Package("torchaudio", "2.5.1", ("torch==2.5.1",)),
        ]
    )
    diagnosis = diagnose(env)
    plan = diagnosis.plan
    # 2.5.1 has advisories: the nearest release without one (2.10) whose build runs as well as the newest's.
    assert plan is not None and (plan.choice.version, plan.choice.build.tag) == ("2.10.0", "cu128")
    expected = "pip install 'torch==2.10.0' 'torchvision==0.25.*' 'torchaudio==2.10.*' --index-url https://download.pytorch.org/whl/cu128"
    assert diagnosis.plan_command == expected
    fixes = {finding.fix for finding in diagnosis.findings if finding.fix}
    assert fixes == {expected}


def test_dr040_and_dr052_on_one_companion_are_one_finding() -> None:
    # torchvision 0.23.0 (built for torch 2.8, links CUDA 12) under torch 2.13.0+cpu: DR040 and DR052 give
    # the same command, the torchvision of the matrix from the CPU index, not 0.23.0 again, so they are one
    # finding (DR040) that names the other in a note.
    recording = json.loads((RECORDINGS / "companion-links-other-cuda.json").read_text(encoding="utf-8"))
    recording["torch_probe"].update(version="2.13.0+cpu", cuda=None, arch_flags=None, devices=[])
    recording["nvidia_smi"] = ""
    recording["packages"] = [
        {"name": "torch", "version": "2.13.0+cpu", "requires": []},
        {"name": "torchvision", "version": "0.23.0", "requires": ["torch==2.8.0"]},
    ]
    recording["extensions"][0].update(version="0.23.0", needed=["libc10.so", "libcudart.so.12"])
    env = probes.recorded_environment(recording)
    by_code = {finding.code: finding for finding in diagnose(env).findings}
    command = "pip install 'torchvision==0.28.*' --index-url https://download.pytorch.org/whl/cpu"
    assert "DR052" not in by_code and by_code["DR040"].fix == command
    assert any(note.startswith("also DR052 extension-cuda-mismatch: torchvision 0.23.0") for note in by_code["DR040"].notes)


def test_companion_index_is_one_that_has_the_build() -> None:
    from torchpatch.doctor.plan import companion_step

    release = facts.release("2.13")
    step = companion_step(release, release.build("cu132"), "torchaudio", "2.11.0")
    # torchaudio 2.11 came with torch 2.11, which has no cu132 build: its cu130 build links the same CUDA 13.
    assert (step.requirement, step.index_url) == ("torchaudio==2.11.*", "https://download.pytorch.org/whl/cu130")
    step = companion_step(release, release.build("cu126"), "torchaudio", "2.11.0")
    assert step.index_url == "https://download.pytorch.org/whl/cu126"
    for row in facts.releases():
        for build in row.builds:
            for name in ("torchvision", "torchaudio"):
                step = companion_step(row, build, name, "0")
                if step.index_url:
                    home = next(r for r in facts.releases() if getattr(r, name) == getattr(row, name))
                    assert step.index_url.rsplit("/", 1)[1] in {b.tag for b in home.builds}, (
                        row.version,
                        build.tag,
                        name,
                    )


def test_no_torch_fills_the_json_plan(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run_doctor(["--environment", str(RECORDINGS / "torch-missing.json"), "--output-format", "json"], capsys)
    report = json.loads(out)
    assert code == 1 and report["plan"]["command"] == report["findings"][0]["fix"]
    assert (report["plan"]["version"], report["plan"]["build"]) == ("2.14.1", "cu126")


def test_dr010_note_agrees_with_its_fix() -> None:
    diagnosis = diagnose(load("glibc-217-centos7"))
    for finding in diagnosis.findings:
        if finding.code == "DR010":
            claims_none = "has a wheel for this machine" in finding.message
            assert claims_none == (finding.fix == ""), finding.message


def test_fix_never_picks_a_release_with_an_advisory_when_a_clean_one_fits() -> None:
    from torchpatch.doctor.plan import affected_by

    for name in ("torch-unknown-old", "torch-import-fails", "extensions-wrong-abi-and-torch", "minor-compat-cubins"):
        plan = diagnose(load(name)).plan
        assert plan is not None and not affected_by(plan.choice.version), name


@pytest.mark.parametrize(
    ("install", "command"),
    [
        ({"kind": "editable", "path": "/src/ops"}, "pip install --no-build-isolation --no-deps -e /src/ops"),
        (
            {"kind": "local", "path": "/src/my ops"},
            "pip install --force-reinstall --no-build-isolation --no-deps '/src/my ops'",
        ),
        (
            {"kind": "vcs", "url": "https://github.com/x/ops", "vcs": "git", "commit": "abc123"},
            "pip install --force-reinstall --no-build-isolation --no-deps git+https://github.com/x/ops@abc123",
        ),
        (
            {"kind": "index", "installer": "pip"},
            "pip install --force-reinstall --no-deps --no-build-isolation --no-binary ops 'ops==1.0'",
        ),
        ({"kind": "unknown", "installer": "conda"}, ""),
        ({"kind": "archive", "url": "/wheels/ops-1.0-cp311-linux_x86_64.whl"}, ""),
    ],
    ids=["editable", "local", "vcs", "index", "conda", "wheel-file"],
)
def test_rebuild_command_by_install_kind(install: dict, command: str) -> None:
    from torchpatch.doctor.checks import rebuild_command

    fix, notes = rebuild_command(probes.Package("ops", "1.0", ("torch",), install), "ops", "1.0")
    assert fix == command
    if not fix:
        assert "cannot know" in notes[0]


def test_install_kind_from_real_metadata(tmp_path: Path) -> None:
    from importlib import metadata

    def dist(files: dict[str, str]) -> metadata.Distribution:
        info = tmp_path / f"d{len(list(tmp_path.iterdir()))}" / "ops-1.0.dist-info"
        info.mkdir(parents=True)
        for name, text in files.items():
            (info / name).write_text(text, encoding="utf-8")
        return metadata.PathDistribution(info)

    editable = '{"url": "file:///src/ops", "dir_info": {"editable": true}}'
    assert probes.install_of(dist({"RECORD": "", "INSTALLER": "pip\n", "direct_url.json": editable})) == {
        "kind": "editable",
        "path": "/src/ops",
        "installer": "pip",
    }
    assert probes.install_of(dist({"RECORD": "", "INSTALLER": "pip\n"}))["kind"] == "index"
    assert probes.install_of(dist({"INSTALLER": "pip\n"}))["kind"] == "unknown"  # no RECORD


def test_companion_import_failing_is_reported() -> None:
    env = load("companion-import-fails")
    [finding] = [finding for finding in diagnose(env).findings if finding.code == "DR042"]
    assert "torchao 0.18.0" in finding.message


def test_nvidia_pins_like_pip_check() -> None:
    env = load("nvidia-pins-elsewhere")
    findings = [finding for finding in diagnose(env).findings if finding.code == "DR041"]
    messages = " ".join(finding.message for finding in findings)
    assert "nvidia-cudnn-cu13==9.24.0.43" in messages and "nvidia-cuda-runtime" in messages
    assert "pip install 'nvidia-cudnn-cu13==9.24.0.43'" in {finding.fix for finding in findings}


def test_torch_warnings_are_shown() -> None:
    recording = json.loads((RECORDINGS / "healthy-a100-cu130.json").read_text(encoding="utf-8"))
    warning = "Found GPU0 Tesla K80 which is of cuda capability 3.7. PyTorch no longer supports this GPU"
    recording["torch_probe"]["warnings"] = [warning]
    env = probes.recorded_environment(recording)
    diagnosis = diagnose(env)
    assert warning in render_full(env, diagnosis)
    assert to_json(env, diagnosis)["torch"]["warnings"] == [warning]


def test_probe_crash_names_the_signal() -> None:
    assert probes.crash_text(-7, "").startswith("killed by SIGBUS (bus error")
    assert probes.crash_text(-4, "").startswith("killed by SIGILL (illegal instruction")
    assert probes.crash_text(1, "Traceback\nImportError: x\n") == "ImportError: x"


def test_probe_of_a_bus_error(tmp_path: Path) -> None:
    python = tmp_path / "python"
    python.write_text("#!/bin/sh\nkill -BUS $$\n", encoding="utf-8")
    python.chmod(0o755)
    probe, error = probes.probe_torch_subprocess(str(python), timeout=10)
    assert probe is None and "SIGBUS (bus error" in error


def test_hanging_import_leaves_no_process_behind(tmp_path: Path) -> None:
    import os
    import time

    pid_file = tmp_path / "child.pid"
    python = tmp_path / "python"
    # A "python" whose import hangs and that started a background helper, as a CUDA init can.
    python.write_text(f"#!/bin/sh\nsleep 300 &\necho $! > {pid_file}\nsleep 300\n", encoding="utf-8")
    python.chmod(0o755)
    probe, error = probes.probe_torch_subprocess(str(python), timeout=1)
    assert probe is None and "longer than 1 s" in error
    helper = int(pid_file.read_text())
    for _ in range(50):
        try:
            os.kill(helper, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        pytest.fail(f"process {helper} outlived the probe")


def test_report_has_what_collect_env_gives(capsys: pytest.CaptureFixture[str]) -> None:
    env = load("nvidia-pins-elsewhere")
    text = render_full(env, diagnose(env))
    for label in ("OS", "Kernel", "C library", "CPU", "GCC", "CUDA", "cuDNN"):
        assert f"\n{label:10}" in text, label
    assert "numpy 2.4.6" in text and "nvidia-cudnn-cu13 9.23.0.1" in text
    system = probes.system_facts()
    assert {"os", "kernel", "libc", "gcc", "nvcc", "cpu", "cpu_count"} <= set(system)


def test_stale_extension_found_through_the_import_system(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # An editable install: the dist-info has no .so in RECORD; the package lives in a source tree on sys.path.
    from importlib import metadata

    tree = tmp_path / "src"
    (tree / "ops").mkdir(parents=True)
    (tree / "ops" / "__init__.py").write_text("", encoding="utf-8")
    (tree / "ops" / "_C.cpython-311-x86_64-linux-gnu.so").write_bytes(b"\x7fELF")
    site = tmp_path / "site"
    info = site / "ops-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Name: ops\nVersion: 1.0\nRequires-Dist: torch\n", encoding="utf-8")
    (info / "RECORD").write_text("__editable__.ops-1.0.pth,,\n", encoding="utf-8")
    (info / "top_level.txt").write_text("ops\n", encoding="utf-8")
    (info / "direct_url.json").write_text(
        json.dumps({"url": tree.as_uri(), "dir_info": {"editable": True}}), encoding="utf-8"
    )
    monkeypatch.syspath_prepend(str(tree))
    files = probes._extension_files(metadata.PathDistribution(info))
    assert [path.name for path in files] == ["_C.cpython-311-x86_64-linux-gnu.so"]
    # No RECORD at all (a `setup.py develop` or hand-copied install): found the same way.
    (info / "RECORD").unlink()
    (info / "direct_url.json").unlink()
    files = probes._extension_files(metadata.PathDistribution(info))
    assert [path.name for path in files] == ["_C.cpython-311-x86_64-linux-gnu.so"]
    # A regular install whose RECORD lists no compiled module has none: its tree is not walked.
    (info / "RECORD").write_text("ops/__init__.py,,\n", encoding="utf-8")
    assert probes._extension_files(metadata.PathDistribution(info)) == []


def test_a_hanging_companion_keeps_torchs_facts(tmp_path: Path) -> None:
    python = tmp_path / "python"
    line = probes.PROBE_MARKER + json.dumps({"importable": True, "version": "2.13.0+cpu"})
    python.write_text(f"#!/bin/sh\necho '{line}'\nsleep 300\n", encoding="utf-8")
    python.chmod(0o755)
    probe, error = probes.probe_torch_subprocess(str(python), companions=["torchvision"], timeout=1)
    assert error == "" and probe is not None and probe["version"] == "2.13.0+cpu"
    assert probe["companion_imports"] == {"torchvision": "importing it took longer than 1 s"}


def test_rocm_torch_is_never_planned_onto_cpu_or_cuda() -> None:
    recording = json.loads((RECORDINGS / "companions-pinned-elsewhere.json").read_text(encoding="utf-8"))
    recording["torch_probe"].update(version="2.13.0+rocm7.2", cuda=None, hip="7.2.0")
    for package in recording["packages"]:
        if package["name"] == "torch":
            package["version"] = "2.13.0+rocm7.2"
    diagnosis = diagnose(probes.recorded_environment(recording))
    assert diagnosis.plan is None
    for finding in diagnosis.findings:
        assert "download.pytorch.org/whl/c" not in finding.fix, finding


REAL_RECORDINGS = [path for path in sorted(RECORDINGS.glob("real-*.json")) if expectation(path).get("fixes_checked")]


@pytest.mark.parametrize("path", REAL_RECORDINGS, ids=[path.stem for path in REAL_RECORDINGS])
def test_real_fix_resolved_its_finding(path: Path) -> None:
    # bench/doctor_recordings.py ran these fixes in the real venv (download.pytorch.org swapped for the
    # machine's local packages) and recorded the venv again.
    expect = expectation(path)
    for code, check in expect.get("fixes_checked", {}).items():
        assert check["exit_status"] == 0, (code, check)
        assert code not in check["codes_after"], (code, check)
        offline = re.sub(r"--index-url \S+", OFFLINE_PACKAGES, expect["fix"][code])
        # The same words in the shell: the recorded runs predate the quoted requirements.
        assert shlex.split(check["command_run"]) == shlex.split(offline)


OFFLINE_PACKAGES = (
    "--index-url file:///opt/pypi/simple --extra-index-url file:///opt/pypi-more/simple"
    " --find-links /opt/wheels --find-links /opt/pypi-more/files"
)


@pytest.mark.parametrize("python", [None, (3, 10), (3, 15)], ids=["any-python", "py310", "py315"])
def test_every_plan_names_a_build_that_exists_and_runs(python: tuple[int, int] | None) -> None:
    # Planning sweep: whatever the machine, a plan's release ships a wheel for its Python, its build has
    # kernels for every GPU, the driver branch drives every GPU, and the command names a real release/build.
    import itertools

    gpu_sets = [(), ((5, 0),), ((7, 0),), ((8, 6),), ((8, 9),), ((9, 0),), ((10, 0),), ((12, 0),), ((8, 0), (7, 0))]
    drivers = [None, "470.82.01", "535.104.05", "550.54.15", "570.124.06", "580.95.05", "595.58.03"]
    targets = [None, "2.5", "2.8", "2.11", "2.13", "2.15"]
    planned = 0
    for gpus, driver, target in itertools.product(gpu_sets, drivers, targets):
        if driver and not gpus:
            continue
        env = probes.Environment(
            python=python,
            platform={"sys_platform": "linux", "platform_system": "Linux", "platform_machine": "x86_64"},
            torch=None,
            gpus=[probes.GPU(index, "planned GPU", cap, "--gpu") for index, cap in enumerate(gpus)],
            driver=driver,
            driver_source="--driver" if driver else "",
            packages=[],
            extensions=[],
            planning=True,
        )
        diagnosis = diagnose(env, target)
        plan = diagnosis.plan
        if plan is None:
            assert "DR060" in {finding.code for finding in diagnosis.findings}
            continue
        planned += 1
        choice = plan.choice
        assert python is None or choice.release.supports_python(python)
        for cap in gpus:
            assert choice.build.runs_on(cap), (gpus, driver, target, choice.label)
            generation = facts.gpu_generation(cap)
            assert driver is None or generation is None or generation.driven_by(facts.dotted(driver))
        match = re.fullmatch(
            r"pip install 'torch==(\S+)' --index-url https://download.pytorch.org/whl/(\w+)", diagnosis.plan_command
        )
        assert match and facts.is_known_patch(match.group(1)) and choice.release.build(match.group(2)) is not None
        if target and plan.requested_fits:
            assert str(choice.release.version) == target
    assert planned > 50


def test_dr010_dr021_and_dr040_share_the_plan() -> None:
    # torch 2.5.1+cpu with torchvision 0.20.1+cpu on an RTX 4090 (driver 570.133.07): the CPU build (DR021),
    # the advisories (DR010) and nothing else pick the same torch release and build.
    recording = json.loads((RECORDINGS / "cpu-build-with-rtx4090.json").read_text(encoding="utf-8"))
    recording["torch_probe"].update(version="2.5.1+cpu", cxx11_abi=False)
    recording["packages"] = [
        {"name": "torch", "version": "2.5.1+cpu", "requires": []},
        {"name": "torchvision", "version": "0.20.1+cpu", "requires": ["torch==2.5.1"]},
    ]
    diagnosis = diagnose(probes.recorded_environment(recording))
    codes = {finding.code for finding in diagnosis.findings}
    assert {"DR010", "DR021"} <= codes
    # 2.5.1 has advisories: 2.10.0 is the nearest release without one, and its cu128 build runs fully on R570.
    plan = "pip install 'torch==2.10.0' 'torchvision==0.25.*' --index-url https://download.pytorch.org/whl/cu128"
    assert diagnosis.plan_command == plan
    assert {finding.fix for finding in diagnosis.findings if finding.code in ("DR010", "DR021")} == {plan}


def test_torchaudio_for_another_torch_gets_a_build_that_exists() -> None:
    # torchaudio 2.8.0 (pins torch==2.8.0, links libcudart.so.12) under torch 2.13.0+cu130: the fix is the
    # matrix's torchaudio 2.11 from an index that has it, never `torchaudio==2.8.0 --index-url .../cu130`.
    recording = json.loads((RECORDINGS / "healthy-a100-cu130.json").read_text(encoding="utf-8"))
    recording["packages"] = [
        package for package in recording["packages"] if package["name"] not in ("torchvision", "torchaudio")
    ] + [{"name": "torchaudio", "version": "2.8.0", "requires": ["torch==2.8.0"]}]
    recording["extensions"] = [
        {
            "distribution": "torchaudio",
            "version": "2.8.0",
            "path": "torchaudio/lib/libtorchaudio.so",
            "undefined": [],
            "needed": ["libc10.so", "libcudart.so.12"],
        }
    ]
    findings = {finding.code: finding for finding in diagnose(probes.recorded_environment(recording)).findings}
    command = "pip install 'torchaudio==2.11.*' --index-url https://download.pytorch.org/whl/cu130"
    assert "DR052" not in findings and findings["DR040"].fix == command
    assert any(note.startswith("also DR052 ") for note in findings["DR040"].notes)


def test_dr010_with_an_affected_target_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    path = RECORDINGS / "glibc-217-centos7.json"
    _, out = run_doctor(["--environment", str(path), "--target-torch", "2.6", "--output-format", "json"], capsys)
    findings = [finding for finding in json.loads(out)["findings"] if finding["code"] == "DR010"]
    newer = [finding for finding in findings if "fixed in 2.10.0" in finding["message"]]
    assert newer and all("the target torch 2.6.0 is affected too" in finding["message"] for finding in newer)
    assert all(finding["fix"] == "" for finding in newer)
    fixed = [finding for finding in findings if "fixed in 2.6.0" in finding["message"]]
    assert fixed[0]["fix"] == "pip install 'torch==2.6.0' --index-url https://download.pytorch.org/whl/cu124"


# --- #25: commands that run in every shell, no CUDA leftovers, the nearest safe release -------------------


def _every_printed_command() -> set[str]:
    commands = set()
    planned = [
        probes.Environment(
            python=(3, 12),
            platform={"sys_platform": "linux", "platform_system": "Linux", "platform_machine": "x86_64"},
            torch=None,
            gpus=[probes.GPU(0, "planned GPU", capability, "--gpu")] if capability else [],
            driver=driver,
            driver_source="--driver" if driver else "",
            packages=[],
            extensions=[],
            planning=True,
        )
        for capability, driver in (((8, 0), "580.95.05"), ((7, 0), "535.104.05"), (None, None))
    ]
    for env in [*map(probes.load_recording, RECORDING_FILES), *planned]:
        diagnosis = diagnose(env)
        commands.add(diagnosis.plan_command)
        commands.update(finding.fix for finding in diagnosis.findings)
    # Fixes that are commands (others are advice such as "upgrade the NVIDIA driver to >= 560.35.05").
    return {text for text in commands if text.startswith(("pip ", "echo "))}


@pytest.mark.parametrize("shell", ["bash", "zsh"])
def test_printed_commands_run_unchanged_in_every_shell(shell: str, tmp_path: Path) -> None:
    # zsh (the macOS default) rejects an unquoted `torchaudio==2.11.*` ("no matches found"); each command,
    # pasted as printed with pip replaced by a stub that prints its arguments, must give pip the same words.
    import shutil
    import subprocess

    if shutil.which(shell) is None:
        pytest.skip(f"{shell} is not installed")
    commands = _every_printed_command()
    assert any("==" in text and ".*" in text for text in commands)
    for text in sorted(commands):
        stub = "pip() { printf '%s\\n' \"$@\"; }; "
        done = subprocess.run([shell, "-c", stub + text], cwd=tmp_path, capture_output=True, text=True)
        assert done.returncode == 0, (text, done.stderr)
        words = [word for part in text.split(" && ") for word in shlex.split(part)[1:] if part.startswith("pip ")]
        assert done.stdout.split("\n")[:-1] == words, text


def test_a_move_to_the_cpu_build_removes_the_cuda_packages() -> None:
    # A CUDA build with no GPU: the plan's CPU build leaves nvidia-* and triton behind unless told to remove them.
    env = load("cuda-build-no-gpu")
    env.packages.extend(
        [
            probes.Package("nvidia-cublas", "13.1.0.3", ()),
            probes.Package("nvidia-nccl-cu13", "2.28.3", ()),
            probes.Package("triton", "3.7.1", ()),
            probes.Package("bitsandbytes", "0.48.0", ("torch>=2.3", "nvidia-nccl-cu13")),
        ]
    )
    diagnosis = diagnose(env)
    assert diagnosis.plan is not None and diagnosis.plan.choice.build.tag == "cpu"
    # nvidia-nccl-cu13 stays: bitsandbytes requires it.
    assert diagnosis.plan_command.endswith(" && pip uninstall -y nvidia-cublas triton")


def test_a_vulnerable_torch_moves_to_the_nearest_safe_release() -> None:
    # torch 2.5.1 on CPU: 2.10.0 is the first release past every advisory against 2.5.1, not the newest (2.15).
    from torchpatch.doctor.plan import affected_by

    env = load("real-torch213-cpu")
    assert env.torch is not None
    env.torch = probes.TorchInstall(**{**env.torch.__dict__, "version": "2.5.1+cpu"})
    env.packages = [
        probes.Package("torch", "2.5.1+cpu", ()) if package.name == "torch" else package for package in env.packages
    ]
    plan = diagnose(env).plan
    assert plan is not None and affected_by("2.5.1")
    assert (plan.choice.version, plan.choice.build.tag) == ("2.10.0", "cpu")
    assert all(
        affected_by(release.latest_patch)
        for release in facts.releases()
        if facts.release("2.5").version <= release.version < facts.release("2.10").version
    )


def test_the_plan_stays_in_view_while_problems_remain() -> None:
    env = probes.load_recording(RECORDINGS / "cuda-leftovers-on-cpu-build.json")
    text = render_full(env, diagnose(env))
    assert "Plan      keep the installed torch 2.13.0 (cpu)" in text and "1 problem(s) found." in text
