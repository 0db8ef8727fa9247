import pytest

from parabit.text.tokenize import TOKENIZERS, Tokenizer


def test_regexp_splits_clitics_like_the_treebank():
    assert Tokenizer()("I don't think it's John's.") == ["i", "do", "n't", "think", "it", "'s", "john", "'s", "."]


@pytest.mark.parametrize("name", sorted(TOKENIZERS))
def test_every_tokenizer_runs_without_downloaded_data(name):
    tokens = Tokenizer(name)("A man is playing a guitar, loudly.")
    assert tokens[:3] == ["a", "man", "is"] and "guitar" in tokens


def test_case_is_kept_on_request():
    assert Tokenizer(lowercase=False)("New York") == ["New", "York"]


def test_settings_round_trip():
    tokenizer = Tokenizer("toktok", lowercase=False)
    assert Tokenizer.from_dict(tokenizer.to_dict()).to_dict() == {"name": "toktok", "lowercase": False}


def test_unknown_tokenizer_lists_the_choices():
    with pytest.raises(ValueError, match="choose one of"):
        Tokenizer("punkt")


def test_regexp_tokenizer_is_nltks_regexp_tokenizer_on_real_sentences():
    from nltk.tokenize import RegexpTokenizer

    from parabit.data.sts import read_sts_year
    from parabit.text.tokenize import TREEBANK_LIKE_PATTERN

    sentences = [s for subset in read_sts_year(2016) for p in subset.pairs for s in (p.sentence_a, p.sentence_b)]
    nltk_split = RegexpTokenizer(TREEBANK_LIKE_PATTERN).tokenize
    assert Tokenizer().tokenize_all(sentences) == [nltk_split(s.lower()) for s in sentences]


@pytest.mark.parametrize("lowercase", [True, False])
def test_tokenize_flat_gives_each_text_s_tokens_in_order_with_and_without_n_t(lowercase):
    """The joined pass (each distinct word once) gives exactly the per-text tokens."""
    from parabit.data.sts import read_sts_year

    sentences = [s for subset in read_sts_year(2016) for p in subset.pairs for s in (p.sentence_a, p.sentence_b)]
    edge_cases = ["I don't know.", "", "x-don't", "n't", "DON'T", "can't.\nwon't", "isn'tx", "   ", "it's fine"]
    texts = edge_cases + sentences[:300] + edge_cases[::-1]
    tokenizer = Tokenizer(lowercase=lowercase)
    tokens, lengths = tokenizer.tokenize_flat(texts)
    expected = [tokenizer(text.replace("\n", " ")) for text in texts]
    assert lengths.tolist() == [len(e) for e in expected]
    assert tokens.tolist() == [token for e in expected for token in e]
    assert sum("n't" in e for e in expected) >= (4 if lowercase else 2)  # the "n't" alternatives were exercised
    with_separator = ["a\x00b", "c \x00 d", "e"]  # the character joined texts are split with: each text alone
    assert tokenizer.tokenize_flat(with_separator)[0].tolist() == ["a", "\x00", "b", "c", "\x00", "d", "e"]
    without_n_t = ["no clitic here", "nor here"]
    assert tokenizer.tokenize_flat(without_n_t)[0].tolist() == ["no", "clitic", "here", "nor", "here"]
