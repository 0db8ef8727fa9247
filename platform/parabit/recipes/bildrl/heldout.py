"""Which words a BilDRL test may hold out, decided before anything is fitted.

A word is in the held-out **pool** when a stable hash of its language and spelling falls below :data:`POOL_SHARE`:
the same in every run and checkout, whatever the space, the dictionaries or the seed. The dictionaries draw their
test words from the pool only (:func:`parabit.recipes.bildrl.entries.select_entries`), and the pairs that fit a target
space's map (:func:`parabit.recipes.bildrl.aligned_space.alignment_pairs`) hold no pool word on either side, so a test
word's vector is never placed by its own dictionary translation. (Its row itself comes from the bitext, as every
word's does: the space is the paper's pre-trained embeddings, not supervision.)
"""

from __future__ import annotations

import hashlib

POOL_SHARE = 0.25  # es-en keeps ~3,000 distinct words after filtering: a quarter leaves room for 500 test words


def in_pool(word: str, lang: str) -> bool:
    """Whether ``word`` of language ``lang`` may be a test word (and so never fits a map)."""
    digest = hashlib.sha1(f"{lang}:{word}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < POOL_SHARE
