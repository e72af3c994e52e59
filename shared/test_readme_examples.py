"""shared/readme_examples.py: which blocks are examples, and where a failing one points."""

from __future__ import annotations

import traceback

import pytest

from shared.readme_examples import python_examples, readme_test, run_example

MARKDOWN = """# A README

```bash
./pants test ::
```

Text.

```python
x = 1 + 1
```

```text
x = 2
```

   ```python
   y = x * 3
   ```

```python
a = 1
raise RuntimeError("the fifth line of this block")
```
"""


@pytest.fixture()
def readme(tmp_path):
    path = tmp_path / "README.md"
    path.write_text(MARKDOWN)
    return path


def test_only_python_blocks_are_examples_with_their_readme_lines(readme):
    examples = python_examples(readme)
    lines = MARKDOWN.splitlines()
    assert [example.code for example in examples] == [
        "x = 1 + 1", "y = x * 3", 'a = 1\nraise RuntimeError("the fifth line of this block")']
    # each example's line is the README line of its first line of code
    for example in examples:
        assert lines[example.line - 1].strip() == example.code.splitlines()[0]
    assert [str(example) for example in examples] == [f"README.md:{example.line}" for example in examples]


def test_examples_run_in_order_in_one_namespace_when_asked(readme):
    first, second, _ = python_examples(readme)
    namespace = run_example(first)
    assert namespace["x"] == 2
    assert run_example(second, namespace)["y"] == 6
    with pytest.raises(NameError):  # a fresh namespace by default
        run_example(second)


def test_a_failing_example_points_at_its_readme_line(readme):
    failing = python_examples(readme)[2]
    with pytest.raises(RuntimeError) as raised:
        run_example(failing)
    last = traceback.extract_tb(raised.value.__traceback__)[-1]
    assert last.filename == str(readme)
    assert MARKDOWN.splitlines()[last.lineno - 1].startswith("raise RuntimeError")


def test_a_readme_without_examples_or_a_missing_one_is_an_error(tmp_path):
    empty = tmp_path / "EMPTY.md"
    empty.write_text("# Nothing to run\n\n```bash\nls\n```\n")
    with pytest.raises(ValueError, match="no ```python block"):
        python_examples(empty)
    with pytest.raises(FileNotFoundError, match="is it a dependency"):
        python_examples(tmp_path / "MISSING.md")


def test_readme_test_is_parametrized_over_every_example(readme):
    test = readme_test(readme)
    (mark,) = (mark for mark in test.pytestmark if mark.name == "parametrize")
    examples = mark.args[1]
    assert examples == python_examples(readme)
    assert [mark.kwargs["ids"](example) for example in examples] == [str(example) for example in examples]
    test(examples[0])  # runs it
    with pytest.raises(RuntimeError, match="fifth line"):
        test(examples[2])
