"""WordNet 3.0's own database (Debian ``wordnet-base``), read by nltk's WordNet reader: a word's synsets found the
way WordNet looks a word up, through its morphology (``morphy``: the suffix rules and the exception lists
``{noun,verb,adj,adv}.exc``), so an inflected form (``semesters``, ``transferred``, ``exists``, ``boats``) finds the
synsets of its lemma.

The shipped gloss table (:func:`parabit.data.definitions.read_wordnet_glosses`) was parsed out of the same package's
``data.*`` files: a synset found here is named ``<8-digit offset>-<ss_type>`` as there, and joins to its gloss.

nltk 3.10's path guard (``nltk.pathsec``) opens corpus files only under its data paths and refuses symbolic links
that leave a root, and nltk's reader needs two files the Debian package does not install: ``lexnames`` and
``index.sense``. So :func:`wordnet_reader` copies the database files once into an nltk_data-style folder under the
output root (``<outputs>/nltk_data/corpora/wordnet``, about 27 MB), writes ``lexnames`` there and an empty
``index.sense``, and adds that folder's root to ``nltk.data.path``: the installed database is never written to.
With an empty ``index.sense`` sense keys find nothing (``lemma_from_key``); the lookup by word does not use them
(the sense index is Debian's ``wordnet-sense-index``).
"""

from __future__ import annotations

import functools
import os
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from parabit.paths import DataNotFoundError, output_root

if TYPE_CHECKING:
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

DATABASE = Path("/usr/share/wordnet")
"""Where Debian's ``wordnet-base`` installs the database (``scripts/setup.sh`` installs the package)."""
DATABASE_ENV = "PARABIT_WORDNET"  # another folder holding the same files (a WordNet 3.0 ``dict/`` folder)

_POS_FILES = ("noun", "verb", "adj", "adv")
DATABASE_FILES = tuple(f"{kind}.{pos}" for kind in ("index", "data") for pos in _POS_FILES) + tuple(
    f"{pos}.exc" for pos in _POS_FILES)
"""What nltk's reader opens: the index (lemma → synset offsets), the synsets, and the exception lists of morphy."""

LEXICOGRAPHER_FILES = (
    "adj.all", "adj.pert", "adv.all", "noun.Tops", "noun.act", "noun.animal", "noun.artifact", "noun.attribute",
    "noun.body", "noun.cognition", "noun.communication", "noun.event", "noun.feeling", "noun.food", "noun.group",
    "noun.location", "noun.motive", "noun.object", "noun.person", "noun.phenomenon", "noun.plant", "noun.possession",
    "noun.process", "noun.quantity", "noun.relation", "noun.shape", "noun.state", "noun.substance", "noun.time",
    "verb.body", "verb.change", "verb.cognition", "verb.communication", "verb.competition", "verb.consumption",
    "verb.contact", "verb.creation", "verb.emotion", "verb.motion", "verb.perception", "verb.possession",
    "verb.social", "verb.stative", "verb.weather", "adj.ppl")
"""WordNet 3.0's lexicographer files in file-number order (the ``lexnames`` file the Debian package leaves out; its
list is the package's own ``lexnames(5WN)`` manual page). nltk's reader names each synset's file from it."""
_CATEGORY = {"noun": 1, "verb": 2, "adj": 3, "adv": 4}  # lexnames' third field: the file's syntactic category


def database_folder() -> Path:
    """The installed database: ``$PARABIT_WORDNET`` or :data:`DATABASE`; a :class:`DataNotFoundError` saying how
    to install it when a file is missing."""
    folder = Path(os.environ.get(DATABASE_ENV) or DATABASE)
    missing = [name for name in DATABASE_FILES if not (folder / name).is_file()]
    if missing:
        raise DataNotFoundError(f"WordNet 3.0's database is not installed: {folder / missing[0]} is missing (install "
                                f"the Debian package wordnet-base, or set {DATABASE_ENV} to a folder with its files)")
    return folder


def _nltk_copy(source: Path) -> Path:
    """The nltk_data-style copy of the database in ``source`` (made once; a finished copy is reused)."""
    folder = output_root() / "nltk_data" / "corpora" / "wordnet"
    if (folder / "lexnames").is_file():
        return folder
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".wordnet-", dir=folder.parent))
    for name in DATABASE_FILES:
        shutil.copyfile(source / name, staging / name)
    # nltk's reader maps sense keys to its own "wordnet" corpus (this folder) when it opens: none are known here.
    (staging / "index.sense").write_text("", "utf-8")
    # Written last: its presence marks a complete copy.
    (staging / "lexnames").write_text("".join(f"{number:02d}\t{name}\t{_CATEGORY[name.split('.')[0]]}\n"
                                              for number, name in enumerate(LEXICOGRAPHER_FILES)), "utf-8")
    try:
        staging.rename(folder)
    except OSError:  # another process finished its copy first
        shutil.rmtree(staging, ignore_errors=True)
    return folder


@functools.cache
def wordnet_reader() -> "WordNetCorpusReader":
    """nltk's reader over WordNet 3.0's database (see the module docstring), once a process."""
    import warnings

    import nltk
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    folder = _nltk_copy(database_folder())
    root = str(folder.parents[1])
    if root not in nltk.data.path:
        nltk.data.path.append(root)  # nltk's own way to authorise a data folder
    with warnings.catch_warnings():  # "multilingual functions are not available": only English is read here
        warnings.simplefilter("ignore", UserWarning)
        return WordNetCorpusReader(str(folder), None)


def synset_ids(word: str) -> list[str]:
    """The synsets WordNet's lookup finds for ``word`` (its own lemmas and, through morphy, those of the lemmas it
    inflects), in WordNet's order (by part of speech, then sense number), as ``<offset>-<ss_type>``."""
    return [f"{synset.offset():08d}-{synset.pos()}" for synset in wordnet_reader().synsets(word)]
