"""``torchpatch skill build DIR``: the rule database as an Agent Skill (SKILL.md plus references/)."""

from __future__ import annotations

import argparse
import json
import re
from dataclasses import dataclass
from pathlib import Path

from torchpatch import __version__, platform_facts
from torchpatch.docs import render_rows_table
from torchpatch.knowledge import (
    AREAS,
    Change,
    all_changes,
    area_of_catalog,
    changes_in,
    example_pair,
    is_table_rule,
    rule_area,
    table_rows,
    valid_example,
    versions_text,
)
from torchpatch.rules import all_rules, rule_by_code_or_name
from torchpatch.rules.api_table import api_changes
from torchpatch.rules.base import SAFE, Rule
from torchpatch.versions import KNOWN_RELEASES, NEWEST_KNOWN, Version

HELP = "Write the knowledge as an Agent Skill folder (SKILL.md and references/), for coding agents."

SKILL_NAME = "torchpatch"
#: The fence info string of a block that shows a form torchpatch flags: never the thing to write.
OUTDATED_FENCE = "python outdated"
OUTDATED_MARK = "**Outdated: torchpatch flags this, do not write it**"

DESCRIPTION = (
    "Verified PyTorch 2.4 to 2.15 upgrade knowledge from torchpatch's rule database: what each release "
    "deprecated, removed or changed, the old and new code, and whether the fix is safe. Use when upgrading "
    "PyTorch code or a torch pin, when torch prints a FutureWarning or DeprecationWarning, when writing or "
    "reviewing torch.load and weights_only or loading untrusted checkpoints, when choosing a CUDA wheel for "
    "a GPU, driver and Python, and when writing torch.compile, FlexAttention, torch.export, ONNX, "
    "quantization or FSDP/DTensor code. Corrects claims other PyTorch guides get wrong."
)

COMPATIBILITY = "Needs nothing; with the torchpatch command installed the agent can also check, fix and audit."


@dataclass(frozen=True)
class SeedCorrection:
    """A claim of the knowledge-patch skill torchpatch grew from that real torch contradicts."""

    seed_said: str  # quoted from the seed (whitespace normalised)
    wrong_because: str  # what real torch does; tests/test_skill.py checks it against torch and torchao
    rule: str | None = None  # the rule that now catches it
    api_old: str | None = None  # or the API-table row
    build_tag: str | None = None  # or the platform.toml build whose architectures show it


SEED_SOURCE = "the `nevaberry/pytorch-knowledge-patch` Agent Skill (2.4 → 2.11)"

SEED_CORRECTIONS: tuple[SeedCorrection, ...] = (
    SeedCorrection(
        seed_said="Do not wrap `create_block_mask()` directly in `torch.compile()`; use its `_compile=True` option.",
        wrong_because=("From 2.6 `_compile=True` raises a `DeprecationWarning` that says the opposite (\"to compile "
                       "create_block_mask, we suggest doing torch.compile(create_block_mask)\"), and the flag does "
                       "nothing but make that call."),
        rule="TP220",
    ),
    SeedCorrection(
        seed_said="with torch._dynamo.error_on_graph_break():",
        wrong_because=("`error_on_graph_break(error_on_graph_break: bool)` has a required argument on every release "
                       "that has it (2.9 → 2.15): the bare call raises `TypeError: missing 1 required positional "
                       "argument`."),
        rule="TP420",
    ),
    SeedCorrection(
        seed_said="from torchao.quantization.pt2e import prepare_pt2e, convert_pt2e",
        wrong_because=("`torchao.quantization.pt2e` does not export `prepare_pt2e` or `convert_pt2e` (ImportError "
                       "with torchao 0.18.0); they live in `torchao.quantization.pt2e.quantize_pt2e`. The seed's "
                       "`X86InductorQuantizer` path is right."),
        api_old="torch.ao.quantization.quantize_pt2e",
    ),
    SeedCorrection(
        seed_said=("Remove calls to `torch.distributed.symmetric_memory.enable_symm_mem_for_group()`; the store now "
                   "comes from the process group."),
        wrong_because=("The function is deprecated (a `FutureWarning` from 2.11), not removed: it still exists in "
                       "2.15, and releases before 2.11 still need the call. It lives in the private "
                       "`torch.distributed._symmetric_memory`; no release has a `torch.distributed.symmetric_memory` "
                       "module."),
        rule="TP214",
    ),
    SeedCorrection(
        seed_said="CUDA 12.8 and 12.9 binaries also drop Volta.",
        wrong_because=("Not before 2.11: the PyPI cu128 wheels of 2.8, 2.9 and 2.10 contain Volta (sm_70) kernels "
                       "(2.10.0's `libtorch_cuda.so` is built with `arch=compute_70,code=sm_70`). torchpatch's "
                       "platform table has the 2.11 cu128 build starting at sm_75, which nobody checked against a "
                       "wheel; the table below shows each build."),
        build_tag="cu128",
    ),
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="skill_action", metavar="ACTION")
    build = actions.add_parser("build", help="write the skill folder", description=HELP)
    build.add_argument("folder", type=Path, metavar="DIR",
                       help=f"the skill folder to write; its name must be {SKILL_NAME!r} (e.g. .claude/skills/{SKILL_NAME})")
    build.add_argument("--target-torch", metavar="X.Y", default=str(NEWEST_KNOWN),
                       help=f"the release the skill is written for (default {NEWEST_KNOWN})")


def run(args: argparse.Namespace) -> int:
    from torchpatch.frontends.cli import UsageError

    if args.skill_action != "build":
        raise UsageError("say what to do: `torchpatch skill build DIR`")
    if args.folder.name != SKILL_NAME:
        raise UsageError(f"{args.folder}: an Agent Skill's folder must be named after the skill, {SKILL_NAME!r}")
    try:
        target = Version.parse(args.target_torch)
    except ValueError as error:
        raise UsageError(f"--target-torch: {error}") from None
    if target not in KNOWN_RELEASES:
        raise UsageError(f"--target-torch {target}: torchpatch knows {KNOWN_RELEASES[0]}–{KNOWN_RELEASES[-1]}")
    if args.folder.exists() and not args.folder.is_dir():
        raise UsageError(f"{args.folder}: exists and is not a folder")
    files = render_skill(target)
    write_skill(args.folder, files)
    print(f"wrote {len(files)} files to {args.folder}")
    return 0


def write_skill(folder: Path, files: dict[str, str]) -> None:
    """Write the files; stale pages of an earlier build in references/ are removed, nothing else is."""
    references = folder / "references"
    references.mkdir(parents=True, exist_ok=True)
    for stale in references.glob("*.md"):
        if f"references/{stale.name}" not in files:
            stale.unlink()
    for relative, text in files.items():
        path = folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(path.name + ".tmp")
        temporary.write_text(text, encoding="utf-8", newline="\n")
        temporary.replace(path)


# -- rendering --------------------------------------------------------------------------------------
def area_file(area: str) -> str:
    return "references/" + re.sub(r"[^a-z0-9]+", "-", AREAS[area][0].lower()).strip("-") + ".md"


def release_file(release: Version) -> str:
    return f"references/release-{release}.md"


def anchor(rule: type[Rule]) -> str:
    return f"{rule.code.lower()}-{rule.name}"


def fix_words(fix: str | None) -> str:
    return {SAFE: "safe fix, applied by `torchpatch check --fix`",
            "unsafe": "unsafe fix, applied by `--fix --unsafe-fixes`: review it"}.get(fix or "", "no automatic fix")


def outdated_block(code: str, flagged_by: str) -> list[str]:
    return [f"{OUTDATED_MARK} ({flagged_by}):", "", f"```{OUTDATED_FENCE}", code.rstrip("\n"), "```", ""]


def python_block(code: str) -> list[str]:
    return ["```python", code.rstrip("\n"), "```", ""]


def render_skill(target: Version = NEWEST_KNOWN) -> dict[str, str]:
    """Every file of the skill, keyed by its path inside the skill folder."""
    files = {"SKILL.md": render_skill_md(target)}
    for area in AREAS:
        files[area_file(area)] = render_area(area, target)
    for release in KNOWN_RELEASES:
        if release <= target:
            files[release_file(release)] = render_release(release)
    return files


def _front_matter() -> list[str]:
    return [
        "---",
        f"name: {SKILL_NAME}",
        f"description: {json.dumps(DESCRIPTION)}",
        "license: MIT",
        f"compatibility: {json.dumps(COMPATIBILITY)}",
        "metadata:",
        f"  generator: torchpatch {__version__}",
        f"  pytorch-releases: {KNOWN_RELEASES[0]}-{KNOWN_RELEASES[-1]}",
        "---",
    ]


def render_skill_md(target: Version) -> str:
    rules = all_rules()
    rows = api_changes()
    lines = _front_matter() + [
        "",
        f"# PyTorch {KNOWN_RELEASES[0]} → {target}: what changed, verified (torchpatch)",
        "",
        f"Generated by `torchpatch skill build` from torchpatch {__version__}'s rule database: {len(rules)} rules, "
        f"{len(rows)} API-table rows and the platform facts of {len(platform_facts.releases())} releases, each checked "
        "against the real PyTorch wheels. Every statement below names its release, the old and new code, and "
        "whether torchpatch's fix is safe (keeps behaviour on every release from your minimum torch to the "
        "target), unsafe (needs review) or absent. Do not edit: rebuild it.",
        "",
        "## If the `torchpatch` command is available, run it",
        "",
        "Check with `torchpatch --version`. The tool knows everything here and applies it to the code in front "
        "of you; prefer it over reading:",
        "",
        "```sh",
        "torchpatch check --output-format json src/          # findings with code, message, location, fix",
        "torchpatch check --fix src/                         # apply the safe fixes",
        "torchpatch check --diff --unsafe-fixes src/         # show the fixes that need review",
        "torchpatch check --target-torch 2.11 --min-torch 2.6 src/",
        "torchpatch rule TP301                               # explain one rule",
        "torchpatch changes 2.6 2.11 .                       # upgrade report for this project",
        "torchpatch audit model.pt                           # is a checkpoint safe to load with weights_only=True?",
        f"torchpatch doctor --gpu sm_70 --driver 535 --python 3.12 --target-torch {target}",
        "```",
        "",
        "Exit codes: 0 clean, 1 findings remain, 2 usage error. Without the tool, use the references below; "
        "load only the one that matches the work.",
        "",
        "## What you may have learnt wrong",
        "",
        f"These claims come from {SEED_SOURCE}, which torchpatch grew from; real torch contradicts them.",
        "",
    ]
    for number, correction in enumerate(SEED_CORRECTIONS, 1):
        lines += render_correction(number, correction, target)
    lines += ["## Rules by area", "",
              "Each rule finds one change in code (`torchpatch rule CODE` explains it); details, examples and "
              "fix safety are in the area's reference.", ""]
    for area, (title, scope) in AREAS.items():
        area_rules = [rule for rule in rules if not is_table_rule(rule) and rule_area(rule) == area]
        area_rows = [row for rule in rules for row in table_rows(rule) if _row_area(row) == area]
        lines += [f"### [{title}]({area_file(area)})", "", f"{scope}.", ""]
        for rule in area_rules:
            lines.append(f"- **{rule.code}** {rule.summary}; {_short_versions(rule)}; {_fix_short(rule.fix_safety)}.")
        if area_rows:
            removed = sum(1 for row in area_rows if row.removed_in is not None)
            lines.append(f"- {len(area_rows)} renamed, moved or removed APIs ({removed} removed; TP101/TP201): "
                         f"the table in [{area_file(area)}]({area_file(area)}#api-table).")
        lines.append("")
    lines += ["## Releases", "", "What each release changed, from the rules, the API table and the platform facts:", ""]
    for release in KNOWN_RELEASES:
        if release <= target:
            count = len(changes_in(release))
            lines.append(f"- [PyTorch {release}]({release_file(release)}): {count} changes")
    lines += ["", "Older changes that torchpatch still flags (before 2.4) are in the area references.", ""]
    return "\n".join(lines).rstrip() + "\n"


def _row_area(row) -> str:
    return area_of_catalog(row.catalog)


def _short_versions(rule: type[Rule]) -> str:
    return versions_text(rule).replace("replacement available since", "new API since")


def _fix_short(fix: str | None) -> str:
    return {SAFE: "safe fix", "unsafe": "unsafe fix"}.get(fix or "", "no fix")


def render_correction(number: int, correction: SeedCorrection, target: Version) -> list[str]:
    lines = [f"### {number}. The seed said: “{correction.seed_said}”", "",
             f"**Wrong.** {correction.wrong_because}", ""]
    if correction.rule:
        rule = rule_by_code_or_name(correction.rule)
        assert rule is not None, correction.rule
        old, new = example_pair(rule)
        lines += [f"**Now:** {rule.summary} (PyTorch: {versions_text(rule)}); {fix_words(rule.fix_safety)}. "
                  f"torchpatch rule {rule.code} ({rule.name}) finds it; details in "
                  f"[{area_file(rule_area(rule))}]({area_file(rule_area(rule))}#{anchor(rule)}).", ""]
        if new:
            lines += ["After torchpatch's fix:", ""] + python_block(new)
        elif valid_example(rule):
            lines += ["Write instead:", ""] + python_block(valid_example(rule))
    elif correction.api_old:
        row = next(row for row in api_changes() if row.old == correction.api_old)
        lines += [f"**Now:** `{row.old}` is {row.phrase(target)}; use `{row.new}` ({row.note}); "
                  f"{fix_words('unsafe' if row.fix == 'unsafe' else row.fix)}. torchpatch rule "
                  f"{'TP101' if row.removed_in else 'TP201'} finds the old import.", ""]
        if row.fixed:
            lines += ["Write:", ""] + python_block(row.fixed)
    elif correction.build_tag:
        lines += [f"**Now:** the GPU architectures with compiled kernels in each {correction.build_tag} build "
                  "(from torchpatch's platform table; `torchpatch doctor --gpu sm_XY --target-torch X.Y` "
                  "chooses a build for a GPU):", "",
                  "| torch | build | kernels for | checked against a wheel |", "| --- | --- | --- | --- |"]
        for release in platform_facts.releases():
            build = release.build(correction.build_tag)
            if build is not None and release.version <= target:
                archs = ", ".join(platform_facts.capability_text(cap) for cap in build.archs)
                lines.append(f"| {release.version} | {build.tag} | {archs} | {'yes' if build.verified else 'no'} |")
        lines.append("")
        last_cu126 = [release.version for release in platform_facts.releases() if release.build("cu126")]
        if last_cu126:
            lines += [f"The seed's \"choose CUDA 12.6 for Maxwell, Pascal, or Volta\" holds while a cu126 build "
                      f"exists: torchpatch's table lists one for {last_cu126[0]} → {last_cu126[-1]}.", ""]
    return lines


def render_area(area: str, target: Version) -> str:
    title, scope = AREAS[area]
    rules = [rule for rule in all_rules() if not is_table_rule(rule) and rule_area(rule) == area]
    lines = [f"# {title}", "", f"{scope}. Generated by torchpatch {__version__} for PyTorch up to {target}; "
             "each rule below is what `torchpatch rule CODE` explains.", ""]
    for rule in rules:
        lines += _render_rule_section(rule)
    rows = [(rule, row) for rule in all_rules() for row in table_rows(rule) if _row_area(row) == area]
    if rows:
        lines += ["## API table", "", "Plain renames, moves and removals (rules TP101 removed-api and TP201 "
                  "deprecated-api); each row has its own versions. `fix` is `safe` when torchpatch's rewrite keeps "
                  "behaviour (it becomes unsafe when your minimum torch predates the replacement), `unsafe` when "
                  "it needs review, `none` when there is no mechanical replacement.", ""]
        lines += render_rows_table(sorted((row for _, row in rows), key=lambda row: (row.since, row.old))) + [""]
    if area == "platforms":
        lines += _render_platform_tables(target)
    if area == "serialization":
        lines += _render_advisories()
    return "\n".join(lines).rstrip() + "\n"


def _render_rule_section(rule: type[Rule]) -> list[str]:
    lines = [f"## {rule.code} {rule.name}", "", f"{rule.summary}. *PyTorch: {versions_text(rule)}.*"]
    if rule.opt_in:
        lines.append(f"*Opt-in: `torchpatch check --extend-select {rule.code}`.*")
    lines.append("")
    prose = re.sub(r"^## ", "### ", rule.prose(), flags=re.MULTILINE)
    lines += [prose, ""]
    old, new = example_pair(rule)
    if old:
        lines += outdated_block(old, f"{rule.code}")
    if new:
        lines += [f"Use instead (torchpatch's {fix_words(rule.fix_safety)}):", ""] + python_block(new)
    else:
        good = valid_example(rule)
        if good:
            lines += ["Write instead (not flagged):", ""] + python_block(good)
    lines += [f"**Fix safety:** {fix_words(rule.fix_safety)}. {rule.fix_safety_note}".rstrip(), ""]
    if rule.references:
        lines += ["References: " + ", ".join(f"<{url}>" for url in rule.references), ""]
    return lines


def _render_platform_tables(target: Version) -> list[str]:
    lines = ["## Releases and wheels", "",
             "From torchpatch's platform table (`torchpatch doctor` uses the same facts). Architectures are the "
             "compute capabilities with compiled kernels; a build marked \\* was not checked against a real wheel.", "",
             "| torch | Python | PyPI default | builds (GPU kernels) | C++11 ABI | wheel tag |",
             "| --- | --- | --- | --- | --- | --- |"]
    for release in platform_facts.releases():
        if release.version > target:
            continue
        builds = "; ".join(
            f"{build.tag}{'' if build.verified else '*'}"
            + (f" ({platform_facts.capability_text(build.archs[0])}–{platform_facts.capability_text(build.archs[-1])})"
               if build.archs else "")
            for build in release.builds)
        lines.append(f"| {release.version} | {release.python_range_text} | {release.pypi_default} | {builds} | "
                     f"{'yes' if release.cxx11_abi else 'no'} | `{release.platform_tag}` |")
    lines += ["", "Install a build other than PyPI's default with "
              "`pip install torch==X.Y.Z --index-url https://download.pytorch.org/whl/<build>`.", "",
              "## Platform changes by release", ""]
    for change in all_changes():
        if change.source == "platform" and change.area == "platforms" and change.version <= target:
            lines.append(f"- **{change.version}**: {change.title}{'' if change.verified else ' (not checked against a wheel)'}. "
                         f"{change.action}")
    lines += ["", "## NVIDIA driver minimums (Linux)", "", "| CUDA | driver for the full toolkit | oldest driver (minor-version compatibility) |",
              "| --- | --- | --- |"]
    for requirement in platform_facts.driver_requirements():
        lines.append(f"| {requirement.cuda} | {requirement.toolkit_text} | {requirement.minor_compat_text} |")
    return lines + [""]


def _render_advisories() -> list[str]:
    lines = ["## Advisories against torch", "", "A torch pin that only allows affected releases is flagged by "
             "TP304 (vulnerable-torch-pin) for the `torch.load` advisories.", ""]
    for advisory in platform_facts.cves():
        alias = f" ({advisory.alias})" if advisory.alias else ""
        lines.append(f"- **{advisory.id}**{alias}, fixed in torch {advisory.fixed}: {advisory.summary}.")
    return lines + [""]


def render_release(release: Version) -> str:
    lines = [f"# PyTorch {release}: what changed", "",
             f"Every change torchpatch knows in {release}, by area. `torchpatch check --target-torch {release}` "
             "finds the code ones.", ""]
    events = changes_in(release)
    for area, (title, _) in AREAS.items():
        in_area = [(change, what) for change, what in events if change.area == area]
        if not in_area:
            continue
        lines += [f"## {title}", ""]
        for change, what in in_area:
            lines.append("- " + _release_line(change, what))
        lines.append("")
    if not events:
        lines += ["No change torchpatch knows of.", ""]
    return "\n".join(lines).rstrip() + "\n"


def _release_line(change: Change, what: str) -> str:
    if change.source == "platform":
        unchecked = "" if change.verified else " (not checked against a wheel)"
        return f"**{change.title}**{unchecked}. {change.action}"
    if change.source == "api-table":
        head = f"`{change.old}` {what}" + (f" → `{change.new}`" if change.new else "")
        return f"**{head}** ({change.code}; {change.handling()}). {change.action}"
    rule = rule_by_code_or_name(change.code or "")
    link = f"{area_file(change.area).removeprefix('references/')}#{anchor(rule)}" if rule else ""
    return f"**{what.capitalize()}: {change.title}** ({change.code}; {change.handling()}); see [{change.code}]({link})."
