"""Bao et al. (2018) reproduced: Table I (SICK EN, MSRP) and Table II (maximum sentence length) with the four
Siamese models, and the paper's findings (attention helps; one direction beats two; a 15-token cut hurts)."""

from __future__ import annotations

from pydantic import PositiveInt

from parabit.papers.bao.paper import (EARLIER_TABLE1, EARLIER_TABLE2, LABELS, MODELS, MSRP_SPLITS, SICK_SPLITS,
                                      TABLE1, TABLE2, TABLE2_LENGTHS, WORD_VECTORS)
from parabit.config import Config, ConfigFile
from parabit.paths import project_path
from parabit.recipes import load_run_config
from parabit.papers.cells import Group
from parabit.papers.departures import Departure
from parabit.papers.findings import Finding
from parabit.papers.metrics import Metric
from parabit.papers.plan import PaperPlan
from parabit.papers.tables import Entry, PaperTable, Row

SICK_R = Metric.named("sick-en/test/pearson", "SICK EN test r", digits=4)
SICK_MSE = Metric.named("sick-en/test/mse01", "SICK EN test MSE", digits=4)
MSRP_ACC = Metric.named("msrp/test/accuracy", "MSRP test accuracy %", scale=100, digits=2)
MSRP_P = Metric.named("msrp/test/precision", "MSRP test precision %", scale=100, digits=2)
MSRP_F1 = Metric.named("msrp/test/f1", "MSRP test F1", digits=3)
NOT_HERE = Metric("not measured here", ("-",), digits=4)


def paper_msrp(better: str, worse: str) -> str:
    """Table I's MSRP precision of two models as the paper prints it ("p 65.68 % vs 60.41 %")."""
    return f"p {100 * TABLE1[better]['msrp_p']:.2f} % vs {100 * TABLE1[worse]['msrp_p']:.2f} %"


def paper_table2() -> str:
    """Table II's AttSiaLSTM r at the paper's second length against its first, per language, as the paper prints
    them ("ZH .4646 vs .4334; ...")."""
    return "; ".join(f"{lang.upper()} " + " vs ".join(f"{r:.4f}".removeprefix("0") for r in (values[1], values[0]))
                     for lang, values in TABLE2.items())


class BaoSettings(Config):
    """Bao et al.'s runs: ``sick_config`` and ``msrp_config`` (training YAMLs of recipe ``siamese``, no defaults: the
    reproduction config names them, relative paths read from the project folder; their ``data.max_length`` is
    Table I's length), Table II's ``lengths``, whether to run ``msrp``. ``--quick``: the first ``quick_pairs`` pairs
    of every split and one epoch."""

    sick_config: ConfigFile
    """The SICK EN training YAML (recipe `siamese`) that every SICK group starts from, the model variant and length
    set per group; its `data.max_length` is Table I's length. A relative path is read from the project folder."""
    msrp_config: ConfigFile
    """The MSRP training YAML (recipe `siamese`) of Table I's MSRP columns, the model variant set per group; trained
    only when `msrp` is on. A relative path is read from the project folder."""
    lengths: tuple[PositiveInt, ...] = TABLE2_LENGTHS
    """Table II's maximum sentence lengths in tokens, one column each (the paper's 15, 20, 25): the four models
    on SICK EN cut at each, `sick_config`'s own length reusing Table I's cells. The finding that a short cut hurts
    compares the two shortest."""
    msrp: bool = True
    """Also train the four models on MSRP (Table I's MSRP columns and the two MSRP attention findings); false: SICK
    EN only."""
    quick_pairs: PositiveInt = 200
    """With `--quick`: the first this many pairs of every split (train, dev, test), trained one epoch."""


class BaoPlan(PaperPlan):
    key = "bao"
    title = "Bao et al. 2018, Attentive Siamese LSTM (Tables I and II)"
    settings_model = BaoSettings

    settings: BaoSettings

    def _config(self, path: str, **overrides):
        quick = {"data.max_pairs_per_split": self.settings.quick_pairs, "optim.epochs": 1} if self.quick else {}
        return load_run_config(project_path(path), {**overrides, **quick})

    @property
    def default_length(self) -> int:
        return load_run_config(project_path(self.settings.sick_config)).data.max_length

    def groups(self) -> list[Group]:
        groups = [Group(f"sick-{m}", self._config(self.settings.sick_config, **{"model.variant": m}), LABELS[m])
                  for m in MODELS]
        groups += [Group(f"sick-{m}-len{n}", self._config(self.settings.sick_config, **{
            "model.variant": m, "data.max_length": n}), f"{LABELS[m]}, len {n}")
            for n in self.settings.lengths if n != self.default_length for m in MODELS]
        if self.settings.msrp:
            groups += [Group(f"msrp-{m}", self._config(self.settings.msrp_config, **{"model.variant": m}),
                             f"{LABELS[m]} (MSRP)") for m in MODELS]
        return groups

    def _length_group(self, model: str, length: int) -> str:
        return f"sick-{model}" if length == self.default_length else f"sick-{model}-len{length}"

    def tables(self) -> list[PaperTable]:
        msrp = self.settings.msrp
        table1 = PaperTable(
            "Table I (test; paper in brackets; MSE on the [0, 1] scale as the paper)",
            ("SICK EN r", "SICK EN MSE", "MSRP p %", "MSRP acc %", "MSRP F1", "ZH r", "TIB r"),
            tuple(Row(LABELS[m], (
                Entry(f"sick-{m}", SICK_R, TABLE1[m]["en_r"]), Entry(f"sick-{m}", SICK_MSE, TABLE1[m]["en_mse"]),
                Entry(f"msrp-{m}" if msrp else None, MSRP_P, TABLE1[m]["msrp_p"]),
                Entry(f"msrp-{m}" if msrp else None, MSRP_ACC),
                Entry(f"msrp-{m}" if msrp else None, MSRP_F1),
                Entry(None, NOT_HERE, TABLE1[m]["zh_r"]), Entry(None, NOT_HERE, TABLE1[m]["tib_r"]))) for m in MODELS),
            note="parabit's earlier single-seed runs (seed 1, SICK EN r): "
                 + ", ".join(f"{LABELS[m]} {v:.4f}" for m, v in EARLIER_TABLE1.items())
                 + ". The paper's MSRP column is precision (\"p\"), so ours is too, at the decision threshold chosen for "
                   "accuracy on the dev split; accuracy and F1 beside it have no published counterpart. ZH and TIB are "
                   "not measured here (no Chinese or Tibetan SICK ships).",
            corner="model")
        lengths = self.settings.lengths
        table2 = PaperTable(
            "Table II (SICK EN test r by maximum sentence length; the paper reports Chinese and Tibetan only)",
            tuple(f"len {n}" for n in lengths),
            tuple(Row(LABELS[m], tuple(Entry(self._length_group(m, n), SICK_R) for n in lengths)) for m in MODELS),
            note="The paper's AttSiaLSTM rows, " + "; ".join(
                f"{lang.upper()} " + " / ".join(f"len {n} {v:.4f}" for n, v in zip(TABLE2_LENGTHS, values))
                for lang, values in TABLE2.items())
            + ". parabit's earlier single-seed EN runs: " + ", ".join(
                f"{LABELS[m]} len {n} {v:.4f}" for (m, n), v in EARLIER_TABLE2.items()) + ".",
            corner="model")
        return [table1, table2]

    def findings(self) -> list[Finding]:
        t = TABLE1
        findings = [
            Finding("attention improves the Siamese LSTM: AttSiaLSTM > SiaLSTM", "sick-attsialstm", "sick-sialstm",
                    SICK_R, f"{t['attsialstm']['en_r']:.4f} vs {t['sialstm']['en_r']:.4f}"),
            Finding("attention improves the Siamese BiLSTM: AttSiaBiLSTM > SiaBiLSTM", "sick-attsiabilstm",
                    "sick-siabilstm", SICK_R, f"{t['attsiabilstm']['en_r']:.4f} vs {t['siabilstm']['en_r']:.4f}"),
            Finding("one direction beats two without attention: SiaLSTM > SiaBiLSTM", "sick-sialstm",
                    "sick-siabilstm", SICK_R, f"{t['sialstm']['en_r']:.4f} vs {t['siabilstm']['en_r']:.4f}"),
            Finding("one direction beats two with attention: AttSiaLSTM > AttSiaBiLSTM", "sick-attsialstm",
                    "sick-attsiabilstm", SICK_R, f"{t['attsialstm']['en_r']:.4f} vs {t['attsiabilstm']['en_r']:.4f}"),
        ]
        if self.settings.msrp:
            findings += [
                Finding("attention improves paraphrase identification: AttSiaLSTM > SiaLSTM on MSRP", "msrp-attsialstm",
                        "msrp-sialstm", MSRP_P, paper_msrp("attsialstm", "sialstm")),
                Finding("attention improves paraphrase identification: AttSiaBiLSTM > SiaBiLSTM on MSRP",
                        "msrp-attsiabilstm", "msrp-siabilstm", MSRP_P, paper_msrp("attsiabilstm", "siabilstm")),
            ]
        short, longer = min(self.settings.lengths), sorted(self.settings.lengths)[1] if len(self.settings.lengths) > 1 \
            else None
        if longer is not None:
            findings.append(Finding(
                f"cutting sentences at {short} tokens hurts: AttSiaLSTM len {longer} > len {short} (SICK EN; the "
                "paper's Table II is Chinese/Tibetan)", self._length_group("attsialstm", longer),
                self._length_group("attsialstm", short), SICK_R, paper_table2()))
        findings.append(Finding("the same orderings on Chinese and Tibetan SICK (Table I ZH/TIB columns)",
                                untestable="no Chinese or Tibetan SICK ships here; SICK-es (Apertium) is another "
                                           "language pair, not the paper's data"))
        return findings

    def scale(self) -> str:
        if self.quick:
            return f"quick: {self.settings.quick_pairs} pairs per split, 1 epoch"
        sick, msrp = (" / ".join(f"{n:,}" for n in splits) for splits in (SICK_SPLITS, MSRP_SPLITS))
        return f"all of SICK ({sick}) and MSRP ({msrp}), 30 epochs"

    def departures(self) -> list[Departure]:
        return [
            Departure("word vectors", WORD_VECTORS, "GloVe 6B 50d, kept fixed",
                      unmeasured="no fastText vectors ship"),
            Departure("languages", "SICK in English, Chinese and Tibetan", "SICK in English",
                      unmeasured="no Chinese or Tibetan SICK ships (Table I's ZH and TIB columns are not testable)"),
            Departure("MSRP dev set", "not stated", "a seeded 10 % of MSRP train",
                      unmeasured="the paper names no dev split; this one is the usual choice"),
            Departure("epochs and selection", "not stated", "30 epochs, the best epoch on dev",
                      unmeasured="the paper does not say how long it trains"),
        ]

    def setup(self) -> str:
        train, trial, test = SICK_SPLITS
        return ("The `siamese` recipe: the four models share one encoder between the two sentences, hidden 50, "
                f"GloVe 6B 50d vectors kept fixed (the paper: {WORD_VECTORS}), MaLSTM regression on SICK (train "
                f"{train:,} → trial {trial:,} as dev → test {test:,}) and binary cross-entropy on MSRP (train minus a "
                f"seeded 10 % dev split → test {MSRP_SPLITS[1]:,}), 30 epochs, the best epoch on dev tested "
                f"(`{self.settings.sick_config}`, `{self.settings.msrp_config}`). Table I is at the configs' maximum "
                f"length {self.default_length}; Table II reruns SICK EN at lengths "
                f"{', '.join(map(str, self.settings.lengths))}. Groups a finding compares train with every seed; "
                "the other Table II rows with the first seed.")
