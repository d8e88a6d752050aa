// Bulk loading of whole users (the scale benchmark's fixture: bench/scale_bench.py). One transaction per
// batch of users, written with CREATE: the loader only ever writes users that do not exist yet
// (bulk_existing_users), so a batch is all or nothing and an interrupted load resumes where it stopped.
// The graph is the one the ingest path builds (cypher/ingest.cypher); interests arrive precomputed
// (Neo4jStore.bulk_load_users derives them from the turns exactly as ingest_refresh_interests does).

// name: bulk_existing_users
// Which of these user ids the tenant already holds.
UNWIND $user_ids AS user_id
MATCH (u:User {tenant: $tenant, id: user_id})
RETURN u.id AS user_id;

// name: bulk_users
// Users, their sessions, and the tenant's HAS_USER links.
MERGE (t:Tenant {id: $tenant})
  ON CREATE SET t.created_at = datetime()
WITH t
UNWIND $users AS row
CREATE (u:User {tenant: $tenant, id: row.user_id, name: row.user_id, version: 1,
                created_at: datetime(), updated_at: datetime()})
CREATE (t)-[:HAS_USER]->(u)
WITH u, row
UNWIND row.sessions AS s
CREATE (sn:Session {tenant: $tenant, user_id: row.user_id, id: s.session_id, name: s.session_id,
                    started_at: s.started_at, last_at: s.last_at})
CREATE (u)-[:HAD_SESSION]->(sn)
RETURN count(DISTINCT u) AS users;

// name: bulk_turns
// Raw turns under their session.
UNWIND $turns AS row
MATCH (s:Session {tenant: $tenant, user_id: row.user_id, id: row.session_id})
CREATE (t:Turn {
  tenant: $tenant, user_id: row.user_id, session_id: row.session_id, id: row.turn_id,
  role: row.role, text: row.text, ts: row.ts, language: row.language, tokens: row.tokens, ingested_at: datetime()
})
CREATE (s)-[:HAS_TURN]->(t)
RETURN count(t) AS turns;

// name: bulk_mentions
// Mentions with the same properties ingest_mentions writes (mention_owner index seeks stay valid).
UNWIND $mentions AS row
MATCH (t:Turn {tenant: $tenant, user_id: row.user_id, id: row.turn_id})
MATCH (c:Concept {tenant: $tenant, key: row.key})
CREATE (t)-[:MENTIONS {
  tenant: $tenant, user_id: row.user_id, key: row.key,
  start: row.start, end: row.end, surface: row.surface, extractor: row.extractor,
  confidence: row.confidence, role: row.role, ts: row.ts, session_id: t.session_id, marks: row.marks
}]->(c)
RETURN count(*) AS mentions;

// name: bulk_stances
UNWIND $stances AS row
MATCH (t:Turn {tenant: $tenant, user_id: row.user_id, id: row.turn_id})
MATCH (c:Concept {tenant: $tenant, key: row.key})
CREATE (t)-[:EXPRESSES {
  stance: row.stance, start: row.start, end: row.end, cue: row.cue,
  confidence: row.confidence, ts: row.ts, seq: row.seq
}]->(c)
RETURN count(*) AS stances;

// name: bulk_relations
// Users' own relations (owner 'u:<id>'), with the properties ingest_relations gives a new one.
UNWIND $relations AS row
MATCH (a:Concept {tenant: $tenant, key: row.source_key})
MATCH (b:Concept {tenant: $tenant, key: row.target_key})
CREATE (a)-[r:__REL_TYPE__ {
  tenant: $tenant, owner: row.owner, pair: row.pair, scope: 'user', user_id: row.user_id,
  turn_ids: row.turn_ids, extractors: row.extractors, cues: row.cues, confidence: row.confidence,
  count: size(row.turn_ids), created_at: datetime(), updated_at: datetime()
}]->(b)
RETURN count(r) AS relations;

// name: bulk_interests
// Interest nodes as ingest_refresh_interests leaves them (tier 'related' until a compaction run).
UNWIND $interests AS row
MATCH (u:User {tenant: $tenant, id: row.user_id})
MATCH (c:Concept {tenant: $tenant, key: row.key})
CREATE (i:Interest:Related {
  tenant: $tenant, user_id: row.user_id, key: row.key, created_at: datetime(), tier: 'related',
  weight: 0.0, initial_weight: 0.0, propagated_weight: 0.0,
  own_name: row.own_name, name: CASE WHEN c.in_catalog THEN c.name ELSE row.own_name END,
  mentions: row.mentions, user_mentions: row.user_mentions, assistant_mentions: row.assistant_mentions,
  first_seen: row.first_seen, last_seen: row.last_seen, mention_ts: row.mention_ts,
  mention_roles: row.mention_roles, sessions: row.sessions, evidence: row.evidence,
  context_marks: row.context_marks, stance: row.stance, stance_at: row.stance_at
})
CREATE (u)-[:HAS_INTEREST]->(i)
CREATE (i)-[:ABOUT]->(c)
RETURN count(i) AS interests;

// name: bulk_tenant_size
// The tenant's users and interests, for the benchmark's report (a tenant-wide count: benchmark only).
MATCH (u:User {tenant: $tenant})
WITH count(u) AS users
MATCH (i:Interest {tenant: $tenant})
RETURN users, count(i) AS interests;
