"""L3 slow tier, part 6 of slow_battles.PARTS (gen1randombattles 1,000-2,999): Showdown against the JAX engine,
equal after every decision. All parts: ./pants --tag=slow test envs/pokejax/tests:l3_slow"""

from envs.pokejax.tests.slow_battles import battles_test

test_battles_equal_showdown = battles_test(6)
