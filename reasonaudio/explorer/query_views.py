"""What the query page and the one-query comparison show beyond the top 10 (no HTML here).

- the planted pair as each saved retriever saw it: per side its rank and score in the retriever's
  saved run, whether that score holds evidence, the caption or detected events the retriever read
  (with the logic's verdict per constraint) and the score's explanation where the store has one
  (a detected or soft retriever's soft value per constraint, as the search page prints it);
- the first relevant clip of a retriever's ranking with its own row when it lies below the top 10;
- two retrievers on one query side by side: their top clips, which clips they share, and where
  each put the other's clips and the first relevant one.
"""

from __future__ import annotations

import math
from typing import Any

from reasonaudio.dataset.benchmark import Query
from reasonaudio.evaluation.failures import no_evidence
from reasonaudio.evaluation.metrics import first_rank
from reasonaudio.explorer.catalog import TOP, Catalog, Ranked


def _hits_by_clip(cat: Catalog, name: str, qid: str) -> dict[str, tuple[int, float]]:
    run = cat.run(name)
    return {h.clip_id: (i, float(h.score)) for i, h in enumerate(run.hits.get(qid, []) if run else [], 1)}


def pair_views(cat: Catalog, q: Query) -> list[dict[str, Any]]:
    """Per saved retriever: the planted positive and hard negative as it ranked and saw them."""
    choice = cat.choice.get(q.id)
    if choice is None:
        return []
    ids = [choice.positive, choice.negative]
    rows = []
    for name in cat.names:
        placed = _hits_by_clip(cat, name, q.id)
        seen = cat.seen(name, ids, q.logic)
        explained = cat.explanations(name, ids, q.logic)
        sides = []
        for role, cid in zip(("positive", "hard negative"), ids):
            rank, score = placed.get(cid, (math.inf, math.nan))
            sides.append({"role": role, "clip_id": cid, "rank": rank, "score": score,
                          "evidence": not math.isnan(score) and not no_evidence(score),
                          "views": seen.get(cid, []), "explanation": explained.get(cid)})
        rows.append({"name": name, "sides": sides, "note": cat.run_note(name),
                     "has_run": cat.run(name) is not None})
    return rows


def first_relevant_row(cat: Catalog, name: str, q: Query, k: int = TOP) -> Ranked | None:
    """The first relevant clip of ``name``'s saved ranking for ``q`` when it lies below the top
    ``k`` (None when it is in the top ``k`` or not in the ranking)."""
    run = cat.run(name)
    hits = run.hits.get(q.id, []) if run is not None else []
    relevant = cat.bench.qrels.get(q.id, set())
    for i, h in enumerate(hits, 1):
        if h.clip_id in relevant:
            return cat.ranked([h], q.logic, q.id, start=i)[0] if i > k else None
    return None


def side_by_side(cat: Catalog, a: str, b: str, q: Query, k: int = TOP) -> dict[str, Any]:
    """Two retrievers' top ``k`` for ``q``: per side its hits, each with its rank under the other
    retriever, the first relevant clip's rank (and its row when below the top), the query's
    Acc@1; and the clips both put in their top ``k``."""
    names = (a, b)
    tops = {n: cat.top(n, q.id, k) for n in names}
    shared = set(h.clip_id for h in tops[a]) & set(h.clip_id for h in tops[b])
    relevant = cat.bench.qrels.get(q.id, set())
    sides = []
    for n, other in ((a, b), (b, a)):
        elsewhere = _hits_by_clip(cat, other, q.id)
        below = first_relevant_row(cat, n, q, k)
        sides.append({"name": n, "hits": tops[n], "note": cat.run_note(n),
                      "other_rank": {h.clip_id: elsewhere.get(h.clip_id, (math.inf, 0.0))[0]
                                     for h in [*tops[n], *([below] if below else [])]},
                      "first_relevant": first_rank(cat.ranking(n, q.id), relevant),
                      "first_row": below,
                      "acc": cat.results.runs[n].per_query.get(q.id, {}).get("acc@1"),
                      "depth": cat.depth(n)})
    union = len(set(h.clip_id for s in sides for h in s["hits"]))
    return {"sides": sides, "shared": shared, "jaccard": len(shared) / union if union else math.nan, "k": k}
