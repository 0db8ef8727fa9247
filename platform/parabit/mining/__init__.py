"""Bitext mining on Ray Data: two piles of sentences embedded by a bilingual model (an actor pool, the model loaded
once per actor), then paired by LASER's ratio margin, each an exactly-once stage (``parabit mine``;
:mod:`parabit.mining.stages`)."""

from parabit.mining.config import MineConfig, MineSide

__all__ = ["MineConfig", "MineSide"]
