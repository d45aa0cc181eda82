"""``torchpatch rule CODE|NAME`` and ``torchpatch rule --all``: the rule database, readable."""

from __future__ import annotations

import argparse
import json

from torchpatch.docs import render_rule_page, versions_line
from torchpatch.rules import all_rules, rule_by_code_or_name

HELP = "Explain a rule (by code, name or TorchFix code), or list them all."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("rule", nargs="?", help="a code (TP301), a name (torch-load-without-weights-only) or TOR102")
    parser.add_argument("--all", action="store_true", help="list every rule")
    parser.add_argument("--output-format", choices=("text", "json"), default="text")


def run(args: argparse.Namespace) -> int:
    from torchpatch.frontends.cli import UsageError

    if args.all:
        rules = all_rules()
    elif args.rule:
        rule = rule_by_code_or_name(args.rule)
        if rule is None:
            raise UsageError(f"unknown rule {args.rule!r} (see `torchpatch rule --all`)")
        rules = (rule,)
    else:
        raise UsageError("give a rule code or name, or --all")
    if args.output_format == "json":
        print(json.dumps([_rule_json(rule) for rule in rules], indent=2))
    elif args.all:
        width = max(len(rule.name) for rule in rules)
        for rule in rules:
            print(f"{rule.code}  {rule.name:<{width}}  {rule.summary}")
    else:
        print(render_rule_page(rules[0]), end="")
    return 0


def _rule_json(rule) -> dict:
    return {
        "code": rule.code, "name": rule.name, "summary": rule.summary, "versions": versions_line(rule),
        "deprecated_in": str(rule.deprecated_in) if rule.deprecated_in else None,
        "removed_in": str(rule.removed_in) if rule.removed_in else None,
        "changed_in": str(rule.changed_in) if rule.changed_in else None,
        "replacement_since": str(rule.replacement_since) if rule.replacement_since else None,
        "fix": rule.fix_safety, "url": rule.url(), "explanation": render_rule_page(rule),
        "torchfix_codes": list(rule.torchfix_codes), "opt_in": rule.opt_in,
    }
