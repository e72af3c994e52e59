"""TCGJax's backends for shared.ppo.breakdown: the PPO its bench times (random legal decks, the agent
against a random opponent, logits masked by the observation's legal-action mask)."""


def _ppo_config() -> dict:
    from .reference.observation import MASK_SLICE

    return {"action_mask": MASK_SLICE}


def jax_backend() -> dict:
    from shared.ppo.jax_loop import JaxEnvSpec

    from .jax.env import TcgJaxEnv
    from .reference.observation import OBS_SIZE

    env = TcgJaxEnv(bank="random")
    spec = JaxEnvSpec("tcgjax", env.reset, env.step, env.default_params, (OBS_SIZE,), env.num_actions,
                      step_batch=env.step_batch)
    return {"jax_env": spec, "ppo_config": _ppo_config()}


def reference_backend() -> dict:
    import gymnasium

    from .gym_envs import TcgReferenceEnv

    return {"make_vector_env": lambda num_envs: gymnasium.vector.SyncVectorEnv(
        [lambda: TcgReferenceEnv(decks="random") for _ in range(num_envs)],
        autoreset_mode=gymnasium.vector.AutoresetMode.SAME_STEP), "ppo_config": _ppo_config()}
