"""The generated Agent Skill: spec-valid, every code block lint-clean, the seed's errors corrected, committed copy fresh."""

from __future__ import annotations

import contextlib
import io
import json
import re
import shlex
import warnings
from pathlib import Path

import pytest

from torchpatch.frontends.cli import build_parser, main
from torchpatch.frontends.skill import (
    CORRECTIONS_FILE,
    OUTDATED_FENCE,
    OUTDATED_MARK,
    REFERENCE_TOKENS,
    SEED_CORRECTIONS,
    SEED_TOPICS,
    SKILL_NAME,
    SKILL_TOKENS,
    TOPICS_FILE,
    approximate_tokens,
    render_skill,
)
from torchpatch.knowledge import all_changes
from torchpatch.versions import KNOWN_RELEASES, NEWEST_KNOWN

ROOT = Path(__file__).resolve().parents[1]
COMMITTED = ROOT / "skills" / SKILL_NAME
SEED_BLOCKS = ROOT / "tests" / "fixtures" / "seed" / "code-blocks.md"
FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```$", re.S | re.M)


def fenced_blocks(text: str) -> list[tuple[str, str, str]]:
    """(info string, code, the text just before the block) of every fenced block."""
    return [(match.group(1).strip(), match.group(2), text[:match.start()].rstrip()[-200:])
            for match in FENCE.finditer(text)]


def find_seed() -> Path | None:
    """shared/seed/pytorch-knowledge-patch.md beside the checkout (CI and worktrees keep shared/ above it)."""
    for folder in ROOT.parents:
        candidate = folder / "shared" / "seed" / "pytorch-knowledge-patch.md"
        if candidate.is_file():
            return candidate
    return None


@pytest.fixture(scope="module")
def skill() -> dict[str, str]:
    return render_skill(NEWEST_KNOWN)


@pytest.fixture(scope="module")
def built(tmp_path_factory, skill) -> Path:
    folder = tmp_path_factory.mktemp("skills") / SKILL_NAME
    assert main(["skill", "build", str(folder)]) == 0
    return folder


def front_matter(text: str) -> dict[str, str]:
    head = text.split("---\n")[1]
    return {line.split(":", 1)[0]: line.split(":", 1)[1].strip() for line in head.splitlines() if not line.startswith(" ")}


def test_skills_ref_validates_the_built_folder(built):
    validator = pytest.importorskip("skills_ref.validator")
    assert validator.validate(built) == []


def test_front_matter_and_size(skill):
    text = skill["SKILL.md"]
    fields = front_matter(text)
    assert set(fields) <= {"name", "description", "license", "allowed-tools", "metadata", "compatibility"}
    assert fields["name"] == SKILL_NAME
    description = json.loads(fields["description"])
    assert len(description) <= 1024
    for topic in ("upgrading PyTorch", "FutureWarning", "DeprecationWarning", "torch.load", "weights_only",
                  "checkpoints", "CUDA wheel"):
        assert topic in description
    body = text.split("---\n", 2)[2]
    assert len(body.splitlines()) <= 500


def test_references_per_area_and_per_release(skill):
    names = set(skill)
    for release in KNOWN_RELEASES:
        assert f"references/release-{release}.md" in names
    for area in ("serialization-and-security", "compile-and-attention", "export-onnx-torchscript-and-quantization",
                 "distributed", "platforms-and-wheels"):
        assert f"references/{area}.md" in names
    links = re.findall(r"\]\((references/[^)#]+)", skill["SKILL.md"])
    assert links and all(link in names for link in links)
    for name, text in skill.items():
        if name.startswith("references/"):
            for link in re.findall(r"\]\(([^)#:]+\.md)", text):
                assert f"references/{link}" in names, (name, link)


def test_every_rule_row_and_release_is_rendered(skill):
    everything = "\n".join(skill.values())
    for change in all_changes():
        if change.source == "api-table":
            assert f"`{change.old}`" in everything
        elif change.source == "rule":
            assert f"## {change.code} {change.name}" in everything
    assert "torchpatch check --output-format json" in skill["SKILL.md"]
    assert "torchpatch doctor --gpu" in skill["SKILL.md"]


def _lint_blocks(blocks: list[str], tmp_path: Path) -> dict[int, list[str]]:
    """Run ``torchpatch check --select ALL`` over the blocks; block index → codes found."""
    folder = tmp_path / "blocks"
    folder.mkdir(parents=True)
    for index, code in enumerate(blocks):
        (folder / f"block_{index:03d}.py").write_text(code, encoding="utf-8")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["check", "--select", "ALL", "--isolated", "--output-format", "json", str(folder)])
    assert code in (0, 1)
    found: dict[int, list[str]] = {index: [] for index in range(len(blocks))}
    for finding in json.loads(out.getvalue()):
        index = int(Path(finding["filename"]).stem.split("_")[1])
        found[index].append(finding["code"])
    return found


def test_every_code_block_of_the_skill_lints_clean(skill, tmp_path):
    """Our own skill never shows an outdated form as the thing to write."""
    clean, outdated, expected = [], [], []
    for name, text in skill.items():
        for info, code, before in fenced_blocks(text):
            if info == OUTDATED_FENCE:
                marked = re.search(re.escape(OUTDATED_MARK) + r" \((TP\d+)\):$", before)
                assert marked, f"{name}: an outdated block must say so just before it"
                outdated.append(code)
                expected.append(marked.group(1))
            elif info == "python":
                clean.append(code)
            else:
                assert info == "sh", f"{name}: a {info!r} block would not be checked"
                for line in code.splitlines():
                    command = line.split("#")[0].strip()
                    if command.startswith("torchpatch "):
                        build_parser().parse_args(shlex.split(command)[1:])  # a usage error exits
    assert len(clean) > 40 and len(outdated) > 40
    findings = _lint_blocks(clean, tmp_path)
    dirty = {clean[index]: codes for index, codes in findings.items() if codes}
    assert not dirty
    outdated_findings = _lint_blocks(outdated, tmp_path / "outdated")
    for index, code in enumerate(expected):
        assert code in outdated_findings[index], (code, outdated[index])  # shown as outdated: its rule flags it


def test_the_five_seed_corrections_are_rendered(skill):
    text = skill[CORRECTIONS_FILE]
    assert len(SEED_CORRECTIONS) == 5
    for number, correction in enumerate(SEED_CORRECTIONS, 1):
        assert f"The seed said: “{correction.seed_said}”" in text
        assert correction.wrong_because in text
        assert f"{number}. “{correction.seed_said}” **Wrong:**" in skill["SKILL.md"]  # one line each up front
    assert "| 2.10 | cu128 | sm_70," in text
    assert "| 2.11 | cu128 | sm_75," in text


def test_seed_corrections_quote_the_seed():
    seed = find_seed()
    if seed is None:
        pytest.skip("shared/seed is not beside this checkout")
    text = " ".join(seed.read_text(encoding="utf-8").split())
    for correction in SEED_CORRECTIONS:
        assert correction.seed_said in text


def test_seed_block_fixture_is_the_seeds():
    seed = find_seed()
    if seed is None:
        pytest.skip("shared/seed is not beside this checkout")
    ours = [(info, code) for info, code, _ in fenced_blocks(SEED_BLOCKS.read_text(encoding="utf-8"))]
    theirs = [(info, code) for info, code, _ in fenced_blocks(seed.read_text(encoding="utf-8"))]
    assert ours == theirs


def test_check_over_the_seeds_code_blocks_finds_what_the_catalog_predicts(tmp_path):
    blocks = [code for info, code, _ in fenced_blocks(SEED_BLOCKS.read_text(encoding="utf-8")) if info == "python"]
    # The seed's snippets assume `import torch` above them, as its reader would write it.
    blocks = [code if "import torch\n" in code or "torch." not in code else "import torch\n" + code for code in blocks]
    found = _lint_blocks(blocks, tmp_path)
    by_start = {blocks[index].split("\n", 2)[1 if blocks[index].startswith("import torch\n") else 0]: sorted(codes)
                for index, codes in found.items()}
    assert by_start == {
        'state_dict = torch.load("weights.pt")': ["TP301", "TP301"],  # no weights_only= (default changed in 2.6)
        "from torchao.quantization.pt2e import prepare_pt2e, convert_pt2e": [],  # wrong path; no rule knows torchao
        "output = varlen_attn(": [],  # the 2.11 keyword form
        'torch.compiler.set_stance("eager_on_recompile")': [],
        "@torch.compile": ["TP420"],  # error_on_graph_break() without its bool
        "from torch.nn.attention.flex_attention import create_block_mask, flex_attention": ["TP220", "TP432"],
        "from torch.distributed.fsdp import fully_shard": [],
    }


def test_committed_skill_is_fresh(skill):
    committed = {str(path.relative_to(COMMITTED)): path.read_text(encoding="utf-8")
                 for path in COMMITTED.rglob("*") if path.is_file()}
    stale = sorted(name for name in set(skill) | set(committed) if skill.get(name) != committed.get(name))
    assert not stale, f"skills/{SKILL_NAME} is stale for {stale}: run `torchpatch skill build skills/{SKILL_NAME}`"


def test_build_rejects_a_folder_not_named_after_the_skill(tmp_path, capsys):
    assert main(["skill", "build", str(tmp_path / "other")]) == 2
    assert "must be named" in capsys.readouterr().err
    assert main(["skill"]) == 2


def test_build_twice_is_identical_and_removes_stale_references(tmp_path):
    folder = tmp_path / SKILL_NAME
    assert main(["skill", "build", str(folder)]) == 0
    (folder / "references" / "release-9.9.md").write_text("old", encoding="utf-8")
    assert main(["skill", "build", str(folder), "--target-torch", "2.11"]) == 0
    names = sorted(path.name for path in (folder / "references").iterdir())
    assert "release-9.9.md" not in names and "release-2.12.md" not in names and "release-2.11.md" in names


# -- the corrections' claims, against real torch ---------------------------------------------------
@pytest.mark.torch
def test_seed_claims_are_wrong_against_real_torch():
    torch = pytest.importorskip("torch")
    from torch.nn.attention.flex_attention import create_block_mask

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        create_block_mask(lambda b, h, q, kv: q >= kv, None, None, 128, 128, device="cpu", _compile=True)
    assert any(issubclass(w.category, DeprecationWarning) and "torch.compile(create_block_mask)" in str(w.message)
               for w in caught)
    with pytest.raises(TypeError, match="missing 1 required positional argument"):
        with torch._dynamo.error_on_graph_break():
            pass
    import torch.distributed._symmetric_memory as symm_mem

    assert "deprecated" in symm_mem.enable_symm_mem_for_group.__deprecated__
    with pytest.raises(ImportError):
        __import__("torch.distributed.symmetric_memory")


@pytest.mark.torch
def test_seed_torchao_import_is_wrong_and_ours_works():
    pytest.importorskip("torch")
    pytest.importorskip("torchao")
    with pytest.raises(ImportError):
        exec("from torchao.quantization.pt2e import prepare_pt2e, convert_pt2e", {})
    exec("from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e, convert_pt2e", {})
    exec("from torchao.quantization.pt2e.quantizer.x86_inductor_quantizer import X86InductorQuantizer", {})


# -- a lean skill (issue #26) ------------------------------------------------------------------------
def test_token_budgets(skill):
    """SKILL.md ≤ 2,500 tokens and each reference ≤ 5,000 (characters / 4: tiktoken is not installed here)."""
    assert approximate_tokens(skill["SKILL.md"]) <= SKILL_TOKENS == 2_500
    seed = find_seed()
    if seed is not None:  # leaner than the seed's entry point would be with the same job: stay under the budget
        assert approximate_tokens(skill["SKILL.md"]) < SKILL_TOKENS
    for name, text in skill.items():
        assert approximate_tokens(text) <= REFERENCE_TOKENS == 5_000, name


def test_skill_md_says_what_to_do_first_and_which_reference_to_open(skill):
    text = skill["SKILL.md"]
    assert text.index("## First") < text.index("## Then open only the reference you need") < text.index("## Releases")
    for name in skill:
        if name.startswith("references/") and not name.startswith("references/release-"):
            assert f"]({name})" in text, name  # every area part is reachable from the entry point


def test_every_opt_in_rule_is_marked(skill):
    from torchpatch.rules import all_rules

    text = skill["SKILL.md"]
    opt_in = [rule for rule in all_rules() if rule.opt_in]
    assert len(opt_in) >= 14  # TP401 and TP224 became default rules where the receiver is known (issue #23)
    for rule in opt_in:
        assert f"- **{rule.code}** {rule.summary}." in text.split("## Opt-in rules")[1].split("##")[0]
        assert f"{rule.code}*" in text  # the area table marks it
        sections = [body for body in skill.values() if f"## {rule.code} {rule.name}\n" in body]
        assert sections and f"*Opt-in: `torchpatch check --extend-select {rule.code}`.*" in sections[0]
    for name, body in skill.items():
        if name.startswith("references/release-"):
            for code in re.findall(r"\*\* \((TP\d+)(?: \(opt-in\))?;", body):
                rule = next(rule for rule in all_rules() if rule.code == code)
                assert (f"({code} (opt-in);" in body) == rule.opt_in or not rule.opt_in, (name, code)


def seed_topics(seed_text: str) -> list[str]:
    """The seed's topics, read systematically: the items of its reference index, and every heading with text under it."""
    topics: list[str] = []
    index = seed_text.split("## Reference index", 1)[1].split("\n## ", 1)[0]
    for row in re.findall(r"^\| \[[^]]+\]\([^)]+\) \| (.+) \|$", index, re.M):
        topics += [item.strip() for item in row.split(", ")]
    body = seed_text.split("## Breaking changes and migrations", 1)[1]
    headings = list(re.finditer(r"^(#{2,3}) (.+)$", body, re.M))
    for current, following in zip(headings, headings[1:] + [None]):
        text = body[current.end():following.start() if following else len(body)]
        if text.strip():
            topics.append(current.group(2).strip())
    return topics


#: Paragraph leads of the seed that the issue found dropped (#26): compiler cache artifacts, meta-device
#: initialisation, the API-stability list, DeviceMesh initialisation order.
SEED_LEADS = ("Save portable compiler caches", "For meta-device construction", "APIs described as API-unstable",
              "Initialize process groups before constructing `DeviceMesh`")


def test_the_skill_covers_every_seed_topic(skill):
    seed = find_seed()
    ours = [topic.seed for topic in SEED_TOPICS]
    assert len(ours) == len(set(ours))
    if seed is not None:
        text = seed.read_text(encoding="utf-8")
        theirs = seed_topics(text)
        assert len(theirs) >= 45
        assert [topic for topic in theirs if topic not in ours] == []  # every seed topic has an entry
        for lead in SEED_LEADS:
            assert lead in text
    assert set(SEED_LEADS) <= set(ours)
    page = skill[TOPICS_FILE]
    for topic in SEED_TOPICS:
        line = next(line for line in page.splitlines() if line.startswith(f"- **{topic.seed}**: "))
        assert topic.rules or topic.rows or topic.correction or topic.note, topic.seed
        assert "no rule" not in line or topic.note, topic.seed  # covered or explained
        for code in topic.rules:
            assert f"[{code}](" in line


@pytest.mark.torch
def test_seed_topic_notes_name_what_torch_has():
    """A note without a rule relies only on names that exist in real torch (2.13 in CI)."""
    pytest.importorskip("torch")
    import importlib

    def resolve(name: str):
        parts = name.split(".")
        for cut in range(len(parts), 0, -1):
            try:
                value = importlib.import_module(".".join(parts[:cut]))
            except ImportError:
                continue
            for part in parts[cut:]:
                value = getattr(value, part)
            return value
        raise ImportError(name)

    for topic in SEED_TOPICS:
        for name in topic.names:
            resolve(name)
            assert name.rsplit(".", 1)[-1] in topic.note, name  # the note names what it relies on


@pytest.mark.torch
def test_devicemesh_note_matches_torch():
    """The DeviceMesh note: without a default process group, DeviceMesh calls init_process_group() itself."""
    pytest.importorskip("torch")
    import inspect

    from torch.distributed import device_mesh

    source = inspect.getsource(device_mesh.DeviceMesh._setup_world_group_and_device)
    assert "if not default_initialized:" in source and "init_process_group()" in source


def test_wheel_rules_show_no_unrelated_write_instead(skill):
    """TP104 once told agents to replace `torch.align_tensors` with `torch.cat` (its VALID example)."""
    section = next(text for text in skill.values() if "## TP104 wheel-removed-api\n" in text)
    tp104 = section.split("## TP104 wheel-removed-api\n", 1)[1].split("\n## ", 1)[0]
    assert "torch.cat" not in tp104 and "Write instead" not in tp104
    from torchpatch.knowledge import valid_example
    from torchpatch.rules import rule_by_code_or_name

    for code in ("TP104", "TP105", "TP106", "TP206", "TP207", "TP902"):
        assert valid_example(rule_by_code_or_name(code)) is None
    assert "weights_only=True" in valid_example(rule_by_code_or_name("TP302"))


def test_unchecked_advisories_are_marked_in_the_skill(skill):
    text = skill["references/serialization-and-security.md"]
    assert "**CVE-2025-2999**" in text
    line = next(line for line in text.splitlines() if line.startswith("- **CVE-2025-2999**"))
    assert "not checked against the official advisory" in line
    checked = next(line for line in text.splitlines() if line.startswith("- **CVE-2025-32434**"))
    assert "not checked" not in checked


def test_a_new_rule_with_torch_message_renders(monkeypatch):
    """The lead regenerates the skill after merging other helpers' rules: the generator takes rules it never saw."""
    from torchpatch.frontends import skill as skill_module
    from torchpatch.rules.base import Invalid, Rule, Valid
    from torchpatch.versions import v

    class FutureRule(Rule):
        """## What it does\nFlags `torch.future_api()`.\n\n## Why is this bad?\nIt warns since 2.15.\n"""

        code = "TP299"
        name = "future-api"
        summary = "`torch.future_api()` (deprecated in 2.15)"
        deprecated_in = v("2.15")
        torch_message = "torch.future_api is deprecated, use torch.present_api"
        calls = frozenset({"torch.future_api"})
        catalog_ids = ("core.future",)
        VALID = [Valid("import torch\ntorch.present_api()\n")]
        INVALID = [Invalid("import torch\ntorch.future_api()\n")]

    section = "\n".join(skill_module._render_rule_section(FutureRule))
    assert "Torch prints: “torch.future_api is deprecated, use torch.present_api”" in section
    parts = skill_module._pack([["x" * 100]] * 500, 20_000)
    assert len(parts) == 3 and all(sum(len(line) + 1 for line in part) <= 20_000 for part in parts)
