"""L3 slow tier, part 3 of slow_games.PARTS (seeds 51,000-75,999): the reference against the JAX
engine after every action. All parts: ./pants --tag=slow test envs/tcgjax/tests:l3_slow"""

from envs.tcgjax.tests.slow_games import games_test

test_games_equal_reference = games_test(3)
