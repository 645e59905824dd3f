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
# the longest sequence a request may reach, as the release's default model config had it
CONTEXT_LEN = 1024
# a streamed trace's waiting queue, at most (--max-waiting): the queue is what a trace whose
# arrivals outpace the loop grows without bound; this many Mooncake-sized prompts (about 5,000
# tokens each, blocks shared) hold some 400 MB
MAX_WAITING = 10_000
# the optimum is counted by default for runs of up to this many requests (--optimum); past
# it, its tables and CPU grow with the trace's distinct content and it must be asked for
OPTIMUM_UP_TO = 5_000
