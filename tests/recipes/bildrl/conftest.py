"""A hand-made tiny WordNet / WOLF / MUSE sample in the shipped formats, tiny bilingual spaces over it, and a real
slice of the shipped MUSE es-en dictionary with the real WordNet gloss table."""

from __future__ import annotations

import gzip

import numpy as np
import pytest
import torch

from parabit.data.definitions import read_wolf, read_wordnet_glosses
from parabit.data.dictionaries import DictionaryEntry, read_muse
from parabit.recipes.bildrl.build import BuildInputs
from parabit.recipes.bildrl.entries import lemma_index
from parabit.recipes.bildrl.space import BilingualSpace
from parabit.embedder import SentenceEmbedder
from parabit.encoders import AvgEncoder
from parabit.text.tokenize import Tokenizer
from parabit.text.vocab import Vocabulary

WORDNET_ROWS = [
    ("00000001-n", "n", "05", "dog|domestic_dog", 'a domesticated carnivorous mammal; "the dog barked"'),
    ("00000002-n", "n", "05", "cat", "a small feline mammal kept as a pet"),
    ("00000003-s", "s", "00", "big|large", "above average in size"),
    ("00000004-n", "n", "06", "house", "a building where people live"),
    ("00000005-n", "n", "20", "tree", "a tall perennial woody plant"),
    ("00000006-v", "v", "38", "run", "move fast using the legs"),
    ("00000007-n", "n", "06", "car|auto", "a motor vehicle with four wheels"),
    ("00000008-n", "n", "14", "bank", "a financial institution"),
    ("00000009-n", "n", "17", "bank", "sloping land beside a body of water"),
    ("00000010-n", "n", "27", "water", "a clear liquid"),
    ("00000011-n", "n", "05", "puppy", "a young dog"),
    ("00000012-n", "n", "06", "door", "a swinging barrier at an entrance"),
]
WOLF_ROWS = [
    ("00000001-n", "chien"), ("00000001-n", "toutou"), ("00000001-n", "chien domestique"), ("00000002-n", "chat"),
    ("00000003-a", "grand"), ("00000004-n", "maison"), ("00000005-n", "arbre"), ("00099999-v", "courir"),
    ("00000007-n", "voiture"), ("00000010-n", "eau"), ("00000011-n", "chiot"), ("00000012-n", "porte"),
]
MUSE_PAIRS = [("perro", "dog"), ("gato", "cat"), ("casa", "house"), ("árbol", "tree"), ("banco", "bank"),
              ("coche", "car"), ("agua", "water"), ("cachorro", "puppy"), ("puerta", "door"), ("xyz", "qwerty")]
ENGLISH = ["dog", "cat", "big", "large", "house", "tree", "run", "car", "auto", "bank", "water", "puppy", "door",
           "a", "the", "of", "mammal", "small", "young", "in", "size", "building"]


@pytest.fixture(scope="session")
def tiny_inputs(tmp_path_factory) -> BuildInputs:
    folder = tmp_path_factory.mktemp("tiny-wordnet")
    wordnet = folder / "wn30_glosses.tsv.gz"
    with gzip.open(wordnet, "wt", encoding="utf-8") as out:
        out.write("synset_id\tpos\tlex_filenum\tlemmas\tgloss\n")
        out.writelines("\t".join(row) + "\n" for row in WORDNET_ROWS)
    wolf = folder / "wn-data-fra.tab"
    wolf.write_text("# WOLF sample\tfra\n" + "".join(f"{s}\tfra:lemma\t{w}\n" for s, w in WOLF_ROWS), "utf-8")
    muse = [DictionaryEntry(es, en, line) for line, (es, en) in enumerate(MUSE_PAIRS, start=1)]
    synsets = read_wordnet_glosses(wordnet)
    index = lemma_index(synsets)
    # The hand-made synsets are not WordNet's: an English word finds the tiny table's synsets of its lemma.
    return BuildInputs(synsets, read_wolf(wolf), muse, senses=lambda word: [s.synset_id for s in index.get(word, [])])


# Real MUSE es-en lines (1-based): banco → banco (a name to WordNet), bank, bench; barcos → ships, vessels, boats;
# existe → exists; trasladado → transferred; semestres → semesters. Inflected English words, and words of many senses.
MUSE_LINES = (1089, 1928, 1929, 1930, 4322, 4323, 4324, 7956, 45810)


@pytest.fixture(scope="session")
def wordnet_synsets():
    """The shipped WordNet 3.0 gloss table, every synset (read once: about 10 s)."""
    return read_wordnet_glosses()


@pytest.fixture(scope="session")
def muse_slice() -> list[DictionaryEntry]:
    return [entry for entry in read_muse("es", "en") if entry.line in MUSE_LINES]


def space_over(foreign: list[str], lang: str, seed: int, english: list[str] = ENGLISH) -> BilingualSpace:
    """A random bilingual space with rows for ``english`` and the ``foreign`` words of ``lang``."""
    vocab = Vocabulary.build({"en": {w: 2 for w in english}, lang: {w: 2 for w in foreign}})
    vectors = np.random.default_rng(seed).normal(size=(len(vocab), 8)).astype(np.float32)
    vectors[0] = 0.0
    return BilingualSpace(vocab, vectors, Tokenizer())


@pytest.fixture(scope="session")
def tiny_spaces() -> dict[str, BilingualSpace]:
    french = ["chien", "toutou", "chat", "grand", "maison", "arbre", "courir", "voiture", "eau", "chiot", "porte"]
    spanish = [es for es, _ in MUSE_PAIRS] + ["un", "una", "de", "mamífero", "pequeño", "edificio", "perro"]
    return {"fr": space_over(french, "fr", 1), "es": space_over(spanish, "es", 2)}


def save_space(space: BilingualSpace, folder) -> str:
    """Write a space as a parabit embedder folder (what a training run's checkpoint holds)."""
    encoder = AvgEncoder(len(space.vocab), space.dim, initial_vectors=torch.from_numpy(space.vectors))
    SentenceEmbedder(encoder, {"encoder": "avg", "vocab_size": len(space.vocab), "dim": space.dim, "options": {}},
                     space.vocab, space.tokenizer, "en", 40).save(folder)
    return str(folder)
