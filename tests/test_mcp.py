"""``torchpatch mcp``: the tools through the official SDK's client, in-process and over real stdio."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

pytest.importorskip("mcp")

import anyio  # noqa: E402  (installed with mcp)
from mcp import Client, StdioServerParameters  # noqa: E402

from torchpatch.frontends.mcp_server import TOOLS, build_server  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
OLD_AMP = "import torch\nscaler = torch.cuda.amp.GradScaler()\nwith torch.cuda.amp.autocast():\n    y = model(x)\n"


def call(name: str, arguments: dict, server=None):
    async def go():
        async with Client(server or build_server()) as client:
            return await client.call_tool(name, arguments)

    return anyio.run(go)


def test_tools_are_read_only_and_typed():
    async def go():
        async with Client(build_server()) as client:
            return (await client.list_tools()).tools

    tools = {tool.name: tool for tool in anyio.run(go)}
    assert set(tools) == {tool.__name__ for tool in TOOLS}
    for tool in tools.values():
        assert tool.annotations.read_only_hint is True and tool.annotations.destructive_hint is False
        assert tool.output_schema is not None, tool.name
        assert tool.description
    check = tools["check_code"].input_schema
    assert check["required"] == ["source"]
    assert set(check["properties"]) == {"source", "filename", "target_torch", "min_torch", "select", "limit", "offset"}
    area = tools["list_changes"].input_schema["properties"]["area"]
    assert "distributed" in json.dumps(area)
    for tool in tools.values():
        for name, schema in tool.input_schema["properties"].items():
            assert schema.get("description"), (tool.name, name)  # every parameter says what it takes
    for tool, name in (("plan_install", "gpu"), ("check_code", "select"), ("fix_code", "select")):
        kinds = json.dumps(tools[tool].input_schema["properties"][name])
        assert '"type": "string"' in kinds and '"type": "array"' in kinds, (tool, name)  # a scalar or a list


def test_check_code_returns_the_json_findings():
    result = call("check_code", {"source": "import torch\nstate = torch.load('a.pt')\n", "filename": "train.py"})
    assert not result.is_error
    findings = result.structured_content["findings"]
    assert [f["code"] for f in findings] == ["TP301"]
    assert findings[0]["filename"] == "train.py"
    assert findings[0]["location"] == {"row": 2, "column": 9}
    assert findings[0]["fix"]["applicability"] in ("safe", "unsafe")


def test_check_code_honours_versions_and_select():
    source = "import torch\nmask = create_block_mask(causal, 1, 1, 128, 128, device='cpu', _compile=True)\n"
    source = "from torch.nn.attention.flex_attention import create_block_mask\n" + source
    old = call("check_code", {"source": source, "target_torch": "2.5"}).structured_content
    new = call("check_code", {"source": source, "target_torch": "2.11", "select": ["TP220"]}).structured_content
    assert old["findings"] == [] and [f["code"] for f in new["findings"]] == ["TP220"]


def test_fix_code_returns_fixed_source_diff_and_remaining():
    result = call("fix_code", {"source": OLD_AMP}).structured_content
    assert result["changed"] and 'torch.amp.autocast("cuda", dtype=torch.float16)' in result["fixed_source"]
    assert result["applied"] == 1 and result["applied_by_rule"] == {"TP202": 1}
    assert result["diff"].startswith("--- a/snippet.py\n+++ b/snippet.py\n")
    # the GradScaler construction fix is unsafe (it builds the base class): it stays, with its fix offered
    (remaining,) = result["remaining"]
    assert remaining["code"] == "TP202" and "GradScaler" in remaining["message"]
    unsafe = call("fix_code", {"source": OLD_AMP, "unsafe": True}).structured_content
    assert 'torch.amp.GradScaler("cuda")' in unsafe["fixed_source"] and unsafe["remaining"] == []


def test_fix_code_applies_unsafe_fixes_only_when_asked():
    source = "import torch\nstate = torch.load('a.pt')\n"
    safe = call("fix_code", {"source": source}).structured_content
    unsafe = call("fix_code", {"source": source, "unsafe": True}).structured_content
    assert not safe["changed"] and [f["code"] for f in safe["remaining"]] == ["TP301"]
    assert "weights_only=" in unsafe["fixed_source"] and unsafe["remaining"] == []


def test_a_syntax_error_is_a_finding_not_a_crash():
    result = call("check_code", {"source": "def f(:\n"}).structured_content
    assert result["findings"][0]["code"] == "TP001"


def test_explain_rule_and_search_knowledge():
    rule = call("explain_rule", {"code_or_name": "TOR102"}).structured_content
    assert rule["code"] == "TP301" and rule["fix"] and rule["example"]["outdated"]
    page = call("explain_rule", {"code_or_name": "TOR102", "detail": "full"}).structured_content
    assert page["page"].startswith("# torch-load-without-weights-only (TP301)")
    table = call("explain_rule", {"code_or_name": "removed-api"}).structured_content
    assert table["rows"]["count"] > 40 and "detail=\"rows\"" in table["rows"]["all"]
    rows = call("explain_rule", {"code_or_name": "removed-api", "detail": "rows"}).structured_content
    assert rows["paging"]["total"] == table["rows"]["count"] and all(row["removed_in"] for row in rows["rows"])
    found = call("search_knowledge", {"query": "what replaced torch.cuda.amp?"}).structured_content
    assert found["results"][0]["code"] == "TP202"


def test_list_changes_between_releases():
    result = call("list_changes", {"from_version": "2.10", "to_version": "2.11", "area": "platforms"})
    data = result.structured_content
    assert data["paging"]["total"] == len(data["changes"]) > 0
    assert any(change["key"] == "platform:2.11:pypi-default" for change in data["changes"])


def test_plan_install_answers_like_doctor():
    data = call("plan_install", {"gpu": ["sm_70"], "python": "3.12", "target_torch": "2.11"}).structured_content
    assert data["mode"] == "planning"
    assert "gpus" in data and data["gpus"][0]["arch"] == "sm_70"


def test_audit_checkpoint_is_confined_to_the_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    outside = call("audit_checkpoint", {"path": str(ROOT / "pyproject.toml")})
    assert outside.is_error and "working directory" in outside.content[0].text
    escape = call("audit_checkpoint", {"path": "../x.pt"})
    assert escape.is_error
    (tmp_path / "weights.pt").write_bytes(b"not a checkpoint")
    inside = call("audit_checkpoint", {"path": "weights.pt"})
    assert not inside.is_error
    assert isinstance(inside.structured_content["reports"], list)


@pytest.mark.parametrize("name, arguments, message", [
    ("check_code", {"source": "x = 1\n", "target_torch": "3.0"}, "torchpatch knows"),
    ("check_code", {"source": "x = 1\n", "select": ["TP000"]}, "unknown rule selector"),
    ("check_code", {"source": "x = 1\n", "filename": "notes.txt"}, ".py or .pyi"),
    ("explain_rule", {"code_or_name": "TP999"}, "unknown rule"),
    ("list_changes", {"from_version": "2.11", "to_version": "2.6"}, "must be older"),
    ("plan_install", {"gpu": ["banana"]}, "not a GPU name torchpatch knows"),
], ids=["target", "select", "filename", "rule", "window", "gpu"])
def test_bad_arguments_are_tool_errors(name, arguments, message):
    result = call(name, arguments)
    assert result.is_error and message in result.content[0].text


def test_over_real_stdio_with_the_sdk_client(tmp_path):
    """`torchpatch mcp` as a subprocess: the handshake, a tool call, and nothing but protocol on stdout."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", "")}
    parameters = StdioServerParameters(command=sys.executable, args=["-m", "torchpatch", "mcp"], env=env,
                                       cwd=str(tmp_path))

    async def go():
        async with Client(parameters, read_timeout_seconds=60) as client:
            tools = await client.list_tools()
            result = await client.call_tool("fix_code", {"source": OLD_AMP})
            return client.server_info, tools, result

    server_info, tools, result = anyio.run(go)
    assert server_info.name == "torchpatch"
    assert len(tools.tools) == len(TOOLS)
    assert not result.is_error and result.structured_content["applied"] == 1


def test_without_the_sdk_the_command_says_how_to_install(monkeypatch, capsys):
    from torchpatch.frontends import cli

    monkeypatch.setitem(sys.modules, "mcp.server.mcpserver", None)
    assert cli.main(["mcp"]) == 2
    assert "pip install 'torchpatch[mcp] @ git+https://github.com/torchpatch/torchpatch'" in capsys.readouterr().err


def test_stdout_carries_only_the_protocol(tmp_path):
    """Raw JSON-RPC over the pipes: every line on stdout is a protocol message, even when a tool's code prints."""
    import subprocess

    env = {**os.environ, "PYTHONPATH": str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", "")}
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "plan_install", "arguments": {"gpu": ["sm_86"], "python": "3.12"}}},
    ]
    process = subprocess.Popen([sys.executable, "-m", "torchpatch", "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, cwd=tmp_path, env=env, text=True)
    try:
        for message in messages:
            process.stdin.write(json.dumps(message) + "\n")
        process.stdin.flush()
        replies = []
        while len(replies) < 2:
            line = process.stdout.readline()
            assert line, process.stderr.read()
            reply = json.loads(line)
            assert reply["jsonrpc"] == "2.0"
            replies.append(reply)
    finally:
        process.stdin.close()
        process.wait(timeout=30)
        process.stdout.close()
        process.stderr.close()
    assert replies[0]["result"]["serverInfo"]["name"] == "torchpatch"
    assert replies[1]["id"] == 2 and replies[1]["result"]["structuredContent"]["mode"] == "planning"


@pytest.mark.parametrize("name", ["train.py", "export.py", "attention.py", "model.py"])
def test_check_code_matches_the_cli_on_real_files(name, capsys):
    """The tool and `torchpatch check --output-format json --isolated` agree finding for finding."""
    from torchpatch.frontends.cli import main

    path = ROOT / "examples" / "legacy-project" / "legacy" / name
    assert main(["check", "--isolated", "--output-format", "json", str(path)]) in (0, 1)
    expected = json.loads(capsys.readouterr().out)
    result = call("check_code", {"source": path.read_text(encoding="utf-8"), "filename": str(path)}).structured_content
    assert [{**entry, "filename": str(path.resolve())} for entry in result["findings"]] == expected
    fixed = call("fix_code", {"source": path.read_text(encoding="utf-8"), "unsafe": True}).structured_content
    assert call("check_code", {"source": fixed["fixed_source"]}).structured_content["findings"] == fixed["remaining"]


# -- answers that fit a context window (issue #26) --------------------------------------------------
BUDGET = 8_000
#: Requests an agent sends while upgrading a project; each answer must fit the budget.
AGENT_REQUESTS = [
    ("list_changes", {"from_version": "2.4", "to_version": "2.15"}),
    ("list_changes", {"from_version": "2.4", "to_version": "2.15", "area": "platforms"}),
    ("list_changes", {"from_version": "2.6", "to_version": "2.11", "kind": "api-change", "limit": 50}),
    ("explain_rule", {"code_or_name": "TP201"}),
    ("explain_rule", {"code_or_name": "TP201", "detail": "full"}),
    ("explain_rule", {"code_or_name": "TP201", "detail": "rows", "limit": 50}),
    ("explain_rule", {"code_or_name": "TP104"}),
    ("explain_rule", {"code_or_name": "TP201", "detail": "full", "offset": 7000}),
    ("search_knowledge", {"query": "torch.align_tensors"}),
    ("search_knowledge", {"query": "deprecated", "limit": 50}),
    ("search_knowledge", {"query": "weights_only default"}),
    ("check_code", {"source": "import torch\n" + "state = torch.load('a.pt')\n" * 300}),
    ("fix_code", {"source": OLD_AMP * 60}),
    ("plan_install", {"gpu": ["V100", "H100", "RTX 4090"], "python": "3.12"}),
]


@pytest.mark.parametrize("name, arguments", AGENT_REQUESTS, ids=lambda value: value if isinstance(value, str) else "")
def test_every_answer_fits_the_budget_and_the_text_is_a_summary(name, arguments):
    result = call(name, arguments)
    assert not result.is_error, result.content[0].text
    data = json.dumps(result.structured_content, ensure_ascii=False)
    assert len(data) <= BUDGET, (name, len(data))
    text = result.content[0].text
    assert len(text) <= 500 and text != data and "\n" not in text  # a human line, not a second copy


def test_list_changes_pages_and_counts_what_it_left_out():
    first = call("list_changes", {"from_version": "2.4", "to_version": "2.15", "limit": 10}).structured_content
    paging = first["paging"]
    assert paging["returned"] == len(first["changes"]) == 10 and paging["left_out"] == paging["total"] - 10
    assert sum(first["counts"]["by_area"].values()) == paging["total"]
    second = call("list_changes", {"from_version": "2.4", "to_version": "2.15", "limit": 10,
                                   "offset": paging["next_offset"]}).structured_content
    assert not {c["key"] for c in first["changes"]} & {c["key"] for c in second["changes"]}
    keys, offset = [], 0
    while offset is not None:
        page = call("list_changes", {"from_version": "2.4", "to_version": "2.15", "limit": 50,
                                     "offset": offset}).structured_content
        keys += [change["key"] for change in page["changes"]]
        offset = page["paging"]["next_offset"]
    assert len(keys) == len(set(keys)) == paging["total"]  # paging reaches every change once
    platform = call("list_changes", {"from_version": "2.4", "to_version": "2.15", "kind": "platform"}).structured_content
    assert {change["kind"] for change in platform["changes"]} == {"platform"}


def test_search_knowledge_pages_and_filters():
    first = call("search_knowledge", {"query": "deprecated", "limit": 5}).structured_content
    assert len(first["results"]) == 5 and first["paging"]["left_out"] > 0
    rows = call("search_knowledge", {"query": "deprecated", "kind": "api-change"}).structured_content
    assert rows["results"] and {result["kind"] for result in rows["results"]} == {"api-change"}
    dist = call("search_knowledge", {"query": "deprecated", "area": "distributed"}).structured_content
    assert {result["area"] for result in dist["results"]} == {"distributed"}
    # the wheel rule that watches thousands of names answers with its summary, not its name list
    hit = call("search_knowledge", {"query": "torch.align_tensors"}).structured_content["results"]
    assert any(result.get("code") == "TP104" for result in hit) and all("watches" not in result for result in hit)


def test_explain_rule_summarises_long_name_lists():
    data = call("explain_rule", {"code_or_name": "TP104"}).structured_content
    assert data["watches"]["count"] > 100 and len(data["watches"]["first"]) <= 8
    assert data["watches"]["left_out"] == data["watches"]["count"] - len(data["watches"]["first"])
    page = call("explain_rule", {"code_or_name": "TP201", "detail": "full"}).structured_content
    pieces, offset = [page["page"]], page["paging"]["next_offset"]
    while offset is not None:
        page = call("explain_rule", {"code_or_name": "TP201", "detail": "full", "offset": offset}).structured_content
        pieces.append(page["page"])
        offset = page["paging"]["next_offset"]
    from torchpatch.docs import render_rule_page
    from torchpatch.rules import rule_by_code_or_name

    assert "".join(pieces) == render_rule_page(rule_by_code_or_name("TP201"))  # the pieces are the whole page


@pytest.mark.parametrize("gpu, arch", [
    ("V100", "sm_70"), ("Tesla V100-SXM2-16GB", "sm_70"), ("T4", "sm_75"), ("A100", "sm_80"),
    ("NVIDIA A100-SXM4-80GB", "sm_80"), ("A10G", "sm_86"), ("RTX 3090", "sm_86"), ("L4", "sm_89"),
    ("NVIDIA GeForce RTX 4090", "sm_89"), ("H100", "sm_90"), ("NVIDIA H100 80GB HBM3", "sm_90"), ("H200", "sm_90"),
    ("B200", "sm_100"), ("RTX 5090", "sm_120"), ("sm_86", "sm_86"), ("8.9", "sm_89"),
])
def test_plan_install_takes_gpu_names_and_a_scalar(gpu, arch):
    result = call("plan_install", {"gpu": gpu, "python": "3.12"})
    assert not result.is_error, result.content[0].text
    assert [entry["arch"] for entry in result.structured_content["gpus"]] == [arch]


def test_plan_install_takes_a_comma_list_and_says_what_the_names_meant():
    data = call("plan_install", {"gpu": "V100, RTX 5090", "python": "3.12"}).structured_content
    assert [gpu["arch"] for gpu in data["gpus"]] == ["sm_70", "sm_120"]
    assert data["gpu_names"][1] == {"gpu": "RTX 5090", "model": "GeForce RTX 50 series", "arch": "sm_120"}


def test_select_takes_a_scalar():
    source = "import torch\nstate = torch.load('a.pt')\nsteps = torch.range(0, 3)\n"
    data = call("check_code", {"source": source, "select": "TP301"}).structured_content
    assert [finding["code"] for finding in data["findings"]] == ["TP301"]
    assert call("check_code", {"source": source, "select": "TP301,TP250"}).structured_content["paging"]["total"] == 2


@pytest.mark.parametrize("name, arguments, message", [
    ("plan_install", {"gpu": "MI300X"}, "AMD"),
    ("plan_install", {"gpu": "banana"}, "nvidia-smi --query-gpu=compute_cap"),
    ("plan_install", {"gpu": 5}, "gpu: got int 5"),
    ("plan_install", {}, "gpu: missing (required)"),
    ("search_knowledge", {"query": "amp", "limit": "ten"}, "limit:"),
    ("search_knowledge", {"query": "amp", "limit": 500}, "limit 500: give 1 to 50"),
    ("list_changes", {"from_version": "2.4", "to_version": "2.15", "area": "gpu"}, "area:"),
    ("explain_rule", {"code_or_name": "TP301", "detail": "rows"}, "not a table rule"),
], ids=["amd", "unknown-gpu", "gpu-type", "gpu-missing", "limit-type", "limit-range", "area", "rows"])
def test_invalid_input_is_one_actionable_line(name, arguments, message):
    result = call(name, arguments)
    assert result.is_error
    text = result.content[0].text
    assert message in text and "\n" not in text and len(text) < 400, text


def test_check_code_says_which_opt_in_rules_would_also_fire():
    """The two warnings torch 2.13 still printed after an agent's migration: TP401 (now a default rule: the
    checkpoint call is known) and TP906 (opt-in: `.storage()` on a receiver of unknown type)."""
    source = ("import torch\nfrom torch.utils.checkpoint import checkpoint\n\n"
              "def run(block, x):\n    y = checkpoint(block, x)\n    return y.storage()\n")
    result = call("check_code", {"source": source})
    data = result.structured_content
    assert [finding["code"] for finding in data["findings"]] == ["TP401"]
    assert data["opt_in"]["count"] == 1 and set(data["opt_in"]["codes"]) == {"TP906"}
    assert "TP906" in result.content[0].text and "select" in result.content[0].text
    everything = call("check_code", {"source": source, "select": ["ALL"]}).structured_content
    assert {finding["code"] for finding in everything["findings"]} == {"TP906", "TP401"}
    assert everything["opt_in"]["count"] == 0


def test_a_long_fix_comes_as_a_diff_in_pieces():
    source = OLD_AMP * 60
    first = call("fix_code", {"source": source}).structured_content
    assert "fixed_source" not in first and "include=\"source\"" in first["fixed_source_omitted"]
    pieces, offset = [first["diff"]], first["text_paging"]["next_offset"]
    while offset is not None:
        page = call("fix_code", {"source": source, "include": "diff", "offset": offset}).structured_content
        pieces.append(page["diff"])
        offset = page["text_paging"]["next_offset"]
    whole = "".join(pieces)
    assert whole.startswith("--- a/snippet.py") and whole.count('+with torch.amp.autocast("cuda"') == 60
