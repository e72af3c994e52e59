"""The README's Python examples run as written (shared/readme_examples.py)."""

from pathlib import Path

import pytest

from shared.readme_examples import python_examples, run_example

EXAMPLES = python_examples(Path(__file__).parents[1] / "README.md")


@pytest.mark.parametrize("example", EXAMPLES, ids=str)
def test_readme_example_runs(example):
    run_example(example)
