"""The same jobs without Pants: `nox -s tests`, `nox -s bench`, `nox -s lint`.

Each session makes its own venv with Python 3.11 and installs the requirements of the resolve that
Pants uses (3rdparty/python/*-requirements.txt). Slow tests (L4) are excluded as under Pants;
`nox -s tests -- -m slow` runs only them.
"""

import nox

nox.options.sessions = ["tests", "lint"]
nox.options.reuse_existing_virtualenvs = True
PYTHON = "3.11"
JAX_REQUIREMENTS = "3rdparty/python/jax-requirements.txt"
LINT_REQUIREMENTS = "3rdparty/python/lint-requirements.txt"
# every test Pants runs lies in one of these (tools/nox_check checks it)
TEST_PATHS = [
    "envs/pong", "envs/halfcheetah", "envs/emurust", "envs/pokejax", "envs/tcgjax", "envs/test_gym_ids.py", "shared", "tools",
]


@nox.session(python=PYTHON)
def tests(session: nox.Session) -> None:
    session.install("-r", JAX_REQUIREMENTS)
    args = session.posargs or ["-m", "not slow"]
    # one pytest process per path, as Pants runs them apart: a folder's conftest.py may set how JAX
    # compiles (envs/pokejax, envs/tcgjax), which must not reach the others' tests
    for path in TEST_PATHS:
        # (exit 5: no test of the path was selected, e.g. `-m slow` in shared/)
        session.run("python", "-m", "pytest", "-q", "-p", "no:cacheprovider", *args, path, success_codes=[0, 5])


@nox.session(python=PYTHON)
def bench(session: nox.Session) -> None:
    session.install("-r", JAX_REQUIREMENTS)
    session.run("python", "-m", "envs.pong.bench", *session.posargs)


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    session.install("-r", LINT_REQUIREMENTS)
    session.run("ruff", "check", ".")
