"""``torchpatch changes FROM TO [PATHS]``: the upgrade report, and the knowledge view it reads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from torchpatch.frontends.cli import main
from torchpatch.knowledge import all_changes, change_for_finding, changes_between, search
from torchpatch.rules.api_table import api_changes
from torchpatch.versions import Version

ROOT = Path(__file__).resolve().parents[1]
LEGACY = ROOT / "examples" / "legacy-project"


def run_json(capsys, *argv: str) -> dict:
    assert main(["changes", *argv, "--output-format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_every_rule_row_and_platform_fact_is_a_change():
    changes = all_changes()
    assert sum(change.source == "api-table" for change in changes) == len(api_changes())
    keys = [change.key for change in changes]
    assert len(keys) == len(set(keys))
    assert any(change.source == "platform" and change.key == "platform:2.15:python-min" for change in changes)


def test_window_is_after_from_up_to_and_including_to():
    window = changes_between(Version.parse("2.6"), Version.parse("2.11"))
    versions = {version for change in window for version, _ in change.events_between(Version.parse("2.6"), Version.parse("2.11"))}
    assert min(versions) == Version.parse("2.7") and max(versions) == Version.parse("2.11")
    keys = {change.key for change in window}
    assert "TP101:torch.export.export_for_training" in keys  # deprecated 2.9, removed 2.11
    assert "TP214" in keys  # enable_symm_mem_for_group, deprecated 2.11
    assert "TP301" not in keys  # torch.load's default changed in 2.6, not after it
    assert "platform:2.11:pypi-default" in keys  # PyPI's default became cu130


def test_report_without_paths_lists_changes_by_area(capsys):
    assert main(["changes", "2.6", "2.11"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("# PyTorch 2.6 → 2.11: what changes")
    for heading in ("## Serialization and security", "## Compile and attention", "## Distributed", "## Platforms and wheels"):
        assert heading in text
    assert "**deprecated in 2.9, removed in 2.11**: `torch.export.export_for_training`" in text
    assert "TP101 safe fix" in text


def test_report_for_the_legacy_project(capsys):
    data = run_json(capsys, "2.6", "2.11", str(LEGACY))
    project = data["project"]
    assert project["min_torch"] == "2.6" and project["files_checked"] >= 5
    by_change = {hit["change"]: hit for hit in project["hits"]}
    training = by_change["TP101:torch.export.export_for_training"]
    assert training["findings"] == 1 and training["safe_fixes"] == 1
    assert by_change["TP303"]["manual"] == 1  # torch.hub.load without trust_repo: a person decides
    totals = project["totals"]
    assert totals["findings"] == sum(hit["findings"] for hit in project["hits"])
    assert totals["findings"] == totals["safe_fixes"] + totals["unsafe_fixes"] + totals["manual"]
    earlier = {hit["change"] for hit in project["earlier"]}
    # torch.load without weights_only: from a 2.6 minimum that is the safe default on every supported
    # release, so it is nothing to report (TP301's docs); the legacy project's minimum is 2.6.
    assert "TP301" not in earlier


def test_markdown_report_for_the_legacy_project_says_what_to_do(capsys):
    assert main(["changes", "2.6", "2.11", str(LEGACY)]) == 0
    text = capsys.readouterr().out
    assert text.startswith(f"# Upgrading {LEGACY} from PyTorch 2.6 to 2.11")
    assert "| rule | change | findings | safe | unsafe | by hand | files |" in text
    assert f"`torchpatch check --fix --target-torch 2.11 --min-torch 2.6 {LEGACY}`" in text
    assert "### Already outdated at 2.6" in text
    assert "## Not visible in code: the machines and wheels" in text
    assert "`pip install torch==2.11` from PyPI gets the cu130 build" in text
    assert "torchpatch checks for do not occur in this code; `torchpatch changes 2.6 2.11` lists every change." in text
    assert "`torch.utils.bottleneck`" not in text  # a change that does not hit this project


def test_safe_fixes_depend_on_min_torch(capsys):
    oldest = run_json(capsys, "2.4", "2.11", str(LEGACY), "--min-torch", "2.4")["project"]
    newest = run_json(capsys, "2.4", "2.11", str(LEGACY), "--min-torch", "2.11")["project"]
    assert newest["totals"]["safe_fixes"] > oldest["totals"]["safe_fixes"]
    compile_flag = {hit["change"]: hit for hit in oldest["hits"]}["TP220"]
    assert compile_flag["safe_fixes"] == 0 and compile_flag["unsafe_fixes"] == 1  # the rewrite needs 2.6
    assert {hit["change"]: hit for hit in newest["hits"]}["TP220"]["safe_fixes"] == 1


def test_area_filter(capsys):
    data = run_json(capsys, "2.10", "2.12", "--area", "platforms")
    assert data["changes"] and {change["area"] for change in data["changes"]} == {"platforms"}
    project = run_json(capsys, "2.6", "2.11", str(LEGACY), "--area", "export")["project"]
    assert project["hits"] and all(hit["change"].startswith(("TP101", "TP102", "TP210", "TP430")) for hit in project["hits"])


@pytest.mark.parametrize("argv, message", [
    (["2.11", "2.6"], "must be older"),
    (["2.6", "2.6"], "must be older"),
    (["2.6", "3.0"], "torchpatch knows"),
    (["two", "2.11"], "not a PyTorch version"),
    (["2.6", "2.11", "no/such/path"], "no such file"),
], ids=["reversed", "same", "unknown", "garbage", "missing-path"])
def test_bad_input_is_one_line_and_exit_2(capsys, argv, message):
    assert main(["changes", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_findings_map_to_their_row():
    change = change_for_finding("TP101", "`torch.export.export_for_training` is deprecated in PyTorch 2.9, removed in 2.11")
    assert change is not None and change.new == "torch.export.export"
    assert change_for_finding("TP301", "anything").key == "TP301"


@pytest.mark.parametrize("query, expected", [
    ("what replaced torch.cuda.amp?", "TP202"),
    ("export_for_training", "TP101:torch.export.export_for_training"),
    ("weights_only", "TP301"),
    ("torch.distributed._tensor", "TP201:torch.distributed._tensor"),
])
def test_search_finds_rules_and_rows(query, expected):
    results = search(query)
    assert results
    keys = [result.get("key") or result.get("code") for result in results[:3]]
    assert expected in keys


def test_search_with_only_stopwords_finds_nothing():
    assert search("what is the") == []


#: Questions agents ask, and the answer that must come first (issue #26: "weights_only default" ranked TP301 6th).
AGENT_QUERIES = [
    ("weights_only default", "TP301"),
    ("autocast cuda deprecated", "TP202"),
    ("torch.cuda.amp.GradScaler", "TP202"),
    ("use_reentrant", "TP401"),
    ("TypedStorage", "TP223"),
    ("sdp_kernel", "TP204"),
    ("torch.load pickle", "TP302"),
    ("FSDP", "TP213"),
    ("what replaced torch.cuda.amp?", "TP202"),
    ("export_for_training", "TP101:torch.export.export_for_training"),
    ("torch.distributed._tensor", "TP201:torch.distributed._tensor"),
    ("create_block_mask _compile", "TP220"),
    ("varlen_attn is_causal", "TP110"),
    ("error_on_graph_break", "TP420"),
    ("trust_repo torch.hub", "TP303"),
    ("tensor.storage() deprecated", "TP224"),
    ("cache_size_limit", "TP222"),
    ("profiler use_cuda", "TP112"),
    ("lr_scheduler verbose", "TP111"),
    ("enable_symm_mem_for_group", "TP214"),
    ("torch.export strict", "TP430"),
    ("allow_tf32", "TP421"),
    ("pretrained torchvision", "TP600"),
    ("MAGMA", "TP215"),
    ("return_lse", "TP221"),
    ("CXX11 ABI extension", "TP441"),
    ("cu128 Volta", "platform:2.11:build-cu128-archs"),
    ("torch.solve", "TP130"),
    ("flex attention score_mod -inf", "TP510"),
]


@pytest.mark.parametrize("query, expected", AGENT_QUERIES, ids=[query for query, _ in AGENT_QUERIES])
def test_agent_queries_rank_the_expected_answer_first(query, expected):
    (first,) = search(query, limit=1)
    assert (first.get("key") or first.get("code")) == expected


@pytest.mark.parametrize("query, expected", [("GradScaler", {"TP202", "TP203"}),
                                             # three deprecations of TorchScript: torch.jit's API (TP210, TP211)
                                             # and the TorchScript-based ONNX exporter (TP265)
                                             ("TorchScript deprecated", {"TP210", "TP211", "TP265"})])
def test_agent_queries_with_several_right_answers(query, expected):
    assert {result.get("code") for result in search(query, limit=len(expected))} == expected


def test_rules_rank_ahead_of_platform_facts_for_api_questions():
    results = search("torch.load CVE advisory", limit=5)
    assert results[0]["kind"] == "rule"
    assert search("cu128 Volta sm_70", limit=1)[0]["kind"] == "platform"  # a machine question: the fact first


def test_bm25_prefers_rare_words_and_saturates_repeats():
    from torchpatch.knowledge import Bm25

    index = Bm25([["torch", "load"], ["torch", "amp"], ["torch", "amp", "amp", "amp", "amp"], ["torch"]])
    torch_only, rare = index.scores(["torch"]), index.scores(["load"])
    assert max(torch_only) < max(rare)  # a word in every document says little
    amp = index.scores(["amp"])
    assert amp[2] > amp[1] and amp[2] < 2 * amp[1]  # repeats count, with diminishing returns
    assert index.scores(["nothing"]) == [0.0, 0.0, 0.0, 0.0]


def test_advisories_say_whether_they_were_checked():
    advisories = {change.key: change for change in all_changes() if change.key.startswith("advisory:")}
    assert advisories["advisory:CVE-2025-32434"].verified
    for key in ("advisory:CVE-2025-2999", "advisory:CVE-2025-3001"):
        change = advisories[key]
        assert not change.verified and "not checked" in change.note  # the flag and the note agree


def test_safe_fix_counts_are_what_check_fix_applies(capsys, tmp_path):
    import shutil

    project = tmp_path / "legacy-project"
    shutil.copytree(LEGACY, project)
    report = run_json(capsys, "2.6", "2.11", str(project))["project"]
    promised = sum(hit["safe_fixes"] for hit in report["hits"] + report["earlier"])
    assert main(["check", "--fix", "--target-torch", "2.11", "--min-torch", "2.6", "--output-format", "json",
                 str(project)]) == 1
    capsys.readouterr()
    after = run_json(capsys, "2.6", "2.11", str(project))["project"]
    assert sum(hit["safe_fixes"] for hit in after["hits"] + after["earlier"]) == 0
    findings_before = report["totals"]["findings"] + sum(hit["findings"] for hit in report["earlier"])
    findings_after = after["totals"]["findings"] + sum(hit["findings"] for hit in after["earlier"])
    # Every promised fix is applied; one fix can also settle a second finding (an import and its use).
    assert findings_before - findings_after >= promised > 0


def test_organisation_report_over_repositories(capsys, tmp_path):
    (tmp_path / "clean").mkdir()
    (tmp_path / "clean" / "a.py").write_text("import torch\n")
    (tmp_path / "fixable").mkdir()
    (tmp_path / "fixable" / "a.py").write_text("import torch\nep = torch.export.export_for_training(m, a, strict=False)\n")
    repositories = [str(tmp_path / "clean"), str(tmp_path / "fixable"), str(LEGACY)]
    data = run_json(capsys, "2.6", "2.11", "--repositories", *repositories)
    assert [(Path(r["path"]).name, r["status"]) for r in data["repositories"]] == [
        ("clean", "clean"), ("fixable", "safe-fixable"), ("legacy-project", "needs-review")]
    assert data["status_counts"] == {"clean": 1, "safe-fixable": 1, "needs-review": 1}
    legacy = data["repositories"][2]["totals"]
    assert data["per_rule"]["TP101"] >= 2 and sum(data["per_rule"].values()) == 1 + legacy["findings"]
    assert main(["changes", "2.6", "2.11", "--repositories", *repositories]) == 0
    markdown = capsys.readouterr().out
    assert "1 safe-fixable end to end" in markdown and "| TP101 |" in markdown
    row = next(line for line in markdown.splitlines() if line.startswith("| TP101 |"))
    assert row.endswith("| 2 |")  # in two repositories, however many of its rows each one hits


def test_organisation_report_input_errors(capsys, tmp_path):
    (tmp_path / "a.py").write_text("import torch\n")
    assert main(["changes", "2.6", "2.11", "--repositories", str(tmp_path / "a.py")]) == 2
    assert "not a folder" in capsys.readouterr().err
    assert main(["changes", "2.6", "2.11", str(tmp_path), "--repositories", str(tmp_path)]) == 2
    assert "not both" in capsys.readouterr().err


def test_fix_counts_match_what_fix_and_unsafe_fixes_apply(capsys, tmp_path):
    """The report's safe and unsafe counts (window and already due) are what `--fix` and `--fix --unsafe-fixes` do."""
    import shutil

    project = tmp_path / "legacy-project"
    shutil.copytree(LEGACY, project)
    report = run_json(capsys, "2.4", "2.11", str(project))["project"]
    safe = report["totals"]["safe_fixes"] + report["earlier_totals"]["safe_fixes"]
    unsafe = report["totals"]["unsafe_fixes"] + report["earlier_totals"]["unsafe_fixes"]
    assert safe and unsafe
    assert main(["changes", "2.4", "2.11", str(project)]) == 0
    text = capsys.readouterr().out
    earlier = report["earlier_totals"]
    assert f"applies the safe fixes ({report['totals']['safe_fixes']}, and {earlier['safe_fixes']} for" in text
    assert f"shows the unsafe fixes ({report['totals']['unsafe_fixes']}, and {earlier['unsafe_fixes']} for" in text
    versions = ["--target-torch", "2.11", "--min-torch", "2.4", "--output-format", "json"]
    main(["check", "--fix", *versions, str(project)])
    capsys.readouterr()
    after_safe = run_json(capsys, "2.4", "2.11", str(project))["project"]
    assert after_safe["totals"]["safe_fixes"] + after_safe["earlier_totals"]["safe_fixes"] == 0
    assert after_safe["totals"]["unsafe_fixes"] + after_safe["earlier_totals"]["unsafe_fixes"] == unsafe
    main(["check", "--fix", "--unsafe-fixes", *versions, str(project)])
    capsys.readouterr()
    after = run_json(capsys, "2.4", "2.11", str(project))["project"]
    assert after["totals"]["unsafe_fixes"] + after["earlier_totals"]["unsafe_fixes"] == 0
    manual = report["totals"]["manual"] + report["earlier_totals"]["manual"]
    assert after["totals"]["findings"] + after["earlier_totals"]["findings"] <= manual  # only the by-hand ones stay


def test_platform_bullets_only_for_what_the_project_names(capsys, tmp_path):
    bare = tmp_path / "bare"
    bare.mkdir()
    (bare / "a.py").write_text("import torch\n")
    assert main(["changes", "2.6", "2.11", str(bare)]) == 0
    text = capsys.readouterr().out
    assert "## Not visible in code" not in text and "from PyPI gets" not in text
    assert "other platform changes" in text and "torchpatch changes 2.6 2.11 --area platforms" in text
    pinned = tmp_path / "pinned"
    pinned.mkdir()
    (pinned / "requirements.txt").write_text("torch==2.6.0\n")
    (pinned / "pyproject.toml").write_text('[project]\nname = "x"\nrequires-python = ">=3.9"\n')
    assert main(["changes", "2.6", "2.11", str(pinned)]) == 0
    text = capsys.readouterr().out
    assert "`pip install torch==2.11` from PyPI gets the cu130 build" in text
    assert "wheels need Python" in text  # requires-python: the Python range changes concern it
    assert "ships no cu124 build" not in text  # no index URL: the download.pytorch.org builds do not
    (pinned / "requirements.txt").write_text("--index-url https://download.pytorch.org/whl/cu124\ntorch==2.6.0\n")
    assert main(["changes", "2.6", "2.11", str(pinned)]) == 0
    assert "ships no cu124 build" in capsys.readouterr().out


@pytest.mark.parametrize("files, touches", [
    ({"requirements.txt": "torch>=2.4\n"}, {"pins"}),
    ({"requirements.txt": "torchvision>=0.19\n"}, set()),
    ({"setup.py": "from torch.utils.cpp_extension import CUDAExtension\n"}, {"extensions"}),
    ({"csrc/op.cu": "__global__ void f() {}\n"}, {"extensions"}),
    ({".python-version": "3.12\n"}, {"python"}),
    ({"Dockerfile": "RUN pip install torch --index-url https://download.pytorch.org/whl/cu126\n"}, {"index"}),
    ({"environment.yml": "dependencies:\n  - python=3.11\n  - pip:\n    - torch==2.6\n"}, {"pins", "python"}),
])
def test_platform_touches(tmp_path, files, touches):
    from torchpatch.frontends.changes import platform_touches

    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    assert platform_touches([tmp_path]) == touches
