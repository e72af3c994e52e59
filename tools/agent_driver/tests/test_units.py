"""The driver's parts on their own: agent presets and usage parsing, prompt rendering, manifest
errors, level test paths, and the pinned regression file."""

import json
from pathlib import Path

import numpy as np
import pytest
from repo_copies import toy_repo  # pants: no-infer-dep (a sibling module; BUILD names it as :helpers)

from shared.verification.reports import encode_array
from tools.agent_driver.driver import agents, levels, manifest, prompts, regression


def test_presets_build_their_command_lines():
    prompt, workdir = Path("/tmp/p.md"), Path("/repo")
    assert agents.PRESETS["claude"].argv(prompt, workdir) == [
        "claude", "-p", "--output-format", "json", "--dangerously-skip-permissions"]
    assert agents.PRESETS["claude"].argv(prompt, workdir, "opus")[-2:] == ["--model", "opus"]
    assert agents.PRESETS["gemini"].argv(prompt, workdir) == ["gemini", "--yolo", "--output-format", "json"]
    assert agents.PRESETS["codex"].argv(prompt, workdir) == ["codex", "exec", "--json", "--full-auto", "--cd", "/repo", "-"]
    custom = agents.AgentSpec("mine", "my-agent --prompt {prompt_file} --in {workdir}")
    assert custom.argv(prompt, workdir) == ["my-agent", "--prompt", "/tmp/p.md", "--in", "/repo"]


def test_usage_parsers_read_each_cli_format():
    claude = agents.PRESETS["claude"].parse(json.dumps({
        "type": "result", "total_cost_usd": 0.1234, "result": "done",
        "usage": {"input_tokens": 10, "cache_read_input_tokens": 90, "output_tokens": 7},
        "modelUsage": {"claude-sonnet-4-5": {"costUSD": 0.1234}}}))
    assert (claude.input_tokens, claude.output_tokens, claude.cost_usd, claude.model) == (100, 7, 0.1234, "claude-sonnet-4-5")
    gemini = agents.PRESETS["gemini"].parse(json.dumps({
        "response": "ok", "stats": {"models": {"gemini-2.5-pro": {"tokens": {"prompt": 250, "candidates": 20}}}}}))
    assert (gemini.input_tokens, gemini.output_tokens, gemini.cost_usd, gemini.model) == (250, 20, None, "gemini-2.5-pro")
    codex = agents.PRESETS["codex"].parse("\n".join(json.dumps(e) for e in [
        {"type": "thread.started", "thread_id": "x"},
        {"type": "turn.completed", "usage": {"input_tokens": 100, "cached_input_tokens": 50, "output_tokens": 9}},
        {"type": "turn.completed", "usage": {"input_tokens": 30, "cached_input_tokens": 0, "output_tokens": 1}}]))
    assert (codex.input_tokens, codex.output_tokens, codex.cost_usd) == (130, 10, None)
    # anything else (plain text, a crash) leaves usage unknown rather than failing
    assert agents.PRESETS["claude"].parse("Error: not logged in") == agents.Usage()
    assert agents.PRESETS["codex"].parse("") == agents.Usage()


def test_resolve_prefers_a_command_template(monkeypatch):
    monkeypatch.delenv("AGENT_CMD", raising=False)
    assert agents.resolve("codex").name == "codex"
    monkeypatch.setenv("AGENT_CMD", "x-agent {prompt_file}")
    spec = agents.resolve(None)
    assert spec.command == "x-agent {prompt_file}" and spec.name == "custom"
    with pytest.raises(agents.AgentError, match="unknown agent output format"):
        agents.resolve(None, output_format="yaml")
    monkeypatch.delenv("AGENT_CMD")
    with pytest.raises(agents.AgentError, match="no agent configured"):
        agents.resolve(None)


def test_render_refuses_a_placeholder_without_value():
    assert prompts.render("a {{x}} b {{ y }}", {"x": "1", "y": "2"}) == "a 1 b 2"
    with pytest.raises(prompts.TemplateError, match=r"\['y'\]"):
        prompts.render("a {{x}} b {{y}}", {"x": "1"})


def test_every_template_renders_for_the_toy_env(tmp_path):
    root = toy_repo(tmp_path)
    spec = manifest.load("envs/toy", root)
    module = spec.modules[0]
    text = prompts.translation_prompt(spec, module, "def step(): ...")
    assert "{{" not in text and "envs/toy/translated/counter.py" in text and "gymnax" in text
    # the names the env's other files take from the target are spelled out
    assert "- `envs/toy/translated/counter.py` must provide: `step`" in text
    assert "(used by `envs/toy/tests/l1_counter.py`" in text
    repair = prompts.repair_prompt(spec, module, "def step(): ...", level="l3", report="boom", components=["counter"],
                                   iteration=2, reverted=["envs/toy/tests/l1_counter.py"])
    assert "{{" not in repair and "L3 fails" in repair and "**counter**" in repair and "were reverted" in repair


def test_manifest_errors_name_the_key(tmp_path):
    root = toy_repo(tmp_path)
    toml = root / "envs/toy/translation.toml"
    original = toml.read_text()
    for broken, message in [
        (original.replace('targets = ["envs/toy/translated/counter.py"]', "targets = []"), "targets is empty"),
        (original.replace('targets = ["envs/toy/translated/counter.py"]', 'targets = ["../../etc/passwd"]'),
         "must be a path inside the repository"),
        (original.replace('[tests]', '[tests]\nl5 = ["x"]'), "unknown levels ['l5']"),
        (original.replace('package = "toy-counter"\n', ""), "missing key 'package'"),
        (original + "\n[[[", "not valid TOML"),
    ]:
        toml.write_text(broken)
        with pytest.raises(manifest.ManifestError, match=message.replace("[", r"\[").replace("]", r"\]")):
            manifest.load("envs/toy", root)


def test_level_entries_map_addresses_to_files(tmp_path):
    root = toy_repo(tmp_path)
    assert levels.test_paths(("envs/toy/tests:l1",), root) == ["envs/toy/tests/l1_counter.py"]
    assert levels.test_paths(("envs/toy/tests/l1_counter.py::test_step_matches_reference",), root) == [
        "envs/toy/tests/l1_counter.py::test_step_matches_reference"]
    with pytest.raises(levels.LevelSetupError, match="names no files"):
        levels.test_paths(("envs/toy/tests:l2",), root)


def test_pinned_regression_file_is_valid_python_with_exact_values(tmp_path):
    root = toy_repo(tmp_path)
    spec = manifest.load("envs/toy", root)
    divergence = {
        "env": "toy", "reference": "ref", "translation": "trans", "episode": 3, "seed": 7, "step": 2,
        "field": "state.drift", "index": [], "first_internal_field": "state.drift", "actions": [1, 0],
        "reference_values": {"observation": encode_array(np.asarray([0.1, -0.0], np.float32)),
                             "done": encode_array(np.bool_(False))},
        "tolerance": {"default": 0.0, "per_field": {}},
        "reference_factory": "shared.verification.toy_backends:reference",
        "translation_factory": "shared.verification.toy_backends:reference",
    }
    path = regression.write_test(spec, divergence, run_id="r1", components=["counter"])
    assert path.name == "l3_regression_seed7_step2_state_drift.py"
    namespace: dict = {}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    assert namespace["ACTIONS"] == [1, 0] and namespace["SEED"] == 7
    pinned = np.asarray(namespace["EXPECTED"]["observation"]["values"], np.float32)
    assert pinned.view(np.uint32).tolist() == np.asarray([0.1, -0.0], np.float32).view(np.uint32).tolist()
    assert regression.write_test(spec, divergence, run_id="r2", components=[]) is None  # never overwritten
    no_factories = dict(divergence, seed=8, reference_factory=None)
    assert regression.write_test(spec, no_factories, run_id="r1", components=[]) is None
