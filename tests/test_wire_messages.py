"""The wire's messages: SGLang's shapes (9fbe6800a) byte for byte, and bad frames as values."""
from __future__ import annotations

import msgspec

from radixviz.wire.messages import (END_SEQ, AllBlocksCleared, BlockRemoved, BlockStored, EventBatch,
                                    Message, WireError, decode_batch, decode_seq, encode_batch,
                                    encode_message, encode_seq, parse_message)


def test_a_batch_is_the_array_sglang_sends():
    batch = EventBatch(2.5, [AllBlocksCleared(), BlockStored([-7], None, [104, 105], 2, None, "GPU"),
                             BlockRemoved([-7], "GPU")], 0)
    assert msgspec.msgpack.decode(encode_batch(batch)) == [
        2.5, [["AllBlocksCleared"], ["BlockStored", [-7], None, [104, 105], 2, None, "GPU"],
              ["BlockRemoved", [-7], "GPU"]], 0]
    assert decode_batch(encode_batch(batch)) == batch


def test_a_none_is_sent_as_nil_and_a_short_array_still_reads():
    # msgspec keeps every field of an array-like struct (omit_defaults leaves arrays whole),
    # so SGLang's rank and medium are always on the wire; a shorter array takes the defaults
    raw = msgspec.msgpack.decode(encode_batch(EventBatch(1.0, [BlockRemoved([3])])))
    assert raw == [1.0, [["BlockRemoved", [3], None]], None]
    short = decode_batch(msgspec.msgpack.encode([1.0, [["BlockRemoved", [3]]]]))
    assert short == EventBatch(1.0, [BlockRemoved([3], None)], None)


def test_sequence_numbers_are_eight_bytes_big_endian_and_minus_one_ends_a_replay():
    assert encode_seq(258) == b"\0\0\0\0\0\0\x01\x02"
    assert decode_seq(encode_seq(2 ** 40)) == 2 ** 40
    assert encode_seq(END_SEQ) == b"\xff" * 8 and decode_seq(b"\xff" * 8) == END_SEQ
    assert isinstance(decode_seq(b"\x01"), WireError)


def test_a_message_round_trips():
    batch = EventBatch(0.0, [BlockStored([1, 2], 9, [1, 2, 3, 4], 2, 5, "CPU_PINNED")], 3)
    message = parse_message(encode_message(b"kv-events", 7, batch))
    assert message == Message(b"kv-events", 7, batch, "9fbe6800a")


BAD = {
    "truncated": encode_batch(EventBatch(1.0, [BlockStored([1], None, [1], 1, None)]))[:-2],
    "wrong type": msgspec.msgpack.encode([1.0, [["BlockStored", "x", None, [1], 1, None]]]),
    "unknown tag": msgspec.msgpack.encode([1.0, [["BlockMoved", [1]]]]),
    "not msgpack": b"\xc1\xc1\xc1",
    "a map": msgspec.msgpack.encode({"ts": 1.0}),
    "empty": b"",
}


def test_bad_payloads_are_one_line_errors_not_exceptions():
    for name, payload in BAD.items():
        error = decode_batch(payload)
        assert isinstance(error, WireError), name
        assert "\n" not in error.text and error.text, name


def test_bad_messages_are_errors():
    good = encode_batch(EventBatch(1.0, []))
    for frames in ([b"t", encode_seq(1)], [b"t", b"\0", good], [b"t", encode_seq(END_SEQ), good],
                   [b"t", encode_seq(1), good, b"extra"], [b"t", encode_seq(1), BAD["unknown tag"]]):
        assert isinstance(parse_message(frames), WireError)


def test_a_payload_past_the_limit_is_skipped_unread():
    error = decode_batch(b"\0" * 2048, max_bytes=1024)
    assert isinstance(error, WireError) and "limit" in error.text


def test_a_vllm_batch_is_read_as_sglangs():
    # vLLM (kv_events.py at 0181ea3): a map batch, events as maps tagged "type", hashes int or bytes
    payload = msgspec.msgpack.encode({"ts": 3.0, "data_parallel_rank": 1, "events": [
        {"type": "AllBlocksCleared"},
        {"type": "BlockStored", "block_hashes": [b"\x00" * 7 + b"\x05", 6], "parent_block_hash": None,
         "token_ids": [1, 2, 3, 4], "block_size": 2, "lora_id": None, "medium": "GPU", "lora_name": None,
         "extra_keys": [None, None], "group_idx": 0, "kv_cache_spec_kind": "full"},
        {"type": "BlockRemoved", "block_hashes": [6], "medium": "CPU", "group_idx": 0}]})
    batch = decode_batch(payload)
    assert (batch.ts, batch.events, batch.attn_dp_rank) == (3.0, [
        AllBlocksCleared(), BlockStored([5, 6], None, [1, 2, 3, 4], 2, None, "GPU"),
        BlockRemoved([6], "CPU")], 1)
    assert batch.wire == "vllm"
    bad = msgspec.msgpack.encode({"ts": 1.0, "events": [{"type": "BlockMoved"}]})
    assert isinstance(decode_batch(bad), WireError)
