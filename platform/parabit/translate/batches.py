"""Arrow batches in, the same rows with their translation out: what a back-translation actor runs on each batch.

:class:`BacktranslateBatches` is what each actor of the back-translation stage's pool runs
(:mod:`parabit.backtranslation.backtranslate`). It lives here, beside the engines, and imports only pyarrow and
:mod:`parabit.translate`: a Ray actor imports the module of the class it runs, and the pipeline package
(MLflow, nltk, the filters) takes seconds to import, which every actor of every run would pay before its first
sentence.
"""

from __future__ import annotations

import pyarrow as pa

from parabit.translate import Translator, build_translator, translator_class

# The column each mode translates first, and its name in the output (the text a reject row shows).
INPUT_COLUMN = {"backtranslate": "foreign", "roundtrip": "en"}
REJECT_TEXT = {"backtranslate": "foreign", "roundtrip": "reference"}
# The stage's reject-reason column (``parabit.backtranslation.stage.REASON``; that module is not imported here).
REASON = "_reject_reason"


class BacktranslateBatches:
    """A translator actor's state: each actor builds its translators once (one Apertium process per direction, one
    neural model for every leg) and keeps them for the stage; every batch goes through the configuration's legs (one,
    or two for a round trip).

    ``batch`` (a pyarrow Table with the ingested columns) comes back with ``en`` renamed ``reference`` and the columns
    ``[pivot,] translation, engine, direction, <reason_column>[, token_costs]``; a sentence that failed in any leg has
    its reason set (and no translation)."""

    def __init__(self, engine: str, options: dict, direction: str, mode: str = "backtranslate",
                 reason_column: str = REASON):
        self.engine, self.direction, self.mode, self.reason_column = engine, direction, mode, reason_column
        languages = direction.split("-")
        self.legs = list(zip(languages, languages[1:]))
        # One translator per distinct options: one for every leg of a neural engine, one per direction of Apertium.
        cls = translator_class(engine)
        self._by_options: dict[str, Translator] = {}
        self.translators: dict[tuple[str, str], Translator] = {}
        for src, tgt in self.legs:
            leg_options = cls.options_for(src, tgt, options)
            key = repr(sorted(leg_options.items()))
            if key not in self._by_options:
                self._by_options[key] = build_translator(engine, **leg_options)
            self.translators[src, tgt] = self._by_options[key]

    def __call__(self, batch: pa.Table) -> pa.Table:
        texts: list[str | None] = batch[INPUT_COLUMN[self.mode]].to_pylist()
        rows = len(texts)
        reasons: list[str | None] = [None] * rows
        outputs, costs = [], None
        for src, tgt in self.legs:
            todo = [i for i, reason in enumerate(reasons) if reason is None]
            everything = len(todo) == rows
            result = self.translators[src, tgt].translate(texts if everything else [texts[i] for i in todo], src, tgt)
            leg = f" ({src}-{tgt})" if len(self.legs) > 1 else ""
            if everything:  # the usual case: the engine's lists are already aligned with the batch
                texts = list(result.translations)
                costs = None if result.costs is None else list(result.costs)
            else:
                texts = [None] * rows
                costs = None if result.costs is None else [None] * rows
                for k, i in enumerate(todo):
                    texts[i] = result.translations[k]
                    if costs is not None:
                        costs[i] = result.costs[k]
            for k, i in enumerate(todo):
                if result.errors[k]:
                    reasons[i] = f"translation failed{leg}: {result.errors[k]}"
                elif not texts[i]:
                    reasons[i] = f"empty translation{leg}"
            outputs.append(texts)
        out = batch.rename_columns(["reference" if name == "en" else name for name in batch.column_names])
        if self.mode == "roundtrip":
            out = out.append_column("pivot", pa.array(outputs[0], pa.string()))
        out = (out.append_column("translation", pa.array(outputs[-1], pa.string()))
               .append_column("engine", pa.repeat(pa.scalar(self.engine, pa.string()), rows))
               .append_column("direction", pa.repeat(pa.scalar(self.direction, pa.string()), rows))
               .append_column(self.reason_column, pa.array(reasons, pa.string())))
        if costs is not None:
            out = out.append_column("token_costs", pa.array(costs, pa.list_(pa.float32())))
        return out

    def translate_block(self, batch: pa.Table) -> pa.Table:
        """The same as calling the instance: the method the stage calls on its actors (a remote call needs a
        method name)."""
        return self(batch)

    def close(self) -> None:
        for translator in self._by_options.values():
            translator.close()

    def __del__(self):
        for translator in getattr(self, "_by_options", {}).values():
            translator.close()
