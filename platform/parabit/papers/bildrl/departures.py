"""How BilDRL's reproduction is set up and where it departs from the paper: the document's Setup paragraph and
scale line, and the departures (split, dictionaries, target space, depth and training, rows, multi-task balance,
candidates); they describe the training rows and the model alike."""

from __future__ import annotations

from parabit.papers.bildrl.groups import ES_EN_LEVERS, att_model, cell_config, paper_groups, split_suffix
from parabit.papers.bildrl.paper import ES_PAIR, LAYERS, MAX_EPOCHS, SPACE_DIM, TEST_WORDS, WIKT3L_DEFINITIONS
from parabit.papers.bildrl.settings import BilDRLSettings, PlanView
from parabit.papers.departures import Departure


def layers(count: int) -> str:
    return f"{count} stacked layers" if count > 1 else "1 layer"


def wikt3l(*directions: str) -> str:
    """The paper's Wikt3l definitions in ``directions`` ("Fr-En 58,808, Es-En 56,610")."""
    return ", ".join(f"{d.title()} {WIKT3L_DEFINITIONS[d]:,}" for d in directions)


def all_departures(plan: PlanView) -> list[Departure]:
    """Where the reproduction departs from the paper's text and code; the held-out split's departure has the groups
    trained on the other splits as its variants."""
    keys = {group.key for group in plan.groups()}
    variants = {group.key: group.key + split_suffix(split) for split in plan.splits[1:]
                for group in paper_groups(plan, "strict") if group.key + split_suffix(split) in keys}
    s = plan.settings
    return [
        Departure("held-out split", f"text: {TEST_WORDS} randomly selected defined words, all their definitions "
                  "excluded from training; code (`preprocess/sort_freq.py`): the most frequent defined words, each "
                  "test pair also in training n − 1 times", "the text's strict split (random pool words; no test "
                  "word or test definition in training)", "the authors' split", variants),
        Departure("dictionaries", f"Wikt3l (Wiktionary definitions, {wikt3l('fr-en', 'es-en', 'en-es')})",
                  "WordNet 3.0 glosses joined to WOLF (fr-en) and to MUSE (es-en: every synset WordNet's lookup "
                  "finds for the English translation, inflected forms through WordNet's morphology), "
                  "Apertium-translated glosses (en-es)", unmeasured="Wikt3l is not shipped"),
        Departure("target space", f"BilBOWA {SPACE_DIM}-d", "GloVe 6B 50d English rows, IBM-1-projected foreign rows, "
                  "Procrustes-aligned", unmeasured="no BilBOWA vectors ship"),
        Departure("depth and training", f"{layers(LAYERS)}, AMSGrad lr 5e-4, up to {MAX_EPOCHS} epochs",
                  f"{layers(att_model(plan).layers)}, lr {s.lr}, {s.epochs} epochs",
                  unmeasured=f"{ES_EN_LEVERS[0][2]} and {ES_EN_LEVERS[1][2]} were measured on the es-en "
                  "softmax cells only (Table 3's softmax rows), not on the paper's L2 rows"),
        Departure("training rows", "every dictionary row", rows_text(s),
                  unmeasured="the en-es softmax cell on every row is in Table 3 (softmax loss only)"),
        Departure("multi-task balance", "code (`basic_MTL/*/run_bi/*_train_en_fr_bi.py`): the two directions' "
                  f"training rows pooled as they are (Wikt3l {wikt3l(*ES_PAIR)} definitions)",
                  "each direction as many rows an epoch as the larger one, the smaller repeated "
                  "(`balance: equal`): so neither direction's 'MTL helps' is "
                  "decided by the other's size, which here follows the shipped data's coverage and the split's "
                  "copies, and each direction keeps exactly its single-direction cell's rows",
                  unmeasured="no MTL or joint cell trains the pooled rows (`balance: none`) on these "
                  "dictionaries"),
        Departure("candidates", "text: every word of Wikt3l in the language (36-45k); code: the direction's "
                  "defined words", "every word of the language in the space" + candidates_text(plan.space_reports()),
                  unmeasured="no cell here retrieves among the code's candidates"),
    ]


def rows_text(settings: BilDRLSettings) -> str:
    """The training rows a cell takes of its dictionary (the row cap; the authors' split's additions)."""
    cap = settings.max_train_rows
    capped = "every row" if cap is None else (f"at most {cap:,} rows per direction (a seeded sample, once each, "
                                              "where a direction has more)")
    return (capped + "; the authors' split adds every training row of its test words, with its copies (each "
            "cell's rows: the 'Test pairs also in training' table)")


def candidates_text(reports: dict[str, dict]) -> str:
    """The candidates a held-out word is retrieved among, per space (``reports``: the aligned spaces' reports)."""
    counts = [f"{r['english_words']:,} English / {r['foreign_words']:,} {lang}" for lang, r in reports.items()]
    return f" ({'; '.join(counts)})" if counts else ""


def scale_text(plan: PlanView) -> str:
    """The scale line: rows, held-out words and epochs (quick mode's when quick)."""
    settings = plan.settings
    if plan.quick:
        return f"quick: {settings.quick_rows} rows, {settings.quick_test_words} test words, 1 epoch"
    rows = "every row" if settings.max_train_rows is None else f"at most {settings.max_train_rows:,} rows"
    return f"{rows} per direction, {settings.test_words} held-out words, {settings.epochs} epochs"


def setup_text(plan: PlanView) -> str:
    """The Setup paragraph: the target space, the dictionaries and the models as configured."""
    s = plan.settings
    att = cell_config(plan, "att_fr-en.yaml", "fr")
    mtl = cell_config(plan, "att_mtl_es.yaml", "es")
    balance = ("each direction as many rows an epoch as the larger, the smaller repeated (`balance: equal`; "
               "Departures)" if mtl.balance == "equal" else "the directions' rows pooled as they are")
    return (f"Target space (:mod:`parabit.recipes.bildrl.aligned_space`): English rows GloVe 6B 50d (unchanged, the "
            "bitext's English words), Spanish/French rows from the shipped bitext (IBM Model 1 t(e|f) over "
            "Tatoeba + the Europarl sample; a word's row = the t-weighted mean GloVe vector of its "
            f"{s.space.top_translations} likeliest English translations), then an orthogonal Procrustes map "
            "fitted on MUSE pairs with every BLI test word and every word of the held-out pool removed (the "
            "held-out words are drawn from that pool, so none of them places its own vector). Dictionaries as "
            "`parabit build-dictionaries` (WordNet/WOLF/MUSE-derived, Apertium-translated Spanish definitions; "
            "not the paper's Wikt3l; es-en: every synset WordNet's lookup finds for a MUSE pair's English word, "
            "inflected forms through WordNet's morphology, so a Spanish word has a definition per sense), "
            f"rebuilt against these spaces with {plan.build.test_words} held-out words per direction (rows and "
            "definitions per word: 'Test pairs also in training'). Models: "
            f"the `{s.configs.rstrip('/')}/` configs ({layers(att.model.layers)}, hidden {att.model.hidden}, "
            f"definitions cut at {att.model.max_tokens} tokens; the paper: {layers(LAYERS)}), {s.epochs} epochs "
            f"at lr {s.lr} (AMSGrad, batch {att.optim.batch_size}), {rows_text(s)}; the multi-task and "
            f"joint cells: {balance}.")

