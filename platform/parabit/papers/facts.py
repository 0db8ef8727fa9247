"""What a paper's data step records as a typed, versioned model (:class:`PaperFacts`): its plan's
:meth:`~parabit.papers.plan.PaperPlan.facts` are such a model's JSON, kept in the ledger's prepared record, and its
:meth:`~parabit.papers.plan.PaperPlan.restore` validates the record's facts into the model again.

A record is read whatever shape it was written in: one without a ``version`` has the shape the plans wrote before
these models (version 1), and each model migrates an older shape to its own (:meth:`PaperFacts.upgrade`) before it
validates, so a plan reads only the newest shape and writes it with its version.
"""

from __future__ import annotations

from typing import Any, ClassVar, Self

from pydantic import BaseModel, ConfigDict, SerializerFunctionWrapHandler, model_serializer, model_validator

UNVERSIONED = 1
"""The version of facts written before the models: a record without a ``version``."""


class Facts(BaseModel):
    """Base of a paper's facts and their parts: data a data step measured, not settings (so no defaults to fill
    in and nothing to digest). Strict about keys: a key a model does not know is an error, never a fact dropped
    unseen. A field's docstring (the string right under it) says what it holds. An optional field (default None)
    is left out of the dump while it is None: what a step has not measured yet is absent, as the plans have it."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True, protected_namespaces=())

    @model_serializer(mode="wrap")
    def _leave_out_unmeasured(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data = handler(self)
        unmeasured = {name for name, field in type(self).model_fields.items()
                      if not field.is_required() and field.default is None and getattr(self, name) is None}
        return {key: value for key, value in data.items() if key not in unmeasured}


class PaperFacts(Facts):
    """A paper's facts as its ledger record holds them. A subclass declares ``version`` as a ``Literal`` of its
    number, with that number as default, and migrates older shapes in :meth:`upgrade`. The plan's own ``missing``
    (which :meth:`~parabit.reproduction.paper_run.PaperRun.prepared_facts` writes beside the paper's facts and
    :meth:`~parabit.reproduction.paper_run.PaperRun.restore` takes back) is not the paper's and is passed over."""

    PLAN_KEYS: ClassVar[tuple[str, ...]] = ("missing",)

    @classmethod
    def built(cls, **fields: Any) -> Self:
        """Facts this code's data step built, of this version (validated as a record is; one read from the ledger
        without a ``version`` is of version 1)."""
        return cls.model_validate({"version": cls.current(), **fields})

    @classmethod
    def current(cls) -> int:
        """The version this code writes (the default of the model's ``version``)."""
        return cls.model_fields["version"].default

    @model_validator(mode="before")
    @classmethod
    def _migrate(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        version = data.get("version", UNVERSIONED)
        if not isinstance(version, int) or not UNVERSIONED <= version <= cls.current():
            raise ValueError(f"{cls.__name__} of version {version!r}: this code reads versions {UNVERSIONED} to "
                             f"{cls.current()} (a newer record needs newer code)")
        facts = {key: value for key, value in data.items() if key not in cls.PLAN_KEYS}
        return {**cls.upgrade(facts, version), "version": cls.current()}

    @classmethod
    def upgrade(cls, data: dict[str, Any], version: int) -> dict[str, Any]:
        """``data``, facts written at ``version``, in this version's shape (a new dict; ``data`` is left as it is).
        Default: the shape never changed."""
        return dict(data)

    def ledger(self) -> dict[str, Any]:
        """The facts as the ledger keeps them (JSON: what the plan's ``facts()`` returns)."""
        return self.model_dump(mode="json")
