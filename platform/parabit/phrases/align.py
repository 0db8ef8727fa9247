"""Word alignment of tokenised bitext with eflomal, and symmetrisation of its two directions.

eflomal (Östling & Tiedemann 2016) fits a Bayesian HMM + fertility aligner by Gibbs sampling on all the sentences it
is given, in both directions. Its links are ``i-j`` (English token i, foreign token j) in both output files; the
forward file aligns each foreign token to at most one English token, the reverse file each English token to at
most one foreign token. :func:`symmetrise` merges them as Moses does.

nltk's ``grow_diag_final_and`` is not used: it tests ``e_new not in aligned`` against a dict keyed ``"e"``/``"f"``,
which is always true, so it returns (nearly) the union. The Moses algorithm is short and is written out here.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path

import eflomal

from parabit.phrases.config import AlignConfig

Link = tuple[int, int]
NEIGHBOURS = ((-1, 0), (0, -1), (1, 0), (0, 1), (-1, -1), (-1, 1), (1, -1), (1, 1))


def parse_links(text: str) -> set[Link]:
    """``"0-0 1-2"`` → ``{(0, 0), (1, 2)}`` (Pharaoh format, English index first)."""
    return {(int(i), int(j)) for i, _, j in (link.partition("-") for link in text.split())}


def format_links(links: Sequence[Link] | set[Link]) -> str:
    return " ".join(f"{i}-{j}" for i, j in sorted(links))


def symmetrise(forward: set[Link], reverse: set[Link], method: str = "grow-diag-final-and") -> list[Link]:
    """Merge two directional alignments (Koehn et al. 2005, as in Moses' ``symal``).

    ``intersection`` and ``union`` are what they say. ``grow-diag`` starts from the intersection and repeatedly adds
    union points next to (or diagonal to) an alignment point when their English or foreign word is still unaligned;
    ``final`` then adds remaining union points whose English *or* foreign word is unaligned, ``final-and`` only those
    whose English *and* foreign words are both unaligned.
    """
    union = forward | reverse
    if method == "union":
        return sorted(union)
    alignment = forward & reverse
    if method == "intersection":
        return sorted(alignment)
    if method not in ("grow-diag-final", "grow-diag-final-and"):
        raise ValueError(f"unknown symmetrisation {method!r}")
    aligned_e = {i for i, _ in alignment}
    aligned_f = {j for _, j in alignment}

    def add(link: Link) -> None:
        alignment.add(link)
        aligned_e.add(link[0])
        aligned_f.add(link[1])

    grown = True
    while grown:
        grown = False
        for i, j in sorted(alignment):
            for di, dj in NEIGHBOURS:
                candidate = (i + di, j + dj)
                if candidate in union and candidate not in alignment and (
                        candidate[0] not in aligned_e or candidate[1] not in aligned_f):
                    add(candidate)
                    grown = True
    both = method == "grow-diag-final-and"
    for direction in (forward, reverse):
        for i, j in sorted(direction):
            unaligned_e, unaligned_f = i not in aligned_e, j not in aligned_f
            if (unaligned_e and unaligned_f) if both else (unaligned_e or unaligned_f):
                add((i, j))
    return sorted(alignment)


def align_tokens(english: Sequence[Sequence[str]], foreign: Sequence[Sequence[str]],
                 config: AlignConfig) -> list[list[Link]]:
    """Align tokenised sentence pairs with one eflomal model fitted on exactly these pairs; symmetrised links per
    pair. Every sentence must have at least one token."""
    if len(english) != len(foreign):
        raise ValueError(f"{len(english)} English sentences but {len(foreign)} foreign ones")
    if not english:
        return []
    empty = next((k for k, (e, f) in enumerate(zip(english, foreign)) if not e or not f), None)
    if empty is not None:
        raise ValueError(f"sentence pair {empty} has an empty side: eflomal cannot align it; reject it before")
    aligner = eflomal.Aligner(model=config.model, n_samplers=config.n_samplers,
                              rel_iterations=config.rel_iterations, null_prior=config.null_prior)
    with tempfile.TemporaryDirectory(prefix="parabit-eflomal-") as folder:
        forward_path, reverse_path = Path(folder) / "forward", Path(folder) / "reverse"
        aligner.align([" ".join(tokens) for tokens in english], [" ".join(tokens) for tokens in foreign],
                      links_filename_fwd=str(forward_path), links_filename_rev=str(reverse_path), quiet=True)
        forward = forward_path.read_text(encoding="utf-8").split("\n")
        reverse = reverse_path.read_text(encoding="utf-8").split("\n")
    return [symmetrise(parse_links(forward[k]), parse_links(reverse[k]), config.symmetrisation)
            for k in range(len(english))]
