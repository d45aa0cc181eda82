"""The rule manifest says what the rule classes say, is rebuilt when unreadable, and LazyRule imports on use."""

from __future__ import annotations

import json

from torchpatch.rules import _manifest, all_rules
from torchpatch.rules._manifest import LazyRule, RuleFacts


def test_the_manifest_holds_every_rule_with_its_metadata():
    facts = _manifest.rule_facts()
    assert [f.code for f in facts] == [rule.code for rule in all_rules()]
    for fact, rule in zip(facts, all_rules()):
        assert (fact.name, fact.opt_in, fact.torchfix_codes, fact.since(), fact.kind(), fact.url()) == \
            (rule.name, rule.opt_in, rule.torchfix_codes, rule.since(), rule.kind(), rule.url())
        for field in ("calls", "references_to", "methods", "attributes_assigned", "dependencies"):
            assert getattr(fact, field) == frozenset(getattr(rule, field)), (rule.code, field)
        assert fact.rule_class() is rule


def test_an_unreadable_manifest_is_rebuilt(tmp_path, monkeypatch):
    monkeypatch.setenv(_manifest.MANIFEST_ENV, str(tmp_path))
    path = tmp_path / f"rules-{_manifest.package_fingerprint()}.json"
    path.write_text('{"format": 2, "rules": [{"code": "TP1"}]}')  # a foreign or truncated file under this name
    _manifest.rule_facts.cache_clear()
    try:
        facts = _manifest.rule_facts()
    finally:
        _manifest.rule_facts.cache_clear()
    assert len(facts) == len(all_rules())
    assert len(json.loads(path.read_text())["rules"]) == len(all_rules())  # written again, whole


def test_a_lazy_rule_answers_metadata_without_its_module_and_delegates_the_rest():
    rule = all_rules()[0]
    fact = next(f for f in _manifest.rule_facts() if f.code == rule.code)
    lazy = LazyRule(fact)
    assert lazy.code == rule.code and lazy._rule is None  # metadata: nothing built yet
    assert lazy.summary == rule.summary  # anything else: the rule itself
    assert isinstance(lazy._rule, rule)


def test_facts_round_trip_through_json():
    entry = _manifest._entry(all_rules()[0])
    assert RuleFacts(json.loads(json.dumps(entry))).code == entry["code"]
