"""The service core behind :class:`graphmem.service.GraphMemory`, one job per module.

- ``core``: what every service shares — settings, the store, id checks, per-user locks, the extractor
  per catalog version, the ranked-graph cache (graphmem/ranked_cache.py) and display names;
- ``ingest``: validate a batch of turns, extract, store, re-rank;
- ``rerank``: rank after a write, write weights and tiers back, compact (automatic or asked);
- ``read``: context blocks, the graph, explanations, export;
- ``views``: the JSON shapes the read services return (pure);
- ``admin``: lifecycle, catalog, compaction runs, forgetting, erasure, readiness.
"""
