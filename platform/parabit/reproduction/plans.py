"""The seed papers' plans by key, in the document's order: the one place their names live."""

from __future__ import annotations

from parabit.bao.plan import BaoPlan
from parabit.bildrl.plan import BilDRLPlan
from parabit.elgohary.plan import ElgoharyPlan
from parabit.reproduction.plan import PaperPlan
from parabit.wieting.plan import WietingPlan

PLANS: dict[str, type[PaperPlan]] = {plan.key: plan for plan in (BaoPlan, ElgoharyPlan, WietingPlan, BilDRLPlan)}
