"""The cache in the loop that uses it: the scheduler simulation and the tiny KV model."""
