"""Word definitions: English WordNet 3.0 glosses and French WOLF lemmas aligned to WordNet synsets.

Joining the two (:func:`join_wolf_to_wordnet`) pairs French words with English definitions, e.g. for a
cross-lingual reverse dictionary. WOLF writes every adjective synset with ``-a``, while WordNet
distinguishes head adjectives (``-a``) from satellites (``-s``); :func:`wordnet_join_key` reconciles them.
Only 87,312 of the 102,647 WOLF rows find a WordNet 3.0 synset: the others (verbs and adjectives)
use offsets from another WordNet version. Do not assume complete coverage.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from parabit.data.errors import DataFormatError
from parabit.data.lines import iter_lines, iter_table, split_fields
from parabit.paths import data_path

WORDNET_HEADER = ("synset_id", "pos", "lex_filenum", "lemmas", "gloss")
WOLF_LEMMA_TYPE = "fra:lemma"

# "<8-digit offset>-<ss_type>", ss_type one of n (noun), v (verb), a (adjective), s (satellite adj.), r (adverb).
_SYNSET_ID = re.compile(r"\d{8}-[nvasr]")
# Examples begin where a ';'-separated part of the gloss starts with a double quote.
_FIRST_EXAMPLE = re.compile(r'(?:^|;)\s*"')
# A quoted example; a final example whose closing quote is missing (20 glosses) runs to the end.
_QUOTED = re.compile(r'"([^"]*)(?:"|$)')


@dataclass(frozen=True)
class Synset:
    """One WordNet 3.0 synset.

    ``synset_id`` is ``"<offset>-<ss_type>"`` (e.g. "00001740-n"); ``pos`` is the ss_type (n, v, a, s, r);
    ``lemmas`` are written with spaces ("abstract entity", see :func:`lemma_text`); ``gloss`` is the raw
    gloss, split into ``definition`` and its quoted usage ``examples`` (without the quotes).
    """

    synset_id: str
    pos: str
    lex_filenum: int
    lemmas: tuple[str, ...]
    gloss: str
    definition: str
    examples: tuple[str, ...]


@dataclass(frozen=True)
class WolfLemma:
    """One French lemma of a WordNet synset, as listed by WOLF (``synset_id`` uses "-a" for all adjectives)."""

    synset_id: str
    lemma: str


def read_wordnet_glosses(path: str | Path | None = None) -> list[Synset]:
    """Read the WordNet 3.0 gloss table (header + one synset per line).

    The shipped table has 117,659 synsets: n 82,115, v 13,767, a 7,463, s 10,693, r 3,621.
    Raises :class:`DataFormatError` on a wrong header, field count or synset id.
    """
    path = Path(path) if path is not None else data_path("definitions", "wordnet30", "wn30_glosses.tsv.gz")
    synsets: list[Synset] = []
    for number, fields in iter_table(path, WORDNET_HEADER):
        synset_id, pos, lex_filenum, lemmas, gloss = fields
        if not _SYNSET_ID.fullmatch(synset_id) or synset_id[-1] != pos:
            raise DataFormatError(path, number, f"bad synset id {synset_id!r} for pos {pos!r}")
        if not lex_filenum.isdigit():
            raise DataFormatError(path, number, f"lex_filenum {lex_filenum!r} is not a number")
        definition, examples = split_gloss(gloss)
        synsets.append(
            Synset(
                synset_id=synset_id,
                pos=pos,
                lex_filenum=int(lex_filenum),
                lemmas=tuple(lemma_text(lemma) for lemma in lemmas.split("|")),
                gloss=gloss,
                definition=definition,
                examples=examples,
            )
        )
    return synsets


def read_wolf(path: str | Path | None = None) -> list[WolfLemma]:
    """Read WOLF's Open Multilingual Wordnet file (``synset TAB fra:lemma TAB lemma``; 102,647 rows).

    Lines starting with ``#`` are comments (the file has one header comment). Any other row type than
    ``fra:lemma``, or a bad synset id, raises :class:`DataFormatError`.
    """
    path = Path(path) if path is not None else data_path("definitions", "wolf-fr", "wn-data-fra.tab.gz")
    lemmas: list[WolfLemma] = []
    for number, text in iter_lines(path):
        if text.startswith("#"):
            continue
        synset_id, row_type, lemma = split_fields(path, number, text, expected=3)
        if row_type != WOLF_LEMMA_TYPE:
            raise DataFormatError(path, number, f"expected row type {WOLF_LEMMA_TYPE!r}, found {row_type!r}")
        if not _SYNSET_ID.fullmatch(synset_id):
            raise DataFormatError(path, number, f"bad synset id {synset_id!r}")
        if not lemma.strip():
            raise DataFormatError(path, number, "empty lemma")
        lemmas.append(WolfLemma(synset_id, lemma))
    return lemmas


def split_gloss(gloss: str) -> tuple[str, tuple[str, ...]]:
    """Split a WordNet gloss into its definition and its quoted examples.

    ``'lose velocity; move more slowly; "The car decelerated"'`` gives
    ``("lose velocity; move more slowly", ("The car decelerated",))``. Quotes inside the definition
    (``the phrase "make strides"``) stay there; so do the rare examples that WordNet attaches with ``:``
    or ``,`` instead of ``;``. Attributions after an example (``"..." --Shakespeare``) are dropped.
    """
    start = _FIRST_EXAMPLE.search(gloss)
    if start is None:
        return gloss.strip().rstrip(";").strip(), ()
    definition = gloss[: start.start()].strip().rstrip(";").strip()
    examples = tuple(e.strip() for e in _QUOTED.findall(gloss, start.start()) if e.strip())
    return definition, examples


def lemma_text(lemma: str) -> str:
    """A WordNet lemma as running text: underscores stand for spaces ("abstract_entity" -> "abstract entity")."""
    return lemma.replace("_", " ")


def wordnet_join_key(synset_id: str) -> str:
    """The id under which a WordNet synset is found in WOLF/OMW: satellite adjectives "-s" become "-a"."""
    return synset_id[:-2] + "-a" if synset_id.endswith("-s") else synset_id


def join_wolf_to_wordnet(wolf: list[WolfLemma], synsets: list[Synset]) -> list[tuple[WolfLemma, Synset]]:
    """Pair each WOLF lemma with its WordNet 3.0 synset; lemmas whose synset is not in WordNet are left out."""
    by_key = {wordnet_join_key(synset.synset_id): synset for synset in synsets}
    return [(entry, by_key[entry.synset_id]) for entry in wolf if entry.synset_id in by_key]
