"""PokeJAX's backends for shared.ppo.breakdown: the PPO its bench times (the agent as p1 against a random
opponent in gen1customgame battles, an illegal action a loss, no action mask)."""


def jax_backend() -> dict:
    from shared.ppo.jax_loop import JaxEnvSpec

    from .jax.env import EnvParams, PokeJaxEnv

    env = PokeJaxEnv("sodium")
    return {"jax_env": JaxEnvSpec("pokejax", env.reset, env.step, EnvParams(), env.observation_shape,
                                  env.num_actions)}


def showdown_backend() -> dict:
    """Showdown through its Gymnasium env, one Node process per env (mind --num-envs: ~200 MB each)."""
    import gymnasium  # the package's import registered the ids
    return {"make_vector_env": lambda num_envs: gymnasium.make_vec(
        "envport/PokeShowdown-v0", num_envs=num_envs, vectorization_mode="sync", illegal_action="lose",
        vector_kwargs={"autoreset_mode": gymnasium.vector.AutoresetMode.SAME_STEP})}
