"""Back-translate: each pair's English paraphrase, made by long-lived translator actors (one engine load each).

In ``backtranslate`` mode the foreign side is translated into English; in ``roundtrip`` mode the English reference is
translated into the pivot language and back (``direction`` e.g. ``en-pt-en``), and the pivot text is kept in ``pivot``.
Output columns: ``row_id``, ``source``, ``line``, ``lang``, ``reference`` (the corpus English), ``foreign``,
[``pivot``,] ``translation`` (the English paraphrase), ``engine``, ``direction``, and ``token_costs`` when the engine
reports them (a round trip's are those of its last leg). A sentence the engine fails on (crash, hang, empty output) in
any leg becomes a reject with the leg and the engine's reason.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import ray

from parabit.pipeline.config import TranslationConfig
from parabit.pipeline.stage import REASON, StageOutput, write_split
from parabit.translate import Translator, build_translator, translator_class

# The column each mode translates first, and its name in the output (the text a reject row shows).
INPUT_COLUMN = {"backtranslate": "foreign", "roundtrip": "en"}
REJECT_TEXT = {"backtranslate": "foreign", "roundtrip": "reference"}


class BacktranslateBatches:
    """Ray Data callable class: each actor builds one translator (one Apertium process, one neural model) and keeps it
    for the stage; every batch goes through the configuration's legs (one, or two for a round trip)."""

    def __init__(self, engine: str, options: dict, direction: str, mode: str = "backtranslate"):
        self.engine, self.direction, self.mode = engine, direction, mode
        languages = direction.split("-")
        self.legs = list(zip(languages, languages[1:]))
        # One translator per distinct options: one for every leg of a neural engine, one per direction of Apertium.
        cls = translator_class(engine)
        self._by_options: dict[str, Translator] = {}
        self.translators = {}
        for src, tgt in self.legs:
            leg_options = cls.options_for(src, tgt, options)
            key = repr(sorted(leg_options.items()))
            if key not in self._by_options:
                self._by_options[key] = build_translator(engine, **leg_options)
            self.translators[src, tgt] = self._by_options[key]

    def __call__(self, batch: pa.Table) -> pa.Table:
        texts = batch[INPUT_COLUMN[self.mode]].to_pylist()
        reasons: list[str | None] = [None] * len(texts)
        outputs, costs = [], None
        for src, tgt in self.legs:
            todo = [i for i, reason in enumerate(reasons) if reason is None]
            result = self.translators[src, tgt].translate([texts[i] for i in todo], src, tgt)
            leg = f" ({src}-{tgt})" if len(self.legs) > 1 else ""
            texts = [None] * len(texts)
            costs = None if result.costs is None else [None] * len(texts)
            for k, i in enumerate(todo):
                texts[i] = result.translations[k]
                if result.errors[k]:
                    reasons[i] = f"translation failed{leg}: {result.errors[k]}"
                elif not texts[i]:
                    reasons[i] = f"empty translation{leg}"
                if costs is not None:
                    costs[i] = result.costs[k]
            outputs.append(texts)
        rows = batch.num_rows
        out = batch.rename_columns(["reference" if name == "en" else name for name in batch.column_names])
        if self.mode == "roundtrip":
            out = out.append_column("pivot", pa.array(outputs[0], pa.string()))
        out = (out.append_column("translation", pa.array(outputs[-1], pa.string()))
               .append_column("engine", pa.repeat(self.engine, rows))
               .append_column("direction", pa.repeat(self.direction, rows))
               .append_column(REASON, pa.array(reasons, pa.string())))
        if costs is not None:
            out = out.append_column("token_costs", pa.array(costs, pa.list_(pa.float32())))
        return out

    def __del__(self):
        for translator in getattr(self, "_by_options", {}).values():
            translator.close()


def batched_input(ingested: StageOutput, batch_size: int) -> ray.data.Dataset:
    """The ingested pairs as blocks of ``batch_size`` rows, so every actor in the pool gets work. (Ray 2.60's parquet
    reader ignores ``override_num_blocks`` and reads small files as one block, which one actor would translate
    alone.)"""
    return ray.data.read_parquet(ingested.data_files()).repartition(target_num_rows_per_block=batch_size)


def backtranslate(ingested: StageOutput, config: TranslationConfig, workdir: Path) -> int:
    """Stage function: translate ``ingested`` pairs; translated rows to ``workdir/data``, failures to rejects."""
    translated = batched_input(ingested, config.batch_size).map_batches(
        BacktranslateBatches,
        fn_constructor_kwargs={"engine": config.engine, "options": config.options, "direction": config.direction,
                               "mode": config.mode},
        batch_size=config.batch_size,
        batch_format="pyarrow",
        compute=ray.data.ActorPoolStrategy(size=config.actors),
        num_cpus=config.cpus_per_actor,
        num_gpus=config.gpus_per_actor,
    ).materialize()  # translated once, then split into rows and rejects
    write_split(translated, workdir, text_column=REJECT_TEXT[config.mode])
    return ingested.rows_out
