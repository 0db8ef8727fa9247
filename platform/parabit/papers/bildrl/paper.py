"""Chen et al. (2019), BilDRL, as published (``shared/SEED_TABLES.md``): the numbers the reproduction sets ours
beside, and the directions and models of Table 3 that it builds."""

from __future__ import annotations

# Table 3's directions built here, the paper's single-direction encoders, and the pair its multi-task and joint
# models learn together.
DIRECTIONS = ("en-es", "es-en", "fr-en")
SINGLE = ("bow", "cnn", "gru", "att")
ES_PAIR = ("en-es", "es-en")

# The paper's stated setup: defined words held out per dictionary, Wikt3l's definitions in each direction built here,
# the size of its target space (BilBOWA), its encoders' depth and its longest training.
TEST_WORDS = 500
WIKT3L_DEFINITIONS = {"fr-en": 58_808, "es-en": 56_610, "en-es": 20_930}
SPACE_DIM = 50
LAYERS = 5
MAX_EPOCHS = 1000

# Chen et al. 2019, Table 3 (P@1 %, P@10 %, MRR) for the directions built here, and Table 4 (En&Es accuracy %, F1:
# the baselines without dictionary training, then BilDRL's models).
PAPER_TABLE3 = {
    "BOW": {"fr-en": (0.4, 2.2, .006), "en-es": (0.4, 2.4, .007), "es-en": (0.4, 2.6, .007)},
    "CNN": {"fr-en": (6.4, 14.8, .072), "en-es": (3.8, 7.2, .045), "es-en": (7.0, 16.8, .088)},
    "GRU": {"fr-en": (38.8, 49.8, .410), "en-es": (47.8, 59.0, .496), "es-en": (57.6, 67.2, .604)},
    "ATT": {"fr-en": (39.8, 50.2, .425), "en-es": (51.6, 59.2, .534), "es-en": (60.4, 68.4, .629)},
    "GRU-MTL": {"fr-en": (44.4, 52.8, .467), "en-es": (50.4, 60.0, .530), "es-en": (63.6, 71.8, .659)},
    "ATT-MTL": {"fr-en": (47.6, 56.6, .497), "en-es": (55.8, 62.2, .575), "es-en": (66.4, 75.0, .687)},
    "ATT-joint": {"fr-en": (68.2, 75.4, .706), "en-es": (69.0, 72.8, .704), "es-en": (78.6, 83.4, .803)},
}
PAPER_TABLE4 = {"BiBOW": (56.27, .623), "BiCNN": (53.80, .611), "ABCNN": (58.83, .655), "BiGRU": (60.53, .692),
                "BiATT": (61.27, .689),
                "GRU-MTL": (63.33, .722), "ATT-MTL": (66.07, .735), "ATT-joint": (67.13, .759)}
