"""The aligned space's bitext: the first ``max_pairs`` pairs of its sources in order, each file read only as far as
they need."""

from __future__ import annotations

from itertools import islice

from parabit.data.bitext import iter_tatoeba, read_europarl
from parabit.data.errors import Quarantine
from parabit.recipes.bildrl.aligned_space import AlignedSpaceConfig, bitext
from parabit.text.tokenize import Tokenizer


def test_max_pairs_takes_the_first_pairs_of_each_source_in_order():
    tokenizer = Tokenizer()
    everything = {"tatoeba": iter_tatoeba(lang="fr", quarantine=Quarantine()),
                  "europarl": read_europarl("fr", "train", quarantine=Quarantine())}
    for source, pairs in everything.items():
        config = AlignedSpaceConfig(lang="fr", sources=(source,), max_pairs=300, max_tokens=8)
        english, foreign = bitext(config, tokenizer)
        first = list(islice(pairs, 300))
        assert len(english) == len(foreign) == 300
        assert english == [tokens[:8] for tokens in tokenizer.tokenize_all([p.en for p in first])]
        assert foreign == [tokens[:8] for tokens in tokenizer.tokenize_all([p.foreign for p in first])]
