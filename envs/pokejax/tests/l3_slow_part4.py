"""L3 slow tier, part 4 of slow_battles.PARTS (custom games 7,000-8,999): Showdown against the JAX engine,
equal after every decision. All parts: ./pants --tag=slow test envs/pokejax/tests:l3_slow"""

from envs.pokejax.tests.slow_battles import battles_test

test_battles_equal_showdown = battles_test(4)
