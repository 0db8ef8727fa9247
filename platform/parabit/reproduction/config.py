"""What ``parabit reproduce`` runs: :class:`ReproduceConfig` (``jobs/configs/reproduction.yaml``), with one section
per seed paper whose fields its plan documents."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, NonNegativeInt, PositiveInt, field_validator

from parabit.papers.bao.plan import BaoSettings
from parabit.papers.bildrl.plan import BilDRLSettings
from parabit.config import Config, check_name
from parabit.papers.elgohary.plan import ElgoharySettings
from parabit.paths import output_root, project_path
from parabit.reproduction.plans import PLANS
from parabit.papers.wieting.plan import WietingSettings

PAPERS = tuple(PLANS)


class ReproduceConfig(Config):
    """The whole reproduction. ``name`` prefixes every cell's run name (``<name>-<paper>-<group>-s<seed>``;
    ``--quick`` adds ``-quick`` so quick cells never stand in for real ones); ``papers`` are run in order;
    ``repeats`` training seeds from ``first_seed`` for every group a finding compares (groups only shown in a table
    train with the first seed). ``quick``: every paper's small slices and 1 epoch, and only the groups of its first
    finding. ``document``: where the document goes (default ``docs/reproduction.md``; quick runs default to the
    output folder, so a smoke run never replaces the real document); figures go to the folder of the same name
    beside it (``docs/reproduction/``). ``ledger``: the folder of the results ledger, one ``<paper>.jsonl`` each
    (default ``docs/reproduction/``; quick runs: the output folder's ``ledger/``). ``parallel``: how many cells
    train at once (``auto``: as many as the cluster's free CPUs or GPUs hold, one CPU kept for Ray Data; on 2 cores
    with 1-CPU cells that is one). ``experiment``: the MLflow experiment of every cell and the parent runs."""

    name: str = Field("repro", pattern=r"^[^/\s]+$")
    papers: tuple[str, ...] = PAPERS
    repeats: PositiveInt = 3
    first_seed: NonNegativeInt = 1
    quick: bool = False
    experiment: str = Field("parabit-reproduction", min_length=1)
    document: str | None = None
    ledger: str | None = None
    parallel: PositiveInt | Literal["auto"] = "auto"
    bao: BaoSettings = Field(default_factory=BaoSettings)
    elgohary: ElgoharySettings = Field(default_factory=ElgoharySettings)
    wieting: WietingSettings = Field(default_factory=WietingSettings)
    bildrl: BilDRLSettings = Field(default_factory=BilDRLSettings)

    @field_validator("papers")
    @classmethod
    def _known_papers(cls, papers: tuple[str, ...]) -> tuple[str, ...]:
        if not papers:
            raise ValueError(f"name at least one of {list(PAPERS)}")
        return tuple(check_name(p, PAPERS, "seed paper") for p in papers)

    @property
    def prefix(self) -> str:
        return f"{self.name}-quick" if self.quick else self.name

    @property
    def seeds(self) -> list[int]:
        return list(range(self.first_seed, self.first_seed + self.repeats))

    @property
    def output_path(self) -> Path:
        return output_root() / "reproduction" / self.prefix

    @property
    def document_path(self) -> Path:
        if self.document:
            return project_path(self.document)
        return self.output_path / "reproduction.md" if self.quick else project_path("docs/reproduction.md")

    @property
    def ledger_path(self) -> Path:
        if self.ledger:
            return project_path(self.ledger)
        return self.output_path / "ledger" if self.quick else project_path("docs/reproduction")

    @property
    def figures_path(self) -> Path:
        return self.document_path.with_suffix("")

