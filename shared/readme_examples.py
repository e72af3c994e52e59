"""A README's Python examples, run as tests so that the documentation cannot drift from the code.

Every block fenced as ```python in a Markdown file is an example. `python_examples` finds them in
order; `run_example` executes one in a fresh namespace, compiled under the README's path with its
line numbers, so that a traceback points at the README line that failed. Blocks that are not meant
to run (shell commands, output) use another fence (```bash, ```text).

An env's tests/test_readme.py is one line, a test parametrized over the README's examples:

    test_readme_example_runs = readme_test(Path(__file__).parents[1] / "README.md")
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pytest

# an opening fence (up to three spaces of indent, as CommonMark allows), then everything up to the
# first closing fence of the same indent
_PYTHON_FENCE = re.compile(r"^(?P<indent> {0,3})```python[ \t]*\n(?P<code>.*?)^(?P=indent)```[ \t]*$", re.M | re.S)


@dataclass(frozen=True)
class Example:
    path: Path
    line: int  # 1-based line of the block's first line of code
    code: str

    def __str__(self) -> str:
        return f"{self.path.name}:{self.line}"


def python_examples(markdown: Path | str) -> list[Example]:
    """The ```python blocks of a Markdown file, in order. A file without any is an error: a test
    built on it would check nothing."""
    path = Path(markdown)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such Markdown file (is it a dependency of the test target?)")
    text = path.read_text(encoding="utf-8")
    examples = []
    for match in _PYTHON_FENCE.finditer(text):
        indent = len(match.group("indent"))
        code = "\n".join(line[indent:] if line[:indent].isspace() else line
                         for line in match.group("code").splitlines())
        line = text.count("\n", 0, match.start("code")) + 1
        examples.append(Example(path, line, code))
    if not examples:
        raise ValueError(f"{path}: no ```python block found")
    return examples


def run_example(example: Example, namespace: dict | None = None) -> dict:
    """Execute one example in `namespace` (a fresh one by default) and return it. Line numbers in a
    traceback are the README's."""
    namespace = {"__name__": "__readme_example__"} if namespace is None else namespace
    padded = "\n" * (example.line - 1) + example.code
    exec(compile(padded, str(example.path), "exec"), namespace)  # noqa: S102  (running the docs is the point)
    return namespace


def readme_test(markdown: Path | str) -> Callable[[Example], None]:
    """A pytest test parametrized over the file's examples (ids README.md:LINE), each run alone."""
    @pytest.mark.parametrize("example", python_examples(markdown), ids=str)
    def test_readme_example_runs(example: Example) -> None:
        run_example(example)

    return test_readme_example_runs
