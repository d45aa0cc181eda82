"""``torchpatch check``: lint (and fix) PyTorch code for a target release."""

from __future__ import annotations

import io
import os
import sys
import time
from pathlib import Path

from torchpatch.engine.config import ConfigError, Overrides, SettingsResolver
from torchpatch.engine.discover import DEFAULT_EXCLUDE, FileFilter, discover, explicitly_excluded
from torchpatch.engine.results import FileResult, fix_allowed
from torchpatch.engine.settings import Settings
from torchpatch.engine.writer import fixed_content, original_content, write_fixed
from torchpatch.output import formats
from torchpatch.output.style import Style, colour_wanted
from torchpatch.versions import NEWEST_KNOWN, OLDEST_KNOWN

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (3 ms of every start-up)
if TYPE_CHECKING:
    from typing import TextIO
    import argparse

HELP = "Check Python files and notebooks for outdated and unsafe PyTorch usage (and fix them)."
OUTPUT_FORMATS = ("full", "concise", "json", "json-lines", "github", "gitlab", "junit", "pylint", "sarif")
#: Like RUFF_OUTPUT_FORMAT: the output format when --output-format is not given.
OUTPUT_FORMAT_ENV = "TORCHPATCH_OUTPUT_FORMAT"
HUMAN_FORMATS = ("full", "concise")
#: A progress bar appears only once a run has taken this long (and only on a terminal).
PROGRESS_AFTER_S = 1.0
#: Paths were named but none held a file to check: not a clean run (see _nothing_checked_is_an_error).
EXIT_NOTHING_CHECKED = 2


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="*", type=Path, default=[], help="files or folders (default: .); - reads stdin")
    parser.add_argument("--fix", action="store_true", help="apply safe fixes")
    parser.add_argument("--unsafe-fixes", action="store_true", help="also show, and with --fix apply, unsafe fixes")
    parser.add_argument("--diff", action="store_true", help="print the fixes as a unified diff; write nothing")
    parser.add_argument("--show-fixes", action="store_true", help="list what --fix fixed")
    parser.add_argument("--add-todos", action="store_true",
                        help="with --fix: write a `# TODO(torchpatch): CODE message` line above each finding no fix handles")
    parser.add_argument("--add-noqa", action="store_true", help="add `# noqa: CODE` to every line with a finding")
    parser.add_argument("--output-format", choices=OUTPUT_FORMATS, default=None,
                        help=f"how findings are written (default: full, or ${OUTPUT_FORMAT_ENV})")
    parser.add_argument("-o", "--output-file", type=Path, help="write the report to this file instead of stdout")
    parser.add_argument("--statistics", action="store_true", help="print counts per rule")
    parser.add_argument("--exit-zero", action="store_true", help="exit 0 even when findings remain")
    parser.add_argument("--exit-non-zero-on-fix", action="store_true",
                        help="exit 1 when --fix changed a file, even if no finding remains")
    parser.add_argument("--select", type=_codes, help="rules to enable: codes, prefixes, names or ALL (comma-separated)")
    parser.add_argument("--extend-select", type=_codes, default=[], help="rules to enable on top of the selection")
    parser.add_argument("--ignore", type=_codes, default=[], help="rules to disable")
    parser.add_argument("--target-torch", metavar="X.Y", help=f"release to migrate to (default {NEWEST_KNOWN})")
    parser.add_argument("--min-torch", metavar="X.Y",
                        help=f"oldest release the code must still run on (default: from the project's pins, else {OLDEST_KNOWN})")
    parser.add_argument("--config", type=Path, help="a torchpatch.toml or pyproject.toml to use for every file")
    parser.add_argument("--exclude", type=_codes, metavar="PATTERNS",
                        help="files and folders not to check (gitignore patterns, comma-separated); replaces the "
                             "configuration's exclude")
    parser.add_argument("--extend-exclude", type=_codes, default=[], metavar="PATTERNS",
                        help="files and folders not to check, on top of the excluded ones")
    parser.add_argument("--per-file-ignores", type=_per_file_ignores, action="extend", metavar="PATTERN:CODES",
                        help="codes ignored in the files a pattern matches (`tests/*:TP301,TP302`); replaces the "
                             "configuration's per-file-ignores")
    parser.add_argument("--extend-per-file-ignores", type=_per_file_ignores, action="extend", default=[],
                        metavar="PATTERN:CODES", help="like --per-file-ignores, on top of the configuration's")
    parser.add_argument("--show-settings", action="store_true",
                        help="print the settings used for the first file of each path (which configuration file, "
                             "min-torch and where it came from, target, selection) and exit")
    parser.add_argument("--show-files", action="store_true", help="print the files that would be checked and exit")
    parser.add_argument("--isolated", action="store_true", help="ignore configuration files and pins")
    parser.add_argument("--force-exclude", action="store_true",
                        help="apply exclude patterns to files given explicitly too (for pre-commit)")
    parser.add_argument("--no-respect-gitignore", dest="respect_gitignore", action="store_false",
                        help="also check files that .gitignore / .ignore exclude")
    parser.add_argument("--stdin-filename", type=Path, help="the path of the code read from stdin (with `-`)")
    parser.add_argument("-j", "--jobs", type=_jobs, default=None, metavar="N",
                        help="processes to check files with (default: one per core when the files are enough "
                             "work to pay for them, else 1)")
    parser.add_argument("--no-cache", action="store_true", help="neither read nor write the result cache")
    parser.add_argument("--cache-dir", type=Path, help="where the cache lives (default: .torchpatch_cache, "
                                                       "or $TORCHPATCH_CACHE_DIR)")
    parser.add_argument("--quiet", "-q", action="store_true", help="print findings only, no summary")
    parser.add_argument("--from-warnings", type=Path, metavar="LOG",
                        help="also report the torch warnings of a saved pytest output (or `python -W default` log), "
                             "at the lines they name (docs: runtime-warnings)")
    from torchpatch.frontends.executors import options

    options.add_arguments(parser)


def _codes(value: str) -> list[str]:
    return [part.strip() for part in value.split(",") if part.strip()]


def _per_file_ignores(value: str) -> list[tuple[str, tuple[str, ...]]]:
    """``PATTERN:CODE[,CODE...]`` (ruff's form); the last colon separates, so a Windows path keeps its drive."""
    pattern, colon, codes = value.rpartition(":")
    selected = tuple(_codes(codes))
    if not colon or not pattern.strip() or not selected:
        import argparse

        raise argparse.ArgumentTypeError(f"expected PATTERN:CODES (e.g. tests/*:TP301), got {value!r}")
    return [(pattern.strip(), selected)]


def _jobs(value: str) -> int:
    import argparse

    try:
        jobs = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of processes: {value!r}") from None
    if jobs < 1:
        raise argparse.ArgumentTypeError("needs at least 1 process")
    return jobs


#: What the parser gives ``check`` with no option but its paths (tests/test_cli.py keeps the two equal): the
#: namespace of ``quick_arguments``.
PLAIN_DEFAULTS: dict = {
    "command": "check", "paths": [], "fix": False, "unsafe_fixes": False, "diff": False, "show_fixes": False,
    "add_todos": False, "add_noqa": False, "output_format": None, "output_file": None, "statistics": False,
    "exit_zero": False, "exit_non_zero_on_fix": False, "select": None, "extend_select": [], "ignore": [],
    "target_torch": None, "min_torch": None, "config": None, "exclude": None, "extend_exclude": [],
    "per_file_ignores": None, "extend_per_file_ignores": [], "show_settings": False, "show_files": False,
    "isolated": False, "force_exclude": False, "respect_gitignore": True, "stdin_filename": None, "jobs": None,
    "no_cache": False, "cache_dir": None, "quiet": False, "from_warnings": None, "executor": "local",
    "ray_address": None, "report": None, "files_from": None, "resume": None,
}
_QUICK_FLAGS = {"--no-cache": "no_cache", "--exit-zero": "exit_zero", "--quiet": "quiet", "-q": "quiet",
                "--isolated": "isolated", "--statistics": "statistics", "--fix": "fix", "--diff": "diff",
                "--unsafe-fixes": "unsafe_fixes", "--show-fixes": "show_fixes", "--force-exclude": "force_exclude",
                "--exit-non-zero-on-fix": "exit_non_zero_on_fix"}


#: The options with a value that quick_arguments reads: option -> (dest, how the parser reads the value).
_QUICK_VALUES = {"--output-format": ("output_format", None), "--jobs": ("jobs", int), "-j": ("jobs", int),
                 "--cache-dir": ("cache_dir", Path), "--output-file": ("output_file", Path), "-o": ("output_file", Path),
                 "--config": ("config", Path), "--target-torch": ("target_torch", str), "--min-torch": ("min_torch", str),
                 "--select": ("select", _codes), "--extend-select": ("extend_select", _codes), "--ignore": ("ignore", _codes)}


def quick_arguments(argv: list[str]):
    """The namespace the parser would give ``argv`` (``check`` and then paths and the common options:
    on/off flags, ``--output-format``, ``-j``, ``--select``, ``--cache-dir``...), read without building the parser (argparse and the help
    formatter it makes for every option are a tenth of a one-file check); None for anything else (an
    option not listed, a value the parser would refuse, ``-``, ``--help``), which the parser then reads."""
    if not argv or argv[0] != "check":
        return None
    values = {key: list(value) if type(value) is list else value for key, value in PLAIN_DEFAULTS.items()}
    position, count = 1, len(argv)
    paths_ended = False  # the parser takes one run of paths: one after an option that ends a run is an error
    while position < count:
        argument = argv[position]
        position += 1
        if not argument.startswith("-"):
            if paths_ended:
                return None
            values["paths"].append(Path(argument))
            continue
        paths_ended = bool(values["paths"])
        flag = _QUICK_FLAGS.get(argument)
        if flag is not None:
            values[flag] = True
            continue
        name, equals, value = argument.partition("=")
        if name not in _QUICK_VALUES or (equals and not name.startswith("--")):
            return None
        if not equals:
            if position == count or argv[position].startswith("-"):
                return None
            value = argv[position]
            position += 1
        dest, read = _QUICK_VALUES[name]
        if read is None:  # --output-format
            if value not in OUTPUT_FORMATS:
                return None
            values[dest] = value
        elif read is int:  # -j
            if not value.isdigit() or not value.isascii() or int(value) < 1:
                return None
            values[dest] = int(value)
        else:
            values[dest] = read(value)
    from types import SimpleNamespace

    return SimpleNamespace(**values)


def _usage_error(message: str) -> Exception:
    from torchpatch.frontends.cli import UsageError

    return UsageError(message)


def overrides_from(args: argparse.Namespace) -> Overrides:
    return Overrides(
        select=None if args.select is None else tuple(args.select), extend_select=tuple(args.extend_select),
        ignore=tuple(args.ignore), target_torch=args.target_torch, min_torch=args.min_torch,
        config=args.config, isolated=args.isolated,
        exclude=None if getattr(args, "exclude", None) is None else tuple(args.exclude),
        extend_exclude=tuple(getattr(args, "extend_exclude", ())),
        per_file_ignores=None if getattr(args, "per_file_ignores", None) is None else tuple(args.per_file_ignores),
        extend_per_file_ignores=tuple(getattr(args, "extend_per_file_ignores", ())))


def make_resolver(args: argparse.Namespace) -> SettingsResolver:
    try:
        return SettingsResolver(overrides_from(args))
    except ConfigError as error:
        raise _usage_error(str(error)) from None


def build_settings(args: argparse.Namespace) -> Settings:
    """The settings of the first path (the whole story for one file; see SettingsResolver for many)."""
    paths = args.paths or [Path(".")]
    try:
        return make_resolver(args).for_file(paths[0])
    except ConfigError as error:
        raise _usage_error(str(error)) from None


def file_filter(settings: Settings) -> FileFilter:
    cached = settings.__dict__.get("_file_filter")
    if cached is None:
        patterns = (*(settings.exclude if settings.exclude is not None else DEFAULT_EXCLUDE), *settings.extend_exclude)
        cached = settings.__dict__["_file_filter"] = FileFilter(settings.project_root or Path.cwd(), tuple(patterns))
    return cached


def _check_options(args: argparse.Namespace) -> None:
    if args.add_todos and not (args.fix or args.diff):
        raise _usage_error("--add-todos writes comments: use it with --fix or --diff")
    if args.add_noqa and (args.fix or args.diff):
        raise _usage_error("--add-noqa cannot be combined with --fix or --diff")
    if args.stdin_filename is not None and [str(p) for p in args.paths] not in ([], ["-"]):
        raise _usage_error("--stdin-filename reads stdin: give no paths, or `-`")


def resolve_output_format(args: argparse.Namespace) -> None:
    """--output-format, else $TORCHPATCH_OUTPUT_FORMAT, else full."""
    if getattr(args, "output_format", None) is not None:
        return
    chosen = os.environ.get(OUTPUT_FORMAT_ENV, "").strip() or "full"
    if chosen not in OUTPUT_FORMATS:
        raise _usage_error(f"${OUTPUT_FORMAT_ENV}: invalid choice: {chosen!r} (choose from {', '.join(OUTPUT_FORMATS)})")
    args.output_format = chosen


def run(args: argparse.Namespace) -> int:
    resolve_output_format(args)
    _check_options(args)
    reading_stdin = [str(p) for p in args.paths] == ["-"] or (args.stdin_filename is not None and not args.paths)
    if "-" in [str(p) for p in args.paths] and not reading_stdin:
        raise _usage_error("`-` (stdin) cannot be combined with other paths")
    if reading_stdin and args.add_noqa:
        raise _usage_error("--add-noqa edits files: it cannot read stdin")
    resolver = make_resolver(args)
    if args.show_settings or args.show_files:
        from torchpatch.frontends import show

        try:
            return show.show_settings(args, resolver) if args.show_settings else show.show_files(args, resolver)
        except ConfigError as error:
            raise _usage_error(str(error)) from None
    report = _Report(args)
    if getattr(args, "from_warnings", None) is not None:
        if reading_stdin:
            raise _usage_error("--from-warnings reads a log: it cannot be combined with stdin")
        _with_warnings_log(args, report)
        if not args.paths:  # only the log's findings
            return report.finish([])
    try:
        if reading_stdin:
            from torchpatch.frontends.executors import options

            if options.wanted(args):
                raise _usage_error("--report, --files-from, --resume and --executor check files, not stdin")
            return _run_stdin(args, resolver, report)
        return _run_paths(args, resolver, report)
    except ConfigError as error:
        raise _usage_error(str(error)) from None


def _with_warnings_log(args: argparse.Namespace, report: "_Report") -> None:
    """``--from-warnings LOG``: the log's torch warnings join the findings (a line found both ways is one)."""

    from torchpatch.engine.runtime import attribute
    from torchpatch.engine.warnings_log import LogError, read_log

    try:
        hits = read_log(args.from_warnings)
    except LogError as error:
        raise _usage_error(f"--from-warnings {error}") from None
    # Every rule may cover a warning unless --select narrows them (as the plugin's report does).
    overrides = overrides_from(args)
    overrides = overrides.replace(select=overrides.select or ("ALL",), ignore=(*overrides.ignore, "TP100"))
    try:
        runtime_resolver = SettingsResolver(overrides)
    except ConfigError as error:
        raise _usage_error(str(error)) from None
    finish = report.finish

    def finish_with_runtime(results: list[FileResult]) -> int:
        static = {result.path: result for result in results}
        return finish(attribute(hits, runtime_resolver.for_file, Path.cwd(), static))

    report.finish = finish_with_runtime  # type: ignore[method-assign]


def _run_paths(args: argparse.Namespace, resolver: SettingsResolver, report: "_Report") -> int:
    from torchpatch.frontends.executors import options

    if options.wanted(args):  # --report, --files-from, --resume, --executor ray
        return _run_scan(args, resolver, report)
    paths = args.paths or [Path(".")]
    for path in paths:
        if not path.exists():
            raise _usage_error(f"{path}: no such file or directory")
    files = discover(paths, lambda folder: file_filter(resolver.for_folder(folder)),
                     respect_gitignore=args.respect_gitignore, force_exclude=args.force_exclude,
                     note_listing=resolver.note_listing)
    nothing_checked = report.nothing_checked = not files and _nothing_checked_is_an_error(args, resolver)
    if not files:
        print("warning: No Python files found under the given path(s)", file=sys.stderr)

    from torchpatch.engine.parallel import Mode, check_files

    fixing = args.fix or args.diff
    mode = Mode(fix=fixing, unsafe_fixes=args.unsafe_fixes, add_todos=args.add_todos)
    cache = None
    if not args.no_cache:
        from torchpatch.engine import cache as result_cache

        cache = result_cache.ResultCache(args.cache_dir or result_cache.default_cache_dir(), mode.cache_name())
    progress = _Progress(len(files)) if _progress_wanted(args) else None
    try:
        results = check_files(files, resolver.for_file, mode, args.jobs, cache,
                              progress.update if progress else None)
    finally:
        if progress:
            progress.close()
    if cache is not None:
        save_cache(cache)
    code = report.finish(results)
    return EXIT_NOTHING_CHECKED if nothing_checked else code


def save_cache(cache) -> None:
    """Save the result cache; one that cannot be written is said, never silent (the next run re-checks all)."""
    cache.save()
    if cache.save_error is not None:
        reason = cache.save_error.strerror or cache.save_error
        print(f"warning: cache {cache.folder}: not written ({reason}); the next run checks every file again",
              file=sys.stderr)


def _nothing_checked_is_an_error(args: argparse.Namespace, resolver: SettingsResolver) -> bool:
    """Paths were named and none held a file to check: a CI job must not go green on code it never read
    (ruff exits 0 here). Not when no path was named, and not when --force-exclude dropped every named path on
    purpose (pre-commit naming only excluded files)."""
    if not args.paths:
        return False
    if args.force_exclude:
        return not all(explicitly_excluded(path, lambda folder: file_filter(resolver.for_folder(folder)))
                       for path in args.paths)
    return True


def _run_scan(args: argparse.Namespace, resolver: SettingsResolver, report: "_Report") -> int:
    from torchpatch.engine import cache as result_cache
    from torchpatch.engine.parallel import Mode, available_cores
    from torchpatch.frontends.executors import scan

    mode = Mode(fix=args.fix or args.diff, unsafe_fixes=args.unsafe_fixes, add_todos=args.add_todos)
    cache = None
    if not args.no_cache:
        cache = result_cache.ResultCache(args.cache_dir or result_cache.default_cache_dir(), mode.cache_name())
    return scan.run_check(args, resolver, report.finish, mode, cache, args.jobs or available_cores())


def _run_stdin(args: argparse.Namespace, resolver: SettingsResolver, report: "_Report") -> int:
    """``check -``: the code comes from stdin, named --stdin-filename; with --fix the fixed code goes to stdout."""
    name = args.stdin_filename or Path("-")
    settings = resolver.for_file(name if str(name) != "-" else Path("stdin.py"))
    data = sys.stdin.buffer.read()
    fixing = args.fix or args.diff
    from torchpatch.engine.linter import check_file

    result = check_file(name if str(name) != "-" else Path("-"), settings, fix=fixing,
                        unsafe_fixes=args.unsafe_fixes, add_todos=args.add_todos, data=data)
    if args.fix:
        report.stdin_data = data
    return report.finish([result])


def _progress_wanted(args: argparse.Namespace) -> bool:
    """Only a person watching a terminal gets a bar: never in CI, never when stdout is piped, never for
    machine formats."""
    stdout_is_terminal = args.output_file is not None or sys.stdout.isatty()
    return (args.output_format in HUMAN_FORMATS and not args.quiet and not args.statistics
            and sys.stderr.isatty() and stdout_is_terminal and not os.environ.get("CI"))


class _Progress:
    """``[#####     ] 1200/2730 files`` on stderr, drawn only once the run has lasted PROGRESS_AFTER_S."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.started = time.monotonic()
        self.drawn = False
        self.last = 0.0

    def update(self, done: int) -> None:
        now = time.monotonic()
        if now - self.started < PROGRESS_AFTER_S or (now - self.last < 0.1 and done < self.total):
            return
        self.last = now
        width = 30
        filled = width * done // max(self.total, 1)
        sys.stderr.write(f"\r[{'#' * filled}{' ' * (width - filled)}] {done}/{self.total} files")
        sys.stderr.flush()
        self.drawn = True

    def close(self) -> None:
        if self.drawn:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()


class _Report:
    """Everything after checking: writes, the report (stdout or -o), the summary and the exit code.

    A broken pipe on stdout (``torchpatch check . | head -1``) stops the printing, never the exit code.
    """

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.stdin_data: bytes | None = None
        self.nothing_checked = False  # paths were named but held no file: "All checks passed!" would lie
        self.machine = args.output_format not in HUMAN_FORMATS

    def finish(self, results: list[FileResult]) -> int:
        args = self.args
        for result in results:
            if result.error is not None:
                print(f"torchpatch: {formats.display_path(result.path)}: {result.error}", file=sys.stderr)
        fixed_total = changed_files = 0
        write_failed = False
        unwritten = 0  # fixes computed for files that could not be written: they still stand
        if args.fix and self.stdin_data is None:
            for result in results:
                if (result.fixed_count or result.todo_count) and result.error is None:
                    try:
                        if write_fixed(result):
                            fixed_total += result.fixed_count
                            changed_files += 1
                    except OSError as error:
                        write_failed = True
                        unwritten += result.fixed_count
                        result.fixed_codes = {}  # nothing was fixed in this file: --show-fixes must not say so
                        print(f"torchpatch: {result.path}: not written: {error}", file=sys.stderr)
        elif args.fix:
            fixed_total = sum(r.fixed_count for r in results)
        if args.add_noqa:
            added = _add_noqa(results)
            print(f"Added {added} noqa directive{'s' * (added != 1)}.", file=sys.stderr)
            return 2 if any(r.internal_error for r in results) else 0

        diffs = 0
        try:
            with _output(args) as out:
                if self.stdin_data is not None:
                    _print_stdin_fixed(results[0], self.stdin_data)
                if args.diff:
                    diffs = _print_diffs(results, sys.stdout if not self.machine else sys.stderr)
                style = Style(args.output_file is None and colour_wanted(sys.stdout))
                text = _render(results, args, style)
                target = out
                if (self.stdin_data is not None or args.diff and not self.machine) and args.output_file is None:
                    target = sys.stderr  # stdout holds the fixed code, or a diff that `patch` can read
                if text:
                    print(text, file=target)
                if args.fix and args.show_fixes:
                    _print_fixed(results, sys.stderr if self.machine or target is sys.stderr else target)
                todos = sum(r.todo_count for r in results)
                if todos and not args.quiet:
                    print(f"Added {todos} TODO(torchpatch) comment{'s' * (todos != 1)}.", file=sys.stderr)
                remaining = unwritten + sum(len(r.findings) for r in results) + sum(1 for r in results if r.error is not None)
                if not args.quiet and not self.machine and not self.nothing_checked:
                    _print_summary(results, remaining, fixed_total, args, target, style)
                if args.output_format == "github" and formats.github_step_summary_path():
                    _append_step_summary(results)
        except BrokenPipeError:
            _silence_stdout()
        remaining = sum(len(r.findings) for r in results) + sum(1 for r in results if r.error is not None)
        if any(result.internal_error for result in results):
            return 2
        if write_failed:  # a failed write is never a clean run, whatever --exit-zero says
            return 1
        if args.exit_zero:
            return 0
        if remaining or diffs:
            return 1
        if args.exit_non_zero_on_fix and (fixed_total or changed_files):
            return 1
        return 0


class _output:
    """The report's stream: stdout, or the -o file (written whole, atomically, at the end)."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.path: Path | None = args.output_file
        self.buffer = io.StringIO()

    def __enter__(self) -> TextIO:
        return self.buffer if self.path is not None else sys.stdout

    def __exit__(self, kind, value, traceback) -> None:
        if self.path is None or kind is not None:
            return
        from torchpatch.engine.writer import atomic_write

        try:
            if self.path.exists():
                atomic_write(self.path, self.buffer.getvalue().encode("utf-8"))
            else:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self.path.write_text(self.buffer.getvalue(), encoding="utf-8")
        except OSError as error:
            raise _usage_error(f"--output-file {self.path}: {error.strerror or error}") from None


def _silence_stdout() -> None:
    """After a broken pipe, point stdout at /dev/null so that the interpreter's last flush stays quiet."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def _render(results: list[FileResult], args: argparse.Namespace, style: Style) -> str:
    if args.statistics:
        if args.output_format == "json":
            return formats.render_statistics_json(results, args.unsafe_fixes)
        return formats.render_statistics(results, args.unsafe_fixes)
    if args.output_format == "json":
        return formats.render_json(results)
    if args.output_format == "concise":
        return formats.render_concise(results, args.unsafe_fixes, style)
    if args.output_format == "github":
        return formats.render_github(results)
    if args.output_format == "sarif":
        return formats.render_sarif(results)
    other = {"json-lines": formats.render_json_lines, "gitlab": formats.render_gitlab, "junit": formats.render_junit,
             "pylint": formats.render_pylint}.get(args.output_format)
    if other is not None:
        return other(results)
    return formats.render_full(results, args.unsafe_fixes, style)


def _append_step_summary(results: list[FileResult]) -> None:
    path = formats.github_step_summary_path()
    try:
        with open(path, "a", encoding="utf-8") as stream:
            stream.write(formats.render_step_summary(results))
    except OSError as error:
        print(f"torchpatch: GITHUB_STEP_SUMMARY {path}: {error.strerror or error}", file=sys.stderr)


def _print_summary(results: list[FileResult], remaining: int, fixed: int, args: argparse.Namespace,
                   out: TextIO, style: Style) -> None:
    fixable = sum(1 for r in results for f in r.findings if fix_allowed(f.fix, args.unsafe_fixes))
    hidden = sum(1 for r in results for f in r.findings if f.fix is not None and not fix_allowed(f.fix, args.unsafe_fixes))
    levels = formats.describe_severities(formats.severity_counts(results))
    lines = []
    if fixed:
        total = remaining + fixed
        tail = f": {levels}" if remaining and levels else ""
        lines.append(f"Found {total} finding{'s' * (total != 1)} ({fixed} fixed, {remaining} remaining{tail}).")
    elif remaining:
        detail = f" ({levels})" if levels else ""
        lines.append(f"Found {remaining} finding{'s' * (remaining != 1)}{detail}.")
    elif not (args.diff and any(r.fixed_count for r in results)):
        lines.append("All checks passed!")  # with --diff, "Would fix ..." has said what is left to do
    if fixable and not args.fix:
        lines.append(f"[*] {fixable} fixable with the `--fix` option.")
    if hidden:
        lines.append(f"{hidden} hidden fix{'es' * (hidden != 1)} can be enabled with the `--unsafe-fixes` option.")
    stream = out if (remaining or fixed or out is not sys.stdout) else sys.stderr
    if lines:
        print(style.summary("\n".join(lines)), file=stream)


def _print_fixed(results: list[FileResult], out: TextIO) -> None:
    for result in results:
        for code, count in sorted(result.fixed_codes.items()):
            print(f"Fixed {count} × {code} in {formats.display_path(result.path)}", file=out)


def _print_stdin_fixed(result: FileResult, data: bytes) -> None:
    """ruff's ``--fix -``: the whole (fixed, or unchanged) code on stdout, in its own encoding."""
    content = fixed_content(result) if result.error is None else None
    if content is None:
        sys.stdout.buffer.write(data)
    else:
        from torchpatch.engine.source import encode_python

        source = result.source
        sys.stdout.buffer.write(content.encode("utf-8") if source.is_notebook else encode_python(source, content))
    sys.stdout.flush()


def _print_diffs(results: list[FileResult], out: TextIO) -> int:
    import difflib  # only for --diff

    changed = 0
    for result in results:
        new = fixed_content(result)
        if new is None:
            continue
        changed += 1
        old = original_content(result)
        name = formats.display_path(result.path)
        diff = difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                    fromfile=name, tofile=name)
        out.writelines(line if line.endswith(("\n", "\r")) else line + "\n" for line in diff)
    if changed:
        print(f"Would fix {sum(r.fixed_count for r in results)} finding(s) in {changed} file(s).", file=sys.stderr)
    return changed


def _add_noqa(results: list[FileResult]) -> int:
    from torchpatch.engine.noqa import add_noqa

    added = 0
    for result in results:
        if result.findings and result.error is None:
            try:
                added += add_noqa(result)
            except OSError as error:
                print(f"torchpatch: {result.path}: not written: {error}", file=sys.stderr)
    return added
