"""The driver on a toy env (L1 only, a second per level): the loop, the lock, staleness, protected
files and every error path. The Pong scenarios (test_pong_scenarios.py) run the real levels."""

import json

import pytest

# repo_copies sits beside these tests (pytest puts this folder on sys.path); BUILD names it as :helpers
from repo_copies import (
    TOY_TRANSLATION,  # pants: no-infer-dep
    install_agent,  # pants: no-infer-dep
    run_driver,  # pants: no-infer-dep
    toy_repo,  # pants: no-infer-dep
    write_scenario,  # pants: no-infer-dep
)

TARGET = "envs/toy/translated/counter.py"
WRONG = TOY_TRANSLATION.replace("% 10", "% 9")


@pytest.fixture
def repo(tmp_path):
    root = toy_repo(tmp_path / "repo")
    install_agent(root)
    return root


def _lock(root):
    return root / "envs/toy/translation.lock.json"


def _translate(root, rounds, *args):
    scenario = write_scenario(root.parent, rounds)
    return run_driver(root, scenario, "translate", "envs/toy", *args)


def test_translate_repair_and_lock(repo):
    result = _translate(repo, [
        {"expect": ["# Translate toy / counter from its reference into JAX", "return (count + action) % 10",
                    f"- `{TARGET}`"],
         "writes": [{"path": TARGET, "text": WRONG}], "cost_usd": 0.25},
        {"expect": ["# Repair toy / counter: L1 fails", "[toy/counter]", "The failing component: **counter**"],
         "writes": [{"path": TARGET, "text": TOY_TRANSLATION}], "cost_usd": 0.5},
    ])
    assert result.returncode == 0, result.stderr + result.stdout
    assert "success" in result.stdout and "L1 failed (1 of 1 tests" in result.stdout
    assert "component: counter" in result.stdout
    lock = json.loads(_lock(repo).read_text())
    assert lock["agent"]["name"] == "scripted" and lock["agent"]["model"] == "scripted-stand-in"
    assert lock["iterations"]["agent_calls"] == 2
    assert lock["iterations"]["l1"] == {"runs": 2, "failed": 1}
    assert lock["cost_usd"] == pytest.approx(0.75)
    assert lock["tokens"]["input"] > 0
    assert set(lock["generated"]) == {TARGET}
    assert "envs/toy/reference/counter.py" in lock["reference"]["adapter"]
    assert set(lock["prompts"]) == {"tools/agent_driver/prompts/translate.md", "tools/agent_driver/prompts/repair.md",
                                    "tools/agent_driver/prompts/target_jax.md"}
    run_dir = sorted((repo / ".translations/toy").iterdir())[-1]
    assert (run_dir / "iter-01/prompt-translate.md").exists() and (run_dir / "iter-02/prompt-repair-l1.md").exists()
    assert "% 9" in (run_dir / "iter-01/agent.diff").read_text()
    assert "-    return (count + action) % 9" in (run_dir / "iter-02/agent.diff").read_text()
    run = json.loads((run_dir / "run.json").read_text())
    assert run["status"] == "success" and run["agent_calls"] == 2
    assert (run_dir / "iter-01/l1.log").exists()


def _status(repo, *args):
    return run_driver(repo, repo.parent / "unused.json", "status", "-v", *args)


def test_status_flips_with_each_kind_of_change(repo):
    assert "not translated" in _status(repo).stdout
    assert _translate(repo, [{"writes": [{"path": TARGET, "text": TOY_TRANSLATION}]}]).returncode == 0
    assert "up to date" in _status(repo).stdout
    assert _status(repo, "--check").returncode == 0

    def flips(path, reason):
        original = path.read_text()
        path.write_text(original + "\n# an edit\n")
        result = _status(repo, "--check")
        path.write_text(original)
        assert reason in result.stdout and result.returncode == 1, result.stdout
        assert "up to date" in _status(repo).stdout

    flips(repo / "envs/toy/reference/counter.py", "reference changed")
    flips(repo / "tools/agent_driver/prompts/repair.md", "prompt changed")
    flips(repo / "tools/agent_driver/prompts/target_jax.md", "prompt changed")
    flips(repo / TARGET, "generated code edited by hand")
    flips(repo / "envs/toy/translation.toml", "translation.toml changed")

    toml = repo / "envs/toy/translation.toml"
    original = toml.read_text()
    toml.write_text(original.replace('version = "1.0"', 'version = "1.1"'))
    assert "reference version: 1.0 -> 1.1" in _status(repo).stdout
    toml.write_text(original)

    ci = run_driver(repo, repo.parent / "unused.json", "ci", "--agent-cmd", "")
    assert ci.returncode == 0 and "every translation is up to date" in ci.stdout


def test_ci_fails_on_stale_translation_without_an_agent(repo):
    result = run_driver(repo, repo.parent / "unused.json", "ci", "--agent-cmd", "")
    assert result.returncode == 1
    assert "envs/toy: no lock" in result.stderr
    assert "./pants run tools/agent_driver -- translate envs/toy" in result.stderr


def test_ci_regenerates_with_an_agent(repo):
    scenario = write_scenario(repo.parent, [{"writes": [{"path": TARGET, "text": TOY_TRANSLATION}]}])
    result = run_driver(repo, scenario, "ci")
    assert result.returncode == 0, result.stderr
    assert "regenerating envs/toy" in result.stdout and _lock(repo).exists()


def test_protected_files_are_restored_and_reported(repo):
    test_file = repo / "envs/toy/tests/l1_counter.py"
    original_test = test_file.read_text()
    result = _translate(repo, [
        # a translation with a bug, and an "easier" test to hide it: the test edit is reverted
        {"writes": [{"path": TARGET, "text": WRONG},
                    {"path": str(test_file), "text": "def test_nothing():\n    pass\n"},
                    {"path": "tools/agent_driver/prompts/repair.md", "text": "say it passed"}]},
        {"expect": ["were reverted", "envs/toy/tests/l1_counter.py", "tools/agent_driver/prompts/repair.md"],
         "writes": [{"path": TARGET, "text": TOY_TRANSLATION}]},
    ])
    assert result.returncode == 0, result.stderr + result.stdout
    assert test_file.read_text() == original_test
    assert "say it passed" not in (repo / "tools/agent_driver/prompts/repair.md").read_text()
    assert ("restored protected ['envs/toy/tests/l1_counter.py', 'tools/agent_driver/prompts/repair.md']"
            in result.stdout)


def _no_lock_left(repo):
    assert not _lock(repo).exists()
    assert not list((repo / "envs/toy").glob(".*.part"))


def test_missing_agent(repo):
    scenario = write_scenario(repo.parent, [])
    result = run_driver(repo, scenario, "translate", "envs/toy", "--agent-cmd", "no-such-agent-cli -p {prompt_file}")
    assert result.returncode == 2
    assert "agent CLI 'no-such-agent-cli' (custom) not found on PATH" in result.stderr
    _no_lock_left(repo)


def test_unknown_preset_and_no_agent(repo):
    unknown = run_driver(repo, repo.parent / "x.json", "translate", "envs/toy", "--agent", "gpt-99", "--agent-cmd", "")
    assert unknown.returncode == 2 and "unknown agent 'gpt-99'" in unknown.stderr
    missing_cli = run_driver(repo, repo.parent / "x.json", "translate", "envs/toy", "--agent", "gemini", "--agent-cmd", "")
    assert missing_cli.returncode == 2 and "agent CLI 'gemini' (gemini) not found on PATH" in missing_cli.stderr
    _no_lock_left(repo)


def test_agent_exits_non_zero(repo):
    result = _translate(repo, [{"action": "exit", "code": 3, "stderr": "quota exceeded for this key"}])
    assert result.returncode == 2
    assert "agent error: agent scripted exited with status 3" in result.stderr
    assert "quota exceeded for this key" in result.stderr
    _no_lock_left(repo)


def test_agent_hangs_past_the_timeout(repo):
    result = _translate(repo, [{"action": "hang", "seconds": 600}], "--agent-timeout", "3")
    assert result.returncode == 2
    assert "did not finish within 3 s and was stopped" in result.stderr
    _no_lock_left(repo)


def test_budget_exceeded(repo):
    result = _translate(repo, [{"writes": [{"path": TARGET, "text": WRONG}], "cost_usd": 0.8},
                               {"writes": [{"path": TARGET, "text": WRONG}], "cost_usd": 0.8},
                               {"writes": [{"path": TARGET, "text": TOY_TRANSLATION}], "cost_usd": 0.8}],
                        "--budget-usd", "1.0")
    assert result.returncode == 3
    assert "budget spent: budget exceeded: $1.6000 spent, budget $1.0000" in result.stderr
    assert "agent calls: 2" in result.stderr
    _no_lock_left(repo)


def test_max_iterations(repo):
    result = _translate(repo, [{"writes": [{"path": TARGET, "text": WRONG}]}] * 3, "--max-iterations", "2")
    assert result.returncode == 4
    assert "max iterations reached (2 agent calls)" in result.stderr
    assert "last failure: L1 failed" in result.stderr
    _no_lock_left(repo)


def test_corrupt_lock(repo):
    assert _translate(repo, [{"writes": [{"path": TARGET, "text": TOY_TRANSLATION}]}]).returncode == 0
    lock = _lock(repo)
    record = json.loads(lock.read_text())
    record["cost_usd"] = 0.0  # an edit that keeps the JSON valid
    lock.write_text(json.dumps(record))
    status = _status(repo, "--check")
    assert status.returncode == 1 and "corrupt lock" in status.stdout and "content_sha256" in status.stdout
    lock.write_text('{"schema": 1, "env": "toy"')  # truncated
    status = _status(repo, "--check")
    assert status.returncode == 1 and "is corrupt (not JSON" in status.stdout


def test_bad_translation_toml(repo):
    toml = repo / "envs/toy/translation.toml"
    toml.write_text(toml.read_text().replace('target_language = "jax"', 'target_language = "cobol"'))
    result = _status(repo)
    assert result.returncode == 2 and "target_language must be one of ('jax', 'rust'), got 'cobol'" in result.stderr
    result = run_driver(repo, repo.parent / "x.json", "translate", "envs/nothing-here")
    assert result.returncode == 2 and "translation.toml not found" in result.stderr


def test_dry_run_renders_prompts_without_an_agent(repo):
    result = run_driver(repo, repo.parent / "unused.json", "translate", "envs/toy", "--dry-run", "--agent-cmd", "")
    assert result.returncode == 0, result.stderr
    (prompt,) = sorted((repo / ".translations/toy").glob("*-dry-run/prompt-translate-counter.md"))
    assert "return (count + action) % 10" in prompt.read_text() and str(prompt) in result.stdout
    assert not (repo / TARGET).exists() and not _lock(repo).exists()
