// Schema: uniqueness constraints and indexes, applied idempotently at start-up.

// name: schema_tenant_id
// One node per tenant.
CREATE CONSTRAINT tenant_id IF NOT EXISTS FOR (t:Tenant) REQUIRE t.id IS UNIQUE;

// name: schema_user_key
// A user id is unique within its tenant.
CREATE CONSTRAINT user_key IF NOT EXISTS FOR (u:User) REQUIRE (u.tenant, u.id) IS UNIQUE;

// name: schema_session_key
// A session id is unique within its user.
CREATE CONSTRAINT session_key IF NOT EXISTS FOR (s:Session) REQUIRE (s.tenant, s.user_id, s.id) IS UNIQUE;

// name: schema_turn_key
// A turn id is unique within its user: this is what makes a re-sent turn a no-op.
CREATE CONSTRAINT turn_key IF NOT EXISTS FOR (t:Turn) REQUIRE (t.tenant, t.user_id, t.id) IS UNIQUE;

// name: schema_concept_key
// A concept is scoped to a tenant and identified by its normalised key.
CREATE CONSTRAINT concept_key IF NOT EXISTS FOR (c:Concept) REQUIRE (c.tenant, c.key) IS UNIQUE;

// name: schema_interest_key
// One interest node per user and concept.
CREATE CONSTRAINT interest_key IF NOT EXISTS FOR (i:Interest) REQUIRE (i.tenant, i.user_id, i.key) IS UNIQUE;

// name: schema_run_id
// Compaction runs are addressed by id.
CREATE CONSTRAINT compaction_run_id IF NOT EXISTS FOR (r:CompactionRun) REQUIRE r.id IS UNIQUE;

// name: schema_summary_key
// One related_to_core_topics summary per user.
CREATE CONSTRAINT summary_key IF NOT EXISTS FOR (s:Summary) REQUIRE (s.tenant, s.user_id) IS UNIQUE;

// name: schema_turn_user_index
// Loading a user's turns by tenant and user.
CREATE INDEX turn_user IF NOT EXISTS FOR (t:Turn) ON (t.tenant, t.user_id);

// name: schema_interest_user_index
// Loading a user's interests by tenant and user.
CREATE INDEX interest_user IF NOT EXISTS FOR (i:Interest) ON (i.tenant, i.user_id);

// name: schema_session_user_index
// A user's sessions (counts, erase) by index seek: without it each lookup scanned every session of every
// tenant (227k db hits per erase at 100k users on the scale benchmark, bench/results/SCALE.md).
CREATE INDEX session_user IF NOT EXISTS FOR (s:Session) ON (s.tenant, s.user_id);

// name: schema_compaction_run_user_index
// A user's compaction runs (history, counts, erase) by index seek: without it each lookup scanned every
// run of every tenant (one per compaction: 2,900 runs on the scale benchmark's server after one pass).
CREATE INDEX compaction_run_user IF NOT EXISTS FOR (r:CompactionRun) ON (r.tenant, r.user_id);

// name: schema_concept_tenant_index
// Listing a tenant's concepts.
CREATE INDEX concept_tenant IF NOT EXISTS FOR (c:Concept) ON (c.tenant);

// name: schema_rel_owner_prerequisite
// Relations by tenant and owner ('catalog' or 'u:<user>'): a user's own relations and a tenant's catalog
// relations are found by index seek, not by expanding shared concept nodes that hold every other user's
// relations too (38,000 relations on 400 concepts in the ingest benchmark's tenant).
CREATE INDEX rel_owner_prerequisite IF NOT EXISTS FOR ()-[r:PREREQUISITE_OF]-() ON (r.tenant, r.owner);

// name: schema_rel_owner_uses
CREATE INDEX rel_owner_uses IF NOT EXISTS FOR ()-[r:USES]-() ON (r.tenant, r.owner);

// name: schema_rel_owner_requires
CREATE INDEX rel_owner_requires IF NOT EXISTS FOR ()-[r:REQUIRES]-() ON (r.tenant, r.owner);

// name: schema_rel_owner_part_of
CREATE INDEX rel_owner_part_of IF NOT EXISTS FOR ()-[r:PART_OF]-() ON (r.tenant, r.owner);

// name: schema_rel_owner_related_to
CREATE INDEX rel_owner_related_to IF NOT EXISTS FOR ()-[r:RELATED_TO]-() ON (r.tenant, r.owner);

// name: schema_mention_owner
// A user's mentions of one concept by index seek: concepts are shared by a tenant's users, and
// expanding all of a busy concept's mentions to find one user's cost 150,000 db hits per ingest.
CREATE INDEX mention_owner IF NOT EXISTS FOR ()-[m:MENTIONS]-() ON (m.tenant, m.user_id, m.key);

// name: schema_rel_pair_prerequisite
// A user's relation between two concepts by index seek (ingest_relations); pair = "<source key>\t<target key>".
CREATE INDEX rel_pair_prerequisite IF NOT EXISTS FOR ()-[r:PREREQUISITE_OF]-() ON (r.tenant, r.owner, r.pair);

// name: schema_rel_pair_uses
CREATE INDEX rel_pair_uses IF NOT EXISTS FOR ()-[r:USES]-() ON (r.tenant, r.owner, r.pair);

// name: schema_rel_pair_requires
CREATE INDEX rel_pair_requires IF NOT EXISTS FOR ()-[r:REQUIRES]-() ON (r.tenant, r.owner, r.pair);

// name: schema_rel_pair_part_of
CREATE INDEX rel_pair_part_of IF NOT EXISTS FOR ()-[r:PART_OF]-() ON (r.tenant, r.owner, r.pair);

// name: schema_rel_pair_related_to
CREATE INDEX rel_pair_related_to IF NOT EXISTS FOR ()-[r:RELATED_TO]-() ON (r.tenant, r.owner, r.pair);

// name: schema_concept_fulltext
// Full-text search over concept names and aliases (focus text -> concepts).
CREATE FULLTEXT INDEX concept_names IF NOT EXISTS FOR (c:Concept) ON EACH [c.name, c.aliases_text];

// name: schema_attempt_key
// An attempt id is unique within its user: this is what makes a re-sent attempt a no-op (cypher/attempts.cypher).
CREATE CONSTRAINT attempt_key IF NOT EXISTS FOR (a:Attempt) REQUIRE (a.tenant, a.user_id, a.id) IS UNIQUE;

// name: schema_mastery_key
// One mastery node per user and concept.
CREATE CONSTRAINT mastery_key IF NOT EXISTS FOR (m:Mastery) REQUIRE (m.tenant, m.user_id, m.key) IS UNIQUE;

// name: schema_attempt_concept_index
// A user's attempts on one concept (replay, explain, forget), by index seek.
CREATE INDEX attempt_concept IF NOT EXISTS FOR (a:Attempt) ON (a.tenant, a.user_id, a.key);

// name: schema_attempt_user_index
// A user's attempts (as_of, erase).
CREATE INDEX attempt_user IF NOT EXISTS FOR (a:Attempt) ON (a.tenant, a.user_id);

// name: schema_attempt_tenant_index
// A tenant's attempts (fitting BKT parameters).
CREATE INDEX attempt_tenant IF NOT EXISTS FOR (a:Attempt) ON (a.tenant);

// name: schema_mastery_user_index
// A user's mastery nodes (loading the user model).
CREATE INDEX mastery_user IF NOT EXISTS FOR (m:Mastery) ON (m.tenant, m.user_id);

// name: schema_list_constraints
// What the schema holds now (for checks and the readiness probe).
SHOW CONSTRAINTS YIELD name, type, labelsOrTypes, properties RETURN name, type, labelsOrTypes, properties ORDER BY name;

// name: schema_list_indexes
// Indexes, with their state.
SHOW INDEXES YIELD name, type, state, labelsOrTypes, properties RETURN name, type, state, labelsOrTypes, properties ORDER BY name;
