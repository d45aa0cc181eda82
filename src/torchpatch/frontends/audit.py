"""``torchpatch audit PATHS...``: examine checkpoints statically, never unpickling them."""

from __future__ import annotations

import argparse
import os
import stat
import sys
from importlib import metadata

from torchpatch import install_hint
from torchpatch.versions import NEWEST_KNOWN, Version

HELP = "Audit checkpoints without loading them: will torch.load(weights_only=True) accept them, what would, are they malicious."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="*", metavar="PATH", help="checkpoint files or folders (or fsspec URLs)")
    parser.add_argument("--torch-version", metavar="X.Y",
                        help=f"torch release to judge against (default: the installed torch, else {NEWEST_KNOWN})")
    parser.add_argument("--output-format", choices=("full", "json", "sarif"), default="full")
    parser.add_argument("--verify", action="store_true",
                        help="confirm each verdict with torch's own weights-only unpickler in a subprocess (needs torch)")
    parser.add_argument("--verbose", action="store_true", help="also list the files a folder scan skipped, and why")
    parser.add_argument("--convert-to-safetensors", metavar="OUT",
                        help="write a loadable checkpoint to OUT as safetensors plus OUT.json (needs torch and safetensors)")
    from torchpatch.frontends.executors import options

    options.add_arguments(parser)


def installed_torch() -> Version | None:
    """The installed torch's release, read from package metadata (torch is never imported)."""
    try:
        return Version.parse(metadata.version("torch"))
    except (metadata.PackageNotFoundError, ValueError):
        return None


# Names a checkpoint travels under: in a folder, a file with one of these that cannot be read is
# reported unreadable (exit 3), never skipped as "not a checkpoint".
CHECKPOINT_SUFFIXES = frozenset(
    ".pt .pth .bin .ckpt .pkl .pickle .joblib .safetensors .npz .model .tar .zip .mar .pt2 .ptl .jit .h5 .hdf5 .keras "
    ".7z .gz .xz .bz2 .zst .lz4 .rar .dill .sav .torch .ot .data".split()
)


def _kind_of_special(path: str) -> str | None:
    """"a FIFO", "a character device"... for paths that exist but are not regular files or folders."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    for test, name in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return None


def _files(paths: list[str]) -> tuple[list[str], list[str], list[tuple[str, str]]]:
    """(named files, files found in folders, (path, why) skipped while walking folders).

    Folders are walked following symbolic links (a Hugging Face snapshot folder links into
    ``blobs/``); a link back into a folder already walked is skipped, so loops end."""
    from torchpatch.frontends.cli import UsageError

    named, found, skipped = [], [], []
    for path in paths:
        if os.path.isdir(path):
            visited: set[tuple[int, int]] = set()
            for root, dirs, files in os.walk(path, followlinks=True):
                info = os.stat(root)
                if (info.st_dev, info.st_ino) in visited:
                    skipped.append((root, "a link back into a folder already audited (loop)"))
                    dirs[:] = []
                    continue
                visited.add((info.st_dev, info.st_ino))
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                for name in sorted(files):
                    candidate = os.path.join(root, name)
                    # Only regular files (or links to them): reading a FIFO or device would block.
                    if os.path.isfile(candidate):
                        found.append(candidate)
                    elif os.path.islink(candidate) and not os.path.exists(candidate):
                        skipped.append((candidate, "a broken symbolic link"))
                    else:
                        skipped.append((candidate, f"not a regular file ({_kind_of_special(candidate) or 'special file'})"))
        elif os.path.isfile(path):
            named.append(path)
        elif _kind_of_special(path):
            raise UsageError(f"{path} is {_kind_of_special(path)}, not a regular file or folder: audit reads checkpoint files")
        elif os.path.islink(path):
            raise UsageError(f"broken symbolic link: {path}")
        else:
            raise UsageError(f"no such file or folder: {path}")
    return named, found, skipped


def _skippable(path: str, report) -> bool:
    """A file met in a folder that is certainly not a checkpoint (kept out of the results)."""
    if report.format != "none" or not report.reason.startswith("not a checkpoint"):
        return False
    return os.path.splitext(path)[1].lower() not in CHECKPOINT_SUFFIXES or report.reason.startswith("not a checkpoint: a numpy")


def run(args: argparse.Namespace) -> int:
    from torchpatch.audit.auditor import audit_path, unreviewed
    from torchpatch.audit.formats import Finding
    from torchpatch.audit.report import (
        exit_code,
        render_full,
        render_json,
        render_sarif,
    )
    from torchpatch.audit.weights_only import known_releases
    from torchpatch.frontends.cli import UsageError

    if args.torch_version:
        try:
            version = Version.parse(args.torch_version)
        except ValueError as error:
            raise UsageError(str(error)) from None
    else:
        version = installed_torch() or NEWEST_KNOWN
    oldest, newest = known_releases()[0], known_releases()[-1]
    if not args.torch_version and not oldest <= version <= newest:
        clamped = newest if version > newest else oldest
        print(f"torchpatch audit: installed torch {version} is outside the known releases; judging against {clamped}", file=sys.stderr)
        version = clamped
    if version < oldest:
        raise UsageError(f"torch {version} is older than the oldest release whose rules are known ({oldest})")
    if version > newest:
        raise UsageError(f"torch {version} is newer than the newest release whose rules are known ({newest})")
    from torchpatch.frontends.executors import options

    if options.wanted(args):  # --report, --files-from, --resume, --executor ray, URLs
        from torchpatch.frontends.executors import scan

        return scan.run_audit(args, version)
    if not args.paths:
        raise UsageError("no checkpoints given: name files or folders")
    named, found, skipped = _files(args.paths)
    reports = [audit_path(path, version) for path in named]
    for path in found:
        report = audit_path(path, version)
        if _skippable(path, report):
            skipped.append((path, report.reason))
        else:
            reports.append(report)
    if args.verbose:
        for path, why in skipped:
            print(f"skipped {path}: {why}", file=sys.stderr)
    if not reports:
        hint = "" if args.verbose else " (--verbose lists them)"
        raise UsageError(f"nothing audited: {len(skipped)} file(s) found, none of them a checkpoint{hint}")
    if args.convert_to_safetensors and len(reports) != 1:
        raise UsageError("--convert-to-safetensors takes exactly one checkpoint")
    if args.verify or args.convert_to_safetensors:
        try:
            metadata.version("torch")
        except metadata.PackageNotFoundError:
            raise UsageError(f"--verify and --convert-to-safetensors need torch: {install_hint('torch')}") from None
    refused_verify = False
    if args.verify:
        from torchpatch.audit.verify import verify

        # Only a file whose every global torchpatch has reviewed is handed to torch, even to its
        # restricted unpickler: an allowlisted callable runs at load (issue 22).
        checked = []
        for report in reports:
            why = unreviewed(report)
            if why:
                refused_verify = refused_verify or report.verdict != "malicious"
                severity = "note" if report.verdict == "malicious" else "error"
                report.findings.append(Finding("", 0, severity, "TPA400", f"--verify: not handed to torch because {why[0]}"))
            else:
                checked.append(report)
        installed = installed_torch()
        other = f" (torch {installed} ran the check; the static verdict is for {version})" if installed != version else ""
        for report, (accepted, error) in zip(checked, verify([(r.filename, r.allowlist) for r in checked])):
            # Classes left for review are not in the allowlist, so torch refuses without them.
            expected = report.weights_only == "accept" or bool(report.allowlist) and not report.review
            if accepted is None:
                message, severity = f"--verify could not run torch: {error}", "error"
            elif accepted == expected:
                message, severity = "--verify: torch's weights-only unpickler agrees" + (" (with the suggested allowlist)" if report.allowlist else ""), "note"
            else:
                message, severity = f"--verify: torch's weights-only unpickler disagrees ({'accepted' if accepted else error})", "error"
            report.findings.append(Finding("", 0, severity if not other else "note", "TPA400", message + other))
    if args.convert_to_safetensors:
        report = reports[0]
        why = unreviewed(report)
        if why:
            raise UsageError(f"{report.filename} is not converted: torchpatch does not hand it to torch's unpickler because {why[0]}")
        if not (report.weights_only == "accept" or report.allowlist):
            raise UsageError(f"{report.filename} does not load with weights_only=True ({report.verdict}); not converted")
        from torchpatch.audit.convert import convert

        try:
            notes = convert(report.filename, args.convert_to_safetensors, report.allowlist)
        except FileExistsError as error:
            raise UsageError(str(error)) from None
        for note in notes:
            print(f"convert: {note}", file=sys.stderr)
    if args.output_format == "json":
        print(render_json(reports))
    elif args.output_format == "sarif":
        print(render_sarif(reports, os.getcwd()))
    else:
        print(render_full(reports, len(skipped)))
    if refused_verify:
        # Each refused file is needs-allowlist or worse, so the exit status is already non-zero.
        print("torchpatch audit: --verify did not hand some files to torch: they name globals torchpatch has not reviewed (TPA400)", file=sys.stderr)
    return exit_code(reports)
