"""The app in a web browser for a classroom (``radixviz serve``): a textual-serve server with a
session cap. It starts app processes; it imports neither the engine nor the app."""
