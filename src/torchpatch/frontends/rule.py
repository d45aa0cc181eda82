"""``torchpatch rule CODE|NAME`` and ``torchpatch rule --all``: the rule database, readable."""

from __future__ import annotations

import argparse
import json

from torchpatch.docs import render_rule_page
from torchpatch.engine.codes import ENGINE_CODES, EngineCode, engine_code
from torchpatch.knowledge import rule_metadata
from torchpatch.rules import all_rules, rule_by_code_or_name

HELP = "Explain a rule (by code, name or TorchFix code), or list them all."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("rule", nargs="?", help="a code (TP301), a name (torch-load-without-weights-only) or TOR102")
    parser.add_argument("--all", action="store_true", help="list every rule")
    parser.add_argument("--output-format", choices=("text", "json"), default="text")


def run(args: argparse.Namespace) -> int:
    from torchpatch.frontends.cli import UsageError

    engines: tuple[EngineCode, ...] = ()
    if args.all:
        rules, engines = all_rules(), tuple(ENGINE_CODES.values())
    elif args.rule:
        rule = rule_by_code_or_name(args.rule)
        engine = engine_code(args.rule) if rule is None else None
        if rule is None and engine is None:
            raise UsageError(f"unknown rule {args.rule!r} (see `torchpatch rule --all`)")
        rules, engines = ((rule,), ()) if rule is not None else ((), (engine,))
    else:
        raise UsageError("give a rule code or name, or --all")
    if args.output_format == "json":
        # ``--all`` in JSON is the knowledge export (one entry per rule of the database, every field); an
        # engine code is given there only when asked for by name.
        engines = () if args.all else engines
        print(json.dumps([*(_rule_json(rule) for rule in rules), *(_engine_json(e) for e in engines)], indent=2))
    elif args.all:
        width = max(len(entry.name) for entry in (*rules, *engines))
        for entry in (*rules, *engines):
            print(f"{entry.code}  {entry.name:<{width}}  {entry.summary}")
    else:
        print(render_rule_page(rules[0]) if rules else engines[0].page(), end="")
    return 0


def _engine_json(engine: EngineCode) -> dict:
    """An engine code in the fields a rule's JSON shares with it."""
    return {"code": engine.code, "name": engine.name, "summary": engine.summary, "url": engine.url(),
            "engine": True, "explanation": engine.page()}


def _rule_json(rule) -> dict:
    """The rule's metadata (a table rule with its rows, each with its versions), plus its rendered page."""
    return {**rule_metadata(rule), "explanation": render_rule_page(rule)}
