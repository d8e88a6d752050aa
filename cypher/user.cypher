// Reading and maintaining one user's graph. Every statement takes $tenant and $user_id.

// name: user_version
// The user's graph version (bumped by every write) and the tenant's catalog version, for caching.
OPTIONAL MATCH (u:User {tenant: $tenant, id: $user_id})
OPTIONAL MATCH (t:Tenant {id: $tenant})
RETURN u.version AS version, coalesce(t.catalog_version, 0) AS catalog_version, u IS NOT NULL AS exists;

// name: user_bump_version
// Marks the user's graph as changed and takes the user's write lock.
MATCH (u:User {tenant: $tenant, id: $user_id})
SET u.version = u.version + 1, u.updated_at = datetime()
RETURN u.version AS version;

// name: user_interests
// The user's interest in each concept, with the concept's catalog facts.
MATCH (i:Interest {tenant: $tenant, user_id: $user_id})-[:ABOUT]->(c:Concept)
RETURN i.key AS key, CASE WHEN c.in_catalog OR i.own_name IS NULL THEN c.name ELSE i.own_name END AS name, c.type AS type, c.in_catalog AS in_catalog, c.critical AS critical,
       coalesce(i.user_mentions, 0) AS user_mentions, coalesce(i.assistant_mentions, 0) AS assistant_mentions,
       // Times as epoch microseconds: hydrating 3 DateTime values per row in the Python driver cost
       // ~130 µs/row, most of the load time of a large user (1.6 s of 2.3 s at 10,000 concepts).
       i.stance AS stance, i.first_seen.epochSeconds * 1000000 + i.first_seen.microsecond AS first_seen_us,
       i.last_seen.epochSeconds * 1000000 + i.last_seen.microsecond AS last_seen_us,
       coalesce(i.sessions, []) AS sessions, i.tier AS tier,
       i.compacted_at.epochSeconds * 1000000 + i.compacted_at.microsecond AS compacted_at_us,
       coalesce(i.evidence, []) AS evidence, coalesce(i.mention_ts, []) AS mention_ts,
       coalesce(i.mention_roles, []) AS mention_roles, i.weight AS weight,
       coalesce(i.context_marks, []) AS context_marks;

// name: edges_by_owner
// Every relation of one owner in a tenant ('catalog', or a user's 'u:<id>'), by index seek per type.
CALL () {
  MATCH (a)-[r:PREREQUISITE_OF {tenant: $tenant, owner: $edge_owner}]->(b) RETURN a, r, b
  UNION ALL
  MATCH (a)-[r:USES {tenant: $tenant, owner: $edge_owner}]->(b) RETURN a, r, b
  UNION ALL
  MATCH (a)-[r:REQUIRES {tenant: $tenant, owner: $edge_owner}]->(b) RETURN a, r, b
  UNION ALL
  MATCH (a)-[r:PART_OF {tenant: $tenant, owner: $edge_owner}]->(b) RETURN a, r, b
  UNION ALL
  MATCH (a)-[r:RELATED_TO {tenant: $tenant, owner: $edge_owner}]->(b) RETURN a, r, b
}
RETURN a.key AS source, type(r) AS type, b.key AS target, r.scope AS scope, coalesce(r.confidence, 1.0) AS confidence;

// name: user_concepts_by_key
// Concept facts for neighbours the user has not mentioned: catalog concepts and the user's own only.
UNWIND $keys AS key
MATCH (c:Concept {tenant: $tenant, key: key})
OPTIONAL MATCH (i:Interest {tenant: $tenant, user_id: $user_id, key: key})
WITH c, i
WHERE c.in_catalog OR i IS NOT NULL
RETURN c.key AS key, CASE WHEN c.in_catalog OR i.own_name IS NULL THEN c.name ELSE i.own_name END AS name, c.type AS type, c.in_catalog AS in_catalog, c.critical AS critical;

// name: user_history_size
// How many turns the user has, their token count (for the compaction ratio), when the latest was said,
// and how many of the user's own turns are in each language ([language, turns] pairs: the block shows
// concept names in the language the user writes in).
MATCH (t:Turn {tenant: $tenant, user_id: $user_id})
WITH t.role = 'user' AS own, t.language AS language, count(t) AS n, sum(t.tokens) AS tokens,
     max(t.ts).epochMillis AS last_ms
RETURN coalesce(sum(n), 0) AS turns, coalesce(sum(tokens), 0) AS tokens, max(last_ms) AS last_ms,
       collect(CASE WHEN own THEN [language, n] END) AS user_languages;

// name: user_write_weights
// Writes ranked weights and tiers back, bumping the user's graph version by $bump first (the user's write
// lock; 1 for a write's first statement, 0 for the rest of a big one): one round trip where two were.
// $updates: rows of interests stored with the tier they keep (the caller read it with the graph): only
// their weights change, by index seek, with the name the full path would set (most rows of a re-rank:
// PageRank moves every weight past the 1 % rule while tiers rarely change; ~3x cheaper per row than the
// full path's MERGEs and label rewrites). An interest gone since (forgotten) is not recreated.
// $rows: the rest (new interests, tier changes) write the tier as well, which is also a label (Core,
// Related, Compacted) for the Browser. A row without a tier keeps the stored one (concepts below the
// threshold wait for a compaction run).
// Callers send only rows that changed (tier, or weight by more than 1 %), so ranked_at is when a row's
// weight was last written, not when it was last ranked. A concept that leaves the compacted tier loses
// its FOLDS link from the summary here, so links always match the stored tiers.
MATCH (u:User {tenant: $tenant, id: $user_id})
SET u.version = u.version + $bump, u.updated_at = CASE WHEN $bump > 0 THEN datetime() ELSE u.updated_at END
WITH u
CALL () {
  UNWIND $updates AS row
  MATCH (i:Interest {tenant: $tenant, user_id: $user_id, key: row.key})-[:ABOUT]->(c:Concept)
  SET i.name = CASE WHEN c.in_catalog OR i.own_name IS NULL THEN c.name ELSE i.own_name END,
      i.initial_weight = row.initial, i.propagated_weight = row.propagated,
      i.weight = row.final, i.ranked_at = datetime()
  RETURN count(i) AS updated
}
CALL (u) {
  UNWIND $rows AS row
  MATCH (c:Concept {tenant: $tenant, key: row.key})
  MERGE (i:Interest {tenant: $tenant, user_id: $user_id, key: row.key})
    ON CREATE SET i.created_at = datetime(), i.name = c.name, i.mentions = 0, i.user_mentions = 0,
                  i.assistant_mentions = 0, i.sessions = [], i.mention_ts = [], i.mention_roles = [],
                  i.evidence = [], i.tier = 'related'
  MERGE (u)-[:HAS_INTEREST]->(i)
  MERGE (i)-[:ABOUT]->(c)
  WITH i, c, row, coalesce(row.tier, i.tier, 'related') AS tier, i.tier = 'compacted' AS was_compacted
  SET i.name = CASE WHEN c.in_catalog OR i.own_name IS NULL THEN c.name ELSE i.own_name END,
      i.initial_weight = row.initial, i.propagated_weight = row.propagated,
      i.weight = row.final, i.ranked_at = datetime(),
      i.restored_at = CASE WHEN i.tier = 'compacted' AND tier <> 'compacted' THEN datetime() ELSE i.restored_at END,
      i.compacted_at = CASE WHEN tier = 'compacted' THEN coalesce(i.compacted_at, datetime()) ELSE null END,
      i.tier = tier
  REMOVE i:Core:Related:Compacted
  FOREACH (_ IN CASE WHEN tier = 'core' THEN [1] ELSE [] END | SET i:Core)
  FOREACH (_ IN CASE WHEN tier = 'related' THEN [1] ELSE [] END | SET i:Related)
  FOREACH (_ IN CASE WHEN tier = 'compacted' THEN [1] ELSE [] END | SET i:Compacted)
  FOREACH (f IN CASE WHEN was_compacted AND tier <> 'compacted' THEN [(i)<-[x:FOLDS]-(:Summary {tenant: $tenant, user_id: $user_id}) | x] ELSE [] END | DELETE f)
  RETURN count(i) AS written, sum(CASE WHEN was_compacted AND tier <> 'compacted' THEN 1 ELSE 0 END) AS restored
}
RETURN u.version AS version, updated + written AS written, restored;

// name: user_record_compaction
// Records a compaction run and points the user's related_to_core_topics summary at what was folded.
// With $replace the summary's FOLDS links are rebuilt from $folded_keys; without it they are updated
// incrementally: links are added for $folded_keys (the newly compacted concepts), and restored
// concepts already lost theirs in user_write_weights. count is the exact number of FOLDS links;
// items are display names, capped by the caller (the heaviest 200).
MATCH (u:User {tenant: $tenant, id: $user_id})
CREATE (r:CompactionRun)
SET r = $run, r.at = datetime($run.at), r.tenant = $tenant, r.user_id = $user_id
CREATE (u)-[:HAD_COMPACTION]->(r)
MERGE (s:Summary {tenant: $tenant, user_id: $user_id})
  ON CREATE SET s.kind = 'related_to_core_topics', s.name = 'related_to_core_topics', s.created_at = datetime()
MERGE (u)-[:HAS_SUMMARY]->(s)
SET s.items = $folded_names, s.updated_at = datetime(), s.last_run = $run.id
WITH s
CALL (s) {
  OPTIONAL MATCH (s)-[old:FOLDS]->()
  WITH old WHERE $replace
  DELETE old
}
CALL (s) {
  UNWIND $folded_keys AS key
  MATCH (i:Interest {tenant: $tenant, user_id: $user_id, key: key})
  MERGE (s)-[:FOLDS]->(i)
}
WITH s, COUNT { (s)-[:FOLDS]->() } AS folded
SET s.count = folded
RETURN folded;

// name: user_summary_recount
// After an ingest restored compacted concepts (their FOLDS links were removed): the summary's exact count.
MATCH (s:Summary {tenant: $tenant, user_id: $user_id})
SET s.count = COUNT { (s)-[:FOLDS]->() }
RETURN s.count AS count;

// name: user_summary
// The user's related_to_core_topics summary (what compaction folded away, restorable).
MATCH (s:Summary {tenant: $tenant, user_id: $user_id})
RETURN s.count AS count, s.items AS items, s.last_run AS last_run, s.updated_at AS updated_at;

// name: user_compaction_runs
// The user's compaction runs, newest first.
MATCH (r:CompactionRun {tenant: $tenant, user_id: $user_id})
RETURN r {.*} AS run
ORDER BY r.at DESC
LIMIT $limit;

// name: user_concept_mentions
// Every mention of one concept in the user's turns, with its span (for explanations).
MATCH (t:Turn {tenant: $tenant, user_id: $user_id})-[m:MENTIONS]->(c:Concept {tenant: $tenant, key: $key})
RETURN t.id AS turn_id, t.session_id AS session_id, t.role AS role, m.start AS start, m.end AS end,
       m.surface AS surface, m.extractor AS extractor, m.confidence AS confidence, m.ts AS ts
ORDER BY m.ts, t.id, m.start;

// name: user_concept_stances
// Stance history for one concept, oldest first.
MATCH (t:Turn {tenant: $tenant, user_id: $user_id})-[e:EXPRESSES]->(c:Concept {tenant: $tenant, key: $key})
RETURN t.id AS turn_id, t.session_id AS session_id, e.stance AS stance, e.cue AS cue,
       e.start AS start, e.end AS end, e.ts AS ts
ORDER BY e.ts, e.seq;

// name: user_concept_relations
// The user's own extracted relations touching one concept, with the turns they came from.
MATCH (a:Concept {tenant: $tenant, key: $key})-[r:PREREQUISITE_OF|USES|REQUIRES|PART_OF|RELATED_TO]-(b:Concept)
WHERE r.owner IN ['catalog', $owner]
RETURN startNode(r).key AS source, type(r) AS type, endNode(r).key AS target, r.scope AS scope,
       coalesce(r.turn_ids, []) AS turn_ids, coalesce(r.extractors, []) AS extractors, r.confidence AS confidence
// A fixed order: other users' relations in the store must not reorder this user's answer.
ORDER BY scope, type, source, target;

// name: user_turns
// The user's raw turns in order (export).
MATCH (t:Turn {tenant: $tenant, user_id: $user_id})
RETURN t.id AS turn_id, t.session_id AS session_id, t.role AS role, t.text AS text, t.ts AS ts,
       t.language AS language
ORDER BY t.ts, t.id;

// name: user_counts
// Counts of everything a user owns (tests, export, erase checks).
OPTIONAL MATCH (u:User {tenant: $tenant, id: $user_id})
CALL (u) { OPTIONAL MATCH (t:Turn {tenant: $tenant, user_id: $user_id}) RETURN count(t) AS turns }
CALL (u) { OPTIONAL MATCH (s:Session {tenant: $tenant, user_id: $user_id}) RETURN count(s) AS sessions }
CALL (u) { OPTIONAL MATCH (i:Interest {tenant: $tenant, user_id: $user_id}) RETURN count(i) AS interests }
CALL (u) { OPTIONAL MATCH (:Turn {tenant: $tenant, user_id: $user_id})-[m:MENTIONS]->() RETURN count(m) AS mentions }
CALL (u) { OPTIONAL MATCH (:Turn {tenant: $tenant, user_id: $user_id})-[e:EXPRESSES]->() RETURN count(e) AS stances }
// The user's own relations by index seek per type (rel_owner_*): expanding every concept of the tenant
// walked all users' mentions and interests on them (grows with the tenant: bench/results/SCALE.md).
CALL (u) {
  CALL () {
    MATCH ()-[r:PREREQUISITE_OF {tenant: $tenant, owner: $owner}]->() RETURN r
    UNION ALL
    MATCH ()-[r:USES {tenant: $tenant, owner: $owner}]->() RETURN r
    UNION ALL
    MATCH ()-[r:REQUIRES {tenant: $tenant, owner: $owner}]->() RETURN r
    UNION ALL
    MATCH ()-[r:PART_OF {tenant: $tenant, owner: $owner}]->() RETURN r
    UNION ALL
    MATCH ()-[r:RELATED_TO {tenant: $tenant, owner: $owner}]->() RETURN r
  }
  RETURN count(r) AS relations
}
CALL (u) { OPTIONAL MATCH (r:CompactionRun {tenant: $tenant, user_id: $user_id}) RETURN count(r) AS compaction_runs }
RETURN u IS NOT NULL AS exists, turns, sessions, interests, mentions, stances, relations, compaction_runs;

// name: user_list
// A tenant's users. `u.id IS NOT NULL` (always true: it is the key) lets the planner seek the user_key
// (tenant, id) index instead of scanning every user of every tenant; ordering by both of the index's
// properties lets it read them in index order and stop at $limit (ORDER BY u.id alone sorted every user
// of the tenant first: 101,001 db hits for 1,000 users at 100k, now 2,001; bench/results/SCALE.md).
MATCH (u:User {tenant: $tenant})
WHERE u.id IS NOT NULL
RETURN u.id AS user_id, u.version AS version
ORDER BY u.tenant, u.id
LIMIT $limit;

// name: user_forget_concept
// "Forget X": removes the user's mentions, stances, interest and own relations for one concept. Turns stay.
MATCH (c:Concept {tenant: $tenant, key: $key})
CALL (c) {
  OPTIONAL MATCH (:Turn {tenant: $tenant, user_id: $user_id})-[m:MENTIONS|EXPRESSES]->(c)
  DELETE m
  RETURN count(m) AS provenance
}
CALL (c) {
  OPTIONAL MATCH (c)-[r]-(:Concept)
  WHERE r.owner = $owner
  DELETE r
  RETURN count(r) AS relations
}
CALL (c) {
  OPTIONAL MATCH (i:Interest {tenant: $tenant, user_id: $user_id, key: $key})
  DETACH DELETE i
  RETURN count(i) AS interests
}
RETURN provenance, relations, interests;

// name: user_summary_forget
// "Forget X" also takes X out of the related_to_core_topics summary (its FOLDS link went with the
// interest; its display name goes here) and recounts, in the same transaction as user_forget_concept.
MATCH (s:Summary {tenant: $tenant, user_id: $user_id})
SET s.items = [x IN coalesce(s.items, []) WHERE NOT x IN $names],
    s.count = COUNT { (s)-[:FOLDS]->() }
RETURN s.count AS count;

// name: user_erase_turns
// Right to be forgotten, step 1: the user's turns, sessions and everything hanging off them.
OPTIONAL MATCH (t:Turn {tenant: $tenant, user_id: $user_id})
DETACH DELETE t
RETURN count(t) AS turns;

// name: user_erase_rest
// Right to be forgotten, step 2: sessions, interests, runs, summary, own relations and the user node.
CALL () { OPTIONAL MATCH (s:Session {tenant: $tenant, user_id: $user_id}) DETACH DELETE s RETURN count(s) AS sessions }
CALL () { OPTIONAL MATCH (i:Interest {tenant: $tenant, user_id: $user_id}) DETACH DELETE i RETURN count(i) AS interests }
CALL () { OPTIONAL MATCH (r:CompactionRun {tenant: $tenant, user_id: $user_id}) DETACH DELETE r RETURN count(r) AS runs }
CALL () { OPTIONAL MATCH (s:Summary {tenant: $tenant, user_id: $user_id}) DETACH DELETE s RETURN count(s) AS summaries }
// Own relations by index seek per type, as in user_counts.
CALL () {
  CALL () {
    MATCH ()-[r:PREREQUISITE_OF {tenant: $tenant, owner: $owner}]->() RETURN r
    UNION ALL
    MATCH ()-[r:USES {tenant: $tenant, owner: $owner}]->() RETURN r
    UNION ALL
    MATCH ()-[r:REQUIRES {tenant: $tenant, owner: $owner}]->() RETURN r
    UNION ALL
    MATCH ()-[r:PART_OF {tenant: $tenant, owner: $owner}]->() RETURN r
    UNION ALL
    MATCH ()-[r:RELATED_TO {tenant: $tenant, owner: $owner}]->() RETURN r
  }
  DELETE r
  RETURN count(r) AS relations
}
CALL () { OPTIONAL MATCH (u:User {tenant: $tenant, id: $user_id}) DETACH DELETE u RETURN count(u) AS users }
RETURN sessions, interests, runs, summaries, relations, users;

// name: concepts_lock_orphans
// Locks the conversation-only concepts among $keys before concepts_delete_orphans checks them: a write of
// another user that is linking to one of them commits first (and the check then sees its link), or waits.
MATCH (c:Concept {tenant: $tenant})
WHERE c.key IN $keys AND NOT c.in_catalog
SET c.orphan_checked_at = datetime()
RETURN count(c) AS locked;

// name: concepts_delete_orphans
// Concepts that came only from conversation and are no longer referenced by anyone are removed
// (after concepts_lock_orphans, in the same transaction).
MATCH (c:Concept {tenant: $tenant})
WHERE c.key IN $keys AND NOT c.in_catalog AND NOT (c)--()
DELETE c
RETURN count(*) AS deleted;

// name: concepts_search
// Full-text lookup of concepts by name or alias within a tenant (focus text -> concepts).
// Only catalog concepts and the asking user's own: other users' concepts stay invisible.
CALL db.index.fulltext.queryNodes('concept_names', $query) YIELD node, score
WHERE node.tenant = $tenant
  AND (node.in_catalog OR EXISTS { MATCH (:Interest {tenant: $tenant, user_id: $user_id, key: node.key}) })
RETURN node.key AS key, node.name AS name, score
ORDER BY score DESC, key
LIMIT $limit;

// name: concepts_by_keys
// Which of these keys exist as concepts of the tenant.
UNWIND $keys AS key
MATCH (c:Concept {tenant: $tenant, key: key})
RETURN c.key AS key, c.name AS name, c.in_catalog AS in_catalog;

// name: user_graph_load
// Everything loading a user's graph reads, in one statement (one auto-commit round trip where a managed
// read of two statements took four, and the version check before it a fifth): the user's graph version
// and the tenant's catalog version (user_version's row, so a graph is cached under the versions it was
// read at), the interests packed in one record when $interests (user_interests' columns, then one list
// per interest: the driver decodes one message instead of one per row, which cost most of an uncached
// load), the mastery of every concept attempted (attempts_user_mastery's rows), the user's own relations
// (owner 'u:' + the user id, as UserRef.owner; edges_by_owner's rows) and the history size
// (user_history_size's row). Without $interests (a load that updates a cached graph with an ingest's
// refreshed rows) the interests are not read.
OPTIONAL MATCH (u:User {tenant: $tenant, id: $user_id})
OPTIONAL MATCH (tn:Tenant {id: $tenant})
CALL () {
  MATCH (i:Interest {tenant: $tenant, user_id: $user_id})-[:ABOUT]->(c:Concept)
  WHERE $interests
  // Aggregated with no grouping key, so a user without interests gets its (empty) list.
  RETURN collect([i.key, CASE WHEN c.in_catalog OR i.own_name IS NULL THEN c.name ELSE i.own_name END, c.type,
                  c.in_catalog, c.critical, coalesce(i.user_mentions, 0), coalesce(i.assistant_mentions, 0),
                  i.stance, i.first_seen.epochSeconds * 1000000 + i.first_seen.microsecond,
                  i.last_seen.epochSeconds * 1000000 + i.last_seen.microsecond, coalesce(i.sessions, []), i.tier,
                  i.compacted_at.epochSeconds * 1000000 + i.compacted_at.microsecond, coalesce(i.evidence, []),
                  coalesce(i.mention_ts, []), coalesce(i.mention_roles, []), i.weight,
                  coalesce(i.context_marks, [])]) AS rows
}
CALL () {
  MATCH (m:Mastery {tenant: $tenant, user_id: $user_id})-[:OF]->(c:Concept)
  OPTIONAL MATCH (i:Interest {tenant: $tenant, user_id: $user_id, key: m.key})
  RETURN collect({key: m.key, name: CASE WHEN c.in_catalog OR i.own_name IS NULL THEN c.name ELSE i.own_name END,
                  type: c.type, in_catalog: c.in_catalog, critical: c.critical, mastery: m.mastery,
                  attempts: m.attempts, correct: m.correct, last_ms: m.last_ts.epochMillis,
                  last_attempt: m.last_attempt, stance_ms: i.stance_at.epochMillis}) AS mastery
}
CALL () {
  CALL () {
    MATCH (a)-[r:PREREQUISITE_OF {tenant: $tenant, owner: 'u:' + $user_id}]->(b) RETURN a, r, b
    UNION ALL
    MATCH (a)-[r:USES {tenant: $tenant, owner: 'u:' + $user_id}]->(b) RETURN a, r, b
    UNION ALL
    MATCH (a)-[r:REQUIRES {tenant: $tenant, owner: 'u:' + $user_id}]->(b) RETURN a, r, b
    UNION ALL
    MATCH (a)-[r:PART_OF {tenant: $tenant, owner: 'u:' + $user_id}]->(b) RETURN a, r, b
    UNION ALL
    MATCH (a)-[r:RELATED_TO {tenant: $tenant, owner: 'u:' + $user_id}]->(b) RETURN a, r, b
  }
  RETURN collect({source: a.key, type: type(r), target: b.key, scope: r.scope,
                  confidence: coalesce(r.confidence, 1.0)}) AS own_edges
}
CALL () {
  MATCH (t:Turn {tenant: $tenant, user_id: $user_id})
  WITH t.role = 'user' AS own, t.language AS language, count(t) AS n, sum(t.tokens) AS tokens,
       max(t.ts).epochMillis AS last_ms
  RETURN coalesce(sum(n), 0) AS turns, coalesce(sum(tokens), 0) AS tokens, max(last_ms) AS last_ms,
         collect(CASE WHEN own THEN [language, n] END) AS user_languages
}
RETURN u.version AS version, coalesce(tn.catalog_version, 0) AS catalog_version, u IS NOT NULL AS exists,
       ['key', 'name', 'type', 'in_catalog', 'critical', 'user_mentions', 'assistant_mentions', 'stance',
        'first_seen_us', 'last_seen_us', 'sessions', 'tier', 'compacted_at_us', 'evidence', 'mention_ts',
        'mention_roles', 'weight', 'context_marks'] AS columns, rows, mastery, own_edges, turns, tokens, last_ms, user_languages;
