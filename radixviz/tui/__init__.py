"""The Textual app: a home screen, the stepper (sandbox and lessons), help and exports.

Nothing here imports torch at module import: the engine is loaded in a worker thread so
the first screen paints while torch is still importing.
"""
