"""``torchpatch check --show-settings`` and ``--show-files``: what a run would use and check, like ruff's."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from torchpatch.engine.config import SettingsResolver
from torchpatch.engine.discover import DEFAULT_EXCLUDE, discover
from torchpatch.engine.settings import Settings
from torchpatch.output.formats import display_path


def _files(args: argparse.Namespace, resolver: SettingsResolver, paths: list[Path]) -> list[Path]:
    from torchpatch.frontends.check import file_filter

    return discover(paths, lambda folder: file_filter(resolver.for_folder(folder)),
                    respect_gitignore=args.respect_gitignore, force_exclude=args.force_exclude)


def show_files(args: argparse.Namespace, resolver: SettingsResolver) -> int:
    """Every file a check of these paths would read, one absolute path a line (ruff's --show-files)."""
    for path in _named_paths(args):
        if not path.exists():
            from torchpatch.frontends.check import _usage_error

            raise _usage_error(f"{path}: no such file or directory")
    for path in _files(args, resolver, _named_paths(args)):
        print(path.resolve())
    return 0


def show_settings(args: argparse.Namespace, resolver: SettingsResolver) -> int:
    """For each named path, the settings of its first file (a folder's first file, as ruff does)."""
    blocks = []
    for path in _named_paths(args):
        target = path
        if path.is_dir():
            found = _files(args, resolver, [path])
            target = found[0] if found else path
        settings = resolver.for_folder(target.resolve()) if target.is_dir() else resolver.for_file(target)
        blocks.append(describe(target, settings, args))
    print("\n\n".join(blocks))
    return 0


def _named_paths(args: argparse.Namespace) -> list[Path]:
    return [p for p in args.paths if str(p) != "-"] or [args.stdin_filename or Path(".")]


def describe(path: Path, settings: Settings, args: argparse.Namespace) -> str:
    """The resolved settings as TOML-like lines, each with where its value came from."""
    sources = settings.key_sources
    config = settings.config_path

    def origin(key: str, flag: str | None = None, given: object = None) -> str:
        if flag is not None and given not in (None, [], ()):
            return flag
        if key in sources:
            return sources[key]
        return "default"

    lines = [f"Resolved settings for: {display_path(path)}"]
    lines.append(f"configuration file = {json.dumps(str(config)) if config else 'none'}")
    lines.append(f"project root = {json.dumps(str(settings.project_root))}")
    min_source = settings.min_torch_source
    if min_source == "default":
        min_source = "default (no configuration key and no torch pin found)"
    elif min_source != "--min-torch" and "min-torch" not in sources:
        min_source = f"torch pins in {min_source}"
    lines.append(f"min-torch = {json.dumps(str(settings.min_torch))}  # {min_source}")
    target_origin = origin("target-torch", "--target-torch", args.target_torch)
    if target_origin == "default" and settings.target != _newest():
        target_origin = "raised to min-torch"
    lines.append(f"target-torch = {json.dumps(str(settings.target))}  # {target_origin}")
    select = settings.select if settings.select is not None else ["default"]
    lines.append(f"select = {json.dumps(select)}  # {origin('select', '--select', args.select)}")
    # a --select on the command line starts the selection anew: the file's extend-select and ignore are dropped
    layered = {} if args.select is not None else sources
    extend = [*settings.extend_select, *settings.command_line_extend_select]
    lines.append(f"extend-select = {json.dumps(extend)}  # {_mixed('extend-select', layered, args.extend_select)}")
    ignore = [*settings.ignore, *settings.command_line_ignore]
    lines.append(f"ignore = {json.dumps(ignore)}  # {_mixed('ignore', layered, args.ignore)}")
    per_file = json.dumps(settings.per_file_ignores)
    per_file_flag = getattr(args, "per_file_ignores", None) or getattr(args, "extend_per_file_ignores", None)
    lines.append(f"per-file-ignores = {per_file}  # {_mixed('per-file-ignores', sources, per_file_flag, '--per-file-ignores')}")
    exclude = settings.exclude if settings.exclude is not None else list(DEFAULT_EXCLUDE)
    lines.append(f"exclude = {json.dumps(exclude)}  # {origin('exclude', '--exclude', getattr(args, 'exclude', None))}")
    lines.append(f"extend-exclude = {json.dumps(settings.extend_exclude)}  "
                 f"# {_mixed('extend-exclude', sources, getattr(args, 'extend_exclude', None))}")
    codes = sorted(settings.codes_for(path.resolve()))
    lines.append(f"enabled rules for this file = {len(codes)}  # {', '.join(codes)}")
    return "\n".join(lines)


def _mixed(key: str, sources: dict[str, str], given: object, flag: str | None = None) -> str:
    parts = [sources[key]] if key in sources else []
    if given:
        parts.append(flag or f"--{key}")
    return " + ".join(parts) or "default"


def _newest():
    from torchpatch.versions import NEWEST_KNOWN

    return NEWEST_KNOWN
