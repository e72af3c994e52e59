"""An env's L4 command line: Delta read from translation.toml, the shared options, the exit status."""

import pytest

from shared.verification.l4 import TostResult, TransferReport
from shared.verification.l4_command import l4_argument_parser, l4_delta, run_l4_command


def test_l4_delta_reads_the_equivalence_table(tmp_path):
    (tmp_path / "translation.toml").write_text('[env]\nname = "toy"\n\n[equivalence]\nl4_delta = 0.25\n')
    assert l4_delta(tmp_path) == 0.25
    (tmp_path / "translation.toml").write_text("[equivalence]\nl4_delta = 3\n")
    assert l4_delta(str(tmp_path)) == 3.0 and isinstance(l4_delta(tmp_path), float)


def test_l4_delta_names_what_is_missing(tmp_path):
    with pytest.raises(FileNotFoundError, match="translation.toml not found"):
        l4_delta(tmp_path)
    (tmp_path / "translation.toml").write_text("[equivalence]\nl3_tolerance = 0.0\n")
    with pytest.raises(ValueError, match=r"has no \[equivalence\] l4_delta"):
        l4_delta(tmp_path)


def test_the_parser_takes_the_shared_options_and_the_env_adds_its_own():
    parser = l4_argument_parser("toy L4", "toy")
    parser.add_argument("--eval-episodes", type=int, default=5)
    defaults = parser.parse_args([])
    assert (defaults.out, defaults.seeds, defaults.eval_episodes) == (None, 10, 5)
    args = parser.parse_args(["--out", "results", "--seeds", "2", "--eval-episodes", "7"])
    assert (str(args.out), args.seeds, args.eval_episodes) == ("results", 2, 7)
    assert "l4/toy" in parser.format_help()


@pytest.mark.parametrize("seeds", ["1", "0", "-3", "two"])
def test_fewer_than_two_seeds_is_a_usage_error(seeds, capsys):
    with pytest.raises(SystemExit) as exited:
        l4_argument_parser("toy L4", "toy").parse_args(["--seeds", seeds])
    assert exited.value.code == 2
    assert "--seeds" in capsys.readouterr().err


def _report(equivalent: bool) -> TransferReport:
    test = TostResult("transfer, trained on A", "evaluated on A", "evaluated on B", 0.0, 0.01 if equivalent else 0.5,
                      equivalent)
    returns = {"A": {"A": [1.0, 1.0], "B": [1.0, 1.0]}, "B": {"A": [1.0, 1.0], "B": [1.0, 1.0]}}
    return TransferReport("toy", 0.1, 0.05, [0, 1], ["A", "B"], returns, [test], {})


@pytest.mark.parametrize("equivalent, status", [(True, 0), (False, 1)])
def test_the_command_prints_the_report_then_the_notes_and_exits_on_the_verdict(tmp_path, capsys, equivalent, status):
    ran_in = []

    def run(out):
        ran_in.append(out)
        return _report(equivalent)

    assert run_l4_command("toy", tmp_path, run, notes=lambda: ["a baseline: 0.5"]) == status
    printed = capsys.readouterr().out
    assert ran_in == [tmp_path]
    assert printed.index("L4 policy transfer, toy") < printed.index("a baseline: 0.5") < printed.index(
        f"written to {tmp_path} in ")


def test_the_command_writes_to_the_cache_by_default(tmp_path, monkeypatch):
    monkeypatch.setenv("ENVPORT_CACHE_DIR", str(tmp_path))
    ran_in = []
    run_l4_command("toy", None, lambda out: ran_in.append(out) or _report(True))
    assert ran_in == [tmp_path / "l4" / "toy"] and ran_in[0].is_dir()
