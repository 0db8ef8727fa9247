"""Chen et al. (2019), "Learning to Represent Bilingual Dictionaries" (BilDRL), reproduced on an aligned target space
(:mod:`parabit.recipes.bildrl.aligned_space`): :mod:`parabit.papers.bildrl.plan` is the plan the reproduction runs,
and its docstring maps the modules beside it (settings, data step, stages, groups, tables, findings, departures,
sections, the paper's numbers, the mono baselines' dictionary). The models are the ``bildrl`` recipe
(:mod:`parabit.recipes.bildrl`)."""
