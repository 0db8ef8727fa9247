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
