"""The shared argparse types (shared/cli_args.py): a bad --batches, --seconds or count is a usage error, not a
ZeroDivisionError after minutes of measuring."""

import argparse

import pytest

from shared.cli_args import batch_list, count_at_least, positive_seconds


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="bench")
    parser.add_argument("--batches", type=batch_list)
    parser.add_argument("--seconds", type=positive_seconds)
    parser.add_argument("--ppo-updates", type=count_at_least(0))
    return parser


def test_good_values_parse():
    args = _parser().parse_args(["--batches", "1,64,4096", "--seconds", "0.5", "--ppo-updates", "0"])
    assert (args.batches, args.seconds, args.ppo_updates) == ([1, 64, 4096], 0.5, 0)


@pytest.mark.parametrize("argv, message", [
    (["--batches", "0"], "every batch must be at least 1"),
    (["--batches", "64,-1"], "every batch must be at least 1"),
    (["--batches", "1,,4"], "comma-separated whole numbers"),
    (["--seconds", "-1"], "seconds > 0"),
    (["--seconds", "0"], "seconds > 0"),
    (["--seconds", "nan"], "seconds > 0"),
    (["--seconds", "soon"], "not a number of seconds"),
    (["--ppo-updates", "-1"], "must be at least 0"),
    (["--ppo-updates", "2.5"], "not a whole number"),
])
def test_bad_values_are_usage_errors_naming_the_option(argv, message, capsys):
    with pytest.raises(SystemExit) as exited:
        _parser().parse_args(argv)
    error = capsys.readouterr().err
    assert exited.value.code == 2 and argv[0] in error and message in error
