"""Stop words of English, French and Spanish: nltk's stopwords corpus as shipped under ``<data>/nltk_data``
(nothing is downloaded)."""

from __future__ import annotations

from functools import cache

from parabit.paths import data_path

LANGUAGES = {"en": "english", "fr": "french", "es": "spanish"}


@cache
def stopwords(lang: str) -> frozenset[str]:
    """The lower-cased stop words of ``lang`` (``en``, ``fr``, ``es``)."""
    import nltk

    if lang not in LANGUAGES:
        raise ValueError(f"no stop words for language {lang!r}; have {sorted(LANGUAGES)}")
    folder = str(data_path("nltk_data"))
    if folder not in nltk.data.path:  # nltk reads (and only trusts) the folders on its search path
        nltk.data.path.append(folder)
    from nltk.corpus import stopwords as corpus

    return frozenset(word.lower() for word in corpus.words(LANGUAGES[lang]))
