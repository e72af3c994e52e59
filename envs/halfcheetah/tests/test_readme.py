"""The README's Python examples run as written (shared/readme_examples.py)."""

from pathlib import Path

from shared.readme_examples import readme_test

test_readme_example_runs = readme_test(Path(__file__).parents[1] / "README.md")
