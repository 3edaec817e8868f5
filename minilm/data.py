"""Data: a character-level corpus that ships with Python, and the batches lessons need.

The default text is the Python reference documentation (``pydoc_data.topics``,
about 465k characters, 103 symbols), so the course runs offline anywhere.
Any UTF-8 text file can be used instead: ``Corpus.from_file(path)``.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass
from pathlib import Path

import torch

from .validation import finite_number, integer, one_of, positive_int, positive_ints

MASK = "\x00"          # the mask symbol of masked-LM batches; never occurs in text
TASKS = ("causal", "mlm")
IGNORE_INDEX = -100    # targets that carry no loss (cross_entropy's default ignore_index)
# Retrieval sized for tiny models: "<filler>@123<filler>?123". The needle is a marker and a
# 3-digit key, the question a single "?", and the model must answer with the key: eight characters
# of structure, so a prompt of 32 characters still holds 25 of filler.
RETRIEVAL_MARK, RETRIEVAL_QUESTION, RETRIEVAL_DIGITS = "@", "?", 3
# The filler of a retrieval window: a window of the text, or characters drawn uniformly and
# independently from RANDOM_FILLER, which holds neither the marker, the question nor a digit:
# then the filler carries nothing a model could read, and the needle is the only structure.
FILLERS = ("text", "random")
RANDOM_FILLER = "abcdefghijklmnopqrstuvwxyz"


class CharTokenizer:
    """One id per character of the corpus, plus the mask symbol (always the last id)."""

    def __init__(self, text: str):
        self.chars = sorted(set(text) - {MASK}) + [MASK]
        self.index = {ch: i for i, ch in enumerate(self.chars)}
        self.mask_id = self.index[MASK]

    @property
    def vocab_size(self) -> int:
        return len(self.chars)

    @property
    def symbols(self) -> str:
        """Every symbol in id order: two tokenizers with the same symbols give the same ids."""
        return "".join(self.chars)

    def encode(self, text: str) -> torch.Tensor:
        unknown = sorted(set(text) - self.index.keys())
        if unknown:
            raise ValueError(f"characters not in the vocabulary: {''.join(unknown)!r}")
        return torch.tensor([self.index[ch] for ch in text], dtype=torch.long)

    def decode(self, ids) -> str:
        return "".join(self.chars[i] for i in torch.as_tensor(ids).tolist())


@dataclass
class Corpus:
    """A text, its tokenizer, and a deterministic 90/10 train/validation split (by position)."""

    text: str
    name: str

    def __post_init__(self):
        if not isinstance(self.text, str) or not isinstance(self.name, str):
            raise ValueError(f"Corpus needs a text and a name, both str; got {type(self.text).__name__} "
                             f"and {type(self.name).__name__}")
        if not self.text:
            raise ValueError(f"corpus {self.name!r} holds no text (0 characters): a corpus needs text to train and measure on")
        if MASK in self.text:  # it would silently become the mask symbol of masked-LM batches
            raise ValueError(f"corpus {self.name!r} contains the NUL character (\\x00) at position "
                             f"{self.text.index(MASK)}; minilm reserves it for the mask symbol: remove it")
        self.tokenizer = CharTokenizer(self.text)
        ids = self.tokenizer.encode(self.text)
        cut = int(0.9 * len(ids))
        self.train, self.val = ids[:cut], ids[cut:]
        self.fingerprint = hashlib.sha256(self.text.encode()).hexdigest()[:16]

    def __repr__(self) -> str:  # the dataclass default would print the whole text
        return (f"Corpus({self.name!r}: {len(self.text):,} characters, {self.tokenizer.vocab_size} symbols, "
                f"fingerprint {self.fingerprint})")

    @classmethod
    def python_docs(cls) -> "Corpus":
        """The Python reference documentation, shipped with every Python (no download)."""
        from pydoc_data.topics import topics  # here, not at the top: half a megabyte, read only when used

        return cls("\n\n".join(topics[key] for key in sorted(topics)), name="pydoc_data.topics")

    @classmethod
    def from_file(cls, path) -> "Corpus":
        """The UTF-8 text of the file at ``path`` (a byte-order mark at its start is not text)."""
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8-sig")
        except UnicodeDecodeError as error:
            raise ValueError(f"{path} is not UTF-8 text ({error.reason} at byte {error.start}); "
                             "convert it to UTF-8 first") from None
        return cls(text, name=path.name)

    def split(self, split: str) -> torch.Tensor:
        one_of("split", split, ("train", "val"))
        return self.train if split == "train" else self.val


_DEFAULT_CORPUS: Corpus | None = None


def default_corpus() -> Corpus:
    """The Python documentation corpus, built once per process."""
    global _DEFAULT_CORPUS
    if _DEFAULT_CORPUS is None:
        _DEFAULT_CORPUS = Corpus.python_docs()
    return _DEFAULT_CORPUS


def _windows(ids: torch.Tensor, batch_size: int, length: int, generator: torch.Generator):
    positive_int("batch_size", batch_size)
    if length > len(ids):
        raise ValueError(f"length {length} is longer than the text ({len(ids)} tokens)")
    starts = torch.randint(0, len(ids) - length + 1, (batch_size,), generator=generator)
    return torch.stack([ids[s : s + length] for s in starts.tolist()])


def causal_batch(ids, batch_size: int, length: int, generator=None):
    """Random windows for next-token prediction: inputs x (B, T) and targets y = x shifted by one."""
    positive_int("length", length)
    if length + 1 > len(ids):  # named here: _windows would report the window, one longer than asked
        raise ValueError(f"length {length} needs {length + 1} tokens (the inputs and one more target); "
                         f"the ids hold {len(ids)}")
    window = _windows(ids, batch_size, length + 1, generator)
    return window[:, :-1], window[:, 1:]


def mlm_batch(ids, batch_size: int, length: int, mask_id: int, vocab_size: int, generator=None,
              mask_prob: float = 0.15):
    """BERT-style masked LM: 15% of positions are targets; of those 80% become the mask symbol,
    10% a random symbol, 10% stay. Other targets are IGNORE_INDEX. Returns (x, y), both (B, T)."""
    positive_int("length", length)
    finite_number("mask_prob", mask_prob, at_least=0, at_most=1)
    clean = _windows(ids, batch_size, length, generator)
    chosen = torch.rand(clean.shape, generator=generator) < mask_prob
    y = torch.where(chosen, clean, torch.full_like(clean, IGNORE_INDEX))
    action = torch.rand(clean.shape, generator=generator)
    random_ids = torch.randint(0, vocab_size - 1, clean.shape, generator=generator)  # never the mask id
    x = torch.where(chosen & (action < 0.8), torch.full_like(clean, mask_id), clean)
    x = torch.where(chosen & (action >= 0.8) & (action < 0.9), random_ids, x)
    return x, y


def retrieval_batch(corpus: Corpus, ids, batch_size: int, length: int, generator=None, depth=None, *,
                    filler: str = "text"):
    """Needle-in-a-haystack windows: inputs x (B, T) and targets y, IGNORE_INDEX except the answer.
    The windows of retrieval_rows, without the needles' positions."""
    x, y, _ = retrieval_rows(corpus, ids, batch_size, length, generator, depth, filler=filler)
    return x, y


def retrieval_rows(corpus: Corpus, ids, batch_size: int, length: int, generator=None, depth=None, *,
                   filler: str = "text"):
    """Needle-in-a-haystack windows: (x (B, T), y (B, T), needle (B,)), y IGNORE_INDEX except the
    answer, needle the position of each row's marker.

    Each row is T + 1 characters, ``filler[:cut] + "@" + key + filler[cut:] + "?" + key``: the
    filler a random window of the text ``ids`` (``filler='text'``) or characters drawn uniformly
    from RANDOM_FILLER (``filler='random'``, with ids=None: no text is read), a random
    RETRIEVAL_DIGITS-digit key (no leading 0), the needle at
    ``depth`` (a fraction of the filler before it; None draws one per row, uniform in [0, 1]).
    x is the row without its last character and y the row shifted by one, so the targets are
    the key's digits after the "?": y[:, -RETRIEVAL_DIGITS:]. Greedy decoding returns the key
    exactly when the argmax is right at all of them, given the digits before (teacher forcing).
    """
    positive_int("length", length)
    positive_int("batch_size", batch_size)
    if depth is not None:
        finite_number("depth", depth, at_least=0, at_most=1)
    one_of("filler", filler, FILLERS)
    if (ids is None) != (filler == "random"):
        raise ValueError("ids is the text the filler is cut from: pass the ids of a split with filler='text', "
                         f"and ids=None with filler='random'; got filler={filler!r} and ids "
                         f"{'None' if ids is None else 'of ' + str(len(ids)) + ' tokens'}")
    structure = 2 * RETRIEVAL_DIGITS + len(RETRIEVAL_MARK) + len(RETRIEVAL_QUESTION)
    filler_len = length + 1 - structure
    if filler_len < 0:
        raise ValueError(f"length {length} is too short for a retrieval window: the needle, the question "
                         f"and the answer take {structure} characters, so length must be at least {structure - 1}")
    if ids is not None and filler_len > len(ids):  # named here: _windows would report the filler's length, not the one asked
        split = "validation" if ids is corpus.val else "training" if ids is corpus.train else None
        text = f"the {split} split of corpus {corpus.name!r}" if split else "the ids"
        raise ValueError(f"length {length} is too long for a retrieval window on {text} ({len(ids)} tokens): "
                         f"its filler takes {filler_len}")
    tok = corpus.tokenizer
    needed = {"the marker": RETRIEVAL_MARK, "the question": RETRIEVAL_QUESTION, "the key's digits": "0123456789",
              "random filler": RANDOM_FILLER if filler == "random" else ""}
    for what, chars in needed.items():
        missing = "".join(sorted(set(chars) - tok.index.keys()))
        if missing:
            raise ValueError(f"a retrieval window needs {what} ({chars!r}), but corpus {corpus.name!r} lacks "
                             f"{missing!r}" + (": use filler='text'" if what == "random filler" else ""))
    mark, question = tok.encode(RETRIEVAL_MARK), tok.encode(RETRIEVAL_QUESTION)
    digit_ids = tok.encode("0123456789")
    if filler == "text":
        filler = _windows(ids, batch_size, filler_len, generator)
    else:
        alphabet = tok.encode(RANDOM_FILLER)
        filler = alphabet[torch.randint(0, len(alphabet), (batch_size, filler_len), generator=generator)]
    first = torch.randint(1, 10, (batch_size, 1), generator=generator)  # no leading zero: always RETRIEVAL_DIGITS digits
    rest = torch.randint(0, 10, (batch_size, RETRIEVAL_DIGITS - 1), generator=generator)
    keys = digit_ids[torch.cat([first, rest], dim=1)]
    depths = (torch.rand(batch_size, generator=generator) if depth is None
              else torch.full((batch_size,), float(depth)))
    cuts = (depths * filler_len).round().long().tolist()
    rows = torch.stack([torch.cat([filler[b, :cut], mark, keys[b], filler[b, cut:], question, keys[b]])
                        for b, cut in enumerate(cuts)])
    y = torch.full((batch_size, length), IGNORE_INDEX, dtype=torch.long)
    y[:, -RETRIEVAL_DIGITS:] = keys
    return rows[:, :-1], y, torch.tensor(cuts)


def batches(corpus: Corpus, *, task: str, batch_size: int, length=None, lengths=None,
            split="train", seed=0, retrieval: float = 0.0, filler: str = "text"):
    """An endless, seeded stream of (x, y) batches.

    task: 'causal' (next token) or 'mlm' (masked LM). Give ``length`` for one length,
    or ``lengths`` (a list) for mixed-length training: each batch draws one of them.
    ``retrieval`` (causal only): the probability that a batch is a retrieval batch
    (see retrieval_batch, loss on the answer only) instead of text; 0 leaves the stream
    exactly as without it. ``filler``: what fills a retrieval window, 'text' (a window of the
    split) or 'random' (letters drawn uniformly; see retrieval_rows). The arguments are checked
    here, at the call, not at the first next().
    """
    one_of("task", task, TASKS)
    finite_number("retrieval", retrieval, at_least=0, at_most=1)
    one_of("filler", filler, FILLERS)
    if filler != "text" and not retrieval:
        raise ValueError(f"filler={filler!r} fills retrieval windows, and retrieval=0 draws none; "
                         "set retrieval > 0 or leave filler='text'")
    if retrieval and task != "causal":
        raise ValueError(f"retrieval batches are causal (the answer comes last); got task={task!r} "
                         f"with retrieval={retrieval!r}")
    if (length is None) == (lengths is None):
        raise ValueError("give exactly one of length (one length) or lengths (mixed lengths)")
    if lengths is None:
        positive_int("length", length)
    else:
        positive_ints("lengths", lengths)
    choices = [length] if lengths is None else list(lengths)
    positive_int("batch_size", batch_size)
    integer("seed", seed)
    ids = corpus.split(split)
    window = max(choices) + (task == "causal")  # a causal window holds the inputs and one more target
    reads_text = not (retrieval == 1 and filler == "random")  # every batch a random-letter window: no text
    if reads_text and window > len(ids):
        raise ValueError(f"length {max(choices)} is too long for the {split} split of corpus {corpus.name!r} "
                         f"({len(ids)} tokens)")
    filler_ids = ids if filler == "text" else None
    if retrieval:  # a length too short for the needle fails here
        retrieval_batch(corpus, filler_ids, 1, min(choices), filler=filler)
    # int(seed): random and torch take no numpy seed
    return _stream(corpus, ids, task, batch_size, choices, int(seed), retrieval, filler)


def _stream(corpus, ids, task, batch_size, choices, seed, retrieval, filler):
    generator = torch.Generator().manual_seed(seed)
    pick = random.Random(seed)
    tok = corpus.tokenizer
    while True:
        T = pick.choice(choices)
        if retrieval and pick.random() < retrieval:  # never drawn when retrieval is 0: the text stream stays as it was
            yield retrieval_batch(corpus, ids if filler == "text" else None, batch_size, T, generator, filler=filler)
        elif task == "causal":
            yield causal_batch(ids, batch_size, T, generator)
        else:
            yield mlm_batch(ids, batch_size, T, tok.mask_id, tok.vocab_size, generator)
