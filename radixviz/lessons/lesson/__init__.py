"""A lesson: its Markdown file read into blocks (``model``, ``parse``), the shipped and a
teacher's lessons found and loaded (``loader``), every operation and prediction checked on a
real session (``checker``, ``block_checks``), and a lesson read in plain text (``reader``).

The names callers use are re-exported by ``radixviz.lessons``.
"""
