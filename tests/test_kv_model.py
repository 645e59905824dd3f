"""The tiny model: reusing pooled K/V gives what a from-scratch run gives, from a seed."""
import pytest
import torch

from radixviz.cache import TokenToKVPool
from radixviz.sim.model_api import VOCAB_SIZE
from radixviz.sim.tiny_model import TinyModel, token_ids

TEXT = "Hello_L.A.!world"


def close(a, b, tol=1e-4):
    return bool(torch.allclose(a.cpu(), b.cpu(), atol=tol, rtol=tol))


def model_on(device="cpu", seed=0, size=64):
    return TinyModel(TokenToKVPool(size, device=device), seed=seed)


class TestTokens:
    def test_characters_are_their_code_points_and_ints_themselves(self):
        assert token_ids("Hi") == [72, 105]
        assert token_ids((12, 7, "a")) == [12, 7, 97]

    @pytest.mark.parametrize("bad", ["€", (256,), (-1,), (1.5,)])
    def test_tokens_outside_the_vocabulary_are_refused(self, bad):
        with pytest.raises(ValueError, match="vocabulary"):
            token_ids(bad)


class TestReuse:
    def test_extend_on_a_pooled_prefix_equals_from_scratch(self):
        model = model_on()
        ids = token_ids(TEXT)
        first = model.pool.alloc(6)
        model.extend(ids[:6], [], first)
        rest = model.pool.alloc(len(ids) - 6)
        token = model.extend(ids, first, rest)
        ref = model.from_scratch(ids)
        keys, values = model.gather(torch.cat([first, rest]))
        for layer in range(model.layers):
            assert close(keys[layer], ref.keys[layer])
            assert close(values[layer], ref.values[layer])
        assert close(model.last_logits, ref.logits)
        assert token == int(ref.logits.argmax())
        assert ref.logits.shape == (VOCAB_SIZE,)

    def test_decode_steps_continue_like_one_long_prefill(self):
        model = model_on()
        ids = token_ids("Hello")
        slots = model.pool.alloc(len(ids))
        nxt = model.extend(ids, [], slots)
        for _ in range(4):
            ids.append(nxt)
            new = model.pool.alloc(1)
            nxt = model.decode(ids, slots, int(new[0]))
            slots = torch.cat([slots, new])
        assert close(model.last_logits, model.from_scratch(ids).logits)

    def test_extend_writes_only_the_new_slots(self):
        model = model_on()
        prefix = model.pool.alloc(3)
        model.extend(token_ids("abc"), [], prefix)
        before = [b.clone() for b in model.pool.k_buffer]
        new = model.pool.alloc(2)
        model.extend(token_ids("abcde"), prefix, new)
        for layer, old in enumerate(before):
            changed = (model.pool.k_buffer[layer] != old).any(-1).any(-1).nonzero().flatten()
            assert changed.tolist() == new.tolist()

    def test_the_wrong_prefix_gives_different_numbers(self):
        model = model_on()
        a, b = model.pool.alloc(3), model.pool.alloc(3)
        model.extend(token_ids("abc"), [], a)
        model.extend(token_ids("xyz"), [], b)
        right = model.forward(token_ids("d"), *model.gather(a)).logits
        wrong = model.forward(token_ids("d"), *model.gather(b)).logits
        assert (right - wrong).abs().max() > 1e-2

    def test_extend_refuses_a_slot_count_that_does_not_fit(self):
        model = model_on()
        with pytest.raises(ValueError, match="one new slot per token"):
            model.extend(token_ids("abc"), [], [0, 1])


class TestSeed:
    def test_same_seed_same_outputs_whatever_the_global_rng(self):
        torch.manual_seed(1)
        one = model_on(seed=7).from_scratch(token_ids(TEXT))
        torch.manual_seed(2)
        two = model_on(seed=7).from_scratch(token_ids(TEXT))
        assert torch.equal(one.logits, two.logits)
        assert all(torch.equal(a, b) for a, b in zip(one.keys, two.keys))

    @pytest.mark.parametrize("seed", [-1, 2**63, "0", True])
    def test_a_seed_torch_cannot_take_is_refused(self, seed):
        with pytest.raises(ValueError, match="seed must be an integer"):
            model_on(seed=seed)

    def test_another_seed_is_another_model(self):
        ids = token_ids(TEXT)
        assert not torch.allclose(model_on(seed=0).from_scratch(ids).logits,
                                  model_on(seed=1).from_scratch(ids).logits)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU")
class TestCuda:
    def test_cuda_model_matches_the_cpu_model(self):
        ids = token_ids(TEXT)
        gpu, cpu = model_on("cuda"), model_on("cpu")
        assert gpu.device.type == "cuda"
        slots = gpu.pool.alloc(6)
        gpu.extend(ids[:6], [], slots)
        gpu.extend(ids, slots, gpu.pool.alloc(len(ids) - 6))
        assert close(gpu.last_logits, cpu.from_scratch(ids).logits, tol=1e-3)
