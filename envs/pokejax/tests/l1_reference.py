"""L1: the reference adapter itself. The pinned Showdown runs, battles are reproducible from their
seeds, and every failure (illegal choice, dead process, garbage, silence, missing Node) is a clear
exception rather than garbage or a hang."""

from __future__ import annotations

import gc
import os
import signal
import time
import warnings

import pytest

from envs.pokejax.reference import showdown as showdown_module
from envs.pokejax.reference.showdown import (
    Showdown,
    ShowdownCommandError,
    ShowdownDied,
    ShowdownInstallError,
    ShowdownProtocolError,
    ShowdownTimeout,
)
from envs.pokejax.tests.components import POKEJAX

SEED = "sodium,0123456789abcdef0123456789abcdef"
P1 = {"seed": "gen5,000000000000000a"}
P2 = {"seed": "gen5,000000000000000b"}


def _play(sd: Showdown, name: str, seed: str, turns: int = 12) -> list:
    """A battle where both sides always pick their first legal option; its log and states."""
    snap = sd.start(name, "gen1randombattle", seed, P1, P2)
    history = [snap["log"], snap["state"]]
    for _ in range(turns):
        if snap["ended"]:
            break
        choices = []
        for request in snap["requests"]:
            if request is None or request.get("wait"):
                choices.append("")
            elif request.get("forceSwitch"):
                alive = [
                    i + 1
                    for i, p in enumerate(request["side"]["pokemon"])
                    if not p["condition"].endswith(" fnt") and not p["active"]
                ]
                choices.append(f"switch {alive[0]}")
            else:
                choices.append("move 1")
        snap = sd.choose(name, *choices)
        history += [snap["log"], snap["state"]]
    sd.end(name)
    return history


@POKEJAX.covers("reference")
def test_pinned_version_runs(showdown):
    assert showdown.version()["showdown"] == showdown_module.pinned_version() == "0.11.11"


@POKEJAX.covers("reference")
def test_battles_are_reproducible_from_their_seed(showdown):
    first = _play(showdown, "a", SEED)
    again = _play(showdown, "b", SEED)
    other = _play(showdown, "c", "sodium,0123456789abcdef0123456789abcdee")
    assert first == again
    assert first != other
    assert first[1]["sides"][0]["pokemon"][0]["species"], "the state names the active Pokemon"
    assert all("|t:|" not in line for log in first[::2] for line in log), "timestamps are dropped"


@POKEJAX.covers("reference")
def test_illegal_choice_is_refused_and_the_process_lives_on(showdown):
    showdown.start("illegal", "gen1randombattle", SEED, P1, P2)
    with pytest.raises(ShowdownCommandError, match="move 9"):
        showdown.choose("illegal", "move 9", "move 1")
    with pytest.raises(ShowdownCommandError, match="no battle named"):
        showdown.choose("nonexistent", "move 1", "move 1")
    with pytest.raises(ShowdownCommandError, match="unknown command"):
        showdown.call("teleport")
    assert showdown.alive
    showdown.end("illegal")


@POKEJAX.covers("reference")
def test_dead_process_raises_with_its_exit_and_can_restart():
    sd = Showdown(timeout_s=30)
    try:
        sd.start("x", "gen1randombattle", SEED, P1, P2)
        os.kill(sd.pid, signal.SIGKILL)
        time.sleep(0.2)
        with pytest.raises(ShowdownDied, match="exited with code"):
            sd.choose("x", "move 1", "move 1")
        sd.restart()
        assert sd.version()["showdown"] == "0.11.11"
        with pytest.raises(ShowdownCommandError, match="no battle named"):
            sd.choose("x", "move 1", "move 1")  # battles of the dead process are gone
    finally:
        sd.close()


@POKEJAX.covers("reference")
def test_auto_restart_starts_a_fresh_process():
    sd = Showdown(timeout_s=30, auto_restart=True)
    try:
        old = sd.pid
        os.kill(old, signal.SIGKILL)
        time.sleep(0.2)
        assert sd.version()["showdown"] == "0.11.11"
        assert sd.pid != old
    finally:
        sd.close()


def _resource_warnings(use) -> list[str]:
    """The ResourceWarnings (unclosed pipes) issued while `use` makes, uses and lets go of a Showdown."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        use()
        gc.collect()
    return [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)]


@POKEJAX.covers("reference")
def test_closing_leaves_no_pipe_open():
    def closed():
        with Showdown(timeout_s=30) as sd:
            _play(sd, "a", SEED, turns=2)

    def closed_after_it_died():
        sd = Showdown(timeout_s=30)
        os.kill(sd.pid, signal.SIGKILL)
        with pytest.raises(ShowdownDied):
            sd.version()
        sd.close()

    def dropped_unclosed():
        sd = Showdown(timeout_s=30)
        pid = sd.pid
        del sd
        gc.collect()
        with pytest.raises(ProcessLookupError):  # __del__ ended the process too
            for _ in range(50):
                os.kill(pid, 0)
                time.sleep(0.1)

    for use in (closed, closed_after_it_died, dropped_unclosed):
        assert _resource_warnings(use) == [], use.__name__


def _fake_driver(tmp_path, body: str):
    path = tmp_path / "driver.js"
    path.write_text(body)
    return path


@POKEJAX.covers("reference")
def test_garbage_on_stdout_is_a_protocol_error(tmp_path):
    driver = _fake_driver(tmp_path, "process.stdout.write('Segmentation fault?\\n');\n")
    with pytest.raises(ShowdownProtocolError, match="not JSON"):
        Showdown(timeout_s=30, driver=driver)


@POKEJAX.covers("reference")
def test_silence_is_a_timeout_not_a_hang(tmp_path):
    driver = _fake_driver(tmp_path, "setInterval(() => {}, 1000);\n")
    started = time.monotonic()
    with pytest.raises(ShowdownTimeout, match="no answer"):
        Showdown(timeout_s=2, driver=driver)
    assert time.monotonic() - started < 30


@POKEJAX.covers("reference")
def test_crash_reports_stderr(tmp_path):
    driver = _fake_driver(tmp_path, "console.error('boom: out of cheese'); process.exit(3);\n")
    with pytest.raises(ShowdownDied, match="(?s)code 3.*out of cheese"):
        Showdown(timeout_s=30, driver=driver)


@POKEJAX.covers("reference")
def test_missing_node_says_what_to_install(monkeypatch):
    monkeypatch.setattr(showdown_module, "find_tool", lambda name: None)
    with pytest.raises(ShowdownInstallError, match="install Node.js"):
        Showdown()
