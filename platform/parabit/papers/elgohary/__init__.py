"""Elgohary & Carpuat (2017) reproduction: training conditions from one bitext, the paper's tables and analyses."""
