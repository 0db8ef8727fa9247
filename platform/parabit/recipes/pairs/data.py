"""Training pairs as token ids: read once, tokenised once, cached as parquet for every later run.

``prepare_pairs(config)`` turns the configured text pairs into the kernel's prepared format
(:mod:`parabit.training.prepared`: padded ``ids_a``/``ids_b`` of ``max_tokens``, ``len_a``/``len_b``, the vocabulary
and tokenizer settings), cached under ``outputs/prepared/<hash of the data config>/``.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from parabit.data.bitext import read_europarl, read_tatoeba
from parabit.data.errors import DataFormatError, Quarantine
from parabit.data.heldout import HeldoutSets, heldout_sets
from parabit.data.ppdb import read_ppdb_lexical
from parabit.data.sick import read_sick
from parabit.recipes.pairs.config import DataConfig, PairSource
from parabit.paths import output_root
from parabit.runlock import one_builder
from parabit.teacher.contextual import ContextualSums, encode_in_context
from parabit.teacher.vectors import encode_with_ray
from parabit.text.glove import load_glove
from parabit.text.tokenize import Tokenizer
from parabit.text.vocab import Vocabulary, pad_batch
from parabit.training import PreparedData, fixed_size_ids, id_table, write_prepared

log = logging.getLogger(__name__)

PREPARED_FORMAT = 1
COUNTS_FILE = "counts.json"  # {lang: {word: count}} of the training text, for word weights
CONTEXTUAL_WORDS = "contextual_words.json"  # the words of the contextual sums (data.teacher_contextual)


@dataclass(frozen=True)
class TextPairs:
    """Parallel lists of sentences; side a is always English, side b in ``langs_b`` (one language per pair)."""

    text_a: list[str]
    text_b: list[str]
    langs_b: list[str]
    rejected: dict[str, int]

    def __add__(self, other: "TextPairs") -> "TextPairs":
        return TextPairs(self.text_a + other.text_a, self.text_b + other.text_b, self.langs_b + other.langs_b,
                         dict(Counter(self.rejected) + Counter(other.rejected)))

    def without(self, drop, reason: str) -> "TextPairs":
        """These pairs less those where ``drop`` (one truth value per pair) holds, counted as rejected for
        ``reason``."""
        keep = np.flatnonzero(~np.asarray(drop, dtype=bool))
        if len(keep) == len(self.text_a):
            return self
        rejected = Counter(self.rejected)
        rejected[reason] += len(self.text_a) - len(keep)
        return TextPairs([self.text_a[i] for i in keep], [self.text_b[i] for i in keep],
                         [self.langs_b[i] for i in keep], dict(rejected))


# Parquet conditions: (English column, other column, column naming the other side's language; absent → English).
PARQUET_COLUMNS = {"pairs_parquet": ("text_a", "text_b", "lang_b"), "bilingual_phrases": ("en", "foreign", "lang"),
                   "pivot_paraphrases": ("phrase", "paraphrase", None)}

# Bitext source -> the shipped splits it reads (Europarl/WMT splits of parabit.data.bitext.read_europarl).
EUROPARL_SPLITS = {"europarl": ("train",), "newstest": ("dev", "test"), "newstest2013": ("test",)}


def load_text_pairs(config: DataConfig) -> TextPairs:
    """The raw text pairs of every source of ``config``, in order; bad bitext lines (and, with ``heldout:
    exclude``, pairs sharing a sentence with the held-out evaluation sets) are quarantined and counted by reason."""
    heldout = heldout_sets(config.heldout)
    return sum((_source_pairs(source, heldout) for source in config.all_sources), TextPairs([], [], [], {}))


def _source_pairs(source: PairSource, heldout: HeldoutSets | None = None) -> TextPairs:
    if source.condition == "bilingual_sentences":
        quarantine = Quarantine()
        pairs = []
        if "tatoeba" in source.sources:
            pairs += read_tatoeba(lang=source.lang, quarantine=quarantine, heldout=heldout)
        for name, splits in EUROPARL_SPLITS.items():
            if name in source.sources:
                for split in splits:
                    pairs += read_europarl(source.lang, split, quarantine=quarantine, heldout=heldout)
        return TextPairs([p.en for p in pairs], [p.foreign for p in pairs], [source.lang] * len(pairs),
                         dict(quarantine.counts))
    if source.condition == "ppdb":
        quarantine = Quarantine()
        pairs = read_ppdb_lexical(quarantine=quarantine)
        return without_heldout(TextPairs([p[0] for p in pairs], [p[1] for p in pairs], ["en"] * len(pairs),
                                         dict(quarantine.counts)), heldout)
    column_a, column_b, lang_column = PARQUET_COLUMNS[source.condition]
    text_a, text_b, langs_b = [], [], []
    rejected: Counter = Counter()
    for path in source.paths:
        table = pq.read_table(path)
        missing = {column_a, column_b} - set(table.column_names)
        if missing:
            raise DataFormatError(path, None, f"{source.condition} training pairs need columns {column_a} and "
                                  f"{column_b}; missing {sorted(missing)}")
        if source.min_pair_count > 1:
            if "count" not in table.column_names:
                raise DataFormatError(path, None, "data.min_pair_count reads a phrase table's count column; this "
                                      "file has none")
            frequent = pc.greater_equal(table["count"], source.min_pair_count)
            rejected[f"phrase pair count below {source.min_pair_count}"] += len(table) - pc.sum(frequent).as_py()
            table = table.filter(frequent)
        text_a += table.column(column_a).to_pylist()
        text_b += table.column(column_b).to_pylist()
        langs_b += table.column(lang_column).to_pylist() if lang_column in table.column_names \
            else ["en"] * len(table)
    return without_heldout(TextPairs(text_a, text_b, langs_b, dict(rejected)), heldout)


def without_heldout(pairs: TextPairs, heldout: HeldoutSets | None) -> TextPairs:
    """``pairs`` less those sharing a sentence with the held-out sets (counted as rejected); all of them without
    ``heldout``. For pairs made from files (a pipeline's output, PPDB), whose readers cannot tell."""
    if heldout is None:
        return pairs
    return pairs.without(heldout.mask(pairs.text_a, pairs.text_b, pairs.langs_b), heldout.reason)


def _cache_key(config: DataConfig) -> str:
    """The data config, plus the input file's identity for parquet inputs (a re-made file must not hit the cache)."""
    source = []
    for path in map(Path, config.all_paths):
        stats = [p.stat() for p in ([path] if path.is_file() else sorted(path.glob("*.parquet")))]
        source.append({"path": str(path.resolve()), "size": sum(s.st_size for s in stats),
                       "mtime_ns": max((s.st_mtime_ns for s in stats), default=0)})
    # A setting at its neutral default is left out, so data prepared before the setting existed keeps its key.
    neutral = {name for name, default in (("heldout", "keep"), ("teacher_contextual", False))
               if getattr(config, name) == default}
    settings = json.dumps({"format": PREPARED_FORMAT, **config.model_dump(mode="json", exclude=neutral),
                           "source": source}, sort_keys=True, default=str)
    return hashlib.sha256(settings.encode()).hexdigest()[:16]


def evaluation_bigrams(sources: tuple[str, ...], tokenizer: Tokenizer) -> set[tuple[str, str]]:
    """Every word bigram of the named evaluation sets' sentences (``sick``: SICK test), tokenised for training."""
    bigrams: set[tuple[str, str]] = set()
    if "sick" in sources:
        for pair in read_sick("test"):
            for sentence in (pair.sentence_a, pair.sentence_b):
                tokens = tokenizer(sentence)
                bigrams.update(zip(tokens, tokens[1:]))
    return bigrams


def shares_bigram(tokens: list[str], bigrams: set[tuple[str, str]]) -> bool:
    return any(bigram in bigrams for bigram in zip(tokens, tokens[1:]))


def prepare_pairs(config: DataConfig, cache_root: Path | None = None) -> PreparedData:
    """Tokenise, build the vocabulary, pad to ``config.max_tokens`` and cache; returns the cached result if present."""
    directory = (cache_root or output_root() / "prepared") / _cache_key(config)
    with one_builder(directory.with_name(f"{directory.name}.lock")):
        if not PreparedData.is_complete(directory):
            _prepare(config, directory)
    return PreparedData.load(directory)


def _prepare(config: DataConfig, directory: Path) -> None:

    tokenizer = Tokenizer(config.tokenizer, lowercase=config.lowercase)
    pairs = load_text_pairs(config)
    tokens_a = tokenizer.tokenize_all(pairs.text_a)
    tokens_b = tokenizer.tokenize_all(pairs.text_b)

    # Drop exact duplicate pairs and pairs with an empty side; count both, so rows in = rows out + rejected.
    rejected = Counter(pairs.rejected)
    seen: set[tuple[tuple[str, ...], tuple[str, ...]]] = set()
    banned = evaluation_bigrams(config.drop_bigrams_of, tokenizer)
    keep = []
    for index, (a, b) in enumerate(zip(tokens_a, tokens_b)):
        key = (tuple(a), tuple(b))
        if not a or not b:
            rejected["no tokens on one side"] += 1
        elif banned and (shares_bigram(a, banned) or (pairs.langs_b[index] == "en" and shares_bigram(b, banned))):
            rejected[f"shares a bigram with {'+'.join(config.drop_bigrams_of)}"] += 1
        elif key in seen:
            rejected["duplicate pair"] += 1
        else:
            seen.add(key)
            keep.append(index)
    order = np.random.default_rng(config.seed).permutation(len(keep))
    if config.max_pairs is not None and config.max_pairs < len(keep):
        rejected["beyond max_pairs sample"] += len(keep) - config.max_pairs
        order = order[: config.max_pairs]
    chosen = [keep[i] for i in order]

    languages_b = sorted({pairs.langs_b[i] for i in chosen})
    counts: dict[str, Counter] = {lang: Counter() for lang in ["en", *languages_b]}
    for index in chosen:
        counts["en"].update(tokens_a[index])
        counts[pairs.langs_b[index]].update(tokens_b[index])
    vocab = Vocabulary.build(counts, min_count=config.min_count, max_words_per_language=config.max_words_per_language)
    if config.glove_words:
        vocab = with_glove_words(vocab, config.glove_words)
    ids_a, len_a = pad_batch([vocab.encode(tokens_a[i], "en") for i in chosen], config.max_tokens)
    ids_b, len_b = pad_batch([vocab.encode(tokens_b[i], pairs.langs_b[i]) for i in chosen], config.max_tokens)
    ids_a, ids_b = (np.pad(ids, ((0, 0), (0, config.max_tokens - ids.shape[1]))) for ids in (ids_a, ids_b))

    stats = {
        "pairs_read": len(pairs.text_a) + sum(pairs.rejected.values()),
        "pairs_kept": len(chosen),
        "rejected": dict(rejected),
        "lang_a": "en",
        "lang_b": "+".join(languages_b) or "en",
        "vocab_size": len(vocab),
        "mean_tokens_a": float(np.mean(len_a)) if len(chosen) else 0.0,
        "mean_tokens_b": float(np.mean(len_b)) if len(chosen) else 0.0,
        "truncated_pairs": int(sum((np.asarray([len(tokens_a[i]) for i in chosen]) > config.max_tokens)
                                   | (np.asarray([len(tokens_b[i]) for i in chosen]) > config.max_tokens))),
        "tokenizer": tokenizer.to_dict(),
        "max_tokens": config.max_tokens,
        "config": config.model_dump(mode="json"),
    }
    english = [tokens_a[i] for i in chosen] + [tokens_b[i] for i in chosen if pairs.langs_b[i] == "en"]
    tables = {"pairs": id_table(ids_a, len_a, ids_b, len_b),
              "fit": sentence_table(component_sentences(english, config), vocab, "en", config.max_tokens)}
    stats["fit_sentences"] = tables["fit"].num_rows
    arrays, documents = {}, {}
    if config.teacher_sentences:
        texts = teacher_sentences(pairs, chosen, config)
        tables["teacher"] = sentence_table(tokenizer.tokenize_all(texts), vocab, "en", config.max_tokens)
        if config.teacher_contextual:  # the same pass: sentence targets and each word's contextual vectors
            arrays["teacher"], contextual = encode_in_context(texts)
            arrays.update(contextual_sums=contextual.sums, contextual_counts=contextual.counts)
            documents[CONTEXTUAL_WORDS] = contextual.words
        else:
            arrays["teacher"] = encode_with_ray(texts)
        stats["teacher_sentences"] = len(texts)
    word_counts = {lang: {word: counts[lang][word] for _, word in vocab.words(lang) if word in counts[lang]}
                   for lang in counts}
    documents[COUNTS_FILE] = word_counts
    write_prepared(directory, tables, vocab, stats, arrays=arrays, documents=documents)
    log.info("prepared %d training pairs (%s) in %s", len(chosen), dict(rejected), directory)


def with_glove_words(vocab: Vocabulary, count: int) -> Vocabulary:
    """``vocab`` plus the ``count`` most frequent GloVe words it lacks, as English entries (after its own)."""
    words, _ = load_glove()
    keys = [vocab.key(i) for i in range(1, len(vocab))]
    known = set(keys)
    keys += [key for key in (f"en:{word}" for word in words[:count]) if key not in known]
    return Vocabulary(keys)


def component_sentences(sentences: list[list[str]], config: DataConfig) -> list[list[str]]:
    """A seeded sample of ``config.component_sentences`` distinct English training sentences (tokenised): what a
    model's common components are fitted on."""
    distinct = list(dict.fromkeys(tuple(tokens) for tokens in sentences if tokens))
    order = np.random.default_rng(config.seed + 1).permutation(len(distinct))[:config.component_sentences]
    return [list(distinct[i]) for i in sorted(order)]


def teacher_sentences(pairs: TextPairs, chosen: list[int], config: DataConfig) -> list[str]:
    """A seeded sample of ``config.teacher_sentences`` distinct English sentences of the chosen pairs (as written,
    for the teacher): what the distillation objective fits the student's similarities on."""
    english = [pairs.text_a[i] for i in chosen] + [pairs.text_b[i] for i in chosen if pairs.langs_b[i] == "en"]
    distinct = list(dict.fromkeys(text for text in english if text.strip()))
    order = np.random.default_rng(config.seed + 2).permutation(len(distinct))[:config.teacher_sentences]
    return [distinct[i] for i in sorted(order)]


def sentence_table(sentences: list[list[str]], vocab: Vocabulary, lang: str, max_tokens: int) -> pa.Table:
    """Tokenised sentences as padded ids (``ids_a``, ``len_a``) in the prepared format."""
    ids, lengths = pad_batch(vocab.encode_all(sentences, lang), max_tokens)
    ids = np.pad(ids, ((0, 0), (0, max_tokens - ids.shape[1])))
    return pa.table({"ids_a": fixed_size_ids(ids), "len_a": pa.array(lengths.astype(np.int32))})


def contextual_sums(prepared: PreparedData) -> ContextualSums | None:
    """The contextual sums the teacher's pass kept (``data.teacher_contextual``), or None when it kept none."""
    words = prepared.directory / CONTEXTUAL_WORDS
    if not words.is_file():
        return None
    return ContextualSums(json.loads(words.read_text()), np.load(prepared.directory / "contextual_sums.npy"),
                          np.load(prepared.directory / "contextual_counts.npy"))
