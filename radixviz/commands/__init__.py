"""Subcommands. Each module has ``register(subparsers)``; handlers import heavy modules lazily
so that ``radixviz --help`` and the app's first screen stay fast."""

# order is the order of ``radixviz --help``
COMMAND_MODULES = [
    "home",
    "sandbox",
    "lesson",
    "demo",
    "run",
    "export",
    "verify_kv",
    "publish",
    "watch",
    "simulate",
    "why_miss",
    "lessons",
    "quiz",
    "challenges",
    "progress",
    "serve",
]
