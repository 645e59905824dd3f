"""radixviz: watch SGLang's first radix cache work, step by step."""
__version__ = "0.1.0"
