"""Device-correct by construction: every tensor the library builds for a model goes to
``model.device``, so a model on a GPU is never fed a CPU tensor.

A CPU-only machine has no second device to put a model on, so the tests use a fake
accelerator: the model lives on PyTorch's ``meta`` device (shapes, no data), and a torch
function mode checks every operation. An operation that mixes a meta tensor with a CPU
tensor (other than a 0-d scalar, which CUDA accepts too) raises ``DeviceMismatch``, as it
would on a real GPU. Reading a meta tensor back (``.item()``, ``.tolist()``, ``.cpu()``)
gives ones of the right shape instead of an error, so each library function runs to its
end and every operation in it is checked.
"""

import pytest
import torch
from torch.overrides import TorchFunctionMode
from torch.utils._pytree import tree_leaves

import minilm
import minilm.measure
import minilm.scaling
import minilm.cache
import minilm.training
from minilm import Config, Recipe

ACCELERATOR = torch.device("meta")


class DeviceMismatch(RuntimeError):
    pass


def _to_target(args, kwargs):
    """The device a Tensor.to(...) call moves to, or None when it only changes the dtype."""
    rest = args[1:]
    if rest and isinstance(rest[0], torch.Tensor):
        return rest[0].device
    device = kwargs.get("device")
    if device is None and rest and isinstance(rest[0], (str, torch.device)):
        device = rest[0]
    return None if device is None else torch.device(device)


class FakeAccelerator(TorchFunctionMode):
    """Raise on any operation that mixes the fake accelerator's tensors with CPU tensors."""

    READS = {torch.Tensor.item, torch.Tensor.tolist, torch.Tensor.numpy, torch.Tensor.cpu}
    MOVES = {torch.Tensor.to, torch.Tensor.cuda, torch.Tensor.copy_,  # legitimate transfers
             torch._has_compatible_shallow_copy_type}  # asked by Module.to before it moves

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        tensors = [t for t in tree_leaves((args, kwargs)) if isinstance(t, torch.Tensor)]
        on_meta = any(t.is_meta for t in tensors)
        if on_meta and func in self.READS:
            stand_in = torch.ones(args[0].shape, dtype=args[0].dtype)
            return func(stand_in, *args[1:], **kwargs)
        if on_meta and func is torch.Tensor.to and _to_target(args, kwargs) == torch.device("cpu"):
            return torch.ones(args[0].shape, dtype=args[0].dtype).to(*args[1:], **kwargs)
        if func not in self.MOVES:
            devices = {t.device.type for t in tensors if t.dim() > 0}
            if len(devices) > 1:
                raise DeviceMismatch(f"{getattr(func, '__name__', func)} mixes tensors on {sorted(devices)}")
        return func(*args, **kwargs)


@pytest.fixture
def corpus():
    return minilm.default_corpus()


def tiny(corpus, **settings):
    config = dict(vocab_size=corpus.tokenizer.vocab_size, d_model=16, n_layer=1, n_head=2, max_len=256)
    config.update(settings)
    torch.manual_seed(0)
    return minilm.LM(Config(**config)).to(ACCELERATOR)


def test_the_fake_accelerator_catches_a_cpu_tensor_fed_to_a_model_on_it(corpus):
    # The control: lesson 2's prefix cell as it was written (a CPU batch fed to the model)
    # must fail, or the tests below would prove nothing.
    model = tiny(corpus)
    x = minilm.measure.eval_batches(corpus, task="causal", length=16, batch_size=2, n_batches=1)[0][0]
    with FakeAccelerator(), pytest.raises((DeviceMismatch, ValueError), match="cpu"):
        model(x)
    with FakeAccelerator(), pytest.raises(DeviceMismatch):
        torch.ones(3, 3, device=ACCELERATOR) + torch.ones(3, 3)


def test_a_batch_built_on_the_model_device_runs(corpus):
    model = tiny(corpus)
    x, y = minilm.measure.eval_batches(corpus, task="causal", length=16, batch_size=2, n_batches=1,
                               device=model.device)[0]
    with FakeAccelerator():
        logits = model(x)
        minilm.training.lm_loss(logits, y).item()
    assert logits.device == model.device == ACCELERATOR


def test_the_model_refuses_a_tensor_on_another_device_with_a_clear_error(corpus):
    model = tiny(corpus)
    with pytest.raises(ValueError, match=r"idx is on cpu but the model is on meta.*idx.to\(model.device\)"):
        model(torch.zeros(1, 4, dtype=torch.long))


# Every library function that takes a model, called as the lessons call it.
CALLS = {
    "evaluate": lambda m, c: minilm.evaluate(m, c, task="causal", length=16, n_batches=1),
    "evaluate mlm": lambda m, c: minilm.evaluate(m, c, task="mlm", length=16, n_batches=1),
    "token_losses": lambda m, c: minilm.measure.token_losses(m, c, task="causal", length=16, n_batches=1),
    "prefix_gap": lambda m, c: minilm.measure.prefix_gap(m, c.val[:32].view(2, 16), 8),
    "step_time": lambda m, c: minilm.bench.step_time(m, c.val[:32].view(2, 16), c.val[1:33].view(2, 16), repeats=1),
    "loss_by_length": lambda m, c: minilm.loss_by_length(m, c, [8, 16], tokens=256),
    "loss_by_position": lambda m, c: minilm.loss_by_position(m, c, 16, n_batches=1),
    "attention_entropy": lambda m, c: minilm.attention_entropy(m, c.val[:32].view(2, 16)),
    "log_normalisers": lambda m, c: minilm.measure.log_normalisers(m, c.val[:32].view(2, 16)),
    "retrieval_accuracy": lambda m, c: minilm.retrieval_accuracy(m, c, [16], [0.5], trials=2),
    "needle_attention": lambda m, c: minilm.measure.needle_attention(m, c, 16, depths=[0.5], trials=2),
    "generate": lambda m, c: minilm.generate(m, c.tokenizer, "def ", 3),
    "train": lambda m, c: minilm.train(m, minilm.data.batches(c, task="causal", batch_size=2, length=16),
                                       steps=2, progress=False),
    "uniform_multiplier_search": lambda m, c: minilm.scaling.uniform_multiplier_search(m, c, 16, [1.0, 1.5], seed=0),
    "train_head_scales": lambda m, c: minilm.scaling.train_head_scales(m, c, length=16, start=1.2, steps=2,
                                                                      batch_size=2, progress=False),
    "train_head_scales on the retrieval mixture": lambda m, c: minilm.scaling.train_head_scales(
        m, c, length=16, start=1.2, steps=2, batch_size=2, retrieval=0.5, progress=False),
    "uniform_multiplier_by_position": lambda m, c: minilm.scaling.uniform_multiplier_by_position(
        m, c, 16, [1.0, 1.5], sequences=8, seed=0),
}


@pytest.mark.parametrize("name", CALLS)
def test_every_library_function_that_takes_a_model_builds_its_tensors_on_the_model_device(name, corpus):
    model = tiny(corpus, causal=name != "evaluate mlm")
    with FakeAccelerator():
        CALLS[name](model, corpus)


def test_pretrained_trains_and_returns_the_model_on_the_picked_device(corpus, tmp_path, monkeypatch):
    monkeypatch.setenv("MINILM_CACHE", str(tmp_path))
    monkeypatch.setattr(minilm.cache, "pick_device", lambda: ACCELERATOR)
    config = Config(vocab_size=corpus.tokenizer.vocab_size, d_model=16, n_layer=1, n_head=2)
    with FakeAccelerator():
        model, _ = minilm.pretrained(config, Recipe(steps=2, batch_size=2, length=16, warmup=1),
                                     use_cache=False, progress=False)
    assert model.device == ACCELERATOR
