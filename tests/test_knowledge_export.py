"""One knowledge export: `torchpatch rule --all --output-format json` has every rule's metadata and every API row."""

from __future__ import annotations

import json
import re
from importlib import resources
from pathlib import Path

from torchpatch.docs import render_all
from torchpatch.frontends.cli import main
from torchpatch.frontends.skill import render_skill
from torchpatch.rules import all_rules
from torchpatch.rules.api_table import api_changes

ROOT = Path(__file__).resolve().parents[1]
#: A path on somebody's machine: absolute POSIX paths outside URLs, home folders, the project's shared/ folder.
LOCAL_PATH = re.compile(r"(?<![\w:/.])/(?:work|home|tmp|root|Users|mnt)/|(?<![\w/])\.\./shared/|~/")


def export(capsys) -> list[dict]:
    assert main(["rule", "--all", "--output-format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_export_has_every_rule_and_every_api_row(capsys):
    rules = export(capsys)
    assert [entry["code"] for entry in rules] == [rule.code for rule in all_rules()]
    rows = [row for entry in rules for row in entry.get("rows", [])]
    assert sorted(row["old"] for row in rows) == sorted(row.old for row in api_changes())
    for row in rows:
        assert set(row) >= {"old", "new", "deprecated_in", "removed_in", "replacement_since", "fix", "note"}
        assert row["deprecated_in"] or row["removed_in"]
    for entry in rules:
        assert set(entry) >= {"code", "name", "summary", "versions", "fix", "fix_safety_note", "references",
                              "catalog_ids", "watches", "explanation", "opt_in"}


def test_table_rules_have_no_misleading_rule_level_versions(capsys):
    by_code = {entry["code"]: entry for entry in export(capsys)}
    removed, deprecated = by_code["TP101"], by_code["TP201"]
    assert removed["removed_in"] is None and deprecated["deprecated_in"] is None
    assert removed["versions"].startswith("PyTorch: per API")
    assert "*PyTorch: removed in 2.5.*" not in removed["explanation"]
    assert "*PyTorch: deprecated in 1.7.*" not in deprecated["explanation"]
    training = next(row for row in removed["rows"] if row["old"] == "torch.export.export_for_training")
    assert (training["deprecated_in"], training["removed_in"]) == ("2.9", "2.11")
    assert "| `torch.export.export_for_training` | `torch.export.export` | 2.9 | 2.11 | 2.6 | safe |" in removed["explanation"]


def test_nothing_rendered_cites_a_local_path():
    platform = resources.files("torchpatch").joinpath("data").joinpath("platform.toml").read_text(encoding="utf-8")
    texts = {"platform.toml": platform}
    texts.update({str(path.name): text for path, text in render_all(ROOT / "docs" / "rules").items()})
    texts.update(render_skill())
    for name, text in texts.items():
        assert not LOCAL_PATH.search(text), (name, LOCAL_PATH.search(text).group(0))
