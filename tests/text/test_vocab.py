from collections import Counter

import numpy as np
import pytest

from parabit.data.sts import read_sts_year
from parabit.text.tokenize import Tokenizer
from parabit.text.vocab import PAD_ID, UNK_WORD, Vocabulary, pad_batch


def small_vocab():
    return Vocabulary.build({"en": Counter({"once": 3, "upon": 2, "rare": 1}), "es": Counter({"once": 5, "casa": 2})},
                            min_count=2)


def test_same_spelling_in_two_languages_is_two_entries():
    vocab = small_vocab()
    assert vocab.id("once", "en") != vocab.id("once", "es")
    assert "en:once" in vocab and "es:once" in vocab


def test_unknown_and_below_min_count_words_map_to_the_language_unk():
    vocab = small_vocab()
    assert vocab.id("rare", "en") == vocab.id("never-seen", "en") == vocab.id("<unk>", "en")
    assert vocab.id("never-seen", "es") == vocab.id("<unk>", "es") != vocab.id("<unk>", "en")


def test_unknown_language_is_an_error():
    with pytest.raises(KeyError, match="language 'fr'"):
        small_vocab().id("maison", "fr")


def test_padding_is_id_zero_and_batches_are_padded():
    vocab = small_vocab()
    ids, lengths = vocab.encode_batch([["once", "upon"], [], ["upon"]], "en")
    assert ids.dtype == np.int64 and ids.shape == (3, 2)
    assert lengths.tolist() == [2, 0, 1]
    assert ids[1].tolist() == [PAD_ID, PAD_ID] and ids[2, 1] == PAD_ID


def test_save_and_load_keep_every_id(tmp_path):
    vocab = small_vocab()
    vocab.save(tmp_path / "vocab.json")
    loaded = Vocabulary.load(tmp_path / "vocab.json")
    assert len(loaded) == len(vocab)
    assert [loaded.key(i) for i in range(len(loaded))] == [vocab.key(i) for i in range(len(vocab))]


def test_pad_batch_truncates():
    ids, lengths = pad_batch([[5, 6, 7], [8]], max_length=2)
    assert ids.tolist() == [[5, 6], [8, 0]] and lengths.tolist() == [2, 1]


def test_encode_all_matches_id_by_id_lookup():
    vocab = small_vocab()
    sentences = [["once", "upon", "zebra"], [], ["rare"]]
    assert vocab.encode_all(sentences, "es") == [[vocab.id(w, "es") for w in s] for s in sentences]
    assert vocab.encode(["once", "zebra"], "en") == [vocab.id("once", "en"), vocab.id("<unk>", "en")]
    with pytest.raises(KeyError, match="language 'fr'"):
        vocab.encode(["maison"], "fr")


def test_pad_batch_scatters_rows_in_order():
    ids, lengths = pad_batch([[1], [2, 3, 4, 5], [], [6, 7]], max_length=3)
    assert ids.tolist() == [[1, 0, 0], [2, 3, 4], [0, 0, 0], [6, 7, 0]] and lengths.tolist() == [1, 3, 0, 2]


@pytest.mark.parametrize("tokenizer", [Tokenizer(), Tokenizer(lowercase=False), Tokenizer("wordpunct")],
                         ids=["regexp", "regexp-cased", "wordpunct"])
@pytest.mark.parametrize("max_length", [None, 30, 4])
def test_texts_to_ids_is_the_per_text_path_on_real_sentences_and_edge_cases(tokenizer, max_length):
    """The flat path (one tokenising pass over the joined texts, each distinct token looked up once) gives exactly
    the ids of tokenising, looking up and padding text by text; empty texts become the unknown word."""
    sentences = [s for subset in read_sts_year(2016) for p in subset.pairs for s in (p.sentence_a, p.sentence_b)]
    texts = sentences + ["", "  ", "Line one\nline two", "don't\nstop", "ΟΔΟΣ ΣΟΦΟΣ", "a " * 40, "\n", "Café!"]
    tokenized = tokenizer.tokenize_all(texts)
    vocab = Vocabulary.build({"en": Counter(t for tokens in tokenized[::3] for t in tokens)})  # unknown words too
    expected = pad_batch(vocab.encode_all([tokens or [UNK_WORD] for tokens in tokenized], "en"), max_length)
    ids, lengths = vocab.texts_to_ids(tokenizer, texts, "en", max_length)
    assert np.array_equal(ids, expected[0]) and np.array_equal(lengths, expected[1])
    assert (ids == vocab.id(UNK_WORD, "en")).any() and lengths.min() >= 1


def test_texts_to_ids_of_no_texts_is_an_empty_batch():
    ids, lengths = Vocabulary.build({"en": Counter(["a"])}).texts_to_ids(Tokenizer(), [], "en")
    assert ids.shape[0] == 0 and lengths.shape == (0,)
