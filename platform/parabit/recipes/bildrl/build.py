"""Build the BilDRL dictionaries and the bilingual paraphrase set from the shipped files, each stage exactly once.

Chen et al.'s Wiktionary data (Wikt3l) is not shipped; the closest real equivalents are built instead:

* **fr-en**: French WOLF lemmas defined by the English WordNet 3.0 definition of their synset (joined by synset
  offset, satellite adjectives mapped to ``-a``; WOLF rows whose synset is not in WordNet 3.0 are rejected).
* **en-es**: English WordNet lemmas defined by their synset's definition translated into Spanish by Apertium
  (``eng-spa``; each distinct definition translated once, in batches; stage ``translate-en-es``).
* **es-en**: Spanish MUSE es-en words defined by every WordNet definition of their English translation: each synset
  that WordNet's own lookup finds for the English word (:mod:`parabit.data.wordnet_database`: its lemma's synsets
  and, through WordNet's morphology, those of the lemma an inflected form such as ``boats`` or ``transferred``
  comes from), so a Spanish word has a definition per sense of each of its translations, as a Wiktionary entry
  lists several senses. A pair whose English word WordNet does not know (mostly names) is rejected with its reason.

Every entry keeps only single-token, lower-cased words that are rows of the direction's bilingual space (the
target vectors); duplicates are dropped. ``test_words`` defined words per direction are held out, drawn from the
held-out pool (:mod:`parabit.recipes.bildrl.heldout`, which no map of a space is fitted on), as the build config's
``split`` says. ``strict``: a seeded random draw; each keeps one definition as its test case, its other definitions
are rejected, and so is every training row whose definition text is one of the test definitions — no test
definition (and no test word) is seen in training. ``authors``: the split of the authors' code
(:func:`~parabit.recipes.bildrl.entries.authors_split`), which keeps test pairs in training.

The paraphrase set (in the spirit of Chen et al.'s WBP3l) pairs the English definition of a synset with its Spanish
(Apertium) definition (label 1), and with the Spanish definition of a synset of one of the ``neighbours`` nearest
English words of the synset's lemma in the bilingual space (label 0); it is split by synset into train/dev/test.
No en-fr paraphrase set is built: WOLF has French lemmas but no French definitions, and the shipped Apertium
has no English-French pair.

Outputs (``outputs/bildrl/data/<stage>/data/*.parquet`` with ``rejects/`` and ``_MANIFEST.json``, see
:mod:`parabit.backtranslation.stage`): ``translate-en-es``, ``dictionary-fr-en``, ``dictionary-en-es``, ``dictionary-es-en``
(columns :data:`ENTRY_COLUMNS`, ``split`` = train/test) and ``paraphrase-en-es`` (columns :data:`PARAPHRASE_COLUMNS`).
A stage built differently by this code than by its first version has a format number (:data:`STAGE_FORMATS`) in its
fingerprint, so a folder built by older code is built again.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from parabit.data.definitions import Synset, WolfLemma, read_wolf, read_wordnet_glosses
from parabit.data.dictionaries import DictionaryEntry, read_muse
from parabit.data.stopwords import stopwords
from parabit.data.wordnet_database import synset_ids
from parabit.recipes.bildrl.config import DIRECTIONS, DictionaryBuildConfig, foreign_language
from parabit.recipes.bildrl.entries import (Candidate, SenseLookup, muse_candidates, select_entries, wolf_candidates,
                                           wordnet_candidates)
from parabit.recipes.bildrl.heldout import in_pool
from parabit.recipes.bildrl.space import BilingualSpace
from parabit.output import progress
from parabit.backtranslation.config import fingerprint
from parabit.backtranslation.stage import DATA, REJECTS, StageOutput, read_parquet_dir, run_stage, write_rejects
from parabit.translate import ApertiumTranslator, Translator

ENTRY_COLUMNS = ("row_id", "source", "line", "word", "word_lang", "definition", "def_lang", "synset_id", "split",
                 "train_copies")
PARAPHRASE_COLUMNS = ("row_id", "source", "line", "synset_id", "text_en", "text_foreign", "lang", "label", "split",
                      "word", "negative_word")
STAGE_FORMATS = {"dictionary-es-en": 2}
"""Stages whose rows this code builds differently from their first version (a stage not named here: format 1).
dictionary-es-en 2: every synset WordNet's lookup finds for the English translation, inflected forms included (1: only
an English word that is the lemma of exactly one synset). Part of the stage's fingerprint, and of the digest of the
reproduction cells that read it (:meth:`parabit.papers.bildrl.plan.BilDRLPlan.cells_fingerprint`)."""

# -- writing stages --------------------------------------------------------------------------------------------------
def _entries_table(rows: list[tuple[Candidate, str, str, int]], word_lang: str, def_lang: str) -> pa.Table:
    return pa.table({
        "row_id": pa.array([c.id for c, *_ in rows], pa.int64()),
        "source": [c.source for c, *_ in rows],
        "line": pa.array([c.line for c, *_ in rows], pa.int64()),
        "word": [w for _, w, *_ in rows],
        "word_lang": [word_lang] * len(rows),
        "definition": [c.definition for c, *_ in rows],
        "def_lang": [def_lang] * len(rows),
        "synset_id": [c.synset_id for c, *_ in rows],
        "split": [s for _, _, s, _ in rows],
        "train_copies": pa.array([n for *_, n in rows], pa.int32()),
    })


def _rejects_table(rows: Iterable[tuple], source: str) -> pa.Table:
    """Rejects as ``(row_id, reason, text)`` (their line is the row id) or ``(row_id, reason, text, line)``."""
    rows = list(rows)
    return pa.table({
        "row_id": pa.array([r[0] for r in rows], pa.int64()), "source": [source] * len(rows),
        "line": pa.array([r[3] if len(r) > 3 else r[0] for r in rows], pa.int64()), "reason": [r[1] for r in rows],
        "text": [r[2] for r in rows],
    })


def write_direction(workdir: Path, direction: str, candidates: list[Candidate], early_rejects: list,
                    vocabulary: Mapping[str, int], config: DictionaryBuildConfig) -> int:
    """Filter, split and write one direction's stage (``workdir/data`` and ``workdir/rejects``); rows in.
    ``vocabulary``: the space's words of the defined language, each with its row (in the order of their frequency
    in the bitext: what the authors' split ranks test words by)."""
    word_lang, def_lang = direction.split("-")
    kept, rejected = select_entries(candidates, set(vocabulary), config.test_words, config.seed,
                                    lambda word: in_pool(word, word_lang), config.split, vocabulary,
                                    stopwords(word_lang) if config.split == "authors" else frozenset())
    (workdir / DATA).mkdir(parents=True)
    pq.write_table(_entries_table(kept, word_lang, def_lang), workdir / DATA / "part-0.parquet")
    source = candidates[0].source if candidates else direction
    reject_rows = list(early_rejects) + [(c.id, reason, f"{c.word}\t{c.definition}", c.line) for c, reason in rejected]
    write_rejects(_rejects_table(reject_rows, source), workdir / REJECTS)
    return len(candidates) + len(early_rejects)


def translate_definitions(workdir: Path, synsets: list[Synset], translator: Translator, batch: int) -> int:
    """Translate every distinct WordNet definition once, in batches of ``batch``; failures become rejects."""
    definitions = list(dict.fromkeys(s.definition for s in synsets))
    english, spanish, failed = [], [], []
    for start in progress(range(0, len(definitions), batch), "translating definitions", unit="batch"):
        chunk = definitions[start:start + batch]
        result = translator.translate(chunk, "en", "es")
        for offset, (text, translation, error) in enumerate(zip(chunk, result.translations, result.errors)):
            if translation is None or not translation.strip():
                failed.append((start + offset + 1, f"translation failed: {error or 'empty output'}", text))
            else:
                english.append((start + offset + 1, text, translation.strip()))
    (workdir / DATA).mkdir(parents=True)
    pq.write_table(pa.table({
        "row_id": pa.array([r[0] for r in english], pa.int64()), "source": ["wordnet30"] * len(english),
        "line": pa.array([r[0] for r in english], pa.int64()),
        "definition": [r[1] for r in english], "definition_es": [r[2] for r in english],
    }), workdir / DATA / "part-0.parquet")
    write_rejects(_rejects_table(failed, "wordnet30"), workdir / REJECTS)
    return len(definitions)


def paraphrase_rows(entries: pa.Table, synsets: list[Synset], space: BilingualSpace, config: DictionaryBuildConfig):
    """Positive and negative (English definition, Spanish definition) pairs from the en-es dictionary rows."""
    english_definition = {s.synset_id: s.definition for s in synsets}
    by_synset: dict[str, tuple[str, str]] = {}
    synsets_of_word: dict[str, list[str]] = defaultdict(list)
    for word, synset_id, spanish in zip(entries["word"].to_pylist(), entries["synset_id"].to_pylist(),
                                        entries["definition"].to_pylist()):
        by_synset.setdefault(synset_id, (word, spanish))
        synsets_of_word[word].append(synset_id)
    rng = np.random.default_rng(config.seed)
    chosen = sorted(by_synset)
    chosen = [chosen[i] for i in rng.permutation(len(chosen))[:config.paraphrase_concepts]]
    words = sorted(synsets_of_word)
    neighbours = dict(zip([by_synset[s][0] for s in chosen],
                          space.nearest([by_synset[s][0] for s in chosen], "en", config.neighbours, among=words)))
    cut_train = int(round(config.paraphrase_split[0] * len(chosen)))
    cut_dev = cut_train + int(round(config.paraphrase_split[1] * len(chosen)))
    rows = []
    for position, synset_id in enumerate(chosen):
        word, spanish = by_synset[synset_id]
        split = "train" if position < cut_train else "dev" if position < cut_dev else "test"
        options = [n for n in neighbours[word] if synset_id not in synsets_of_word[n]]
        if not options:  # every neighbour shares the synset: no negative, so no positive either (balanced set)
            continue
        negative_word = options[int(rng.integers(len(options)))]
        negative_synsets = synsets_of_word[negative_word]
        negative_synset = negative_synsets[int(rng.integers(len(negative_synsets)))]
        rows.append((synset_id, english_definition[synset_id], spanish, 1, split, word, ""))
        rows.append((synset_id, english_definition[synset_id], by_synset[negative_synset][1], 0, split, word,
                     negative_word))
    return rows


def write_paraphrases(workdir: Path, rows: list[tuple]) -> int:
    (workdir / DATA).mkdir(parents=True)
    ids = pa.array(range(1, len(rows) + 1), pa.int64())
    columns = list(zip(*rows))
    pq.write_table(pa.table({
        "row_id": ids, "source": ["wordnet30+apertium"] * len(rows), "line": ids, "synset_id": columns[0],
        "text_en": columns[1], "text_foreign": columns[2], "lang": ["es"] * len(rows),
        "label": pa.array(columns[3], pa.int8()), "split": columns[4], "word": columns[5],
        "negative_word": columns[6],
    }), workdir / DATA / "part-0.parquet")
    write_rejects(_rejects_table([], "wordnet30+apertium"), workdir / REJECTS)
    return len(rows)


def stage_format(name: str) -> tuple[int, ...]:
    """What a stage's fingerprint adds for its format: nothing at format 1 (the fingerprints of stages built as they
    always were stay as they were), else the format number."""
    return (STAGE_FORMATS[name],) if name in STAGE_FORMATS else ()


# -- the whole build -------------------------------------------------------------------------------------------------
@dataclass
class BuildInputs:
    """The shipped inputs (read lazily by the default build; tests pass hand-made ones). ``senses``: how an English
    word finds its synsets (WordNet's lookup over the installed database)."""

    synsets: list[Synset]
    wolf: list[WolfLemma]
    muse: list[DictionaryEntry]
    senses: SenseLookup = synset_ids


def shipped_inputs() -> BuildInputs:
    return BuildInputs(read_wordnet_glosses(), read_wolf(), read_muse("es", "en"))


def build_dictionaries(config: DictionaryBuildConfig, *, inputs: BuildInputs | None = None,
                       spaces: dict[str, BilingualSpace] | None = None,
                       translator_factory: Callable[[], Translator] = lambda: ApertiumTranslator(mode="eng-spa"),
                       directions: tuple[str, ...] = DIRECTIONS,
                       paraphrase: bool = True) -> dict[str, StageOutput]:
    """Run every stage once (complete stages with the same settings are skipped); returns them by name."""
    inputs = inputs or shipped_inputs()
    spaces = spaces or {lang: BilingualSpace.load(path) for lang, path in config.spaces.items()
                        if any(foreign_language(d) == lang for d in directions)}
    root = config.output_path
    settings = {k: v for k, v in vars(config).items() if k not in ("output_dir", "spaces")}
    space_ids = {lang: fingerprint(len(space.vocab), float(np.abs(space.vectors).sum())) for lang, space in spaces.items()}
    outputs: dict[str, StageOutput] = {}

    def vocabulary(direction: str) -> dict[str, int]:
        return spaces[foreign_language(direction)].words(direction.split("-")[0])

    if "en-es" in directions:
        with translator_factory() as translator:
            outputs["translate-en-es"] = run_stage(root, "translate-en-es", fingerprint("translate", settings), lambda w:
                                                   translate_definitions(w, inputs.synsets, translator,
                                                                         config.translation_batch))
    for direction in directions:
        def compute(workdir: Path, direction: str = direction) -> int:
            if direction == "fr-en":
                candidates, early = wolf_candidates(inputs.wolf, inputs.synsets)
            elif direction == "en-es":
                table = outputs["translate-en-es"].read_data(["definition", "definition_es"])
                translations = dict(zip(table["definition"].to_pylist(), table["definition_es"].to_pylist()))
                candidates, early = wordnet_candidates(inputs.synsets, translations)
            else:
                candidates, early = muse_candidates(inputs.muse, inputs.synsets, inputs.senses)
            return write_direction(workdir, direction, candidates, early, vocabulary(direction), config)

        upstream = outputs["translate-en-es"].fingerprint if direction == "en-es" else ""
        name = f"dictionary-{direction}"
        outputs[name] = run_stage(root, name, fingerprint(name, settings, space_ids[foreign_language(direction)],
                                                          upstream, *stage_format(name)), compute)

    if paraphrase and "en-es" in directions:
        entries = outputs["dictionary-en-es"].read_data()
        outputs["paraphrase-en-es"] = run_stage(
            root, "paraphrase-en-es", fingerprint("paraphrase", settings, space_ids["es"],
                                                  outputs["dictionary-en-es"].fingerprint),
            lambda w: write_paraphrases(w, paraphrase_rows(entries, inputs.synsets, spaces["es"], config)))
    return outputs


def read_direction(data_dir: Path, direction: str) -> pa.Table:
    """The built rows of one direction (columns :data:`ENTRY_COLUMNS`)."""
    stage = StageOutput.load(Path(data_dir) / f"dictionary-{direction}")
    if stage is None:
        raise FileNotFoundError(f"{data_dir}/dictionary-{direction} is not built; run "
                                "python jobs/build_dictionaries.py first")
    return stage.read_data()


def overlap_with_training(data_dir: Path, direction: str) -> dict[str, float]:
    """How one direction's built split treats its test pairs: its ``rows`` and defined ``words`` (so its
    definitions per word), the mean number of definitions of its test words (``test_word_definitions``), its
    ``test`` pairs and how many of them are also training rows (``test_in_training``: never under the strict split;
    under the authors' split a test word with n definitions repeats its test pair n − 1 times, so only test words
    with one definition keep theirs out)."""
    rows = read_direction(data_dir, direction).select(["word", "split", "train_copies"]).to_pylist()
    definitions = Counter(row["word"] for row in rows)
    test = [row for row in rows if row["split"] == "test"]
    return {"rows": len(rows), "words": len(definitions), "test": len(test),
            "test_word_definitions": float(np.mean([definitions[row["word"]] for row in test])) if test else 0.0,
            "test_in_training": sum(1 for row in test if row["train_copies"] > 0)}


def stage_counts(stage: StageOutput) -> dict:
    """What a dictionary stage took in and kept: its candidate ``rows_in`` (rejected early ones included),
    ``rows_out``, ``rejected`` by reason, and the distinct source ``lines`` they came from (for es-en: MUSE pairs)."""
    lines = pa.concat_arrays([read_parquet_dir(path, ["line"])["line"].combine_chunks().cast(pa.int64())
                              for path in (stage.data, stage.rejects)])
    return {"rows_in": stage.rows_in, "rows_out": stage.rows_out, "rejected": dict(stage.reject_reasons),
            "lines": len(pc.unique(lines))}


def read_paraphrases(data_dir: Path, lang: str = "es") -> pa.Table:
    """The built paraphrase pairs (columns :data:`PARAPHRASE_COLUMNS`)."""
    stage = StageOutput.load(Path(data_dir) / f"paraphrase-en-{lang}")
    if stage is None:
        raise FileNotFoundError(f"{data_dir}/paraphrase-en-{lang} is not built; run "
                                "python jobs/build_dictionaries.py first")
    return stage.read_data()


def summary(outputs: dict[str, StageOutput]) -> str:
    """Rows in/out/rejected per stage, with the reasons, and the train/test counts of each dictionary."""
    lines = []
    for name, stage in outputs.items():
        lines.append(f"{name}: {stage.rows_in} in, {stage.rows_out} out, {stage.rows_rejected} rejected "
                     f"{dict(sorted(stage.reject_reasons.items()))}")
        if name.startswith("dictionary-"):
            table = stage.read_data(["word", "split"])
            splits = Counter(table["split"].to_pylist())
            words = len(set(table["word"].to_pylist()))
            lines.append(f"  train rows {splits['train']}, test rows {splits['test']}, distinct words {words}")
        if name.startswith("paraphrase-"):
            table = stage.read_data(["label", "split"])
            counts = Counter(zip(table["split"].to_pylist(), table["label"].to_pylist()))
            lines.append("  " + ", ".join(f"{s}/{'pos' if l else 'neg'} {n}" for (s, l), n in sorted(counts.items())))
    return "\n".join(lines)
