"""Bao et al. (2018), "Attentive Siamese LSTM Network for Semantic Textual Similarity Measure": its reproduction
(:mod:`parabit.papers.bao.plan`) and published numbers (:mod:`parabit.papers.bao.paper`). The models are the ``siamese`` recipe
(:mod:`parabit.recipes.siamese`)."""
