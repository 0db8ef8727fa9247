"""Which (word, definition) pairs a BilDRL dictionary holds: the candidates of each direction's sources
(:func:`wolf_candidates` fr-en, :func:`wordnet_candidates` en-es, :func:`muse_candidates` es-en), then the filter and
the held-out split (:func:`select_entries`: ``strict``, or the authors' :func:`authors_split`). Every candidate ends
kept or rejected with its reason; :mod:`parabit.recipes.bildrl.build` writes both as stages."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from parabit.data.definitions import Synset, WolfLemma, wordnet_join_key
from parabit.data.dictionaries import DictionaryEntry
from parabit.data.wordnet_database import synset_ids

SenseLookup = Callable[[str], list[str]]
"""An English word → the ids (``<offset>-<ss_type>``) of the synsets WordNet's lookup finds for it, in its order."""


@dataclass(frozen=True)
class Candidate:
    """A (word, definition) pair before filtering; ``line`` is where it came from in ``source``; ``row_id``: its id in
    the stage (default: ``line``; a source line that gives several candidates numbers them apart)."""

    source: str
    line: int
    word: str
    definition: str
    synset_id: str
    row_id: int | None = None

    @property
    def id(self) -> int:
        return self.line if self.row_id is None else self.row_id


# -- candidates per direction ----------------------------------------------------------------------------------------
def wolf_candidates(wolf: list[WolfLemma], synsets: list[Synset]) -> tuple[list[Candidate], list[tuple[int, str, str]]]:
    """fr-en: each WOLF lemma with its synset's English definition. Returns the candidates and the rows that do not
    join, as ``(line, reason, text)``; ``line`` is the lemma's position among WOLF's lemma rows (1-based)."""
    by_key = {wordnet_join_key(s.synset_id): s for s in synsets}
    joined, unjoined = [], []
    for line, entry in enumerate(wolf, start=1):
        synset = by_key.get(entry.synset_id)
        if synset is None:
            unjoined.append((line, "synset not in WordNet 3.0", f"{entry.synset_id}\t{entry.lemma}"))
        else:
            joined.append(Candidate("wolf-fr", line, entry.lemma, synset.definition, synset.synset_id))
    return joined, unjoined


def wordnet_candidates(synsets: list[Synset], translations: dict[str, str]) -> tuple[list[Candidate], list]:
    """en-es: each lemma of each synset with its definition's translation. ``translations`` maps an English
    definition to Spanish; a synset whose definition has none is rejected (``line`` = synset row, 1-based)."""
    candidates, rejected = [], []
    line = 0
    for number, synset in enumerate(synsets, start=1):
        for lemma in synset.lemmas:
            line += 1
            spanish = translations.get(synset.definition)
            if spanish is None:
                rejected.append((line, "definition not translated", f"{synset.synset_id}\t{lemma}"))
            else:
                candidates.append(Candidate("wordnet30+apertium", line, lemma, spanish, synset.synset_id))
    return candidates, rejected


def lemma_index(synsets: list[Synset]) -> dict[str, list[Synset]]:
    """Lower-cased English lemma → every synset it belongs to (any part of speech), in the table's order."""
    index: dict[str, list[Synset]] = defaultdict(list)
    for synset in synsets:
        for lemma in {lemma.lower() for lemma in synset.lemmas}:
            index[lemma].append(synset)
    return index


def muse_candidates(muse: list[DictionaryEntry], synsets: list[Synset],
                    senses: SenseLookup = synset_ids) -> tuple[list[Candidate], list]:
    """es-en: each MUSE (Spanish, English) pair with the definition of every synset ``senses`` finds for its English
    word (WordNet's lookup, inflected forms through its morphology), one candidate per synset in WordNet's order.
    Rejected, as ``(row_id, reason, text, line)``: a pair whose English word has no synset, and a synset the gloss
    table lacks. ``line``: the pair's MUSE line; row ids number every candidate and reject apart."""
    by_id = {synset.synset_id: synset for synset in synsets}
    found: dict[str, list[str]] = {}
    candidates, rejected = [], []
    for entry in muse:
        english = entry.target_word.lower()
        if english not in found:
            found[english] = senses(english)
        text = f"{entry.source_word}\t{entry.target_word}"
        if not found[english]:
            rejected.append((len(candidates) + len(rejected) + 1, "English translation not in WordNet", text,
                             entry.line))
        for synset_id in found[english]:
            row_id = len(candidates) + len(rejected) + 1
            synset = by_id.get(synset_id)
            if synset is None:
                rejected.append((row_id, "synset not in the gloss table", f"{text}\t{synset_id}", entry.line))
            else:
                candidates.append(Candidate("muse-es-en", entry.line, entry.source_word, synset.definition,
                                            synset_id, row_id))
    return candidates, rejected


# -- filtering and the held-out split --------------------------------------------------------------------------------
def select_entries(candidates: list[Candidate], vocabulary: set[str], test_words: int, seed: int,
                   may_hold_out: Callable[[str], bool] = lambda word: True, split: str = "strict",
                   rank: Mapping[str, int] | None = None, stop: frozenset[str] = frozenset()):
    """Filter candidates and hold out ``test_words`` words. Returns ``(kept, rejected)``: ``kept`` as
    ``(candidate, word, split, copies)`` with the normalised word and how many times the row is in training (1
    but under the authors' split), ``rejected`` as ``(candidate, reason)``.

    A word is lower-cased; it must be one token and a row of the space (``vocabulary``). Duplicate (word,
    definition) pairs are dropped. Test words come only from those that ``may_hold_out`` (the held-out pool:
    :mod:`parabit.recipes.bildrl.heldout`). ``split="strict"``: the test words are a seeded sample; each keeps its
    first definition as the test case; its other definitions, and every other row whose definition is a test
    definition, are rejected, so training never sees a test word or a test definition. ``split="authors"``:
    :func:`authors_split`, ordered by ``rank`` (lower: more frequent) and skipping the ``stop`` words.
    """
    kept, rejected = [], []
    seen: set[tuple[str, str]] = set()
    for candidate in candidates:
        word = candidate.word.strip().lower()
        if not word or any(ch.isspace() for ch in word):
            rejected.append((candidate, "multi-word entry"))
        elif word not in vocabulary:
            rejected.append((candidate, "word not in the bilingual space"))
        elif (word, candidate.definition) in seen:
            rejected.append((candidate, "duplicate entry"))
        else:
            seen.add((word, candidate.definition))
            kept.append((candidate, word))
    words = sorted({word for _, word in kept if may_hold_out(word)})
    if len(words) < test_words:
        raise ValueError(f"only {len(words)} distinct words of the held-out pool survive filtering; cannot hold out "
                         f"{test_words} test words (lower test_words)")
    if split == "authors":
        return authors_split(kept, test_words, seed, may_hold_out, rank or {}, stop), rejected
    test = set(np.random.default_rng(seed).choice(words, size=test_words, replace=False).tolist())
    test_definition: dict[str, str] = {}
    for candidate, word in kept:
        if word in test and word not in test_definition:
            test_definition[word] = candidate.definition
    held_out_definitions = set(test_definition.values())
    result = []
    for candidate, word in kept:
        if word in test:
            if test_definition[word] == candidate.definition:
                result.append((candidate, word, "test", 0))
            else:
                rejected.append((candidate, "another definition of a test word"))
        elif candidate.definition in held_out_definitions:
            rejected.append((candidate, "definition of a test word"))
        else:
            result.append((candidate, word, "train", 1))
    return result, rejected


def authors_split(kept: list[tuple[Candidate, str]], test_words: int, seed: int,
                  may_hold_out: Callable[[str], bool], rank: Mapping[str, int], stop: frozenset[str]):
    """The held-out split of Chen et al.'s code (``preprocess/sort_freq.py``), on ``kept`` (candidate, word) rows:
    ``(candidate, word, split, train_copies)`` for each (a test row's pair is in training ``train_copies`` times).

    The words go most frequent first (``rank``: lower is more frequent; unranked words last, in file order). For
    each word with n lines, the script writes all n lines once per line (n × n rows), so a line is n rows. Walking
    those rows, a word may give the test case until ``test_words`` words have: a seeded coin decides whether its
    first row goes to training and the next is the test case; every other row of the word goes to training. So a
    test word's test pair is in training n − 1 times (its first row's n − 1 other copies when the coin falls on it,
    or, when the coin skips it, every copy of the first line and n − 1 of the second) and each of its other
    definitions n times; every line of a word that gives no test case is in training n times. A word with one line
    whose coin skips it gives no test case (its row goes to training, and the next word is drawn). Stop words, and
    words outside the held-out pool (never held out here, so no map of the space is fitted on a test word), give
    no test case."""
    lines: dict[str, list[Candidate]] = {}
    for candidate, word in kept:
        lines.setdefault(word, []).append(candidate)
    order = sorted(lines, key=lambda word: rank.get(word, len(rank)))  # stable: ties keep file order
    rng = np.random.default_rng(seed)
    result, taken, first_is_test = [], 0, False
    for word in order:
        definitions = lines[word]
        n = len(definitions)
        test = None
        if taken < test_words and word not in stop and may_hold_out(word):
            # After a one-line word's skipped row, the script's next row is the test case with no new coin.
            skip = 0 if first_is_test else int(rng.integers(2))
            first_is_test = bool(skip) and n == 1
            if not first_is_test:
                test, taken = skip, taken + 1
        for index, candidate in enumerate(definitions):
            result.append((candidate, word, "test", n - 1) if index == test else (candidate, word, "train", n))
    if taken < test_words:
        raise ValueError(f"the authors' split found only {taken} test cases among the held-out pool's words that are "
                         f"no stop words; cannot hold out {test_words} (lower test_words)")
    return result
