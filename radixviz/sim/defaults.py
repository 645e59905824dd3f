"""The settings a scheduler run starts from when nobody chose: one set for ``radixviz simulate``,
``simulate --app`` and the app's scheduler screen (w on the home screen), so the same run
gives the same numbers wherever it is started. Small enough for the screen, which keeps
every batch's tree and pool."""
WORKLOAD = "few-shot"
POLICY = "lpm"
REQUESTS = 32
POOL_SIZE = 1024
SEED = 0
# None: the release's request table (pool / context_len x 256 rows), which never limits;
# a number caps the requests running at once, a change from the release
MAX_RUNNING = None
# the most requests one run takes, named (--requests) or from a trace: beyond it a run takes
# minutes and gigabytes; the scheduler screen has its own, lower cap (radixviz.settings)
MAX_REQUESTS = 100_000
