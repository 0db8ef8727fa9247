"""Chen et al. (2019), "Learning to Represent Bilingual Dictionaries" (BilDRL), reproduced on an aligned target space
(:mod:`parabit.recipes.bildrl.aligned_space`): :mod:`parabit.papers.bildrl.plan` declares the cells, tables and findings;
:mod:`parabit.papers.bildrl.mono` builds the monolingual dictionary of the paper's mono baselines. The models are the
``bildrl`` recipe (:mod:`parabit.recipes.bildrl`)."""
