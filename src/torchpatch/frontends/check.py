"""``torchpatch check``: lint (and fix) PyTorch code for a target release."""

from __future__ import annotations

import argparse
import difflib
import gc
import sys
from contextlib import contextmanager
from pathlib import Path

from torchpatch.engine.config import ConfigError, find_config, load_config, min_torch_from_pins
from torchpatch.engine.discover import DEFAULT_EXCLUDE, discover
from torchpatch.engine.linter import FileResult, check_file, fix_allowed
from torchpatch.engine.settings import SelectionError, Settings
from torchpatch.engine.writer import fixed_content, original_content, write_fixed
from torchpatch.output import formats
from torchpatch.rules import all_rules
from torchpatch.versions import NEWEST_KNOWN, OLDEST_KNOWN, Version

HELP = "Check Python files and notebooks for outdated and unsafe PyTorch usage (and fix them)."
OUTPUT_FORMATS = ("full", "concise", "json", "github", "sarif")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="*", type=Path, default=[], help="files or folders (default: .)")
    parser.add_argument("--fix", action="store_true", help="apply safe fixes")
    parser.add_argument("--unsafe-fixes", action="store_true", help="also show, and with --fix apply, unsafe fixes")
    parser.add_argument("--diff", action="store_true", help="print the fixes as a unified diff; write nothing")
    parser.add_argument("--show-fixes", action="store_true", help="list what --fix fixed")
    parser.add_argument("--add-todos", action="store_true",
                        help="with --fix: write a `# TODO(torchpatch): CODE message` line above each finding no fix handles")
    parser.add_argument("--output-format", choices=OUTPUT_FORMATS, default="full")
    parser.add_argument("--statistics", action="store_true", help="print counts per rule")
    parser.add_argument("--exit-zero", action="store_true", help="exit 0 even when findings remain")
    parser.add_argument("--select", type=_codes, help="rules to enable: codes, prefixes, names or ALL (comma-separated)")
    parser.add_argument("--extend-select", type=_codes, default=[], help="rules to enable on top of the selection")
    parser.add_argument("--ignore", type=_codes, default=[], help="rules to disable")
    parser.add_argument("--target-torch", metavar="X.Y", help=f"release to migrate to (default {NEWEST_KNOWN})")
    parser.add_argument("--min-torch", metavar="X.Y",
                        help=f"oldest release the code must still run on (default: from the project's pins, else {OLDEST_KNOWN})")
    parser.add_argument("--config", type=Path, help="a torchpatch.toml or pyproject.toml to use")
    parser.add_argument("--isolated", action="store_true", help="ignore configuration files and pins")
    parser.add_argument("--quiet", "-q", action="store_true", help="print findings only, no summary")


def _codes(value: str) -> list[str]:
    return [part.strip() for part in value.split(",") if part.strip()]


def _version_option(value: str, name: str) -> Version:
    from torchpatch.frontends.cli import UsageError

    try:
        version = Version.parse(value)
    except ValueError as error:
        raise UsageError(f"--{name}: {error}") from None
    return version


def build_settings(args: argparse.Namespace) -> Settings:
    from torchpatch.frontends.cli import UsageError

    paths = args.paths or [Path(".")]
    for path in paths:
        if not path.exists():
            raise UsageError(f"{path}: no such file or directory")
    config_path = None
    config: dict = {}
    if not args.isolated:
        config_path = args.config or find_config(paths[0] if paths[0].is_dir() else paths[0].parent)
        if args.config is not None and not args.config.is_file():
            raise UsageError(f"--config {args.config}: no such file")
        if config_path is not None:
            try:
                config = load_config(config_path)
            except ConfigError as error:
                raise UsageError(str(error)) from None
    root = config_path.parent if config_path else _project_root(paths[0])
    settings = Settings(project_root=root)
    settings.select = args.select if args.select is not None else config.get("select")
    settings.extend_select = [*config.get("extend-select", []), *args.extend_select]
    settings.ignore = [*config.get("ignore", []), *args.ignore]
    settings.per_file_ignores = config.get("per-file-ignores", {})
    settings.exclude = config.get("exclude")
    settings.extend_exclude = config.get("extend-exclude", [])
    target = args.target_torch or config.get("target-torch")
    if target:
        settings.target = _version_option(target, "target-torch")
    minimum = args.min_torch or config.get("min-torch")
    if minimum:
        settings.min_torch = _version_option(minimum, "min-torch")
        settings.min_torch_source = "--min-torch" if args.min_torch else str(config_path)
    elif not args.isolated and root is not None:
        pinned = min_torch_from_pins(root)
        if pinned is not None:
            settings.min_torch, settings.min_torch_source = pinned
    if settings.min_torch > settings.target and not (args.min_torch and args.target_torch):
        # A pin newer than the default target: migrate to at least what the project already requires.
        settings.target = max(settings.target, settings.min_torch)
    try:
        settings.validate()
    except SelectionError as error:
        raise UsageError(str(error)) from None
    return settings


def _project_root(path: Path) -> Path:
    start = path.resolve()
    if start.is_file():
        start = start.parent
    for folder in (start, *start.parents):
        if any((folder / name).exists() for name in ("pyproject.toml", "setup.cfg", "setup.py", ".git")) \
                or any(folder.glob("requirements*.txt")):
            return folder
    return start


def run(args: argparse.Namespace) -> int:
    settings = build_settings(args)
    paths = args.paths or [Path(".")]
    exclude = [*(settings.exclude if settings.exclude is not None else DEFAULT_EXCLUDE), *settings.extend_exclude]
    fixing = args.fix or args.diff
    if args.add_todos and not fixing:
        from torchpatch.frontends.cli import UsageError

        raise UsageError("--add-todos writes comments: use it with --fix or --diff")
    results: list[FileResult] = []
    with _collect_garbage_between_files() as file_done:
        for path in discover(paths, exclude, settings.project_root):
            result = check_file(path, settings, fix=fixing, unsafe_fixes=args.unsafe_fixes, add_todos=args.add_todos)
            if not result.findings and not result.fixed_count:
                result.source = result.original_text = result.fixed_text = None  # keep memory flat on big trees
            results.append(result)
            file_done()

    for result in results:
        if result.error is not None:
            print(f"torchpatch: {result.path}: {result.error}", file=sys.stderr)

    if args.diff:
        return _print_diffs(results)

    fixed_total = 0
    if args.fix:
        for result in results:
            if (result.fixed_count or result.todo_count) and result.error is None:
                try:
                    if write_fixed(result):
                        fixed_total += result.fixed_count
                except OSError as error:
                    print(f"torchpatch: {result.path}: not written: {error}", file=sys.stderr)

    _print_findings(results, args)
    if args.fix and args.show_fixes:
        _print_fixed(results)
    todos = sum(r.todo_count for r in results)
    if todos and not args.quiet:
        print(f"Added {todos} TODO(torchpatch) comment{'s' * (todos != 1)}.", file=sys.stderr)
    remaining = sum(len(r.findings) for r in results) + sum(1 for r in results if r.error is not None)
    if not args.quiet and args.output_format in ("full", "concise"):
        _print_summary(results, remaining, fixed_total, args)
    if any(result.internal_error for result in results):
        return 2
    if args.exit_zero:
        return 0
    return 1 if remaining else 0


@contextmanager
def _collect_garbage_between_files(every: int = 100):
    """Cyclic GC off while files are checked, and one collection every ``every`` files.

    An AST is freed by reference counting alone, but the collector, triggered by the allocations of
    parsing, walks every live AST node again and again: that was a fifth of the run time on large trees.
    """
    was_enabled = gc.isenabled()
    gc.collect()
    gc.freeze()  # what the imports created is never garbage: keep it out of every later collection
    gc.disable()
    count = 0

    def file_done() -> None:
        nonlocal count
        count += 1
        if count % every == 0:
            gc.collect()

    try:
        yield file_done
    finally:
        gc.unfreeze()
        if was_enabled:
            gc.enable()


def _print_findings(results: list[FileResult], args: argparse.Namespace) -> None:
    if args.statistics:
        text = formats.render_statistics(results, args.unsafe_fixes)
    elif args.output_format == "json":
        text = formats.render_json(results)
    elif args.output_format == "concise":
        text = formats.render_concise(results, args.unsafe_fixes)
    elif args.output_format == "github":
        text = formats.render_github(results)
    elif args.output_format == "sarif":
        codes = {f.code for r in results for f in r.findings}
        text = formats.render_sarif(results, [rule for rule in all_rules() if rule.code in codes])
    else:
        text = formats.render_full(results, args.unsafe_fixes)
    if text:
        print(text)


def _print_summary(results: list[FileResult], remaining: int, fixed: int, args: argparse.Namespace) -> None:
    fixable = sum(1 for r in results for f in r.findings if fix_allowed(f.fix, args.unsafe_fixes))
    hidden = sum(1 for r in results for f in r.findings if f.fix is not None and not fix_allowed(f.fix, args.unsafe_fixes))
    lines = []
    if fixed:
        lines.append(f"Found {remaining + fixed} error{'s' * (remaining + fixed != 1)} ({fixed} fixed, {remaining} remaining).")
    elif remaining:
        lines.append(f"Found {remaining} error{'s' * (remaining != 1)}.")
    else:
        lines.append("All checks passed!")
    if fixable and not args.fix:
        lines.append(f"[*] {fixable} fixable with the `--fix` option.")
    if hidden:
        lines.append(f"{hidden} hidden fix{'es' * (hidden != 1)} can be enabled with the `--unsafe-fixes` option.")
    print("\n".join(lines), file=sys.stdout if remaining or fixed else sys.stderr)


def _print_fixed(results: list[FileResult]) -> None:
    for result in results:
        for code, count in sorted(result.fixed_codes.items()):
            print(f"Fixed {count} × {code} in {result.path}")


def _print_diffs(results: list[FileResult]) -> int:
    changed = 0
    for result in results:
        new = fixed_content(result)
        if new is None:
            continue
        changed += 1
        old = original_content(result)
        diff = difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                    fromfile=str(result.path), tofile=str(result.path))
        sys.stdout.writelines(line if line.endswith(("\n", "\r")) else line + "\n" for line in diff)
    if changed:
        print(f"Would fix {sum(r.fixed_count for r in results)} error(s) in {changed} file(s).", file=sys.stderr)
    return 1 if changed else 0
