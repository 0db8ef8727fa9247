"""WordNet 3.0's installed database read by nltk's reader: a word's synsets through WordNet's morphology, joined to
the shipped gloss table, from a copy under the output root."""

from __future__ import annotations

import pytest

from parabit.data.definitions import read_wordnet_glosses
from parabit.data.wordnet_database import DATABASE_ENV, database_folder, synset_ids, wordnet_reader
from parabit.paths import DataNotFoundError


def test_inflected_forms_find_their_lemmas_synsets_by_rule_and_by_exception(outputs):
    # Suffix rules: semesters → semester (noun), exists → exist (verb), boats → boat (noun and verb).
    assert len(synset_ids("semesters")) == len(synset_ids("semester")) == 2
    assert synset_ids("exists") == synset_ids("exist")
    assert set(synset_ids("boat")) == set(synset_ids("boats"))
    # The exception lists (noun.exc: geese → goose, verb.exc: ran → run): the irregular form finds the lemma's
    # synsets of that part of speech; a lemma finds its own synsets; an unknown word none.
    def of(word: str, pos: str) -> set[str]:
        return {i for i in synset_ids(word) if i.endswith(pos)}

    assert of("goose", "n") and of("goose", "n") == of("geese", "n")
    assert of("run", "v") and of("run", "v") == of("ran", "v")
    assert len(synset_ids("bank")) == 18 and synset_ids("qwerty") == []


def test_found_synsets_are_the_gloss_tables_and_the_database_is_copied_under_the_output_root(outputs):
    definitions = {s.synset_id: s.definition for s in read_wordnet_glosses()}
    found = [definitions[i] for i in synset_ids("transferred")]  # every id joins the shipped table
    assert "move from one place to another" in found and len(found) == len(set(found))
    root = wordnet_reader().root.path
    assert root.startswith(str(outputs)) and root.endswith("nltk_data/corpora/wordnet")


def test_a_missing_database_says_how_to_install_it(tmp_path, monkeypatch):
    monkeypatch.setenv(DATABASE_ENV, str(tmp_path))
    with pytest.raises(DataNotFoundError, match=r"index\.noun is missing \(install the Debian package wordnet-base"):
        database_folder()
