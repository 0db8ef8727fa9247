"""The seed papers' plans by key, in the document's order: the one place their names live."""

from __future__ import annotations

from parabit.papers.bao.plan import BaoPlan
from parabit.papers.bildrl.plan import BilDRLPlan
from parabit.papers.elgohary.plan import ElgoharyPlan
from parabit.papers.plan import PaperPlan
from parabit.papers.wieting.plan import WietingPlan

PLANS: dict[str, type[PaperPlan]] = {plan.key: plan for plan in (BaoPlan, ElgoharyPlan, WietingPlan, BilDRLPlan)}
