"""The README's Python examples run as written (shared/readme_examples.py)."""

from pathlib import Path

from shared.readme_examples import readme_test

test_readme_example_runs = readme_test(Path(__file__).parents[1] / "README.md")


def test_the_engine_defaults_table_lists_every_rule_flag():
    """Every RuleConfig field (but retreat_discard, which has one value) has a row in the README's
    "Engine defaults" table, and every row names a field."""
    import dataclasses
    import re

    from envs.tcgjax.reference.config import RuleConfig

    text = (Path(__file__).parents[1] / "README.md").read_text()
    section = text.split("## Engine defaults", 1)[1].split("\n## ", 1)[0]
    rows = set(re.findall(r"^\| `(\w+)` \|", section, flags=re.M))
    fields = {f.name for f in dataclasses.fields(RuleConfig)} - {"retreat_discard"}
    assert rows == fields, (sorted(fields - rows), sorted(rows - fields))
