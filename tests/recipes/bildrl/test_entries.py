"""Which pairs a dictionary holds: each source's candidates (the WOLF join on a hand-made sample; every WordNet sense
of a MUSE es-en word's English translation, inflections included, on a real slice with the real WordNet), the filter,
and the strict and the authors' held-out splits."""

from __future__ import annotations

from collections import Counter

import pytest

from parabit.recipes.bildrl.entries import Candidate, muse_candidates, select_entries, wolf_candidates
from parabit.recipes.bildrl.heldout import in_pool


def test_wolf_join_pairs_french_words_with_their_synsets_english_definition(tiny_inputs):
    joined, unjoined = wolf_candidates(tiny_inputs.wolf, tiny_inputs.synsets)
    by_word = {c.word: c for c in joined}
    assert by_word["chien"].definition == "a domesticated carnivorous mammal"  # the quoted example is not definition
    assert by_word["toutou"].synset_id == by_word["chien"].synset_id == "00000001-n"
    # WOLF writes the satellite adjective 00000003-s as -a: it must still join
    assert by_word["grand"].synset_id == "00000003-s" and by_word["grand"].definition == "above average in size"
    assert [(line, reason) for line, reason, _ in unjoined] == [(8, "synset not in WordNet 3.0")]
    assert len(joined) + len(unjoined) == len(tiny_inputs.wolf) == 12


def test_an_es_en_word_keeps_the_definition_of_every_synset_of_its_english_translations(outputs, wordnet_synsets,
                                                                                       muse_slice):
    candidates, rejected = muse_candidates(muse_slice, wordnet_synsets)  # WordNet's own lookup, its morphology
    definitions = Counter()
    for candidate in candidates:
        definitions[(candidate.word, candidate.line)] += 1
    # 'bank' is a lemma of 10 noun and 8 verb synsets in WordNet 3.0, 'bench' of 9: every one defines 'banco'
    # (the old rule kept an English word of exactly one synset, so 'banco' had none).
    assert definitions[("banco", 1929)] == 18 and definitions[("banco", 1930)] == 9
    banco = {c.definition for c in candidates if c.word == "banco"}
    assert {"sloping land (especially the slope beside a body of water)",
            "a financial institution that accepts deposits and channels the money into lending activities",
            "a long seat for more than one person"} <= banco
    # Inflected translations find their lemma's synsets through WordNet's suffix rules and exception lists.
    semestres = [c.definition for c in candidates if c.word == "semestres"]
    assert semestres == ["one of two divisions of an academic year", "half a year; a period of 6 months"]
    assert "a small vessel for travel on water" in {c.definition for c in candidates if c.word == "barcos"}
    assert "have an existence, be extant" in {c.definition for c in candidates if c.word == "existe"}
    assert "move from one place to another" in {c.definition for c in candidates if c.word == "trasladado"}
    # A word WordNet does not know (here MUSE's 'banco' → 'banco') is quarantined with its reason and MUSE line.
    assert [(reason, text, line) for _, reason, text, line in rejected] == [
        ("English translation not in WordNet", "banco\tbanco", 1928)]
    ids = [c.id for c in candidates] + [row_id for row_id, *_ in rejected]
    assert len(set(ids)) == len(ids)  # one MUSE line gives several rows, each its own row id


@pytest.mark.parametrize("seed", range(8))
def test_no_test_word_or_test_definition_in_training(seed):
    # Synonyms share a definition: holding out one of them must remove the shared definition from training.
    candidates = [Candidate("s", i, word, definition, f"{i:08d}-n") for i, (word, definition) in enumerate([
        ("chien", "dog def"), ("toutou", "dog def"), ("chien", "hound def"), ("chat", "cat def"),
        ("minou", "cat def"), ("maison", "house def"), ("arbre", "tree def"), ("porte", "door def"),
        ("eau", "water def"), ("eau", "rain def"), ("voiture", "car def")])]
    vocabulary = {c.word for c in candidates}
    kept, rejected = select_entries(candidates, vocabulary, test_words=3, seed=seed)
    test = [(c, w) for c, w, split, _ in kept if split == "test"]
    train = [(c, w) for c, w, split, _ in kept if split == "train"]
    assert len(test) == 3 and len({w for _, w in test}) == 3
    assert not {w for _, w in test} & {w for _, w in train}
    assert not {c.definition for c, _ in test} & {c.definition for c, _ in train}
    assert len(kept) + len(rejected) == len(candidates)


def test_test_words_come_only_from_the_held_out_pool():
    candidates = [Candidate("s", i, f"word{i}", f"definition {i}", f"{i:08d}-n") for i in range(400)]
    vocabulary = {c.word for c in candidates}
    kept, _ = select_entries(candidates, vocabulary, test_words=40, seed=0,
                             may_hold_out=lambda word: in_pool(word, "fr"))
    test = {w for _, w, split, _ in kept if split == "test"}
    assert len(test) == 40 and all(in_pool(w, "fr") for w in test)
    pool = {w for w in vocabulary if in_pool(w, "fr")}
    assert 0.15 < len(pool) / len(vocabulary) < 0.35  # about a quarter of all words, whatever they are
    # The whole pool may be held out, not one word more.
    kept, _ = select_entries(candidates, vocabulary, test_words=len(pool), seed=0,
                             may_hold_out=lambda word: in_pool(word, "fr"))
    assert {w for _, w, split, _ in kept if split == "test"} == pool
    with pytest.raises(ValueError, match="held-out pool"):
        select_entries(candidates, vocabulary, test_words=len(pool) + 1, seed=0,
                       may_hold_out=lambda word: in_pool(word, "fr"))


def test_select_entries_drops_multiword_unknown_and_duplicate_words():
    candidates = [Candidate("s", 1, "chien domestique", "d1", "x"), Candidate("s", 2, "zzz", "d2", "x"),
                  Candidate("s", 3, "Chat", "d3", "x"), Candidate("s", 4, "chat", "d3", "x")] + \
                 [Candidate("s", 10 + i, w, f"d{10 + i}", "x") for i, w in enumerate(["a", "b", "c"])]
    kept, rejected = select_entries(candidates, {"chat", "a", "b", "c"}, test_words=1, seed=0)
    assert Counter(reason for _, reason in rejected)["multi-word entry"] == 1
    assert Counter(reason for _, reason in rejected)["word not in the bilingual space"] == 1
    assert Counter(reason for _, reason in rejected)["duplicate entry"] == 1
    assert "chat" in {w for _, w, _, _ in kept}  # lower-cased


SENSES = [("chien", "dog def"), ("chien", "hound def"), ("chien", "canine def"), ("chat", "cat def"),
          ("chat", "feline def"), ("eau", "water def"), ("le", "article def"), ("le", "pronoun def"),
          ("maison", "house def"), ("arbre", "tree def"), ("arbre", "shaft def")]
RANK = {"le": 0, "chien": 1, "chat": 2, "eau": 3, "maison": 4, "arbre": 5}  # le: the most frequent, a stop word


@pytest.mark.parametrize("seed", range(6))
def test_the_authors_split_repeats_each_multi_definition_test_pair_in_training_and_the_strict_split_never_does(seed):
    candidates = [Candidate("s", i, w, d, f"{i:08d}-n") for i, (w, d) in enumerate(SENSES)]
    vocabulary = {w for w, _ in SENSES}
    strict, _ = select_entries(candidates, vocabulary, test_words=3, seed=seed)
    test_pairs = {(c.word, c.definition) for c, _, split, _ in strict if split == "test"}
    trained = {(c.word, c.definition) for c, _, split, copies in strict if split == "train" for _ in range(copies)}
    assert not test_pairs & trained and {copies for *_, copies in strict} <= {0, 1}

    authors, rejected = select_entries(candidates, vocabulary, test_words=3, seed=seed, split="authors", rank=RANK,
                                       stop=frozenset({"le"}))
    assert not rejected and len(authors) == len(candidates)  # every row kept, each once (its copies counted)
    test = {w: (c.definition, copies) for c, w, split, copies in authors if split == "test"}
    definitions = Counter(w for w, _ in SENSES)
    # The most frequent words that are not stop words give the test cases (one-line "eau" may be skipped by its coin)
    assert "le" not in test and len(test) == 3 and {"chien", "chat"} <= set(test)
    for word, (definition, copies) in test.items():
        assert copies == definitions[word] - 1  # the test pair itself, in training n - 1 times
        assert definition in [d for w, d in SENSES if w == word][:2]  # the first or the second line
    for c, word, split, copies in authors:
        if split == "train":
            assert copies == definitions[word]  # every training line n times, as the script writes it
