// Graded attempts and mastery (Bayesian knowledge tracing). A user's attempts hang off one Mastery node
// per concept: (:User)-[:HAS_MASTERY]->(:Mastery)-[:OF]->(:Concept), (:Attempt)-[:EVIDENCE_FOR]->(:Mastery).
// Each Attempt keeps the BKT figures it produced (predicted = P(correct) before it, mastery after it) and
// the span it was the latest evidence: valid_from = its ts, valid_to = the ts of the next attempt on the
// same concept (closed_by = that attempt's id), so mastery "as of" any time is one seek. Every statement
// takes $tenant and $user_id, except the tenant-wide fit statements (kt_*), which take $tenant only.

// name: attempts_existing
// Attempts already stored under these ids, with what they said (a re-sent id must say the same thing).
UNWIND $attempt_ids AS attempt_id
MATCH (a:Attempt {tenant: $tenant, user_id: $user_id, id: attempt_id})
RETURN a.id AS attempt_id, a.key AS key, a.correct AS correct, a.ts.epochMillis AS ts_ms, a.item_id AS item_id,
       a.predicted AS predicted, a.mastery AS mastery;

// name: attempts_state
// The user's current mastery of these concepts (a concept never attempted has no row).
UNWIND $keys AS key
MATCH (m:Mastery {tenant: $tenant, user_id: $user_id, key: key})
RETURN m.key AS key, m.mastery AS mastery, m.attempts AS attempts, m.correct AS correct,
       m.last_ts.epochMillis AS last_ms, m.last_attempt AS last_attempt;

// name: kt_params_of_keys
// The fitted BKT parameters of these concepts (tenant data, next to the catalog; null: use the defaults).
UNWIND $keys AS key
MATCH (c:Concept {tenant: $tenant, key: key})
RETURN c.key AS key, c.bkt AS bkt;

// name: attempts_history
// Every stored attempt of the user on these concepts, oldest first (to replay one that arrived late).
UNWIND $keys AS key
MATCH (a:Attempt {tenant: $tenant, user_id: $user_id, key: key})
RETURN a.id AS attempt_id, a.key AS key, a.correct AS correct, a.ts.epochMillis AS ts_ms
ORDER BY key, a.ts, a.seq;

// name: attempts_merge_concepts
// Concepts named by attempts that the tenant does not know yet (catalog concepts keep their data).
UNWIND $concepts AS row
MERGE (c:Concept {tenant: $tenant, key: row.key})
  ON CREATE SET c.name = row.name, c.type = null, c.language = row.language, c.in_catalog = false,
                c.critical = false, c.aliases = [], c.aliases_text = '', c.created_at = datetime()
RETURN count(c) AS concepts;

// name: attempts_write
// New attempts, in one UNWIND: each under its concept's Mastery node (created on the user's first attempt).
MATCH (u:User {tenant: $tenant, id: $user_id})
SET u.version = u.version + 1, u.updated_at = datetime()
WITH u
UNWIND $masteries AS row
MATCH (c:Concept {tenant: $tenant, key: row.key})
MERGE (m:Mastery {tenant: $tenant, user_id: $user_id, key: row.key})
  ON CREATE SET m.created_at = datetime(), m.name = coalesce(row.name, c.name)
MERGE (u)-[:HAS_MASTERY]->(m)
MERGE (m)-[:OF]->(c)
SET m.mastery = row.mastery, m.attempts = row.attempts, m.correct = row.correct,
    m.last_ts = datetime(row.last_ts), m.last_attempt = row.last_attempt, m.updated_at = datetime(),
    m.params = row.params
WITH count(m) AS masteries
UNWIND $attempts AS row
MATCH (m:Mastery {tenant: $tenant, user_id: $user_id, key: row.key})
CREATE (a:Attempt {
  tenant: $tenant, user_id: $user_id, id: row.attempt_id, key: row.key, correct: row.correct,
  ts: datetime(row.ts), item_id: row.item_id, seq: row.seq, predicted: row.predicted, mastery: row.mastery,
  valid_from: datetime(row.ts), valid_to: CASE WHEN row.valid_to IS NULL THEN null ELSE datetime(row.valid_to) END,
  closed_by: row.closed_by, name: row.name, ingested_at: datetime()
})
CREATE (a)-[:EVIDENCE_FOR]->(m)
RETURN masteries, count(a) AS attempts;

// name: attempts_rewrite
// Stored attempts whose figures or span changed: the one a new attempt closes, or all of a replayed concept.
UNWIND $rows AS row
MATCH (a:Attempt {tenant: $tenant, user_id: $user_id, id: row.attempt_id})
// A row without figures (the attempt a new one closes) keeps its own.
SET a.predicted = coalesce(row.predicted, a.predicted), a.mastery = coalesce(row.mastery, a.mastery),
    a.valid_to = CASE WHEN row.valid_to IS NULL THEN null ELSE datetime(row.valid_to) END,
    a.closed_by = row.closed_by
RETURN count(a) AS rewritten;

// name: attempts_user_mastery
// The user's mastery of every concept attempted, with the concept's facts and the time of the user's
// latest stance on it (newer evidence wins: explain and gaps compare the two times).
MATCH (m:Mastery {tenant: $tenant, user_id: $user_id})-[:OF]->(c:Concept)
OPTIONAL MATCH (i:Interest {tenant: $tenant, user_id: $user_id, key: m.key})
RETURN m.key AS key, CASE WHEN c.in_catalog OR i.own_name IS NULL THEN c.name ELSE i.own_name END AS name,
       c.type AS type, c.in_catalog AS in_catalog, c.critical AS critical,
       m.mastery AS mastery, m.attempts AS attempts, m.correct AS correct,
       m.last_ts.epochMillis AS last_ms, m.last_attempt AS last_attempt,
       i.stance_at.epochMillis AS stance_ms;

// name: attempts_mastery_as_of
// Mastery as it stood at $as_of: per concept, the latest attempt at or before then (its figures), and counts.
MATCH (a:Attempt {tenant: $tenant, user_id: $user_id})
WHERE a.ts <= datetime($as_of)
WITH a ORDER BY a.ts, a.seq
WITH a.key AS key, collect(a) AS seen
WITH key, seen[-1] AS last, size(seen) AS attempts, size([x IN seen WHERE x.correct]) AS correct
MATCH (c:Concept {tenant: $tenant, key: key})
RETURN key, c.name AS name, c.type AS type, c.in_catalog AS in_catalog, c.critical AS critical,
       last.mastery AS mastery, attempts, correct, last.ts.epochMillis AS last_ms, last.id AS last_attempt;

// name: attempts_stances_as_of
// Each concept's stance as it stood at $as_of: the user's latest stance stated at or before then.
MATCH (t:Turn {tenant: $tenant, user_id: $user_id})-[e:EXPRESSES]->(c:Concept)
WHERE e.ts <= datetime($as_of)
WITH c.key AS key, e ORDER BY e.ts, e.seq
WITH key, collect(e)[-1] AS last
RETURN key, last.stance AS stance, last.ts.epochMillis AS stance_ms;

// name: attempts_of_concept
// The user's attempts on one concept, oldest first, with the span each was the latest evidence (explain).
MATCH (a:Attempt {tenant: $tenant, user_id: $user_id, key: $key})
RETURN a.id AS attempt_id, a.correct AS correct, a.ts AS ts, a.item_id AS item_id, a.predicted AS predicted,
       a.mastery AS mastery, a.valid_from AS valid_from, a.valid_to AS valid_to, a.closed_by AS closed_by
ORDER BY a.ts, a.seq;

// name: attempts_of_user
// Every attempt of the user, oldest first (export: everything about a user).
MATCH (a:Attempt {tenant: $tenant, user_id: $user_id})
RETURN a.id AS attempt_id, a.key AS concept, a.correct AS correct, a.ts AS ts, a.item_id AS item_id,
       a.predicted AS predicted, a.mastery AS mastery, a.valid_to AS valid_to, a.closed_by AS closed_by
ORDER BY a.ts, a.seq;

// name: attempts_count_user
// How many attempts and mastery nodes the user has (erase checks, export).
OPTIONAL MATCH (a:Attempt {tenant: $tenant, user_id: $user_id})
WITH count(a) AS attempts
OPTIONAL MATCH (m:Mastery {tenant: $tenant, user_id: $user_id})
RETURN attempts, count(m) AS masteries;

// name: attempts_erase_user
// Right to be forgotten: the user's attempts and mastery nodes.
CALL () { OPTIONAL MATCH (a:Attempt {tenant: $tenant, user_id: $user_id}) DETACH DELETE a RETURN count(a) AS attempts }
CALL () { OPTIONAL MATCH (m:Mastery {tenant: $tenant, user_id: $user_id}) DETACH DELETE m RETURN count(m) AS masteries }
RETURN attempts, masteries;

// name: attempts_forget_concept
// "Forget X": the user's attempts on one concept and its mastery node.
CALL () { OPTIONAL MATCH (a:Attempt {tenant: $tenant, user_id: $user_id, key: $key}) DETACH DELETE a RETURN count(a) AS attempts }
CALL () { OPTIONAL MATCH (m:Mastery {tenant: $tenant, user_id: $user_id, key: $key}) DETACH DELETE m RETURN count(m) AS masteries }
RETURN attempts, masteries;

// name: kt_attempts
// A tenant's attempts for fitting, grouped by concept and user, in time order (every user's: a fit is tenant-wide).
MATCH (a:Attempt {tenant: $tenant})
RETURN a.key AS key, a.user_id AS user_id, a.correct AS correct
ORDER BY key, user_id, a.ts, a.seq;

// name: kt_store_fit
// Stores fitted BKT parameters on the tenant's concepts (next to their catalog data) and records the fit,
// versioned per tenant: Tenant.kt_version counts fits, each (:KTFit) keeps what it fitted.
MERGE (t:Tenant {id: $tenant})
  ON CREATE SET t.created_at = datetime()
SET t.kt_version = coalesce(t.kt_version, 0) + 1, t.kt_fitted_at = datetime()
CREATE (f:KTFit {tenant: $tenant, version: t.kt_version, at: datetime(), method: $method, report: $report,
                 concepts: size($rows), attempts: $attempts})
CREATE (t)-[:HAD_KT_FIT]->(f)
WITH t, f
UNWIND $rows AS row
MATCH (c:Concept {tenant: $tenant, key: row.key})
// bkt is a JSON object (Neo4j properties cannot hold maps): prior, learn, guess, slip, forget.
SET c.bkt = row.bkt, c.bkt_version = t.kt_version, c.bkt_attempts = row.attempts
RETURN t.kt_version AS version, count(c) AS concepts;

// name: kt_fits
// The tenant's fits, newest first.
MATCH (f:KTFit {tenant: $tenant})
RETURN f.version AS version, f.at AS at, f.method AS method, f.concepts AS concepts, f.attempts AS attempts,
       f.report AS report
ORDER BY f.version DESC
LIMIT $limit;

// name: kt_params
// The tenant's fitted BKT parameters per concept.
MATCH (c:Concept {tenant: $tenant})
WHERE c.bkt IS NOT NULL
RETURN c.key AS key, c.name AS name, c.bkt AS bkt, c.bkt_version AS version, c.bkt_attempts AS attempts
ORDER BY key;
