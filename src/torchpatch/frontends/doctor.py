"""`torchpatch doctor`: diagnose this PyTorch install, or plan one for another machine, with exact fixes."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

from torchpatch import platform_facts as facts
from torchpatch.versions import KNOWN_RELEASES, Version

HELP = "Diagnose the PyTorch install (Python, build, GPUs, driver, companions, extensions) and say what to install."

# Oldest and newest compute capabilities any torch 2.4–2.15 wheel was built for (Kepler sm_37 in cu118,
# Blackwell sm_120); a bound on what --gpu accepts.
_OLDEST_GPU, _NEWEST_GPU = (3, 0), (12, 9)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--output-format", choices=("full", "json"), default="full", help="report format (default: full)"
    )
    parser.add_argument(
        "--target-torch",
        metavar="X.Y[.Z]",
        help="check against this release instead of the installed one and say how to install it",
    )
    planning = parser.add_argument_group("planning mode (describe a machine you are not on)")
    planning.add_argument(
        "--gpu",
        action="append",
        metavar="ARCH",
        help="GPU compute capability, e.g. sm_70 or 8.6; repeat or comma-separate for several; 'none' for CPU only",
    )
    planning.add_argument("--driver", metavar="VERSION", help="NVIDIA driver version, e.g. 535 or 535.104.05")
    planning.add_argument("--python", metavar="X.Y", help="Python version, e.g. 3.12")
    parser.add_argument(
        "--environment",
        metavar="FILE",
        help="diagnose a recording made by --record (JSON) instead of this machine",
    )
    parser.add_argument(
        "--record",
        metavar="FILE",
        help="also save what the probes saw on this machine as a recording (JSON) that --environment replays",
    )
    parser.add_argument("--no-extensions", action="store_true", help="skip reading compiled extensions' symbol tables")


def _parse_gpus(values: list[str], usage_error: type[Exception]) -> list[tuple[int, int]]:
    caps: list[tuple[int, int]] = []
    for value in values:
        items = [part.strip() for part in value.split(",")]
        if not any(items):
            raise usage_error("--gpu needs an architecture (e.g. sm_70, sm_86 or 8.6, or 'none' for CPU only)")
        for item in filter(None, items):
            if item.lower() in ("none", "cpu"):
                continue
            try:
                cap = facts.capability(item)
            except ValueError:
                raise usage_error(
                    f"--gpu {item!r} is not a GPU architecture (expected e.g. sm_70, sm_86 or 8.6)"
                ) from None
            if not _OLDEST_GPU <= cap <= _NEWEST_GPU:
                raise usage_error(f"--gpu {item!r} is not an NVIDIA compute capability (known: sm_30 to sm_129)")
            caps.append(cap)
    return caps


def _parse_driver(value: str, usage_error: type[Exception]) -> str:
    try:
        parts = facts.dotted(value)
    except ValueError:
        raise usage_error(f"--driver {value!r} is not a driver version (expected e.g. 535 or 535.104.05)") from None
    if not 300 <= parts[0] <= 999 or len(parts) > 3:
        raise usage_error(f"--driver {value!r} is not an NVIDIA driver version (expected e.g. 535 or 535.104.05)")
    return value


def _parse_python(value: str, usage_error: type[Exception]) -> tuple[int, ...]:
    match = re.fullmatch(r"(\d+)\.(\d+)(?:\.(\d+))?", value.strip())
    if not match or int(match.group(1)) != 3:
        raise usage_error(f"--python {value!r}: torch 2.4–2.15 need CPython 3.8–3.15 (expected e.g. 3.12)")
    parts = (int(match.group(1)), int(match.group(2)))
    oldest = min(release.python_min for release in facts.releases())
    newest = max(release.python_max for release in facts.releases())
    if not oldest <= parts <= newest:
        raise usage_error(
            f"--python {value}: no torch release torchpatch knows ships wheels for it "
            f"(torch 2.4–2.15 cover CPython {oldest[0]}.{oldest[1]}–{newest[0]}.{newest[1]})"
        )
    return parts + ((int(match.group(3)),) if match.group(3) else ())


def _parse_target(value: str, usage_error: type[Exception]) -> str:
    try:
        version = Version.parse(value)
        parts = facts.dotted(value.strip())
    except ValueError:
        raise usage_error(f"--target-torch {value!r} is not a release (expected e.g. 2.11 or 2.11.0)") from None
    if version not in KNOWN_RELEASES or facts.release(version) is None or len(parts) > 3:
        known = f"{KNOWN_RELEASES[0]}–{KNOWN_RELEASES[-1]}"
        raise usage_error(f"--target-torch {value}: torchpatch knows torch {known}")
    if len(parts) == 3 and not facts.is_known_patch(value.strip()):
        release = facts.release(version)
        assert release is not None
        raise usage_error(
            f"--target-torch {value}: torch {release.version} has no such release on PyPI "
            f"(its releases: {', '.join(release.patches)})"
        )
    return value.strip()


def run(args: argparse.Namespace) -> int:
    from torchpatch.doctor import probes, report
    from torchpatch.doctor.checks import diagnose
    from torchpatch.frontends.cli import UsageError

    target = _parse_target(args.target_torch, UsageError) if args.target_torch else None
    planning = args.gpu is not None or args.driver is not None or args.python is not None
    if planning and (args.environment or args.record):
        raise UsageError(
            "--environment and --record describe a whole machine; do not combine them with --gpu, --driver or --python"
        )
    if args.environment and args.record:
        raise UsageError("--record saves this machine; it cannot be combined with --environment")
    if planning:
        caps = _parse_gpus(args.gpu or [], UsageError)
        driver = _parse_driver(args.driver, UsageError) if args.driver else None
        if driver and not caps:
            raise UsageError("--driver needs --gpu: a driver only matters for an NVIDIA GPU")
        env = probes.Environment(
            python=_parse_python(args.python, UsageError) if args.python else None,  # type: ignore[arg-type]
            platform={"sys_platform": "linux", "platform_system": "Linux", "platform_machine": "x86_64"},
            torch=None,
            gpus=[probes.GPU(index, "planned GPU", cap, "--gpu") for index, cap in enumerate(caps)],
            driver=driver,
            driver_source="--driver" if driver else "",
            packages=[],
            extensions=[],
            planning=True,
        )
    elif args.environment:
        try:
            env = probes.load_recording(args.environment)
        except OSError as error:
            raise UsageError(f"--environment {args.environment}: {error.strerror or error}") from None
        except (ValueError, KeyError, TypeError, AttributeError) as error:
            detail = " ".join(str(error).split())
            raise UsageError(f"--environment {args.environment}: not a doctor recording ({detail})") from None
    else:
        recording = probes.live_recording(scan_compiled=not args.no_extensions)
        if args.record:
            try:
                Path(args.record).write_text(json.dumps(recording, indent=2) + "\n", encoding="utf-8")
            except OSError as error:
                raise UsageError(f"--record {args.record}: {error.strerror or error}") from None
        env = probes.recorded_environment(recording)
    diagnosis = diagnose(env, target)
    if args.output_format == "json":
        print(report.render_json(env, diagnosis))
    else:
        print(report.render_full(env, diagnosis))
    return 1 if diagnosis.has_problems else 0
