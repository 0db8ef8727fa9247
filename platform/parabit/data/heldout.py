"""The held-out evaluation sets of the bilingual (English–Spanish) work, and the rule that keeps them out of training.

* **Tatoeba es–en test and dev** (the XTREME / MTEB retrieval protocol): among the pairs of the shipped
  ``spa.txt.gz`` whose English and whose Spanish sentence each occur once in the file (after :func:`normalise`, so
  each query has exactly one right answer), ordered by ``sha1("tatoeba-es-en\\t" + en + "\\t" + es)``, the first
  1,000 are the test set and the next 1,000 the dev set (model selection only, never reported as test). Stable
  across checkouts and machines, and no list to commit.
* **newstest2012 es–en** (the WMT 2012 test set shipped beside Europarl): the out-of-domain retrieval set, its pairs
  whose two sides each occur once; every one of its sentences is held out.

:class:`HeldoutSets` knows every sentence of these sets by its normalised text. A reader that feeds training takes
it (``heldout=`` of :func:`parabit.data.bitext.iter_tatoeba` and :func:`~parabit.data.bitext.iter_line_aligned`)
and quarantines, with :data:`HELDOUT_REASON`, every pair whose English side is a held-out English sentence or whose
foreign side is a held-out sentence of its language (the English of the Tatoeba test also occurs in Tatoeba en–fr,
and newstest2012's English file is the same in the es and fr folders), so rows in = rows out + rejected still holds.
Configs turn the exclusion on with a ``heldout: exclude`` setting; its default, ``keep``, reads as before (the seed
papers' reproduction trains on what it always trained on).
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import ClassVar, Literal

import numpy as np

from parabit.data.bitext import BitextPair, read_europarl, read_tatoeba
from parabit.data.errors import Quarantine, lookup

HeldoutSetting = Literal["keep", "exclude"]
"""What a reader does with held-out pairs: ``keep`` them (the readers' behaviour before the held-out sets existed)
or ``exclude`` them (quarantined with :data:`HELDOUT_REASON`)."""

HELDOUT_REASON = "held-out evaluation sentence"
SPLIT_SIZE = 1000
TATOEBA_SPLITS = ("test", "dev")  # in hash order: the first SPLIT_SIZE candidates are the test set
RETRIEVAL_SETS = ("tatoeba-es", "newstest2012-es")  # the sets an evaluation config may name
HASH_PREFIX = "tatoeba-es-en"


def normalise(text: str) -> str:
    """What two sentences must share to count as the same: lower case, whitespace collapsed, ends stripped."""
    return " ".join(text.lower().split())


def _unique_sides(pairs: Sequence[BitextPair]) -> list[BitextPair]:
    """The pairs whose English and whose foreign sentence each occur once among ``pairs`` (normalised)."""
    english = Counter(normalise(p.en) for p in pairs)
    foreign = Counter(normalise(p.foreign) for p in pairs)
    return [p for p in pairs if english[normalise(p.en)] == 1 and foreign[normalise(p.foreign)] == 1]


def _order_key(pair: BitextPair) -> str:
    return hashlib.sha1(f"{HASH_PREFIX}\t{pair.en}\t{pair.foreign}".encode()).hexdigest()


@dataclass(frozen=True)
class HeldoutSets:
    """The held-out pairs (see the module docstring) and the normalised texts of every one of their sentences, by
    language. Build with :meth:`load` (read once per process)."""

    tatoeba_test: tuple[BitextPair, ...]
    tatoeba_dev: tuple[BitextPair, ...]
    newstest2012: tuple[BitextPair, ...]
    texts: dict[str, frozenset[str]]
    reason: ClassVar[str] = HELDOUT_REASON

    @classmethod
    def load(cls) -> "HeldoutSets":
        return _load()

    def pairs(self, name: str) -> tuple[BitextPair, ...]:
        """A retrieval set by name: ``tatoeba-es`` (test), ``tatoeba-es-dev`` or ``newstest2012-es``."""
        sets = {"tatoeba-es": self.tatoeba_test, "tatoeba-es-dev": self.tatoeba_dev,
                "newstest2012-es": self.newstest2012}
        return lookup(sets, name, "held-out retrieval set")

    def holds(self, text: str, lang: str) -> bool:
        """Whether ``text`` (a sentence in ``lang``) is a held-out sentence."""
        return normalise(text) in self.texts.get(lang, frozenset())

    def excludes(self, en: str, foreign: str, lang: str) -> bool:
        """Whether the pair (``en``, ``foreign`` in ``lang``) shares a sentence with a held-out set."""
        return self.holds(en, "en") or self.holds(foreign, lang)

    def mask(self, en: Iterable[str], foreign: Iterable[str], lang: str | Sequence[str]) -> np.ndarray:
        """:meth:`excludes` of many pairs at once (``lang`` one code for all or one per pair): a boolean array."""
        en, foreign = list(en), list(foreign)
        langs = [lang] * len(en) if isinstance(lang, str) else list(lang)
        return np.fromiter((self.excludes(a, b, code) for a, b, code in zip(en, foreign, langs)), dtype=bool,
                           count=len(en))


@lru_cache(maxsize=1)
def _load() -> HeldoutSets:
    # Held-out pairs themselves are read without exclusion; a bad line is quarantined as any reader would.
    candidates = sorted(_unique_sides(read_tatoeba(lang="es", quarantine=Quarantine())), key=_order_key)
    test, dev = candidates[:SPLIT_SIZE], candidates[SPLIT_SIZE:2 * SPLIT_SIZE]
    newstest = read_europarl("es", "dev", quarantine=Quarantine())
    every = [*test, *dev, *newstest]  # every newstest2012 sentence leaves training, not only the retrieval pairs
    texts = {"en": frozenset(normalise(p.en) for p in every), "es": frozenset(normalise(p.foreign) for p in every)}
    return HeldoutSets(tuple(test), tuple(dev), tuple(_unique_sides(newstest)), texts)


def heldout_sets(setting: HeldoutSetting) -> HeldoutSets | None:
    """The held-out sets a reader excludes under ``setting`` (None for ``keep``)."""
    return HeldoutSets.load() if setting == "exclude" else None


__all__ = ["HELDOUT_REASON", "RETRIEVAL_SETS", "HeldoutSets", "HeldoutSetting", "heldout_sets", "normalise"]
