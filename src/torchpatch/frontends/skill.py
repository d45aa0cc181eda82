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
#: Budgets, in tokens counted as characters / 4 (tiktoken is not a dependency; cl100k averages about 4
#: characters a token on this English-and-code text, so the estimate is close and errs on the long side).
SKILL_TOKENS = 2_500
REFERENCE_TOKENS = 5_000
#: Headroom below the reference budget, for the part header and link lines added after packing.
_PACK_CHARACTERS = REFERENCE_TOKENS * 4 - 800


def approximate_tokens(text: str) -> int:
    return -(-len(text) // 4)


def area_slug(area: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", AREAS[area][0].lower()).strip("-")


def area_file(area: str, part: int = 1) -> str:
    return f"references/{area_slug(area)}{'' if part == 1 else f'-{part}'}.md"


def release_file(release: Version) -> str:
    return f"references/release-{release}.md"


CORRECTIONS_FILE = "references/seed-corrections.md"
TOPICS_FILE = "references/seed-topics.md"


def anchor(rule: type[Rule]) -> str:
    return f"{rule.code.lower()}-{rule.name}"


def fix_words(fix: str | None) -> str:
    return {SAFE: "safe fix, applied by `torchpatch check --fix`",
            "unsafe": "unsafe fix, applied by `--fix --unsafe-fixes`: review it"}.get(fix or "", "no automatic fix")


def outdated_block(code: str, flagged_by: str) -> list[str]:
    return [f"{OUTDATED_MARK} ({flagged_by}):", "", f"```{OUTDATED_FENCE}", code.rstrip("\n"), "```", ""]


def python_block(code: str) -> list[str]:
    return ["```python", code.rstrip("\n"), "```", ""]


def opt_in_mark(rule: type[Rule] | None) -> str:
    return " (opt-in)" if rule is not None and rule.opt_in else ""


@dataclass(frozen=True)
class SeedTopic:
    """A topic of the seed skill and where this skill covers it: rules, API rows, a correction, or a note."""

    seed: str  # the seed's words (a heading, an index topic or a paragraph's lead)
    rules: tuple[str, ...] = ()
    rows: tuple[str, ...] = ()  # API-table rows (their old name)
    correction: int | None = None  # the number of a SEED_CORRECTIONS entry
    platforms: bool = False  # the platform tables answer it
    # For what no rule checks: the advice, and the names it relies on (tests/test_skill.py finds each in torch).
    note: str = ""
    names: tuple[str, ...] = ()


SEED_TOPICS: tuple[SeedTopic, ...] = (
    # The seed's reference index, topic by topic.
    SeedTopic("Safe checkpoint loading", rules=("TP301", "TP302", "TP447", "TP431", "TP304")),
    SeedTopic("repository trust", rules=("TP303",)),
    SeedTopic("TorchScript", rules=("TP210", "TP211")),
    SeedTopic("export/ONNX/PT2E removals", rules=("TP102", "TP212"),
              rows=("torch.export.export_for_training", "torch.ao.quantization.quantize_pt2e"), correction=3),
    SeedTopic("MAGMA and `varlen_attn` migrations", rules=("TP215", "TP110")),
    SeedTopic("`torch.compile`", rules=("TP121", "TP434", "TP440")),
    SeedTopic("Dynamo", rules=("TP222", "TP420"), correction=2),
    SeedTopic("Inductor", rules=("TP440",)),
    SeedTopic("FlexAttention", rules=("TP220", "TP221", "TP242", "TP432", "TP510"), correction=1),
    SeedTopic("variable-length attention", rules=("TP110",)),
    SeedTopic("cache", rules=("TP222",),
              note="`torch.compiler.save_cache_artifacts()` after a compiled run returns `(bytes, info)` or None; "
                   "`torch.compiler.load_cache_artifacts(bytes)` in another process before it compiles reuses them",
              names=("torch.compiler.save_cache_artifacts", "torch.compiler.load_cache_artifacts")),
    SeedTopic("determinism", rules=("TP440",)),
    SeedTopic("compiler debugging", rules=("TP420", "TP434"),
              note="`torch._dynamo.config.error_on_recompile = True` turns a recompilation into an error",
              names=("torch._dynamo.config.error_on_recompile",)),
    SeedTopic("`torch.export`", rules=("TP430", "TP444", "TP446")),
    SeedTopic("dynamic shapes", rules=("TP444",),
              note="`Dim.AUTO` lets export infer dynamic or static, `Dim.DYNAMIC` fails if the dimension "
                   "specialises, `Dim.STATIC` specialises it",
              names=("torch.export.Dim.AUTO", "torch.export.Dim.DYNAMIC", "torch.export.Dim.STATIC")),
    SeedTopic("control flow", rules=("TP446",)),
    SeedTopic("Core ATen", rules=("TP113",)),
    SeedTopic("ONNX", rules=("TP410", "TP436", "TP236", "TP237", "TP103")),
    SeedTopic("AOTInductor packaging",
              note="`torch._inductor.aoti_compile_and_package(exported_program)` writes a `.pt2` package; "
                   "`torch._inductor.aoti_load_package(path)` loads it; no rule checks them",
              names=("torch._inductor.aoti_compile_and_package", "torch._inductor.aoti_load_package")),
    SeedTopic("Triton and out variants",
              note="`torch.library.triton_op` registers a Triton kernel as an operator and "
                   "`torch.library.wrap_triton` calls one inside it; no rule checks them",
              names=("torch.library.triton_op", "torch.library.wrap_triton")),
    SeedTopic("FSDP2", rules=("TP213", "TP238")),
    SeedTopic("DTensor", rules=("TP443",), rows=("torch.distributed._tensor",)),
    SeedTopic("DCP", rules=("TP239",)),
    SeedTopic("XCCL", platforms=True, note="`torch.distributed.is_xccl_available()` says whether the build has the "
                                           "Intel GPU backend", names=("torch.distributed.is_xccl_available",)),
    SeedTopic("context parallelism", note="`torch.distributed.tensor.experimental.context_parallel` (experimental: "
                                          "pin the release); no rule checks it",
              names=("torch.distributed.tensor.experimental.context_parallel",)),
    SeedTopic("functional collectives",
              note="`torch.distributed._functional_collectives.all_reduce` and its siblings return tensors, not "
                   "work handles (a private module: pin the release); no rule checks them",
              names=("torch.distributed._functional_collectives.all_reduce",)),
    SeedTopic("Symmetric Memory", rules=("TP214",), correction=4),
    SeedTopic("float8", note="torch has the dtypes `torch.float8_e4m3fn` and `torch.float8_e5m2`; float8 training "
                             "itself lives in torchao", names=("torch.float8_e4m3fn", "torch.float8_e5m2")),
    SeedTopic("Wheels and ABI", rules=("TP441", "TP306", "TP307", "TP308"), platforms=True),
    SeedTopic("CUDA/ROCm/XPU/MPS", rules=("TP307", "TP240"), platforms=True),
    SeedTopic("C++/SYCL extensions", rules=("TP120", "TP435", "TP441")),
    SeedTopic("quantization", rules=("TP212",), rows=("torch.ao.quantization.quantize_pt2e",), correction=3),
    SeedTopic("streams", note="`torch.Stream` and `torch.accelerator.current_stream()` are the device-generic "
                              "forms", names=("torch.Stream", "torch.accelerator.current_stream")),
    SeedTopic("autograd", rules=("TP401", "TP442", "TP520")),
    SeedTopic("profiler", rules=("TP112", "TP208", "TP235", "TP241")),
    # The seed's sections.
    SeedTopic("Load checkpoints safely", rules=("TP301", "TP302", "TP447")),
    SeedTopic("Replace deprecated frontend and quantization APIs", rules=("TP210", "TP212", "TP102"),
              rows=("torch.export.export_for_training",), correction=3),
    SeedTopic("Update `varlen_attn` calls for 2.11", rules=("TP110",)),
    SeedTopic("Audit distributed construction and gradients", rules=("TP443", "TP256", "TP214"), correction=4),
    SeedTopic("Select compatible binaries", rules=("TP307", "TP441"), platforms=True, correction=5),
    SeedTopic("Control compile behavior", rules=("TP434", "TP420", "TP440"), correction=2),
    SeedTopic("Save portable compiler caches",
              note="after compiling and running, `torch.compiler.save_cache_artifacts()`; in the other process or "
                   "machine, `torch.compiler.load_cache_artifacts(bytes)` before compiling",
              names=("torch.compiler.save_cache_artifacts", "torch.compiler.load_cache_artifacts")),
    SeedTopic("Express FlexAttention sparsity efficiently", rules=("TP510", "TP220", "TP432"), correction=1),
    SeedTopic("High-value FSDP2 updates", rules=("TP213", "TP238")),
    SeedTopic("High-value export updates", rules=("TP444", "TP446", "TP430")),
    SeedTopic("Stability notes", rules=("TP214", "TP110"),
              note="the surfaces the seed calls API-unstable (symmetric memory, `XPUGraph`, `DebugMode`, "
                   "`varlen_attn`, AOTInductor packaging helpers, the limited stable C++ ABI) live in private or "
                   "experimental modules: pin the exact torch release and re-test on upgrade",
              names=("torch.xpu.XPUGraph", "torch.utils._debug_mode.DebugMode", "torch.nn.attention.varlen.varlen_attn")),
    # Paragraph leads the issue named (#26): covered, not dropped.
    SeedTopic("For meta-device construction", rules=("TP213",),
              note="build under `torch.device(\"meta\")`, call `fully_shard` on each block and the root, then "
                   "`model.to_empty(device=...)` and each module's `reset_parameters()`",
              names=("torch.distributed.fsdp.fully_shard", "torch.nn.Module.to_empty")),
    SeedTopic("Initialize process groups before constructing `DeviceMesh`", rules=("TP256",),
              note="a `DeviceMesh` (or `init_device_mesh`) made while no default process group exists calls "
                   "`init_process_group()` with the defaults itself (torch 2.13 `device_mesh.py`); initialise "
                   "first for another backend, timeout or rendezvous",
              names=("torch.distributed.device_mesh.DeviceMesh", "torch.distributed.device_mesh.init_device_mesh")),
    SeedTopic("APIs described as API-unstable", rules=("TP214", "TP110"),
              note="`XPUGraph`, `DebugMode` and the rest of the seed's list (see Stability notes): pin the exact "
                   "release for private and experimental modules",
              names=("torch.xpu.XPUGraph", "torch.utils._debug_mode.DebugMode")),
)


def render_skill(target: Version = NEWEST_KNOWN) -> dict[str, str]:
    """Every file of the skill, keyed by its path inside the skill folder."""
    files: dict[str, str] = {}
    where: dict[str, str] = {}  # rule code → the reference file that has its section
    parts: dict[str, list[str]] = {}
    for area in AREAS:
        rendered = render_area_parts(area, target)
        parts[area] = list(rendered)
        for name, (text, codes) in rendered.items():
            files[name] = text
            where.update(dict.fromkeys(codes, name))
    files[CORRECTIONS_FILE] = render_corrections(target, where)
    files[TOPICS_FILE] = render_topics(where)
    for release in KNOWN_RELEASES:
        if release <= target:
            files[release_file(release)] = render_release(release, where)
    return {"SKILL.md": render_skill_md(target, parts), **files}


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


def _link(name: str, text: str | None = None) -> str:
    return f"[{text or name.removeprefix('references/')}]({name})"


def render_skill_md(target: Version, parts: dict[str, list[str]]) -> str:
    """The entry point, kept small: what to do first, then which one reference to open."""
    rules = all_rules()
    rows = api_changes()
    lines = _front_matter() + [
        "",
        f"# PyTorch {KNOWN_RELEASES[0]} → {target}: what changed, verified (torchpatch)",
        "",
        f"Generated by `torchpatch skill build` from torchpatch {__version__}: {len(rules)} rules, {len(rows)} API-table "
        "rows and the platform facts, checked against the real PyTorch wheels. Do not edit: rebuild it.",
        "",
        "## First: let the tool read the code",
        "",
        "If `torchpatch --version` works, prefer it to reading (it applies all of this to the code in front of you):",
        "",
        "```sh",
        "torchpatch check --output-format json src/          # findings: code, message, location, fix",
        "torchpatch check --fix src/                         # apply the safe fixes",
        "torchpatch check --diff --unsafe-fixes src/         # the fixes that need review",
        "torchpatch check --target-torch 2.11 --min-torch 2.6 src/",
        "torchpatch rule TP301                               # explain one rule",
        "torchpatch changes 2.6 2.11 .                       # upgrade report for this project",
        "torchpatch audit model.pt                           # loadable with weights_only=True? malicious?",
        f"torchpatch doctor --gpu sm_70 --driver 535 --python 3.12 --target-torch {target}",
        "```",
        "",
        "Exit codes: 0 clean, 1 findings remain, 2 usage error. A *safe* fix keeps behaviour on every release from "
        "your minimum torch to the target; *unsafe* needs review. Opt-in rules run with `--extend-select CODE`.",
        "",
        "## Then open only the reference you need",
        "",
        f"- Moving between releases: the release pages, one per release (below), then the rules they link to.",
        f"- Something this skill contradicts in other guides: {_link(CORRECTIONS_FILE)}.",
        f"- A topic of the older `pytorch-knowledge-patch` skill: {_link(TOPICS_FILE)} says where it is covered.",
        "",
        "| area | rules | references |",
        "| --- | --- | --- |",
    ]
    for area, (title, scope) in AREAS.items():
        area_rules = [rule for rule in rules if not is_table_rule(rule) and rule_area(rule) == area]
        codes = ", ".join(rule.code + ("*" if rule.opt_in else "") for rule in area_rules) or "—"
        links = ", ".join(_link(name) for name in parts[area])
        lines.append(f"| **{title}**: {scope} | {codes} | {links} |")
    lines += ["", "\\* opt-in (off by default).", "", "## Opt-in rules", "",
              "Off by default; `torchpatch check --extend-select CODE` (or `--select ALL`) runs them:", ""]
    for rule in rules:
        if rule.opt_in:
            lines.append(f"- **{rule.code}** {rule.summary}.")
    lines += ["", "## What you may have learnt wrong", "",
              f"{SEED_SOURCE[0].upper()}{SEED_SOURCE[1:]} says these; real torch contradicts them ({_link(CORRECTIONS_FILE, 'the evidence')}):", ""]
    for number, correction in enumerate(SEED_CORRECTIONS, 1):
        lines.append(f"{number}. “{correction.seed_said}” **Wrong:** {_first_sentence(correction.wrong_because)}")
    lines += ["", "## Releases", ""]
    for release in KNOWN_RELEASES:
        if release <= target:
            lines.append(f"- [PyTorch {release}]({release_file(release)}): {len(changes_in(release))} changes")
    lines += ["", "Changes older than 2.4 that torchpatch still flags are in the area references.", ""]
    return "\n".join(lines).rstrip() + "\n"


def _first_sentence(text: str) -> str:
    return text.split(". ", 1)[0].rstrip(".") + "."


def _row_area(row) -> str:
    return area_of_catalog(row.catalog)


def render_corrections(target: Version, where: dict[str, str]) -> str:
    lines = ["# What the seed skill got wrong", "",
             f"Claims of {SEED_SOURCE}, which torchpatch grew from, that real torch contradicts; each with the "
             "rule or fact that now catches it.", ""]
    for number, correction in enumerate(SEED_CORRECTIONS, 1):
        lines += render_correction(number, correction, target, where)
    return "\n".join(lines).rstrip() + "\n"


def render_correction(number: int, correction: SeedCorrection, target: Version,
                      where: dict[str, str] | None = None) -> list[str]:
    lines = [f"## {number}. The seed said: “{correction.seed_said}”", "",
             f"**Wrong.** {correction.wrong_because}", ""]
    if correction.rule:
        rule = rule_by_code_or_name(correction.rule)
        assert rule is not None, correction.rule
        old, new = example_pair(rule)
        page = (where or {}).get(rule.code, area_file(rule_area(rule))).removeprefix("references/")
        lines += [f"**Now:** {rule.summary} (PyTorch: {versions_text(rule)}); {fix_words(rule.fix_safety)}. "
                  f"torchpatch rule {rule.code} ({rule.name}){opt_in_mark(rule)} finds it; details in "
                  f"[{page}]({page}#{anchor(rule)}).", ""]
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


def render_topics(where: dict[str, str]) -> str:
    """Each seed topic and where this skill covers it: generated from the rules, rows and corrections."""
    lines = ["# The seed's topics, and where each is covered", "",
             f"Every topic of {SEED_SOURCE} (its reference index and its sections), with the rules that check it, "
             "the API rows, the correction, or, where torchpatch has no rule, a note whose names exist in torch 2.13.",
             ""]
    for topic in SEED_TOPICS:
        covered = []
        for code in topic.rules:
            rule = rule_by_code_or_name(code)
            if rule is None:
                continue
            page = where.get(rule.code, "").removeprefix("references/")
            covered.append(f"[{rule.code}]({page}#{anchor(rule)}){opt_in_mark(rule)}")
        rows = [row for row in api_changes() if row.old in topic.rows]
        covered += [f"`{row.old}` → `{row.new or 'no replacement'}` ({'TP101' if row.removed_in else 'TP201'})"
                    for row in rows]
        if topic.correction:
            covered.append(f"[correction {topic.correction}]({CORRECTIONS_FILE.removeprefix('references/')})")
        if topic.platforms:
            covered.append(f"[platform tables]({area_file('platforms').removeprefix('references/')})")
        text = f"- **{topic.seed}**: " + (", ".join(covered) if covered else "no rule")
        if topic.note:
            text += f". {topic.note[0].upper()}{topic.note[1:]}"
        lines.append(text.rstrip(".") + ".")
    return "\n".join(lines).rstrip() + "\n"


def _pack(sections: list[list[str]], limit: int) -> list[list[str]]:
    """Sections into parts of at most ``limit`` characters each, in order (a section is never split)."""
    parts: list[list[str]] = [[]]
    size = 0
    for section in sections:
        length = sum(len(line) + 1 for line in section)
        if parts[-1] and size + length > limit:
            parts.append([])
            size = 0
        parts[-1].extend(section)
        size += length
    return parts


def _table_sections(rows, limit: int) -> list[list[str]]:
    """The API table as sections that each fit a part: the header repeats in each."""
    title = ["## API table", "", "Plain renames, moves and removals (rules TP101 removed-api and TP201 "
             "deprecated-api); each row has its own versions. `fix` is `safe` when torchpatch's rewrite keeps "
             "behaviour (it becomes unsafe when your minimum torch predates the replacement), `unsafe` when it "
             "needs review, `none` when there is no mechanical replacement.", ""]
    sections: list[list[str]] = []
    chunk: list = []
    for row in rows:
        candidate = render_rows_table(chunk + [row])
        if chunk and sum(len(line) + 1 for line in candidate) + 600 > limit:
            sections.append(render_rows_table(chunk) + [""])
            chunk = []
        chunk.append(row)
    if chunk:
        sections.append(render_rows_table(chunk) + [""])
    sections[0] = title + sections[0]
    for index in range(1, len(sections)):
        sections[index] = ["## API table (continued)", ""] + sections[index]
    return sections


def render_area_parts(area: str, target: Version) -> dict[str, tuple[str, list[str]]]:
    """An area's reference, in parts that each fit the reference budget: file → (text, rule codes in it)."""
    title, scope = AREAS[area]
    rules = [rule for rule in all_rules() if not is_table_rule(rule) and rule_area(rule) == area]
    sections = [_render_rule_section(rule) for rule in rules]
    codes = [[rule.code] for rule in rules]
    rows = [row for rule in all_rules() for row in table_rows(rule) if _row_area(row) == area]
    extra: list[list[str]] = []
    if rows:
        extra += _table_sections(sorted(rows, key=lambda row: (row.since, row.old)), _PACK_CHARACTERS)
    if area == "platforms":
        extra += _render_platform_tables(target)
    if area == "serialization":
        extra.append(_render_advisories())
    sections += extra
    codes += [[] for _ in extra]
    packed = _pack([[f"\x00{index}"] + section for index, section in enumerate(sections)], _PACK_CHARACTERS)
    count = len(packed)
    files: dict[str, tuple[str, list[str]]] = {}
    for number, part in enumerate(packed, 1):
        name = area_file(area, number)
        others = [f"[part {other}]({area_file(area, other).removeprefix('references/')})"
                  for other in range(1, count + 1) if other != number]
        head = [f"# {title}" + (f" (part {number} of {count})" if count > 1 else ""), "",
                f"{scope}. Generated by torchpatch {__version__} for PyTorch up to {target}; each rule below is what "
                "`torchpatch rule CODE` explains." + (f" Other parts: {', '.join(others)}." if others else ""), ""]
        in_part = [code for line in part if line.startswith("\x00") for code in codes[int(line[1:])]]
        body = [line for line in part if not line.startswith("\x00")]
        files[name] = ("\n".join(head + body).rstrip() + "\n", in_part)
    return files


def render_area(area: str, target: Version) -> str:
    """The whole area in one text (all its parts), for readers that want it in one piece."""
    return "\n".join(text for text, _ in render_area_parts(area, target).values())


def _render_rule_section(rule: type[Rule]) -> list[str]:
    lines = [f"## {rule.code} {rule.name}", "", f"{rule.summary}. *PyTorch: {versions_text(rule)}.*"]
    if rule.opt_in:
        lines.append(f"*Opt-in: `torchpatch check --extend-select {rule.code}`.*")
    torch_message = getattr(rule, "torch_message", None)
    if torch_message:
        lines.append(f"Torch prints: “{torch_message}”")
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


def _render_platform_tables(target: Version) -> list[list[str]]:
    wheels = ["## Releases and wheels", "",
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
        wheels.append(f"| {release.version} | {release.python_range_text} | {release.pypi_default} | {builds} | "
                      f"{'yes' if release.cxx11_abi else 'no'} | `{release.platform_tag}` |")
    wheels += ["", "Install a build other than PyPI's default with "
               "`pip install torch==X.Y.Z --index-url https://download.pytorch.org/whl/<build>`.", ""]
    changes = ["## Platform changes by release", ""]
    for change in all_changes():
        if change.source == "platform" and change.area == "platforms" and change.version <= target:
            changes.append(f"- **{change.version}**: {change.title}{'' if change.verified else ' (not checked against a wheel)'}. "
                           f"{change.action}")
    changes.append("")
    drivers = ["## NVIDIA driver minimums (Linux)", "",
               "| CUDA | driver for the full toolkit | oldest driver (minor-version compatibility) |", "| --- | --- | --- |"]
    for requirement in platform_facts.driver_requirements():
        drivers.append(f"| {requirement.cuda} | {requirement.toolkit_text} | {requirement.minor_compat_text} |")
    gpus = ["", "## GPU names → architecture", "",
            "`torchpatch doctor --gpu` and the MCP tool take these names (NVIDIA's published compute capabilities):", ""]
    for row in platform_facts.gpu_names():
        arch = platform_facts.capability_text(row.arch) if row.arch else f"{row.gfx} (AMD: ROCm builds)"
        gpus.append(f"- {row.name}: {arch} ({', '.join(row.names)})")
    return [wheels, changes, drivers + gpus + [""]]


def _render_advisories() -> list[str]:
    lines = ["## Advisories against torch", "", "A torch pin that only allows affected releases is flagged by "
             "TP304 (vulnerable-torch-pin) for the `torch.load` advisories.", ""]
    for advisory in platform_facts.cves():
        alias = f" ({advisory.alias})" if advisory.alias else ""
        checked = "" if advisory.verified else " (not checked against the official advisory)"
        lines.append(f"- **{advisory.id}**{alias}, fixed in torch {advisory.fixed}: {advisory.summary}{checked}.")
    return lines + [""]


def render_release(release: Version, where: dict[str, str] | None = None) -> str:
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
            lines.append("- " + _release_line(change, what, where or {}))
        lines.append("")
    if not events:
        lines += ["No change torchpatch knows of.", ""]
    return "\n".join(lines).rstrip() + "\n"


def _release_line(change: Change, what: str, where: dict[str, str]) -> str:
    if change.source == "platform":
        unchecked = "" if change.verified else (" (not checked against the official advisory)" if change.key.startswith(
            "advisory:") else " (not checked against a wheel)")
        return f"**{change.title}**{unchecked}. {change.action}"
    if change.source == "api-table":
        head = f"`{change.old}` {what}" + (f" → `{change.new}`" if change.new else "")
        return f"**{head}** ({change.code}; {change.handling()}). {change.action}"
    rule = rule_by_code_or_name(change.code or "")
    page = where.get(change.code or "", area_file(change.area)).removeprefix("references/")
    link = f"{page}#{anchor(rule)}" if rule else ""
    return (f"**{what.capitalize()}: {change.title}** ({change.code}{opt_in_mark(rule)}; {change.handling()}); "
            f"see [{change.code}]({link}).")
