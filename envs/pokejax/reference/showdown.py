"""The real Pokemon Showdown simulator, pinned, driven from Python through one long-lived Node process.

    from envs.pokejax.reference.showdown import Showdown
    with Showdown() as sd:
        snap = sd.start("b1", format="gen1randombattle", seed="sodium," + "0" * 31 + "1",
                        p1={"seed": "gen5,000000000000000a"}, p2={"seed": "gen5,000000000000000b"})
        snap = sd.choose("b1", p1="move 1", p2="switch 2")
        snap["log"], snap["requests"], snap["state"]["sides"][0]["pokemon"][0]["hp"]

The npm package `pokemon-showdown` is pinned in package.json and package-lock.json next to this file.
On first use it is installed with `npm ci --omit=optional --ignore-scripts` (the simulator needs none
of the optional server packages, and no install script) into `cache_dir("pokejax")/showdown-<key>`,
keyed by the two files' contents; a file lock makes parallel test processes install it once. Node
and npm come from the machine (PATH, then /usr/bin and /usr/local/bin).

Commands (each a method below; `showdown_driver.js` implements them):
  version()                       Showdown's and Node's versions
  prng(seed, draws)               Showdown's PRNG from `seed` ("sodium,<hex>" or "gen5,<16 hex>"):
                                  each draw is () for a raw 32-bit next(), (n,) for random(n) or
                                  (m, n) for random(m, n); returns (values, seed after)
  start(name, format, seed, p1, p2, trace=False)   a new battle; p1/p2 = {"team": packed or list
                                  of sets, "seed": team seed for random formats}; trace=True adds
                                  "prngCalls" to every snapshot: each PRNG draw since the last one,
                                  with the functions that asked for it
  choose(name, p1, p2)            both sides' choices ("move 2", "switch 3", "" when not asked)
  state(name, full=False)         the snapshot again (full=True adds Showdown's own serialisation)
  end(name)                       forget the battle
  generate_team(format, seed)     Showdown's random team generator from a team seed
  play_random(format, battles, seed, teams=None)  Showdown's own speed: uniform random legal
                                  choices in Node, between `teams` pairs if given
  gen1_data()                     species, moves and type chart as Showdown's gen1 mod sees them
  make_pokemon(sets)              Pokemon built by Showdown's constructor (Gen 1): HP, stats, PP
  gen1_random_battle_data()       gen1randombattle's sets file (data/random-battles/gen1/data.json)
                                  with its species ids in key order, and each of its moves' category,
                                  damage and whether it has a damageCallback in the gen1 dex
  generate_team_prng(format, seed)  generate_team, and the generator's PRNG seed after it: (team, seed)

A snapshot is {"format" (the format's id), "turn", "ended", "winner", "requests": [p1, p2]
(Showdown's request JSON or None), "log": the log lines since the last snapshot (timestamps
dropped), "state": the internal state (PRNG seed; per side the Pokemon in Showdown's current order
with HP, status and its counters, stored and modified stats, boosts, moves and base moves with
their PP, volatiles, transformed, lastMove, side conditions)}.

Failures are exceptions, never garbage or a hang: ShowdownCommandError (Showdown refused the
command, e.g. an illegal choice, with its message), ShowdownDied (the process exited: its exit
code and stderr), ShowdownProtocolError (a line that is not a response), ShowdownTimeout. After
any of the last three the process is gone; `restart()` (or the next call, with auto_restart=True)
starts a fresh one, and battles of the old one are lost.
"""

from __future__ import annotations

import collections
import hashlib
import json
import os
import queue
import shutil
import subprocess
import threading
from pathlib import Path
from typing import Any, Sequence

from shared.cache import cache_dir, file_lock

HERE = Path(__file__).resolve().parent
DRIVER = HERE / "showdown_driver.js"
PACKAGE_FILES = ("package.json", "package-lock.json")
NPM_CI_ARGS = ["ci", "--omit=optional", "--ignore-scripts", "--no-audit", "--no-fund"]
STDERR_TAIL_LINES = 40
DEFAULT_TIMEOUT_S = 120.0
PIPE_DRAIN_TIMEOUT_S = 2.0  # for the pump threads to read a closed pipe's last lines
_TOOL_DIRS = ("/usr/bin", "/usr/local/bin")
_INSTALL_HELP = "install Node.js 18 or newer with npm (e.g. apt-get install nodejs npm)"


class ShowdownError(RuntimeError):
    """Something went wrong talking to Pokemon Showdown."""


class ShowdownInstallError(ShowdownError):
    """Node or npm is missing, or `npm ci` failed."""


class ShowdownCommandError(ShowdownError):
    """Showdown refused a command (an illegal choice, an unknown battle); the process lives on."""

    def __init__(self, command: str, message: str, stack: str | None = None):
        super().__init__(f"Showdown refused {command}: {message}")
        self.command = command
        self.message = message
        self.stack = stack


class ShowdownDied(ShowdownError):
    """The Node process exited."""


class ShowdownProtocolError(ShowdownError):
    """The Node process wrote a line that is not a response to the request sent."""


class ShowdownTimeout(ShowdownError):
    """No answer within the timeout; the process was killed."""


def find_tool(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    for directory in _TOOL_DIRS:
        candidate = Path(directory, name)
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return None


def package_key() -> str:
    digest = hashlib.sha256()
    for name in PACKAGE_FILES:
        digest.update(name.encode())
        digest.update((HERE / name).read_bytes())
    return digest.hexdigest()[:16]


def pinned_version() -> str:
    return json.loads((HERE / "package.json").read_text())["dependencies"]["pokemon-showdown"]


def install_dir() -> Path:
    """node_modules of the pinned package, installed with `npm ci` on first use."""
    target = cache_dir("pokejax", f"showdown-{package_key()}")
    marker = target / ".installed"
    if marker.exists():
        return target / "node_modules"
    npm = find_tool("npm")
    if npm is None or find_tool("node") is None:
        raise ShowdownInstallError(f"node and npm are needed to run Pokemon Showdown: {_INSTALL_HELP}")
    with file_lock(target / ".lock"):
        if marker.exists():
            return target / "node_modules"
        for name in PACKAGE_FILES:
            shutil.copyfile(HERE / name, target / name)
        env = dict(os.environ)
        env["PATH"] = os.pathsep.join([str(Path(npm).parent), env.get("PATH", os.defpath)])
        proc = subprocess.run([npm, *NPM_CI_ARGS], cwd=target, env=env, capture_output=True, text=True, timeout=1800)
        if proc.returncode != 0:
            tail = "\n".join((proc.stdout + proc.stderr).splitlines()[-STDERR_TAIL_LINES:])
            raise ShowdownInstallError(
                f"`npm {' '.join(NPM_CI_ARGS)}` failed in {target} (exit {proc.returncode}); "
                f"is the npm registry reachable?\n{tail}"
            )
        installed = json.loads((target / "node_modules/pokemon-showdown/package.json").read_text())
        if installed["version"] != pinned_version():
            raise ShowdownInstallError(
                f"npm installed pokemon-showdown {installed['version']}, not the pinned {pinned_version()}"
            )
        marker.write_text(installed["version"] + "\n")
    return target / "node_modules"


class Showdown:
    """One Node process running Showdown in-process; see the module docstring for the commands."""

    def __init__(self, timeout_s: float = DEFAULT_TIMEOUT_S, auto_restart: bool = False, driver: Path = DRIVER):
        self.timeout_s = timeout_s
        self.driver = Path(driver)
        self.auto_restart = auto_restart
        self._node_modules = install_dir()
        self._node = find_tool("node")
        if self._node is None:
            raise ShowdownInstallError(f"node not found: {_INSTALL_HELP}")
        self._proc: subprocess.Popen[str] | None = None
        self._next_id = 1
        self.start_process()

    # -- process ----------------------------------------------------------------------------------

    def start_process(self) -> None:
        env = dict(os.environ)
        env["NODE_PATH"] = str(self._node_modules)
        self._proc = subprocess.Popen(
            [self._node, str(self.driver)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            env=env,
            bufsize=1,
        )
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._stderr: collections.deque[str] = collections.deque(maxlen=STDERR_TAIL_LINES)
        self._stdout_thread = threading.Thread(target=self._pump_stdout, args=(self._proc, self._lines), daemon=True)
        self._stdout_thread.start()
        self._stderr_thread = threading.Thread(target=self._pump_stderr, args=(self._proc, self._stderr), daemon=True)
        self._stderr_thread.start()
        ready = self._read_response(0, "startup")
        if not ready.get("ready"):
            self._kill()
            raise ShowdownProtocolError(f"unexpected first line from the driver: {ready!r}")

    @staticmethod
    def _pump_stdout(proc: subprocess.Popen[str], lines: queue.Queue[str | None]) -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put(line)
        lines.put(None)

    @staticmethod
    def _pump_stderr(proc: subprocess.Popen[str], tail: collections.deque[str]) -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            tail.append(line.rstrip("\n"))

    @property
    def alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def stderr_tail(self) -> str:
        return "\n".join(self._stderr) if self._proc is not None else ""

    def _kill(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            self._proc.kill()
            self._proc.wait()

    def restart(self) -> None:
        self.close()
        self.start_process()

    def close(self) -> None:
        if self._proc is None:
            return
        if self._proc.poll() is None:
            try:
                assert self._proc.stdin is not None
                self._proc.stdin.close()
                self._proc.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                self._kill()
        self._close_pipes()
        self._proc = None

    def _close_pipes(self) -> None:
        """Closes the ended process's pipes (left open, each is a ResourceWarning when collected). A pump
        thread reaches the end of its pipe once the process has ended; a pipe whose thread is still
        reading (something else holding it open) is left to it rather than closed under it."""
        assert self._proc is not None
        pipes = ((self._proc.stdin, None), (self._proc.stdout, self._stdout_thread),
                 (self._proc.stderr, self._stderr_thread))
        for pipe, reader in pipes:
            if reader is not None:
                reader.join(timeout=PIPE_DRAIN_TIMEOUT_S)
            if pipe is not None and (reader is None or not reader.is_alive()):
                try:
                    pipe.close()
                except OSError:  # stdin's last flush into a process that is gone
                    pass

    def __enter__(self) -> Showdown:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self._kill()
            if self._proc is not None:
                self._close_pipes()
        except Exception:  # interpreter shutdown: nothing left to clean up
            pass

    # -- protocol ---------------------------------------------------------------------------------

    def _died(self, what: str) -> ShowdownDied:
        assert self._proc is not None
        try:
            code = self._proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self._kill()
            code = self._proc.returncode
        self._stderr_thread.join(timeout=2)  # its last lines say why
        return ShowdownDied(
            f"the Showdown process (pid {self._proc.pid}) exited with code {code} during {what}; "
            f"stderr:\n{self.stderr_tail() or '(empty)'}"
        )

    def _read_response(self, request_id: int, what: str) -> dict[str, Any]:
        try:
            line = self._lines.get(timeout=self.timeout_s)
        except queue.Empty:
            self._kill()
            raise ShowdownTimeout(
                f"no answer from Showdown within {self.timeout_s:.0f} s to {what}; the process was "
                f"killed. stderr:\n{self.stderr_tail() or '(empty)'}"
            ) from None
        if line is None:
            raise self._died(what)
        try:
            response = json.loads(line)
        except json.JSONDecodeError:
            self._kill()
            raise ShowdownProtocolError(
                f"Showdown answered {what} with a line that is not JSON: {line[:500]!r}; the process "
                f"was killed. stderr:\n{self.stderr_tail() or '(empty)'}"
            ) from None
        if not isinstance(response, dict) or response.get("id") != request_id or "ok" not in response:
            self._kill()
            raise ShowdownProtocolError(
                f"Showdown answered {what} (request {request_id}) with {line[:500]!r}; the process " "was killed"
            )
        if not response["ok"]:
            raise ShowdownCommandError(what, response.get("error", "?"), response.get("stack"))
        return response["result"]

    def call(self, cmd: str, **args: Any) -> Any:
        """Send one command and wait for its result."""
        if not self.alive:
            if not self.auto_restart and self._proc is not None:
                raise self._died(f"`{cmd}` (it had already exited)")
            self.start_process()
        assert self._proc is not None and self._proc.stdin is not None
        request_id = self._next_id
        self._next_id += 1
        try:
            self._proc.stdin.write(json.dumps({"id": request_id, "cmd": cmd, **args}) + "\n")
            self._proc.stdin.flush()
        except (BrokenPipeError, OSError):
            raise self._died(f"`{cmd}`") from None
        return self._read_response(request_id, f"`{cmd}`")

    # -- commands ---------------------------------------------------------------------------------

    def version(self) -> dict[str, str]:
        return self.call("version")

    def prng(self, seed: str, draws: Sequence[Sequence[int]]) -> tuple[list[int], str]:
        result = self.call("prng", seed=seed, draws=[list(d) for d in draws])
        return result["values"], result["seed"]

    def start(
        self,
        name: str,
        format: str,
        seed: str,
        p1: dict[str, Any] | None = None,
        p2: dict[str, Any] | None = None,
        trace: bool = False,
    ) -> dict[str, Any]:
        return self.call("start", battle=name, format=format, seed=seed, p1=p1 or {}, p2=p2 or {}, trace=trace)

    def choose(self, name: str, p1: str = "", p2: str = "", state: bool = True) -> dict[str, Any]:
        return self.call("choose", battle=name, p1=p1, p2=p2, state=state)

    def state(self, name: str, full: bool = False) -> dict[str, Any]:
        return self.call("state", battle=name, full=full)

    def end(self, name: str) -> None:
        self.call("end", battle=name)

    def generate_team(self, format: str, seed: str) -> list[dict[str, Any]]:
        return self.call("generate_team", format=format, seed=seed)["team"]

    def play_random(
        self, format: str, battles: int, seed: str, teams: Sequence[Sequence[Any]] | None = None
    ) -> dict[str, Any]:
        return self.call("play_random", format=format, battles=battles, seed=seed, teams=teams)

    def gen1_data(self) -> dict[str, Any]:
        return self.call("gen1_data")

    def make_pokemon(self, sets: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        return self.call("make_pokemon", sets=list(sets))

    def gen1_boost(self, cases: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        """Showdown's Gen 1 battle.boost on a scratch Pokemon, for each case's `stored`, `modified`
        and `boosts` dicts and the `boost` to apply: the success, the stages and modified stats after."""
        return self.call("gen1_boost", cases=list(cases))

    def gen1_random_battle_data(self) -> dict[str, Any]:
        return self.call("gen1_random_battle_data")

    def generate_team_prng(self, format: str, seed: str) -> tuple[list[dict[str, Any]], str]:
        result = self.call("generate_team_prng", format=format, seed=seed)
        return result["team"], result["seed"]


def main() -> None:
    with Showdown() as showdown:
        print(json.dumps(showdown.version()))


if __name__ == "__main__":
    main()
