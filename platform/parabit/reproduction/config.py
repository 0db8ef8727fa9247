"""What ``parabit reproduce`` runs: :class:`ReproduceConfig`, with one section per seed paper whose fields its plan
documents. The library holds no default config file: the command reads the file it is given (the checkout ships
one, which names every paper's config files)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, NonNegativeInt, PositiveInt, create_model, field_validator, model_validator

from parabit.config import Config, check_name
from parabit.paths import output_root, project_path
from parabit.reproduction.plans import PLANS

PAPERS = tuple(PLANS)


class ReproduceOptions(Config):
    """What :class:`ReproduceConfig` sets besides the papers' sections: run names and seeds, where the document and
    the ledger go, and how cells train. Each field says what it does (``parabit config schema reproduce``)."""

    name: str = Field("repro", pattern=r"^[^/\s]+$")
    """Prefix of every cell's run name (`<name>-<paper>-<group>-s<seed>`) and of the output folder
    `<outputs>/reproduction/<name>/`; `quick` makes it `<name>-quick`. No slash or whitespace."""
    papers: tuple[str, ...] = Field(PAPERS, description=(
        f"The seed papers to run, in this order: {', '.join(f'`{key}`' for key in PAPERS)} (default: all of them). "
        "Each needs its section below; the document still shows the others from the ledger where their section "
        "is given."))
    repeats: PositiveInt = 3
    """Training seeds per group that a finding compares (3: enough to tell a small difference from seed noise);
    groups only shown in a table train with the first seed alone."""
    first_seed: NonNegativeInt = 1
    """The first training seed; the seeds are `first_seed` … `first_seed + repeats - 1`."""
    quick: bool = False
    """A smoke run: every paper's small slices and 1 epoch, only the groups of its first finding, run names and
    output folder suffixed `-quick` so its cells never stand in for real ones (`--quick` sets it)."""
    experiment: str = Field("parabit-reproduction", min_length=1)
    """The MLflow experiment of every cell and of the reproduction's parent runs (Elgohary's J_bi sweeps and
    Wieting's back-translation pipelines log to it too)."""
    document: str | None = None
    """Where the Markdown document goes (relative: in the project folder); its figures go to the folder of the same
    name beside it. None: `<outputs>/reproduction/<prefix>/reproduction.md` (`parabit reproduce` puts the
    checkout's committed document here for a full run)."""
    ledger: str | None = None
    """The results ledger's folder, one `<paper>.jsonl` each (relative: in the project folder); cells recorded there
    are read, not trained again. None: `<outputs>/reproduction/<prefix>/ledger/` (`parabit reproduce` puts the
    checkout's committed ledger here for a full run)."""
    parallel: PositiveInt | Literal["auto"] = "auto"
    """How many cells train at once. `auto`: as many as the cluster's GPUs, or CPUs, hold (one CPU kept for Ray
    Data, except for cells in process: one per CPU); a number: at most that many."""
    allow_dirty: bool = False
    """Write records to a ledger inside the checkout from a working tree whose tracked files differ from its commit
    (the records and the document say so). False: such a run refuses to start, so every record names real code."""
    keep_checkpoints: bool = False
    """Keep each trained cell's Ray Train checkpoints after its run has finished. False: they are removed (the run
    and the record hold its numbers; an Elgohary cell's checkpoints take about 400 MB)."""
    cells_in_process: bool = True
    """Train a cell of one CPU worker in the process that runs it rather than in a Ray Train worker group of its
    own (about 20 s less per cell); what a cell trains, and its digest, stay the same."""
    checkpoint_every: PositiveInt = 5
    """Each cell's checkpoint interval in epochs (its last epoch always has one): a killed cell trains at most the
    epochs since its last checkpoint again. Not part of a cell's digest."""
    @field_validator("papers")
    @classmethod
    def _known_papers(cls, papers: tuple[str, ...]) -> tuple[str, ...]:
        if not papers:
            raise ValueError(f"name at least one of {list(PAPERS)}")
        return tuple(check_name(p, PAPERS, "seed paper") for p in papers)

    @model_validator(mode="after")
    def _papers_have_sections(self):
        missing = [paper for paper in self.papers if not self.has_section(paper)]
        if missing:
            sections = ", ".join(f"`{paper}:`" for paper in missing)
            raise ValueError(f"papers {missing} have no section of settings: add {sections} naming the config files "
                             "each trains from (the checkout's reproduction config names them all; `parabit config "
                             "schema reproduce` lists every field), or leave the paper out of `papers`")
        return self

    def has_section(self, paper: str) -> bool:
        """Does this config hold ``paper``'s section (its plan can be built)?"""
        return getattr(self, paper) is not None

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
        """``document`` (relative: in the project folder), else the output folder's ``reproduction.md``."""
        return project_path(self.document) if self.document else self.output_path / "reproduction.md"

    @property
    def ledger_path(self) -> Path:
        """``ledger`` (relative: in the project folder), else the output folder's ``ledger/``."""
        return project_path(self.ledger) if self.ledger else self.output_path / "ledger"

    @property
    def figures_path(self) -> Path:
        return self.document_path.with_suffix("")


# One optional section per registered paper, named by its key and typed by its plan's settings model, so a new paper
# needs no field here (:data:`~parabit.reproduction.plans.PLANS`).
ReproduceConfig = create_model(
    "ReproduceConfig", __base__=ReproduceOptions, __module__=__name__,
    __doc__="""The whole reproduction: the fields of :class:`ReproduceOptions`, and one section per seed paper named by its
    key (``bao``, ``elgohary``, ...; the config files it trains from have no defaults). Every paper in ``papers``
    needs its section, and the document shows the papers not run here from the ledger only when their section is
    given too.""",
    **{key: (plan.settings_model | None, Field(None, description=(
        f"The section of {plan.title}: the config files it trains from and its settings. None: the paper "
        "cannot run (nor be shown).")))
       for key, plan in PLANS.items()})
