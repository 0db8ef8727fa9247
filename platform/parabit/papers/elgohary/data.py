"""What Elgohary & Carpuat's data step records (:meth:`~parabit.papers.elgohary.plan.ElgoharyPlan.prepare`): the
phrase tables' paths, each condition's pairs and Table 6's sizes, the J_bi tunings (each condition's sweep and its
points re-scored at the cells' scale), the counts of Tables 4 and 5; kept in the ledger as the plan's facts
(:class:`~parabit.papers.elgohary.facts.ElgoharyFacts`) and restored from them. :class:`ElgoharyData` holds them and
what the cells' training configs take from them; the plan builds on it, and the modules that declare the groups,
tables, findings, departures and document read it."""

from __future__ import annotations

from parabit.config import load_config, read_yaml
from parabit.papers.cells import Group
from parabit.papers.elgohary.analyses import pairs_available, undertrained_ratios
from parabit.papers.elgohary.config import MAIN, ReproductionConfig, train_config
from parabit.papers.elgohary.facts import CONTESTED, STATED, ElgoharyFacts
from parabit.papers.plan import PaperPlan
from parabit.paths import project_path

OTHER_READING = "otherreading"  # the suffix of the other reading's tunings and of its ablation's groups


def tuning_key(condition: str, reading: str = STATED) -> str:
    """How a J_bi tuning is keyed in the plan's facts: the condition, under the paper's other reading suffixed."""
    return condition if reading == STATED else f"{condition}-{OTHER_READING}"


class ElgoharyData(PaperPlan):
    """The plan's data step as recorded (see the module docstring): its facts, and the J_bi settings and training
    configs of the cells that follow from them."""

    def __init__(self, context):
        super().__init__(context)
        settings = self.settings
        overrides = {"conditions": settings.quick_conditions, "max_pairs": settings.quick_pairs, "epochs": 1,
                     "analyses": [], "ablations": [], "condition_pairs": {}} if self.quick else {}
        self.config = load_config(ReproductionConfig, project_path(settings.config), overrides)
        self.configured = self.config.model_copy(deep=True)  # before the sweeps chose the J_bi settings
        self.data_paths: dict[str, str] = {}
        self.europarl_paths: dict[str, str] = {}
        self.sizes: dict[int, str] = {}  # Table 6: pairs -> the paper's size it stands for
        self.available: dict[str, int] = {}
        self.sweeps: dict[str, dict] = {}  # the J_bi sweep of each tuning (condition, reading): its trials, choice
        self.rescored: dict[str, dict] = {}  # each tuning's points re-scored at the cells' scale, and the choice
        self.europarl_available: dict[str, int] = {}  # the data ablation's pairs (Europarl alone), by condition
        self._ratios: dict | None = None  # Table 4
        self._filtered_counts: dict[str, int] = {}  # Table 5: pairs left without a SICK bigram

    def reused(self) -> list[str]:
        reused = [f"the J_bi sweeps of {len(self.sweeps)} tunings"] if self.sweeps else []
        return reused + ([f"the full-scale choices of {len(self.rescored)}"] if self.rescored else [])

    def tunings(self) -> list[tuple[str, str]]:
        """Every J_bi tuning: each condition under the choices the paper states, and, where the paper contradicts
        itself (``contested``) and the ``reading`` ablation is on, the main conditions under the other reading."""
        tunings = [(condition, STATED) for condition in self.config.conditions]
        if "reading" in self.config.ablations:
            tunings += [(c, CONTESTED) for c in MAIN if c in self.config.conditions and c in self.config.contested]
        return tunings

    def pins(self, condition: str, reading: str = STATED) -> dict:
        """The J_bi choices that ``condition``'s cells take as the paper states them (or as its other reading)."""
        stated = dict(self.config.stated.get(condition, {}))
        return {**stated, **self.config.contested.get(condition, {})} if reading == CONTESTED else stated

    def data_fingerprint(self):
        sweep = None
        if self.settings.jbi_sweep and not self.quick:
            sweep = read_yaml(project_path(self.settings.jbi_sweep))
        phrases = [self.configured.phrases(), self.configured.europarl_phrases()] if not self.quick else []
        return {"settings": self.settings, "config": self.configured, "quick": self.quick, "sweep": sweep,
                "phrases": phrases}

    def cells_fingerprint(self, group: Group):
        """A cell reads the phrase tables (their pipelines' settings); everything else of the data step (the
        sweeps and their re-scoring, which groups exist) reaches a cell only through its own training config."""
        return {"phrases": self.data_fingerprint()["phrases"], "quick": self.quick}

    def facts(self) -> dict:
        """The data step's facts (:class:`~parabit.papers.elgohary.facts.ElgoharyFacts`) as the ledger keeps them."""
        return ElgoharyFacts.built(
            data_paths=self.data_paths, europarl_paths=self.europarl_paths, available=self.available,
            sizes=list(self.sizes.items()), europarl_available=self.europarl_available, sweeps=self.sweeps,
            rescored=self.rescored,
            undertrained=self.undertrained() if "undertrained" in self.config.analyses else {},
            filtered={c: self.filtered_pairs(c) for c in self.available} if "memorisation" in self.config.analyses
            else {}).ledger()

    def restore(self, facts: dict) -> None:
        """Take back the facts of a prepared record, of any version (:class:`ElgoharyFacts` migrates older ones)."""
        recorded = ElgoharyFacts.model_validate(facts)
        self.data_paths = dict(recorded.data_paths)
        self.europarl_paths = dict(recorded.europarl_paths)
        self.available = dict(recorded.available)
        self.sizes = dict(recorded.sizes)
        self.sweeps = {key: sweep.model_dump() for key, sweep in recorded.sweeps.items()}
        self.rescored = {key: rescoring.model_dump() for key, rescoring in recorded.rescored.items()}
        self.europarl_available = dict(recorded.europarl_available)
        self._ratios = recorded.undertrained
        self._filtered_counts = recorded.filtered

    @property
    def has_sizes(self) -> bool:
        return "sizes" in self.config.analyses and "bilingual_phrases" in self.config.conditions

    def tuned(self, condition: str, reading: str = STATED) -> dict:
        """The J_bi settings a tuning chose for ``condition``'s cells: the best of its points re-scored at the
        cells' scale, else its sweep's best point (the configured ``jbi`` without a sweep)."""
        key = tuning_key(condition, reading)
        if "choice" in self.rescored.get(key, {}):
            return dict(self.rescored[key]["choice"])
        sweep = self.sweeps.get(key)
        return dict(sweep["best_params"]) if sweep is not None else {}

    def training_config(self, condition: str, objective: str, overrides: dict | None = None, reading: str = STATED,
                        **data):
        """The training config of a cell of ``condition`` and ``objective`` (J_bi: with the paper's stated choices
        and its tuning's settings), ``overrides`` and ``data`` (the data section's fields) applied last."""
        settings = {**self.pins(condition, reading), **self.tuned(condition, reading)} if objective == "jbi" else {}
        return train_config(self.config, condition, objective, self.data_paths,
                            overrides={**settings, **(overrides or {})}, **data)

    def scored_points(self, condition: str) -> list[dict]:
        """The points ``condition``'s tuning scored on dev at the scale its choice was made (``typed`` parameters,
        ``dev_score``): its re-scored points, else its sweep's trials."""
        key = tuning_key(condition)
        rescored = self.rescored.get(key, {})
        if "dev" in rescored:
            return [{"typed": c["typed"], "dev_score": rescored["dev"].get(c["group"])} for c in rescored["candidates"]]
        return list(self.sweeps[key]["trials"]) if key in self.sweeps else []

    def main_pairs(self, condition: str) -> int:
        """How many pairs the main cells of ``condition`` train on."""
        cap = self.config.pairs_of(condition)
        return min(cap, self.available[condition]) if cap is not None else self.available[condition]

    def filtered_pairs(self, condition: str) -> int:
        """Table 5: ``condition``'s pairs left without a SICK bigram (counted once)."""
        if condition not in self._filtered_counts:
            self._filtered_counts[condition] = pairs_available(
                self.training_config(condition, "jbi", drop_bigrams_of=["sick"]).data)
        return self._filtered_counts[condition]

    def undertrained(self) -> dict[str, dict[str, float]]:
        """Table 4: each condition's undertrained-token ratio of each test set (computed once)."""
        if self._ratios is None:
            self._ratios = {c: undertrained_ratios(self.training_config(c, "jbi").data) for c in self.config.conditions}
        return self._ratios
