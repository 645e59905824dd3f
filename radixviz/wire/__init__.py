"""The KV-event wire: SGLang's ZeroMQ stream of cache events, spoken and heard.

``messages`` encodes and decodes the three-frame messages (msgspec structs in SGLang's
shape at 9fbe6800a); ``blocks`` rebuilds the block tree a stream describes; ``publisher``
sends an engine's events with a replay socket; ``subscriber`` listens, finds gaps and asks
for them again; ``recording`` writes and reads the raw frames. No Rich, no Textual.
"""
