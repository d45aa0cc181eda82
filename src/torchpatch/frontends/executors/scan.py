"""Large scans for ``check`` and ``audit``: ``--report``, ``--files-from``, ``--resume``, ``--executor ray``
and (for ``audit``) fsspec URLs. The per-file work is the same pure function as ``-j`` runs; only where
it runs and how the results are gathered differ, and the results come back in input order.

``--resume REPORT`` reuses a file's row when its path, size and mtime, torchpatch's version and the
settings are those of the report (no content hash: hashing would read every byte of every checkpoint,
and a checkpoint behind a URL is read by byte ranges). Only ``checked`` rows are reused.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from pathlib import Path
from typing import Any, Callable, Sequence

from torchpatch.engine import report as report_rows
from torchpatch.frontends.executors import ray_executor, remote_files


from torchpatch.frontends.executors.options import add_arguments, wanted  # noqa: E402,F401  (their home before)


def _usage_error(message: str) -> Exception:
    from torchpatch.frontends.cli import UsageError

    return UsageError(message)


def _prepare(args: argparse.Namespace, tool: str) -> tuple[list[str], dict[str, dict]]:
    """(the named inputs, reusable rows of --resume): every usage check before any work."""
    if args.ray_address and args.executor != "ray":
        raise _usage_error("--ray-address needs --executor ray")
    if args.executor == "ray":
        try:
            ray_executor.import_ray()
        except ray_executor.RayMissing as error:
            raise _usage_error(str(error)) from None
    try:
        if args.report is not None:
            report_rows.validate_path(args.report)
        reused = report_rows.resumable(report_rows.read_rows(args.resume)) if args.resume else {}
    except report_rows.ReportError as error:
        raise _usage_error(str(error)) from None
    names = [str(p) for p in args.paths]
    if args.files_from:
        try:
            names += remote_files.read_files_from(args.files_from)
        except remote_files.InputError as error:
            raise _usage_error(str(error)) from None
    if tool == "check" and any(remote_files.is_url(name) for name in names):
        raise _usage_error("check reads local files (a checkout); URLs are for `torchpatch audit`")
    return names, reused


def _stat(path: str) -> tuple[int | None, float | None]:
    try:
        info = os.stat(path)
    except OSError:
        return None, None
    return info.st_size, info.st_mtime


@contextlib.contextmanager
def _report_writer(args: argparse.Namespace, tool: str):
    """The ``--report`` writer (None without one): rows reach ``PATH.partial`` as they are written, and
    ``PATH`` when the block ends without an error; after an error the partial file stays for ``--resume``."""
    if args.report is None:
        yield None
        return
    try:
        writer = report_rows.ReportWriter(args.report, tool)
    except report_rows.ReportError as error:
        raise _usage_error(str(error)) from None
    try:
        yield writer
    except report_rows.ReportError as error:
        writer.abandon()
        raise _usage_error(str(error)) from None
    except BaseException:
        writer.abandon()
        raise
    try:
        writer.close()
    except report_rows.ReportError as error:
        raise _usage_error(str(error)) from None


class _InOrder:
    """Rows written in input order as they arrive: a row that comes early (a cache hit, a row kept by
    ``--resume``) waits for the ones before it; nothing else is held."""

    def __init__(self, writer: "report_rows.ReportWriter | None") -> None:
        self.writer = writer
        self.next = 0
        self.waiting: dict[int, dict] = {}

    def put(self, position: int, row: dict) -> None:
        if self.writer is None:
            return
        self.waiting[position] = row
        while self.next in self.waiting:
            self.writer.write(self.waiting.pop(self.next))
            self.next += 1


class _Session:
    """Ray connected for the length of one command (and shut down if this command started it).

    While Ray runs, stdout points at stderr: Ray prints its own messages (a worker that died) to the
    driver's stdout, and stdout is for the report alone (json and sarif are read by programs)."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.started = False
        self.stdout = None

    def __enter__(self) -> "_Session":
        if self.args.executor == "ray":
            self.stdout, sys.stdout = sys.stdout, sys.stderr
            try:
                self.started = ray_executor.connect(self.args.ray_address)
            except (ConnectionError, TimeoutError, RuntimeError, ValueError) as error:
                self.__exit__()
                raise _usage_error(f"--ray-address: cannot join the Ray cluster: {error}") from None
        return self

    def __exit__(self, *exc) -> None:
        try:
            if self.started:
                import ray

                ray.shutdown()
        finally:
            if self.stdout is not None:
                sys.stdout, self.stdout = self.stdout, None


# -- check ----------------------------------------------------------------------------------------------

def check_batch(shared: tuple, tasks: Sequence) -> list:
    """One Ray task: a batch of files checked by the same code as ``-j``."""
    from torchpatch.engine.parallel import run_batch

    settings_list, mode, keyed = shared
    return run_batch(settings_list, mode, keyed, tasks)


#: What each Ray task runs (tests replace it with one that kills its worker).
CHECK_BATCH: Callable[[tuple, Sequence], list] = check_batch


def _ray_check_executor(tasks, settings_list, mode, keyed):
    """Workers get absolute paths (their working folder, or their node, is not this one's); the results
    are named as the user named the files."""
    from torchpatch.engine.parallel import crashed_result

    def lost(task, why):
        return crashed_result(task[0], why), None, None, False

    remote_tasks = [(Path(os.path.abspath(path)), index) for path, index in tasks]
    outcomes = ray_executor.ray_map(CHECK_BATCH, (settings_list, mode, keyed), remote_tasks, lost)
    for (path, _), outcome in zip(tasks, outcomes):
        result = outcome[0]
        result.path = path
        for finding in result.findings:
            finding.path = path
        yield outcome


def run_check(args: argparse.Namespace, resolver, finish: Callable[[list], int], mode, cache, jobs: int) -> int:
    """``check`` with the large-scan options; ``finish`` prints the usual report and gives the exit code."""
    from torchpatch.engine.discover import discover
    from torchpatch.engine.parallel import check_files
    from torchpatch.frontends.check import file_filter

    if mode.fix and args.executor == "ray":
        raise _usage_error("--executor ray only checks: run --fix and --diff on the checkout itself")
    names, reused = _prepare(args, "check")
    listed = [Path(name) for name in names] or [Path(".")]
    for path in map(Path, (str(p) for p in args.paths)):
        if not path.exists():
            raise _usage_error(f"{path}: no such file or directory")
    # A listed file that is missing is reported for that file (cannot read), never dropped.
    files = discover(listed, lambda folder: file_filter(resolver.for_folder(folder)),
                     respect_gitignore=args.respect_gitignore, force_exclude=args.force_exclude)
    if not files:
        print("warning: No Python files found under the given path(s)", file=sys.stderr)
    executor = _ray_check_executor if args.executor == "ray" else None
    with _Session(args), _report_writer(args, "check") as writer:
        rows = _InOrder(writer)
        identity: dict[int, tuple] = {}  # to-check index -> (file position, size, mtime, config)
        to_check: list[Path] = []
        kept = kept_with_findings = 0
        for position, path in enumerate(files):
            settings = resolver.for_file(path)
            size, mtime = _stat(str(path))
            config = report_rows.config_digest("check", mode.cache_name(), settings.result_key(path))
            row = reused.get(str(path))
            if report_rows.still_valid(row, size, mtime, config):
                kept += 1
                kept_with_findings += bool(row.get("findings"))
                rows.put(position, row)
            else:
                identity[len(to_check)] = (position, size, mtime, config)
                to_check.append(path)
        reused.clear()

        def arrived(index: int, result) -> None:
            position, *stat = identity.pop(index)
            rows.put(position, report_rows.check_row(result, *stat))

        results = check_files(to_check, resolver.for_file, mode, jobs, cache, None, executor,
                              arrived if writer is not None else None)
    if cache is not None:
        from torchpatch.frontends.check import save_cache

        save_cache(cache)
    if kept and not args.quiet:
        print(f"--resume: {kept} file(s) kept from {args.resume}", file=sys.stderr)
    code = finish(results)
    if code == 0 and not args.exit_zero and kept_with_findings:
        return 1
    return code


# -- audit ----------------------------------------------------------------------------------------------

def audit_one(version, name: str, size: int | None):
    """(Report, bytes read, read requests) for one local path or URL; fails closed like ``audit_path``."""
    from torchpatch.audit.auditor import Report, audit_stream

    reader = None
    try:
        if remote_files.is_url(name):
            fs, path = remote_files.filesystem(name)
            if size is None:
                size = fs.info(path)["size"]
            reader = remote_files.RangeReader(fs, path, size)
            # Storage records' local headers are skipped: one ranged read each, for tensor data never read.
            report = audit_stream(reader, size, name, version, storage_headers=False)
        else:
            size = os.path.getsize(name)
            with open(name, "rb", buffering=0) as stream:
                reader = remote_files.CountingReader(stream)
                report = audit_stream(reader, size, name, version)
    except (OSError, remote_files.InputError) as error:
        report = Report(name, torch_version=str(version))
        report.reason = f"cannot read: {getattr(error, 'strerror', None) or error}"
    except (ValueError, EOFError, RecursionError, MemoryError) as error:
        report = Report(name, torch_version=str(version))
        report.reason = f"cannot be parsed: {type(error).__name__}: {error}"
    except Exception as error:  # a bug in torchpatch: this file is unreadable (fail closed), the run goes on
        report = Report(name, torch_version=str(version))
        report.reason = f"internal error: {type(error).__name__}: {error}"
    fetched = reader.bytes_fetched if reader is not None else 0
    requests = reader.requests if reader is not None else 0
    return report, fetched, requests


def audit_batch(version, items: Sequence[tuple[str, int | None]]) -> list:
    return [audit_one(version, name, size) for name, size in items]


#: What each Ray task runs (tests replace it with one that kills its worker).
AUDIT_BATCH: Callable[[Any, Sequence], list] = audit_batch


def _audit_inputs(names: list[str], strict: int) -> tuple[list[tuple[str, int | None, float | None, bool]], list]:
    """((name, size, mtime, found in a folder) for every input, in order; (path, why) skipped in folders).

    Local folders are walked as ``audit`` walks them. The first ``strict`` names (the command line) must
    exist; a missing file of a ``--files-from`` list is audited as unreadable, never dropped."""
    from torchpatch.frontends.audit import _files

    inputs, skipped = [], []
    for position, name in enumerate(names):
        if remote_files.is_url(name):
            try:
                files, is_folder = remote_files.expand_url(name)
            except remote_files.InputError as error:
                raise _usage_error(str(error)) from None
            inputs += [(f.url, f.size, f.mtime, is_folder) for f in files]
            continue
        if position >= strict and not os.path.lexists(name):
            inputs.append((name, None, None, False))
            continue
        named, found, walked = _files([name])
        skipped += walked
        for path in named + found:
            inputs.append((path, *_stat(path), path in found))
    return inputs, skipped


def _sarif_with_urls(text: str, reports: list, root: str) -> str:
    """SARIF artifact locations of URL inputs as the URL itself (``s3://bucket/key`` is an absolute URI),
    not a file path made from it."""
    from torchpatch.audit.report import _artifact_uri

    wrong = {json.dumps(_artifact_uri(r.filename, root), sort_keys=True): r.filename
             for r in reports if remote_files.is_url(r.filename)}
    if not wrong:
        return text

    def fix(node):
        if isinstance(node, dict):
            url = wrong.get(json.dumps(node, sort_keys=True))
            if url is not None:
                return {"uri": url}
            return {key: fix(value) for key, value in node.items()}
        if isinstance(node, list):
            return [fix(item) for item in node]
        return node

    return json.dumps(fix(json.loads(text)), indent=2)


def run_audit(args: argparse.Namespace, version) -> int:
    from torchpatch.audit.auditor import Report
    from torchpatch.audit.report import EXIT_CODES, as_dict, exit_code, render_full, render_json, render_sarif
    from torchpatch.frontends.audit import _skippable

    if args.verify or args.convert_to_safetensors:
        raise _usage_error("--verify and --convert-to-safetensors run torch on this machine: not with the large-scan options")
    names, reused = _prepare(args, "audit")
    if not names:
        raise _usage_error("no checkpoints given (paths, URLs or --files-from)")
    inputs, walk_skipped = _audit_inputs(names, len(args.paths))
    config = report_rows.config_digest("audit", str(version))
    carried: dict[str, dict] = {}
    to_audit: list[tuple[str, int | None, float | None, bool]] = []
    for item in inputs:
        row = reused.get(item[0])
        if report_rows.still_valid(row, item[1], item[2], config):
            carried[item[0]] = row
        else:
            to_audit.append(item)
    kept = max((EXIT_CODES.get(row.get("verdict"), 3) for row in carried.values()), default=0)
    work = [(name, size) for name, size, _, _ in to_audit]
    reports, skipped = [], list(walk_skipped)
    with _Session(args), _report_writer(args, "audit") as writer:
        rows = _InOrder(writer)
        for position, (name, why) in enumerate(walk_skipped):
            size, mtime = _stat(name)
            rows.put(position, {"path": name, "status": "skipped", "reason": why, "size": size, "mtime": mtime,
                                "config": config, "verdict": None, "weights_only": None, "format": None,
                                "findings": [], "allowlist": [], "bytes_read": 0})
        positions = []
        for position, item in enumerate(inputs, start=len(walk_skipped)):
            if item[0] in carried:
                rows.put(position, carried[item[0]])
            else:
                positions.append(position)
        if args.executor == "ray":
            def lost(item, why):
                report = Report(item[0], torch_version=str(version))
                report.reason = f"internal error: {why}"
                return report, 0, 0

            remote_work = [(name if remote_files.is_url(name) else os.path.abspath(name), size) for name, size in work]
            outcomes = ray_executor.ray_map(AUDIT_BATCH, version, remote_work, lost)
        else:
            remote_work = work
            outcomes = (AUDIT_BATCH(version, [item])[0] for item in work)
        for position, (name, size, mtime, in_folder), (sent, _), (report, fetched, _requests) in zip(
                positions, to_audit, remote_work, outcomes):
            if sent != name:
                report.filename = name
                report.snippet = report.snippet.replace(repr(sent), repr(name))  # torch.load(NAME, ...)
            row = {"path": name, "size": size, "mtime": mtime, "config": config, "bytes_read": fetched}
            if in_folder and _skippable(name, report):
                skipped.append((name, report.reason))
                row.update(status="skipped", reason=report.reason, verdict=None, weights_only=None, format=None,
                           findings=[], allowlist=[])
            else:
                reports.append(report)
                data = as_dict(report)
                row.update(status="failed" if report.verdict == "unreadable" else "checked", reason=report.reason,
                           verdict=report.verdict, weights_only=report.weights_only, format=report.format,
                           findings=data["findings"], allowlist=report.allowlist)
            rows.put(position, row)
        if not reports and not carried and writer is not None:
            writer.discard()
    if args.verbose:
        for name, why in skipped:
            print(f"skipped {name}: {why}", file=sys.stderr)
    if not reports and not carried:
        hint = "" if args.verbose else " (--verbose lists them)"
        raise _usage_error(f"nothing audited: {len(skipped)} file(s) found, none of them a checkpoint{hint}")
    if carried:
        print(f"--resume: {len(carried)} file(s) kept from {args.resume}", file=sys.stderr)
    if args.output_format == "json":
        print(render_json(reports))
    elif args.output_format == "sarif":
        print(_sarif_with_urls(render_sarif(reports, os.getcwd()), reports, os.getcwd()))
    else:
        print(render_full(reports, len(skipped)))
    return max(exit_code(reports), kept)
