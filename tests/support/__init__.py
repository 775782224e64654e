"""What the tests share: oracles, strategies, vector readers, servers, the environment's needs."""
