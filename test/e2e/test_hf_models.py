"""Hugging Face models as users compile them (random weights from small
configs, nothing downloaded): forward through both entry points, the cache
objects they return, static-cache decoding and `generate()` with
`CompileConfig(backend="purity")`, each against eager."""

from __future__ import annotations

import copy
from unittest import mock

import pytest
import torch
from object_walk import fake_tensors_in
from transformers import GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM, StaticCache
from transformers.cache_utils import DynamicCache
from transformers.generation.configuration_utils import CompileConfig

import torch_purity
from torch_purity.driver.compiled import CompiledProgram

VOCABULARY = 128


def tiny_llama() -> LlamaForCausalLM:
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=VOCABULARY,
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=64,
        bos_token_id=0,
        eos_token_id=1,
        pad_token_id=1,
    )
    return LlamaForCausalLM(config).eval()


def tiny_gpt2() -> GPT2LMHeadModel:
    torch.manual_seed(0)
    config = GPT2Config(
        vocab_size=VOCABULARY, n_embd=64, n_layer=2, n_head=4, n_positions=64, bos_token_id=0, eos_token_id=1
    )
    return GPT2LMHeadModel(config).eval()


MODELS = {"llama": tiny_llama, "gpt2": tiny_gpt2}


def prompt(length: int = 8) -> torch.Tensor:
    return torch.randint(2, VOCABULARY, (1, length), generator=torch.Generator().manual_seed(1))


@pytest.mark.parametrize("name", sorted(MODELS))
def test_forward_through_both_entry_points(name):
    model, ids = MODELS[name](), prompt()
    with torch.no_grad():
        expected = model(ids).logits
        by_function = torch_purity.compile(lambda ids: model(ids).logits, ids)  # the model is captured state
        torch.testing.assert_close(by_function(ids), expected)
        by_dynamo = torch.compile(model, backend="purity")
        torch.testing.assert_close(by_dynamo(ids).logits, expected)


def test_returned_dynamic_cache_holds_real_tensors_that_decode_on():
    model, ids = tiny_llama(), prompt()
    with torch.no_grad():
        compiled = torch_purity.compile(model, ids)
        output = compiled(ids)
        expected = model(ids)
        assert isinstance(output.past_key_values, DynamicCache)
        assert not fake_tensors_in(output), "a traced tensor escaped into the returned cache"
        torch.testing.assert_close(output.logits, expected.logits)
        # Decoding on in eager from the compiled call's cache: as from eager's.
        next_token = expected.logits[:, -1:].argmax(-1)
        continued = model(next_token, past_key_values=output.past_key_values).logits
        reference = model(next_token, past_key_values=expected.past_key_values).logits
        torch.testing.assert_close(continued, reference)


class StaticCacheDecoder(torch.nn.Module):
    """Holds its static cache as an attribute, as serving code does."""

    def __init__(self, model: torch.nn.Module) -> None:
        super().__init__()
        self.model = model
        self.cache = StaticCache(config=model.config, max_cache_len=32)

    def forward(self, ids: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        return self.model(ids, past_key_values=self.cache, cache_position=positions, use_cache=True).logits


def test_static_cache_decode_steps_match_eager_and_write_the_cache():
    model, ids = tiny_llama(), prompt()
    eager, compiled_owner = StaticCacheDecoder(model), StaticCacheDecoder(copy.deepcopy(model))
    with torch.no_grad():
        compiled = torch_purity.compile(lambda ids, positions: compiled_owner(ids, positions), ids, torch.arange(8))
    assert not fake_tensors_in(compiled_owner), "tracing left fake tensors in the cache object"
    positions, tokens = torch.arange(8), ids
    with torch.no_grad():
        for _ in range(5):
            expected = eager(tokens, positions)
            torch.testing.assert_close(compiled(tokens, positions), expected)
            for ours, theirs in zip(compiled_owner.cache.layers, eager.cache.layers):
                torch.testing.assert_close(ours.keys, theirs.keys)
                torch.testing.assert_close(ours.values, theirs.values)
            tokens, positions = expected[:, -1:].argmax(-1), positions[-1:] + 1
    assert not fake_tensors_in(compiled_owner)
    assert len(compiled.cache) == 2  # prefill and one decode entry for every later step


@pytest.mark.parametrize("name", sorted(MODELS))
def test_generate_with_compile_config_gives_eagers_tokens(name):
    model, ids = MODELS[name](), prompt()
    expected = model.generate(ids, max_new_tokens=6, do_sample=False, cache_implementation="static")
    config = CompileConfig(backend="purity")  # its defaults: mode="reduce-overhead", fullgraph=True ...
    config._compile_all_devices = True  # transformers compiles on the CPU only when told to
    calls = 0
    original_call = CompiledProgram.__call__

    def counting_call(self, *args):
        nonlocal calls
        calls += 1
        return original_call(self, *args)

    with mock.patch.object(CompiledProgram, "__call__", counting_call):
        for _ in range(2):
            tokens = model.generate(
                ids, max_new_tokens=6, do_sample=False, cache_implementation="static", compile_config=config
            )
            assert torch.equal(tokens, expected)
    assert calls >= 2 * 5, "generate() did not run the decode steps through Purity"


def test_keyword_arguments_and_a_dynamic_cache_passed_back_in():
    """Called as Hugging Face code calls a model: keywords, and the returned
    cache given back. The cache's tensors grow each step, so each step
    compiles again (a static cache does not); the values and the cache's
    growth are eager's."""
    model, ids = tiny_llama(), prompt()
    compiled = torch_purity.compile(model)
    mask = torch.ones_like(ids)
    with torch.no_grad():
        ours = compiled(input_ids=ids, attention_mask=mask)
        theirs = model(input_ids=ids, attention_mask=mask)
        torch.testing.assert_close(ours.logits, theirs.logits)
        token = theirs.logits[:, -1:].argmax(-1)
        for _ in range(2):
            passed_in = ours.past_key_values
            ours = compiled(input_ids=token, past_key_values=passed_in)
            theirs = model(input_ids=token, past_key_values=theirs.past_key_values)
            assert ours.past_key_values is passed_in, "eager returns the cache it was given, updated"
            torch.testing.assert_close(ours.logits, theirs.logits)
            for mine, eager in zip(ours.past_key_values.layers, theirs.past_key_values.layers):
                torch.testing.assert_close(mine.keys, eager.keys)
            assert not fake_tensors_in(ours)
            token = theirs.logits[:, -1:].argmax(-1)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_training_step_gives_eagers_loss_and_gradients(name):
    """A language-modelling loss through a model nobody here wrote, trained
    with dropout off: the compiled forward and backward give eager's loss
    and the gradient of every parameter (embeddings, attention, norms)."""
    model = MODELS[name]()
    twin = copy.deepcopy(model)
    ids = prompt()
    compiled = torch.compile(model, backend="purity")
    loss = compiled(ids, labels=ids, use_cache=False).loss
    expected = twin(ids, labels=ids, use_cache=False).loss
    loss.backward()
    expected.backward()
    torch.testing.assert_close(loss, expected)
    for (name_, ours), (_, theirs) in zip(model.named_parameters(), twin.named_parameters()):
        assert (ours.grad is None) == (theirs.grad is None), name_
        if theirs.grad is not None:
            torch.testing.assert_close(ours.grad, theirs.grad, atol=1e-5, rtol=1e-4, msg=f"gradient of {name_}")
