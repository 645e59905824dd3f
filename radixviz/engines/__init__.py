"""The engines, one wing each: everything only one engine uses, under the same file names.

``unified/``: SGLang v0.5.23's unified radix tree (Full, sliding-window and Mamba components).
This package and each wing's ``__init__`` import nothing.
"""
