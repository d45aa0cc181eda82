"""The pytest plugin: ``pytest --torchpatch`` records torch's warnings at the user's lines and reports them as findings.

Installed with torchpatch (the ``pytest11`` entry point) and inert unless ``--torchpatch`` (or one of the
options that need it) is given: without it, it only adds its options. Nothing here imports torch or the
linter until a run asks for it.
"""

from __future__ import annotations

import os
import sys
import threading
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from torchpatch.engine.linter import FileResult
    from torchpatch.engine.runtime import WarningHit

REPORT_FORMATS = ("json", "sarif", "github")
SECTION_TITLE = "torchpatch: PyTorch warnings"  # engine/warnings_log.py reads a saved run back by this title
WORKER_OUTPUT_KEY = "torchpatch_warning_hits"
RECORDER_NAME = "torchpatch-recorder"
#: How many tests a line of the terminal summary names (the report lists up to MAX_TESTS).
SUMMARY_TESTS = 3
_PACKAGES = ("torch", "torchvision", "torchaudio", "torchao")
# Frames that only pass a call or a warning through: the stdlib's wrappers, the import system, pytest.
_TRANSPARENT_MODULES = ("functools", "contextlib", "importlib", "typing", "typing_extensions", "warnings", "abc",
                        "threading", "_pytest", "pluggy", "unittest", "runpy", "asyncio", "concurrent")
# Python-level warn-once caches in torch 2.13 (functools.cache'd helpers that call warnings.warn): cleared
# before each test so that every test that reaches them is seen.
_WARN_ONCE_CACHES = (
    ("torch._inductor.lowering", "_warn_complex_not_supported"),
    ("torch._inductor.compile_fx", "_warn_tf32_disabled"),
    ("torch._inductor.fx_passes.fuse_attention", "_warn_tf32_disabled"),
)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("torchpatch", "torchpatch: PyTorch warnings as findings")
    group.addoption("--torchpatch", action="store_true", default=False,
                    help="record the deprecation and behaviour-change warnings torch gives during the tests, at "
                         "the lines of your code that caused them, and summarise them with the rules that fix them")
    group.addoption("--torchpatch-report", metavar="PATH", default=None,
                    help="write the recorded warnings as torchpatch findings to PATH (implies --torchpatch)")
    group.addoption("--torchpatch-format", choices=REPORT_FORMATS, default=None,
                    help="the report's format (default: from PATH's extension: .sarif → sarif, else json)")
    group.addoption("--torchpatch-strict", action="store_true", default=False,
                    help="fail the session when torch gave a deprecation warning (implies --torchpatch)")


def _enabled(options: Any) -> bool:
    return bool(getattr(options, "torchpatch", False) or getattr(options, "torchpatch_report", None)
                or getattr(options, "torchpatch_strict", False))


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config, parser: pytest.Parser, args: list[str]) -> None:
    """Start recording before the conftests (and the torch they import) are loaded."""
    if _enabled(early_config.known_args_namespace):
        _recorder(early_config).install()


def pytest_configure(config: pytest.Config) -> None:
    if not _enabled(config.option):
        return
    report = config.option.torchpatch_report
    if report is not None and config.option.torchpatch_format is None and not _format_from(report):
        raise pytest.UsageError(f"--torchpatch-report {report}: unknown report format; name one with "
                                f"--torchpatch-format ({', '.join(REPORT_FORMATS)})")
    _recorder(config).install()


def _recorder(config: pytest.Config) -> "Recorder":
    recorder = config.pluginmanager.get_plugin(RECORDER_NAME)
    if recorder is None:
        recorder = Recorder(config)
        config.pluginmanager.register(recorder, RECORDER_NAME)
    return recorder


def _format_from(path: str) -> str | None:
    suffix = Path(path).suffix.lower()
    return {".json": "json", ".sarif": "sarif", ".github": "github", ".txt": "github", "": "json"}.get(suffix)


def _module_root(name: str | None) -> str:
    return (name or "").split(".", 1)[0]


class Recorder:
    """Sees every warning shown during the session (``warnings._showwarnmsg``, which both Python's
    ``warnings.warn`` and C++ ``TORCH_WARN`` go through) and walks the stack at that moment to the innermost
    frame outside torch."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.root = Path(config.invocation_params.dir)
        self.hits: dict[tuple, "WarningHit"] = {}
        self.current_test = "<collection>"
        self.installed = False
        self.torch_configured = False
        self.local = threading.local()
        self.results: list["FileResult"] | None = None
        self.strict_failed = 0

    # -- installing and restoring -----------------------------------------------------------------------

    def install(self) -> None:
        if self.installed:
            return
        self.installed = True
        self.original_showwarnmsg = warnings._showwarnmsg  # type: ignore[attr-defined]
        self.original_warn = warnings.warn
        self.original_warn_explicit = warnings.warn_explicit
        warnings._showwarnmsg = self._showwarnmsg  # type: ignore[attr-defined]
        warnings.warn = self._warn  # type: ignore[assignment]
        warnings.warn_explicit = self._warn_explicit  # type: ignore[assignment]
        # "always" for warnings located in torch, appended so that every filter of the project (and pytest's
        # own, which catch_warnings copies from these) still comes first; "default" would show each once.
        self.filters = [("always", None, category, r"(" + "|".join(_PACKAGES) + r")(\.|$)", 0)
                        for category in (DeprecationWarning, PendingDeprecationWarning, FutureWarning, UserWarning)]
        for action, _, category, module, _ in self.filters:
            warnings.filterwarnings(action, category=category, module=module, append=True)
        self._configure_torch()

    def _configure_torch(self) -> None:
        """Turn off torch's once-per-process warnings, once torch is imported (never import it here)."""
        torch = sys.modules.get("torch")
        if self.torch_configured or torch is None or not hasattr(torch, "set_warn_always"):
            return
        self.torch_configured = True
        self.torch_warn_always = torch.is_warn_always_enabled()
        torch.set_warn_always(True)  # C++ TORCH_WARN_ONCE warns every time
        storage = getattr(torch, "storage", None)
        # TypedStorage's deprecation keeps its own once-per-process flag, which set_warn_always does not reach.
        self.storage_always = getattr(storage, "_get_always_warn_typed_storage_removal", lambda: None)()
        getattr(storage, "_set_always_warn_typed_storage_removal", lambda always: None)(True)

    def uninstall(self) -> None:
        if not self.installed:
            return
        self.installed = False
        if warnings._showwarnmsg == self._showwarnmsg:  # type: ignore[attr-defined]
            warnings._showwarnmsg = self.original_showwarnmsg  # type: ignore[attr-defined]
        if warnings.warn == self._warn:
            warnings.warn = self.original_warn
        if warnings.warn_explicit == self._warn_explicit:
            warnings.warn_explicit = self.original_warn_explicit
        for entry in self.filters:
            if entry in warnings.filters:
                warnings.filters.remove(entry)
        warnings._filters_mutated()  # type: ignore[attr-defined]
        torch = sys.modules.get("torch")
        if self.torch_configured and torch is not None:
            torch.set_warn_always(self.torch_warn_always)
            if self.storage_always is not None:
                torch.storage._set_always_warn_typed_storage_removal(self.storage_always)
        self.torch_configured = False

    # -- seeing warnings --------------------------------------------------------------------------------

    def _warn(self, message, category=None, stacklevel=1, source=None, **kwargs):  # noqa: ANN001
        previous = getattr(self.local, "caller", None)
        self.local.caller = sys._getframe(1)
        try:
            return self.original_warn(message, category, stacklevel + 1, source, **kwargs)
        finally:
            self.local.caller = previous

    def _warn_explicit(self, *args, **kwargs):  # noqa: ANN002, ANN003
        previous = getattr(self.local, "caller", None)
        self.local.caller = sys._getframe(1)
        try:
            return self.original_warn_explicit(*args, **kwargs)
        finally:
            self.local.caller = previous

    def _showwarnmsg(self, message: warnings.WarningMessage) -> None:
        try:
            self._record(message, sys._getframe(1))
        except Exception:  # noqa: BLE001 - a recording problem must never change the user's run
            pass
        self.original_showwarnmsg(message)

    def _record(self, message: warnings.WarningMessage, frame: Any) -> None:
        category = message.category
        if not _recorded_category(category):
            return
        python_caller = getattr(self.local, "caller", None)
        user_frame, through_torch = _user_frame(frame)
        warned_in_torch = _in_torch_file(message.filename)
        if python_caller is not None and not through_torch and not warned_in_torch:
            if _module_root(python_caller.f_globals.get("__name__")) not in _PACKAGES and not _deprecates_torch(python_caller):
                return  # the user's own warnings.warn (or another library's)
        elif python_caller is None and not through_torch and not warned_in_torch and "torch" not in sys.modules:
            return  # a C extension's warning, and torch is not even loaded
        from torchpatch.engine.runtime import MAX_TESTS, WarningHit

        if user_frame is not None:
            path, row = user_frame.f_code.co_filename, user_frame.f_lineno or 0
        else:
            path, row = message.filename, message.lineno
        torch_location = None
        if (os.path.abspath(message.filename), message.lineno) != (os.path.abspath(path), row):
            torch_location = f"{self._shown(message.filename)}:{message.lineno}"
        name = category.__name__ if category.__module__ == "builtins" else f"{category.__module__}.{category.__qualname__}"
        hit = WarningHit(self._shown(path), row, name, str(message.message), 1, [self.current_test], torch_location,
                         inside_torch=user_frame is None)
        known = self.hits.get(hit.key())
        if known is None:
            self.hits[hit.key()] = hit
        else:
            known.count += 1
            if self.current_test not in known.tests and len(known.tests) < 10 * MAX_TESTS:
                known.tests.append(self.current_test)

    def _shown(self, filename: str) -> str:
        """A path relative to where pytest was started, when it is inside it (as pytest shows them)."""
        try:
            return Path(filename).resolve().relative_to(self.root.resolve()).as_posix()
        except (ValueError, OSError):
            return filename

    # -- pytest hooks -----------------------------------------------------------------------------------

    def pytest_collectstart(self, collector: pytest.Collector) -> None:
        self.current_test = collector.nodeid or "<collection>"

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self._configure_torch()

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None):  # noqa: ANN201
        self._configure_torch()
        for module_name, function in _WARN_ONCE_CACHES:
            cached = getattr(sys.modules.get(module_name), function, None)
            getattr(cached, "cache_clear", lambda: None)()
        self.current_test = item.nodeid
        try:
            return (yield)
        finally:
            self.current_test = "<teardown>"

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        """xdist: a worker's records join the controller's."""
        from torchpatch.engine.runtime import WarningHit

        for data in getattr(node, "workeroutput", {}).get(WORKER_OUTPUT_KEY, []):
            hit = WarningHit.from_json(data)
            known = self.hits.get(hit.key())
            if known is None:
                self.hits[hit.key()] = hit
            else:
                known.add(hit)

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if hasattr(self.config, "workerinput"):  # an xdist worker: hand the records to the controller
            self.config.workeroutput[WORKER_OUTPUT_KEY] = [hit.to_json() for hit in self.hits.values()]  # type: ignore[attr-defined]
            return
        self.results = self._attribute()
        if self.config.option.torchpatch_report:
            self._write_report(self.config.option.torchpatch_report)
        if self.config.option.torchpatch_strict:
            from torchpatch.engine.runtime import runtime_findings

            self.strict_failed = sum(1 for f in runtime_findings(self.results) if _is_deprecation_finding(f))
            if self.strict_failed and session.exitstatus == pytest.ExitCode.OK:
                session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        self.uninstall()

    def pytest_terminal_summary(self, terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
        if self.results is None:
            return
        from torchpatch.engine.runtime import runtime_findings

        findings = sorted(runtime_findings(self.results), key=lambda f: (str(f.path), f.row, f.code))
        writer = terminalreporter
        if not findings:
            writer.write_sep("=", SECTION_TITLE, green=True)
            writer.write_line("torch gave no deprecation or behaviour-change warning.")
            return
        writer.write_sep("=", SECTION_TITLE, yellow=True)
        for finding in findings:
            writer.write_line(_summary_row(finding, self._shown))
            for line in _summary_details(finding):
                writer.write_line(line)
        covered = sum(1 for f in findings if f.code != "TP002")
        total = sum(f.runtime.count for f in findings)
        tail = f"; report: {config.option.torchpatch_report}" if config.option.torchpatch_report else ""
        writer.write_line(f"{total} torch warning{'s' * (total != 1)} at {len(findings)} line"
                          f"{'s' * (len(findings) != 1)} of your code ({covered} covered by a static rule, "
                          f"{len(findings) - covered} with no static rule yet){tail}")
        if config.option.torchpatch_strict and self.strict_failed:
            writer.write_line(f"--torchpatch-strict: {self.strict_failed} line{'s' * (self.strict_failed != 1)} hit "
                              "a torch deprecation warning: the session fails", red=True, bold=True)

    # -- findings ---------------------------------------------------------------------------------------

    def _attribute(self) -> list["FileResult"]:
        from torchpatch.engine.config import ConfigError, Overrides, SettingsResolver
        from torchpatch.engine.runtime import attribute

        # Every rule may cover a warning, whatever the project selects; its pins and target still apply.
        resolver = SettingsResolver(Overrides(select=("ALL",), ignore=("TP100",)))

        def settings_for(path: Path):  # noqa: ANN202
            try:
                return resolver.for_file(path)
            except ConfigError:
                return SettingsResolver(Overrides(select=("ALL",), ignore=("TP100",), isolated=True)).for_file(path)

        return attribute(list(self.hits.values()), settings_for, self.root)

    def _write_report(self, target: str) -> None:
        from torchpatch.output import formats

        kind = self.config.option.torchpatch_format or _format_from(target) or "json"
        results = self.results or []
        old = Path.cwd()
        os.chdir(self.root)  # the formats place paths relative to the working directory
        try:
            text = {"json": formats.render_json, "sarif": formats.render_sarif,
                    "github": formats.render_github}[kind](results)
            path = Path(target)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text + "\n", encoding="utf-8")
        except OSError as error:
            raise pytest.UsageError(f"--torchpatch-report {target}: {error.strerror or error}") from None
        finally:
            os.chdir(old)


def _recorded_category(category: type) -> bool:
    """Deprecations and behaviour changes: the warning classes torch uses for them, and torch's own classes."""
    if issubclass(category, (DeprecationWarning, PendingDeprecationWarning, FutureWarning, UserWarning)):
        return True
    return _module_root(getattr(category, "__module__", "")) in _PACKAGES


def _in_torch_file(filename: str) -> bool:
    for name in _PACKAGES:
        module = sys.modules.get(name)
        folder = os.path.dirname(getattr(module, "__file__", None) or "") if module is not None else ""
        if folder and os.path.abspath(filename).startswith(folder + os.sep):
            return True
    return filename.endswith((".cpp", ".cc", ".cu", ".h"))


def _user_frame(frame: Any) -> tuple[Any, bool]:
    """The innermost frame outside torch and the frames that only pass calls through, and whether a torch
    frame lies between it and the warning."""
    through_torch = False
    while frame is not None:
        module = frame.f_globals.get("__name__") or ""
        root = _module_root(module)
        filename = frame.f_code.co_filename
        if root in _PACKAGES or _in_torch_file(filename):
            through_torch = True
        elif root in ("typing_extensions", "warnings") and _deprecates_torch(frame):
            through_torch = True  # @deprecated on a torch API (torch.cuda.amp.GradScaler, autocast)
        elif not (root in _TRANSPARENT_MODULES or filename.startswith("<frozen") or module == __name__):
            return frame, through_torch
        frame = frame.f_back
    return None, through_torch


def _deprecates_torch(frame: Any) -> bool:
    """A ``@deprecated`` wrapper (typing_extensions, or warnings in Python 3.13) around a torch object."""
    wrapped = frame.f_locals.get("arg") if frame.f_code.co_name in ("wrapper", "__new__", "__init_subclass__") else None
    return _module_root(getattr(wrapped, "__module__", None)) in _PACKAGES


def _is_deprecation_finding(finding: Any) -> bool:
    from torchpatch.output.formats import severity

    if finding.runtime.deprecation:
        return True
    return finding.code.startswith(("TP1", "TP2")) and severity(finding.code) != "note"


def _summary_row(finding: Any, shown: Any) -> str:
    runtime = finding.runtime
    tests = len(runtime.tests)
    main = max(runtime.hits, key=lambda hit: hit.count)
    message = " ".join(main.message.split())
    return (f"{shown(str(finding.path))}:{finding.row}: {finding.code} [{runtime.count} hit{'s' * (runtime.count != 1)}, "
            f"{tests} test{'s' * (tests != 1)}] {main.category}: {message}")


def _summary_details(finding: Any) -> list[str]:
    lines = []
    for hit in finding.runtime.hits[1:]:
        lines.append(f"    also: {hit.category}: {' '.join(hit.message.split())}")
    if finding.code == "TP002":
        lines.append("    no static rule yet")
    else:
        fix = finding.fix.message if finding.fix is not None else (finding.fix_unavailable or "no automatic fix")
        lines.append(f"    rule {finding.code} {finding.name}: {finding.message}")
        lines.append(f"    fix: {fix}")
    if finding.runtime.hits[0].torch_location:
        lines.append(f"    torch's stacklevel pointed to {finding.runtime.hits[0].torch_location}")
    lines.extend(f"    test: {test}" for test in finding.runtime.tests[:SUMMARY_TESTS])
    return lines
