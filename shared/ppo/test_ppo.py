"""PPO's parts against values worked out by hand, and both loops on a tiny env."""

import dataclasses

import gymnasium
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from shared.ppo import PPOConfig, compute_gae, make_train, train_host
from shared.ppo.core import Transition, make_network
from shared.ppo.jax_loop import JaxEnvSpec
from shared.ppo.networks import PRESETS, ActorCritic, entropy, log_prob, parameter_count


def test_defaults_match_the_issue():
    config = PPOConfig()
    assert (config.learning_rate, config.clip_eps, config.update_epochs, config.gae_lambda, config.gamma) == \
        (2.5e-4, 0.2, 4, 0.95, 0.99)


@pytest.mark.parametrize("preset, target", [("2M", 2e6), ("20M", 20e6), ("200M", 200e6)])
def test_presets_have_their_size(preset, target):
    network = ActorCritic(num_actions=3, hidden=PRESETS[preset])
    shapes = jax.eval_shape(network.init, jax.random.PRNGKey(0), jnp.zeros(8))  # no 200M allocation
    assert abs(parameter_count(shapes) - target) / target < 0.05


def test_gae_by_hand():
    # one env, three steps, episode ends at step 1: gamma 0.5, lambda 0.5
    config = PPOConfig(gamma=0.5, gae_lambda=0.5, num_envs=1, num_steps=3, num_minibatches=1)
    rewards = jnp.asarray([[1.0], [2.0], [3.0]])
    values = jnp.asarray([[0.5], [1.0], [2.0]])
    dones = jnp.asarray([[False], [True], [False]])
    transitions = Transition(done=dones, action=jnp.zeros((3, 1), jnp.int32), value=values, reward=rewards,
                             log_prob=jnp.zeros((3, 1)), obs=jnp.zeros((3, 1, 1)))
    advantages, targets = compute_gae(transitions, jnp.asarray([4.0]), config)
    delta2 = 3.0 + 0.5 * 4.0 - 2.0        # 3.0
    delta1 = 2.0 - 1.0                    # done: no bootstrap -> 1.0
    delta0 = 1.0 + 0.5 * 1.0 - 0.5        # 1.0
    expected = [delta0 + 0.25 * delta1, delta1, delta2]
    np.testing.assert_allclose(np.asarray(advantages)[:, 0], expected, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(targets)[:, 0], np.asarray(expected) + [0.5, 1.0, 2.0], rtol=1e-6)


def test_log_prob_and_entropy_by_hand():
    logits = jnp.log(jnp.asarray([[0.5, 0.25, 0.25]]))
    assert float(log_prob(logits, jnp.asarray([1]))[0]) == pytest.approx(np.log(0.25), rel=1e-6)
    assert float(entropy(logits)[0]) == pytest.approx(-(0.5 * np.log(0.5) + 2 * 0.25 * np.log(0.25)), rel=1e-6)


# A one-step bandit as a gymnax-style env: action 1 pays 1, action 0 pays 0; every step ends.
def _bandit_reset(key, params):
    return jnp.zeros(2), jnp.int32(0)


def _bandit_step(key, state, action, params):
    return jnp.zeros(2), state, (action == 1).astype(jnp.float32), jnp.bool_(True), {}


BANDIT = JaxEnvSpec("bandit", _bandit_reset, _bandit_step, None, (2,), 2)


def test_make_train_learns_a_bandit_and_reports_progress():
    config = PPOConfig(total_timesteps=16 * 16 * 30, num_envs=16, num_steps=16, learning_rate=1e-2, ent_coef=0.0)
    seen = []
    train = jax.jit(make_train(config, BANDIT, progress=lambda i, r: seen.append(float(r))))
    out = jax.block_until_ready(train(jax.random.PRNGKey(0)))
    returns = np.asarray(out["metrics"]["episode_return"])
    # the first update's episodes come from the untrained policy (about half right)
    assert returns.shape == (30,) and returns[0] < 0.7 and returns[-3:].mean() > 0.95
    assert len(seen) == 30


def test_make_train_steps_the_batch_through_step_batch_when_given():
    """An env's step_batch replaces vmap(step): here the batched bandit pays for action 0 instead, so
    training learns action 0 only if make_train called it (and the per-env step is never traced)."""

    def step_never(key, state, action, params):
        raise AssertionError("make_train traced the per-env step although step_batch was given")

    def step_batch(keys, states, actions, params):
        batch = actions.shape[0]
        return jnp.zeros((batch, 2)), states, (actions == 0).astype(jnp.float32), jnp.ones(batch, bool), {}

    config = PPOConfig(total_timesteps=16 * 16 * 30, num_envs=16, num_steps=16, learning_rate=1e-2, ent_coef=0.0)
    spec = JaxEnvSpec("bandit, batched", _bandit_reset, step_never, None, (2,), 2, step_batch=step_batch)
    out = jax.block_until_ready(jax.jit(make_train(config, spec))(jax.random.PRNGKey(0)))
    assert np.asarray(out["metrics"]["episode_return"])[-3:].mean() > 0.95


def test_host_loop_uses_the_same_network_and_learns_the_bandit():
    import gymnasium

    class BanditVector(gymnasium.vector.VectorEnv):
        metadata = {"autoreset_mode": gymnasium.vector.AutoresetMode.SAME_STEP}

        def __init__(self, n):
            self.num_envs = n
            self.single_observation_space = gymnasium.spaces.Box(0, 1, (2,), np.float32)
            self.single_action_space = gymnasium.spaces.Discrete(2)

        def reset(self, *, seed=None, options=None):
            return np.zeros((self.num_envs, 2), np.float32), {}

        def step(self, actions):
            rewards = (np.asarray(actions) == 1).astype(np.float32)
            ones = np.ones(self.num_envs, bool)
            return np.zeros((self.num_envs, 2), np.float32), rewards, ones, ~ones, {}

    config = PPOConfig(total_timesteps=16 * 16 * 30, num_envs=16, num_steps=16, learning_rate=1e-2, ent_coef=0.0)
    _, metrics, times = train_host(config, BanditVector(16), show_progress=False)
    assert metrics["episode_return"][-3:].mean() > 0.95
    assert len(times.per_update) == 30 and all(p["backward"] > 0 for p in times.phases_per_update)
    assert make_network(config, 2).hidden == PRESETS["small"]


def test_host_loop_rejects_a_mismatched_env():
    import gymnasium

    from envs.pong.gym_envs import CPongVectorEnv

    with pytest.raises(ValueError, match="num_envs"):
        train_host(dataclasses.replace(PPOConfig(), num_envs=8), CPongVectorEnv(4), show_progress=False)
    assert gymnasium  # imported for the env classes above


@pytest.mark.parametrize("fields, error, message", [
    ({"num_envs": 0}, ValueError, "num_envs must be >= 1, got 0"),
    ({"num_steps": 0}, ValueError, "num_steps must be >= 1"),
    ({"num_minibatches": 0}, ValueError, "num_minibatches must be >= 1"),
    ({"update_epochs": 0}, ValueError, "update_epochs must be >= 1"),
    ({"num_envs": -4}, ValueError, "num_envs must be >= 1"),
    ({"num_envs": 2.5}, TypeError, "num_envs must be an int"),
    ({"num_envs": True}, TypeError, "num_envs must be an int"),
    ({"gamma": 1.5}, ValueError, r"gamma must be in \[0, 1\]"),
    ({"gae_lambda": -0.1}, ValueError, r"gae_lambda must be in \[0, 1\]"),
    ({"clip_eps": -0.2}, ValueError, r"clip_eps must be in \(0, inf\)"),
    ({"learning_rate": -1.0}, ValueError, "learning_rate must be in"),
    ({"learning_rate": float("nan")}, ValueError, "learning_rate must be in"),
    ({"max_grad_norm": 0.0}, ValueError, "max_grad_norm must be in"),
    ({"ent_coef": "0.01"}, TypeError, "ent_coef must be a number"),
    ({"activation": "gelu"}, ValueError, r"activation must be one of \['relu', 'tanh'\]"),
    ({"network": "3M"}, ValueError, "unknown network preset '3M'"),
    ({"network": (64, -3)}, ValueError, "widths must be one or more whole numbers >= 1"),
    ({"network": ()}, ValueError, "widths must be one or more"),
    ({"network": 64}, TypeError, "preset name"),
    ({"total_timesteps": 10}, ValueError, r"total_timesteps \(10\) is less than one rollout"),
])
def test_a_config_that_cannot_train_is_refused_when_made(fields, error, message):
    with pytest.raises(error, match=message):
        PPOConfig(**fields)


def test_relu_is_not_silently_tanh():
    obs = jnp.linspace(-2.0, 2.0, 8).reshape(2, 4)
    tanh, relu = (make_network(PPOConfig(activation=name), 3) for name in ("tanh", "relu"))
    params = tanh.init(jax.random.PRNGKey(0), obs)
    assert not np.allclose(tanh.apply(params, obs)[1], relu.apply(params, obs)[1])


def test_host_loop_refuses_a_next_step_vector_env_and_says_how_to_ask_for_same_step():
    def make():
        return gymnasium.make("CartPole-v1")

    config = PPOConfig(num_envs=2, num_steps=8, total_timesteps=16, num_minibatches=2)
    next_step = gymnasium.vector.SyncVectorEnv([make, make])  # Gymnasium's default
    with pytest.raises(ValueError, match=r"auto-resets in the same step.*AutoresetMode.NEXT_STEP.*autoreset_mode="):
        train_host(config, next_step, show_progress=False)
    same_step = gymnasium.vector.SyncVectorEnv([make, make], autoreset_mode=gymnasium.vector.AutoresetMode.SAME_STEP)
    _, metrics, _ = train_host(config, same_step, show_progress=False)
    assert metrics["loss"].shape == (1,) and np.isfinite(metrics["loss"]).all()


def test_make_train_names_continuous_actions_that_a_discrete_env_cannot_take():
    from envs.pong.ppo_backends import jax_backend

    config = PPOConfig(continuous=True, num_envs=2, num_steps=4, total_timesteps=8, num_minibatches=1)
    with pytest.raises(ValueError, match=r"step failed on the policy's actions.*continuous=True match"):
        jax.jit(make_train(config, jax_backend()["jax_env"])).lower(jax.random.PRNGKey(0))


def test_breakdown_checks_every_size_and_preset_before_measuring(capsys):
    from shared.ppo import breakdown

    for argv, message in ((["--num-envs", "0"], "num_envs must be >= 1"),
                          (["--num-steps", "-1"], "num_steps must be >= 1"),
                          (["--networks", "small,3M"], "unknown network preset '3M'"),
                          (["--num-envs", "3", "--num-steps", "5"], "must divide into 4 minibatches")):
        with pytest.raises(SystemExit) as exited:
            breakdown.main(["--env", "pong", *argv])
        assert exited.value.code == 2 and message in capsys.readouterr().err


def test_breakdown_times_every_phase_of_both_pong_backends(tmp_path):
    import json

    from shared.ppo import breakdown

    out = tmp_path / "pong"
    assert breakdown.main(["--env", "pong", "--networks", "small", "--num-envs", "4", "--num-steps", "8",
                           "--out", str(out)]) == 0
    rows = json.loads(out.with_suffix(".json").read_text())
    assert {r["backend"] for r in rows} == {"jax", "c"}
    for row in rows:
        assert row["env_step"] > 0 and row["forward"] > 0 and row["backward"] > 0
        assert row["transfer"] == 0 if row["backend"] == "jax" else row["transfer"] > 0
        assert abs(row["total"] - sum(row[p] for p in breakdown.PHASES)) < 1e-9
    assert out.with_suffix(".png").read_bytes()[:4] == b"\x89PNG"


def test_breakdown_times_continuous_actions_on_both_halfcheetah_backends(tmp_path):
    """A backend's ppo_config reaches the PPO it times: HalfCheetah's continuous actions on the JAX env
    (random Gaussian actions in the timed rollout) and on MuJoCo through the host loop."""
    import json

    from shared.ppo import breakdown

    out = tmp_path / "halfcheetah"
    assert breakdown.main(["--env", "halfcheetah", "--networks", "small", "--num-envs", "2", "--num-steps", "8",
                           "--out", str(out)]) == 0
    rows = json.loads(out.with_suffix(".json").read_text())
    assert {r["backend"] for r in rows} == {"jax", "mujoco"}
    assert all(row["env_step"] > 0 and row["backward"] > 0 for row in rows)


def test_every_registered_breakdown_backend_names_a_well_formed_spec():
    """Every env of the repository registers its backends; each loads (envs are built, nothing is
    stepped) and gives a JAX env spec or a vector env maker, with PPOConfig fields that exist."""
    from shared.ppo import breakdown

    assert set(breakdown.REGISTRY) == {"pong", "halfcheetah", "emurust", "pokejax", "tcgjax"}
    fields = {f.name for f in dataclasses.fields(PPOConfig)}
    for env, backends in breakdown.REGISTRY.items():
        assert len(backends) == 2, env  # the translation and its reference
        for backend, path in backends.items():
            spec = breakdown._load(path)
            assert ("jax_env" in spec) != ("make_vector_env" in spec), (env, backend)
            assert "jax_env" not in spec or isinstance(spec["jax_env"], JaxEnvSpec), (env, backend)
            assert "make_vector_env" not in spec or callable(spec["make_vector_env"]), (env, backend)
            assert set(spec.get("ppo_config", {})) <= fields, (env, backend)


def test_breakdown_list_imports_every_backend_and_reports_one_that_fails(monkeypatch, capsys):
    """`--list` (CI runs it through the Pants target, whose requirements are only what its targets name)
    exits 0 with every registration importable, and 1 naming the one whose module cannot be imported."""
    from shared.ppo import breakdown

    assert breakdown.main(["--list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == sum(len(backends) for backends in breakdown.REGISTRY.values())
    assert all(line.endswith(" ok") for line in lines)

    registry = {**breakdown.REGISTRY, "pong": {**breakdown.REGISTRY["pong"], "gone": "envs.pong.no_such_module:backend"}}
    monkeypatch.setattr(breakdown, "REGISTRY", registry)
    assert breakdown.main(["--list"]) == 1
    failed = [line for line in capsys.readouterr().out.splitlines() if not line.endswith(" ok")]
    assert len(failed) == 1 and "gone" in failed[0] and "ModuleNotFoundError" in failed[0]


def test_gaussian_log_prob_and_entropy_against_scipy():
    from scipy.stats import norm

    from shared.ppo.networks import gaussian_entropy, gaussian_log_prob

    mean, log_std = np.array([0.3, -1.0]), np.array([-0.5, 0.2])
    dist = jnp.asarray(np.concatenate([mean, log_std]))
    action = np.array([0.1, 0.4])
    expected = norm.logpdf(action, mean, np.exp(log_std)).sum()
    assert abs(float(gaussian_log_prob(dist, jnp.asarray(action))) - expected) < 1e-5
    assert abs(float(gaussian_entropy(dist)) - norm.entropy(mean, np.exp(log_std)).sum()) < 1e-5


def _target_env():
    """One step per episode, reward -(a - 0.5)^2 per dimension: the mean must move to 0.5."""

    def reset(key, params):
        return jnp.zeros(2), jnp.zeros(())

    def step(key, state, action, params):
        reward = -jnp.sum(jnp.square(action - 0.5))
        return jnp.zeros(2), state, reward, jnp.array(True), {}

    return JaxEnvSpec("target", reset, step, None, (2,), 2)


def test_continuous_ppo_learns_a_target_action():
    config = PPOConfig(total_timesteps=40_960, num_envs=64, num_steps=16, learning_rate=3e-3, continuous=True,
                       num_minibatches=4, ent_coef=0.0)
    out = jax.jit(make_train(config, _target_env()))(jax.random.PRNGKey(0))
    returns = np.asarray(out["metrics"]["episode_return"])
    assert returns[-5:].mean() > returns[:5].mean() + 0.3, (returns[:5], returns[-5:])
    network = make_network(config, 2)
    mean = np.asarray(network.apply(out["train_state"].params, jnp.zeros(2))[0][:2])
    assert np.all(np.abs(mean - 0.5) < 0.15), mean


def test_an_action_mask_in_the_observation_gives_illegal_actions_probability_zero():
    from shared.ppo.networks import sample_action

    config = PPOConfig(action_mask=(1, 4))
    network = make_network(config, 3)
    params = network.init(jax.random.PRNGKey(0), jnp.zeros(5))
    # observation: [feature, mask of 3 actions, feature]; action 1 illegal in the first, 0 and 2 in the second
    obs = jnp.asarray([[0.3, 1.0, 0.0, 1.0, 0.7], [0.3, 0.0, 1.0, 0.0, 0.7]])
    logits, _ = network.apply(params, obs)
    probabilities = np.asarray(jax.nn.softmax(logits))
    assert probabilities[0, 1] == 0.0 and probabilities[1, 0] == 0.0 and probabilities[1, 2] == 0.0
    assert probabilities[1, 1] == pytest.approx(1.0)
    assert float(entropy(logits)[1]) == pytest.approx(0.0, abs=1e-6)  # one legal action: no entropy
    actions = np.asarray(jax.vmap(lambda k: sample_action(k, logits)[0])(jax.random.split(jax.random.PRNGKey(1), 500)))
    assert set(actions[:, 0].tolist()) == {0, 2} and set(actions[:, 1].tolist()) == {1}
    # the unmasked network gives the same weights every action probability
    unmasked = make_network(PPOConfig(), 3).apply(params, obs)[0]
    assert np.all(np.asarray(jax.nn.softmax(unmasked)) > 0.0)


def test_an_action_mask_that_does_not_fit_is_refused():
    with pytest.raises(ValueError, match="covers 2 observation entries but the env has 3 actions"):
        make_network(PPOConfig(action_mask=(0, 2)), 3)
    with pytest.raises(ValueError, match="discrete"):
        PPOConfig(action_mask=(0, 2), continuous=True)
    with pytest.raises(ValueError, match="reaches past the observation"):
        train_host(PPOConfig(action_mask=(1, 3), num_envs=2, num_steps=2, num_minibatches=1), _TwoStateVector(2),
                   show_progress=False)


class _TwoStateVector:
    """A Gymnasium-like vector env of one-step episodes whose observation is only its action mask:
    [1, 0] (only action 0 legal) or [0, 1], alternating per step and per env; a legal action pays
    1, an illegal one fails the test on the spot."""

    metadata = {"autoreset_mode": gymnasium.vector.AutoresetMode.SAME_STEP}

    def __init__(self, n):
        import gymnasium

        self.num_envs = n
        self.single_observation_space = gymnasium.spaces.Box(0, 1, (2,), np.float32)
        self.single_action_space = gymnasium.spaces.Discrete(2)
        self._flip = 0

    def _obs(self):
        obs = np.zeros((self.num_envs, 2), np.float32)
        obs[np.arange(self.num_envs), (np.arange(self.num_envs) + self._flip) % 2] = 1.0
        return obs

    def reset(self, *, seed=None, options=None):
        self._flip = 0
        return self._obs(), {}

    def step(self, actions):
        legal = self._obs()[np.arange(self.num_envs), np.asarray(actions)] > 0.5
        assert legal.all(), "the masked policy chose an illegal action"
        self._flip ^= 1
        ones = np.ones(self.num_envs, bool)
        return self._obs(), np.ones(self.num_envs, np.float32), ones, ~ones, {}


def test_both_loops_never_choose_a_masked_action():
    config = PPOConfig(total_timesteps=8 * 8 * 4, num_envs=8, num_steps=8, num_minibatches=2, action_mask=(0, 2))
    _, metrics, _ = train_host(config, _TwoStateVector(8), show_progress=False)  # the env asserts legality
    assert np.all(metrics["episode_return"] == 1.0)

    def reset(key, params):
        return jnp.asarray([1.0, 0.0]), jnp.int32(0)

    def step(key, state, action, params):
        legal = jnp.where(state == 0, action == 0, action == 1)
        next_state = 1 - state
        obs = jnp.where(next_state == 0, jnp.asarray([1.0, 0.0]), jnp.asarray([0.0, 1.0]))
        return obs, next_state, jnp.where(legal, 1.0, -10.0), jnp.bool_(True), {}

    out = jax.jit(make_train(config, JaxEnvSpec("masked", reset, step, None, (2,), 2)))(jax.random.PRNGKey(0))
    assert np.all(np.asarray(out["metrics"]["episode_return"]) == 1.0)


# A guessing game whose starts come from the reset key: the target (0 or 1) is drawn at reset and
# shown; guessing it pays 1; after 3 guesses the episode ends and the next target follows from the
# last one and the last guess (no step key, so a host VectorEnv can replay it without keys).
def _guess_reset(key, params):
    target = jax.random.bernoulli(key).astype(jnp.int32)
    return jax.nn.one_hot(target, 2), (target, jnp.int32(0))


def _guess_step(key, state, action, params):
    target, t = state
    done = t == 2
    next_target = jnp.where(done, (target + action + 1) % 2, target)
    next_t = jnp.where(done, 0, t + 1)
    return jax.nn.one_hot(next_target, 2), (next_target, next_t), (action == target).astype(jnp.float32), done, {}


class GuessVector(gymnasium.vector.VectorEnv):
    """The guessing game as a host VectorEnv: starts from options['keys'] (or from the seed)."""

    metadata = {"autoreset_mode": gymnasium.vector.AutoresetMode.SAME_STEP}

    def __init__(self, n, use_options=True):
        self.num_envs, self.use_options = n, use_options
        self.single_observation_space = gymnasium.spaces.Box(0, 1, (2,), np.float32)
        self.single_action_space = gymnasium.spaces.Discrete(2)
        self._step = jax.jit(jax.vmap(lambda s, a: _guess_step(None, s, a, None)))

    def reset(self, *, seed=None, options=None):
        keys = options["keys"] if self.use_options else jax.random.split(jax.random.PRNGKey(seed), self.num_envs)
        obs, self.state = jax.vmap(_guess_reset, in_axes=(0, None))(keys, None)
        return np.asarray(obs), {}

    def step(self, actions):
        obs, self.state, reward, done, _ = self._step(self.state, jnp.asarray(actions))
        return np.asarray(obs), np.asarray(reward), np.asarray(done), np.zeros(self.num_envs, bool), {}


def test_the_host_loop_trains_what_make_train_trains_from_the_same_starts():
    """Same seed, same env, same starts: both loops draw the same keys in the same order, so the
    trained parameters are equal bit for bit (what lets L4 pair a seed's runs on two backends)."""
    config = PPOConfig(total_timesteps=8 * 16 * 3, num_envs=8, num_steps=16, num_minibatches=2, learning_rate=1e-2)
    spec = JaxEnvSpec("guess", _guess_reset, _guess_step, None, (2,), 2)
    fused = jax.jit(make_train(config, spec))(jax.random.PRNGKey(config.seed))["train_state"].params

    def host(vector):
        options = lambda reset_key: {"keys": jax.random.split(reset_key, config.num_envs)}  # noqa: E731
        return train_host(config, vector, show_progress=False, reset_options=options)[0].params

    def equal(a, b):
        return all(np.array_equal(x, y) for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b), strict=True))

    assert equal(host(GuessVector(8)), fused)
    assert not equal(host(GuessVector(8, use_options=False)), fused)  # other starts, another training
