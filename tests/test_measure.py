"""Measurement helpers against hand-computed values."""

import math

import torch

import minilm
from minilm import default_corpus
from minilm.measure import bucket_means, entropy


def test_entropy_of_uniform_rows_is_log_n_and_of_one_hot_is_zero():
    uniform = torch.full((3, 8), 1 / 8)
    torch.testing.assert_close(entropy(uniform), torch.full((3,), math.log(8)))
    assert entropy(torch.eye(4)).abs().max() == 0
    assert entropy(torch.zeros(2, 5)).abs().max() == 0  # a row of zeros
    torch.testing.assert_close(entropy(3 * uniform), entropy(uniform))  # relu2 / n rows: their shape


def test_bucket_means_includes_a_partial_last_bucket():
    torch.testing.assert_close(bucket_means(torch.arange(10.0), 4), torch.tensor([1.5, 5.5, 8.5]))


def _tiny(**settings):
    torch.manual_seed(0)
    config = minilm.Config(vocab_size=default_corpus().tokenizer.vocab_size, d_model=16, n_layer=2,
                           n_head=2, **settings)
    return minilm.LM(config).eval()


def test_entropy_and_normalisers_have_one_value_per_layer_head_position():
    model = _tiny()
    idx = torch.randint(0, default_corpus().tokenizer.vocab_size, (2, 12))
    ent = minilm.attention_entropy(model, idx)
    assert ent.shape == (2, 2, 12)
    assert ent[:, :, 0].abs().max() < 1e-6          # the first query sees one key
    assert (ent <= torch.log(torch.arange(1, 13.0)) + 1e-5).all()
    log_z = minilm.measure.log_normalisers(model, idx)
    _, scores = model(idx, returns="scores")
    torch.testing.assert_close(log_z[0], scores[0].exp().sum(-1).log().mean(0))


def test_normalisers_of_a_relu2_model_sum_relu_squared():
    model = _tiny(norm="relu2", n="length")
    idx = torch.randint(0, default_corpus().tokenizer.vocab_size, (2, 12))
    _, scores = model(idx, returns="scores")
    expected = torch.clamp(scores[1], min=0).square().sum(-1).log().mean(0)
    torch.testing.assert_close(minilm.measure.log_normalisers(model, idx)[1], expected)


def test_losses_by_length_and_position():
    model = _tiny()
    corpus = default_corpus()
    by_length = minilm.loss_by_length(model, corpus, [16, 32], tokens=512)
    assert set(by_length) == {16, 32}
    vocab = corpus.tokenizer.vocab_size
    assert all(abs(v - math.log(vocab)) < 0.5 for v in by_length.values())  # untrained: near uniform
    assert minilm.loss_by_position(model, corpus, 24, batch_size=2, n_batches=2).shape == (24,)
    result = minilm.evaluate(model, corpus, task="mlm", length=16, batch_size=4, n_batches=2)
    assert 0 <= result["accuracy"] <= 1


def test_ngram_baselines_of_the_default_corpus_match_counts_made_in_plain_python():
    # The corpus depends on the Python build (its documentation), so the numbers are derived
    # here, by counting characters with collections.Counter, not copied from one machine.
    from collections import Counter

    corpus = default_corpus()
    cut = len(corpus.train)
    train, val, V, eps = corpus.text[:cut], corpus.text[cut:], corpus.tokenizer.vocab_size, 0.01
    unigram, bigram, first = Counter(train), Counter(zip(train, train[1:])), Counter(train[:-1])
    unigram_nll = -sum(math.log((unigram[c] + eps) / (cut + V * eps)) for c in val) / len(val)
    bigram_nll = -sum(math.log((bigram[a, b] + eps) / (first[a] + V * eps)) for a, b in zip(val, val[1:])) / (len(val) - 1)
    baselines = minilm.measure.ngram_baselines(corpus)
    assert abs(baselines["unigram"] - unigram_nll) < 1e-6 and abs(baselines["bigram"] - bigram_nll) < 1e-6
    assert baselines["bigram"] < baselines["unigram"] < math.log(V)


def test_ngram_baselines_of_a_deterministic_text_are_near_zero_for_the_bigram(tmp_path):
    path = tmp_path / "abc.txt"
    path.write_text("abc" * 400)
    baselines = minilm.measure.ngram_baselines(minilm.Corpus.from_file(path))
    assert baselines["bigram"] < 0.01 and abs(baselines["unigram"] - math.log(3)) < 0.01


def test_growth_exponent_recovers_powers():
    ns = [8, 16, 32, 64, 128]
    assert abs(minilm.measure.growth_exponent(ns, [3 * n for n in ns]) - 1) < 1e-9
    assert abs(minilm.measure.growth_exponent(ns, [5.0] * 5)) < 1e-9
    assert abs(minilm.measure.growth_exponent(ns, [n ** 0.5 for n in ns]) - 0.5) < 1e-9


def test_extension_ratio_finds_the_first_bucket_past_the_margin():
    L = 16
    flat = torch.ones(64)
    assert minilm.measure.extension_ratio(flat, L) == 4.0            # never rises: a lower bound, T / L
    rising = flat.clone()
    rising[24:] = 1.5                                         # rises at 1.5 L
    assert minilm.measure.extension_ratio(rising, L, bucket=4) == 1.5
    rising[16:] = 1.05                                        # below the margin until 1.5 L
    rising[24:] = 1.5
    assert minilm.measure.extension_ratio(rising, L, bucket=4) == 1.5
    assert minilm.measure.extension_ratio(rising, L, bucket=4, margin=0.01) == 1.0


def test_a_temperature_is_searched_on_other_batches_than_it_is_scored_on():
    from minilm.measure import EVAL_SEED, SEARCH_SEED, eval_batches

    corpus = default_corpus()
    scored = eval_batches(corpus, task="causal", length=24, n_batches=1)
    searched = eval_batches(corpus, task="causal", length=24, n_batches=1, seed=SEARCH_SEED)
    assert SEARCH_SEED != EVAL_SEED and not torch.equal(scored[0][0], searched[0][0])
    torch.manual_seed(0)
    model = minilm.LM(minilm.Config(vocab_size=corpus.tokenizer.vocab_size, d_model=16, n_layer=1, n_head=2)).eval()
    search = minilm.uniform_multiplier_search(model, corpus, 24, [1.0], seed=SEARCH_SEED)
    assert search[1.0] == minilm.scaling.mean_loss(model, corpus, 24, seed=SEARCH_SEED) != minilm.scaling.mean_loss(model, corpus, 24)


def test_over_seeds_keeps_the_interval_of_a_proportion_inside_0_and_1():
    from minilm.measure import over_seeds, seed_interval
    high = [0.9, 1.0, 0.6, 0.95, 1.0]
    assert seed_interval(high)[2] > 1  # the t interval reaches past 1 ...
    assert over_seeds(high, proportion=True).startswith("0.89 [0.73, 1] ")  # ... printed clipped
    assert over_seeds([0.0, 0.01, 0.0, 0.02, 0.0], proportion=True, each=False) == "0.01 [0, 0.01]"
    assert over_seeds([0.5, 0.6], proportion=True) == over_seeds([0.5, 0.6])  # inside: unchanged
    assert over_seeds([-0.5, 0.5], each=False) == "0.00 [-3.16, 3.16]"  # not a proportion: not clipped


def test_hidden_states_and_layer_writes_against_the_blocks_run_by_hand():
    model = _tiny()
    idx = torch.randint(0, default_corpus().tokenizer.vocab_size, (3, 10))
    streams = minilm.measure.hidden_states(model, idx)
    assert streams.shape == (3, 3, 10, 16)                      # before block 1, after each block
    with torch.no_grad():
        x = model.embed(idx)
        by_hand = [x]
        angles = minilm.rope_angles(10, model.config.head_dim)
        for block in model.blocks:
            x, _ = block(x, model.config, angles, torch.ones(block.n_head))
            by_hand.append(x)
        attention = [block.to_out(rearrange_heads(block, h)) for block, h in zip(model.blocks, by_hand)]
    torch.testing.assert_close(streams, torch.stack(by_hand))
    writes = minilm.measure.layer_writes(model, idx)
    torch.testing.assert_close(writes, (streams[1:] - streams[:-1]).norm(dim=-1).mean(1) / 4)
    torch.testing.assert_close(minilm.measure.layer_writes(model, idx, part="attention"),
                               torch.stack([a.norm(dim=-1).mean(0) / 4 for a in attention]))


def rearrange_heads(block, x):
    """The attention sublayer's heads, concatenated, of a Transformer block at input x (RoPE)."""
    from einops import rearrange
    q, k, v = rearrange(block.to_qkv(block.ln_attn(x)), "b t (three h d) -> three b h t d",
                        three=3, h=block.n_head).unbind(0)
    angles = minilm.rope_angles(x.shape[1], q.shape[-1])
    q, k = minilm.apply_rope(q, angles), minilm.apply_rope(k, angles)
    out, _ = minilm.attend(q, k, v)
    return rearrange(out, "b h t d -> b t (h d)")


def test_layer_writes_names_a_part_it_does_not_know():
    model = _tiny()
    idx = torch.zeros(1, 4, dtype=torch.long)
    try:
        minilm.measure.layer_writes(model, idx, part="mlp")
    except ValueError as error:
        assert "part" in str(error) and "attention" in str(error)
    else:
        raise AssertionError("part='mlp' was accepted")


def test_a_position_probe_recovers_a_planted_direction_and_scores_it():
    torch.manual_seed(0)
    direction = torch.nn.functional.normalize(torch.randn(8), dim=0)
    noise = 0.3 * torch.randn(20, 16, 8)   # every direction varies, so the probe's is defined
    hidden = noise + torch.arange(16.0).view(1, -1, 1) * direction / 2 + 3.0   # a bias too
    w = minilm.measure.fit_position_probe(hidden)
    assert torch.nn.functional.cosine_similarity(w[:-1], direction, dim=0) > 0.95
    assert minilm.measure.position_probe_r2(hidden, n_train=12) > 0.95
    assert minilm.measure.position_probe_r2(noise, n_train=12) < 0.1   # no position: nothing to read
