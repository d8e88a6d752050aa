// Ingest: one transaction per call. The user node is locked first, so concurrent
// calls for one user are serialised and counts recomputed from mentions stay exact.
// Calls for different users take no common lock: the concepts a call links to are created before its
// transaction (ingest_merge_concepts in a short transaction of its own, keys in order).

// name: tenant_write_lock
// Serialises a tenant-wide write (a knowledge-tracing fit rewrites many of the tenant's concepts) with
// others of its kind. User writes do not take it: they lock only their user and create the concepts they
// link to beforehand (Neo4jStore._ensure_concepts). MATCH takes no lock, SET takes the exclusive one.
OPTIONAL MATCH (t:Tenant {id: $tenant})
SET t.locked_at = datetime()
RETURN t IS NOT NULL AS exists;

// name: ingest_lock_user
// Creates tenant and user if needed, takes the user's write lock and reads which of $turn_ids are stored.
// A new user is linked to its tenant last (ingest_link_user): creating that relationship locks the tenant
// node until commit, and taken here it queued the first writes of a tenant's new users one whole
// transaction after another (20 new users at once: the last waited 5-10 s, a minute on a loaded machine;
// tests/test_load.py).
MERGE (t:Tenant {id: $tenant})
  ON CREATE SET t.created_at = datetime()
MERGE (u:User {tenant: $tenant, id: $user_id})
  ON CREATE SET u.created_at = datetime(), u.version = 0, u.name = $user_id
// Setting a property takes the user's write lock; the version is bumped only when turns are written.
SET u.locked_at = datetime()
WITH t, u
// Which of $turn_ids are stored (ingest_existing_turns' rows), read under the lock just taken (a concurrent
// call may have stored one of them since the ingest's first read), in this statement's round trip.
CALL (u) {
  UNWIND $turn_ids AS turn_id
  MATCH (x:Turn {tenant: $tenant, user_id: $user_id, id: turn_id})
  RETURN collect({turn_id: x.id, session_id: x.session_id, role: x.role, text: x.text}) AS existing
}
// The catalog version too: the write's consistency token takes both from here (no read after the write).
RETURN u.version AS version, coalesce(t.catalog_version, 0) AS catalog_version, existing,
       // From the user's side: reading the tenant node's relationships in a write transaction share-locks
       // them until commit, and 20 writers holding that lock deadlocked a new user's link (DeadlockDetected).
       COUNT { (u)<-[:HAS_USER]-() } = 0 AS unlinked;

// name: ingest_link_user
// The new user's HAS_USER link, as the transaction's last statement (see ingest_lock_user). CREATE, not
// MERGE: ingest_lock_user found no link while holding the user's lock, so none can appear meanwhile; and a
// MERGE checks under a shared lock on the tenant node and upgrades it to create, so concurrent new users
// deadlocked there and re-ran their whole write.
MATCH (t:Tenant {id: $tenant}), (u:User {tenant: $tenant, id: $user_id})
CREATE (t)-[:HAS_USER]->(u)
RETURN count(*) AS linked;

// name: ingest_existing_turns
// Which of these turn ids are already stored for the user, with what they hold: a re-sent identical turn
// is a no-op, the same id with other text, role or session is a conflict (turn ids are unique per user).
UNWIND $turn_ids AS turn_id
MATCH (t:Turn {tenant: $tenant, user_id: $user_id, id: turn_id})
RETURN t.id AS turn_id, t.session_id AS session_id, t.role AS role, t.text AS text;

// name: ingest_prior_turn
// The session's last stored turn before $before and what it mentioned: a user turn at the head of a
// new batch may refer back to it ("he", 这部电影; see extraction/coreference.py).
MATCH (:Session {tenant: $tenant, user_id: $user_id, id: $session_id})-[:HAS_TURN]->(t:Turn {tenant: $tenant, user_id: $user_id})
WHERE t.ts < datetime($before)
WITH t ORDER BY t.ts DESC, t.id DESC LIMIT 1
OPTIONAL MATCH (t)-[m:MENTIONS]->(c:Concept)
RETURN t.role AS role, t.language AS language,
       [row IN collect({key: c.key, name: c.name, type: c.type, in_catalog: c.in_catalog, start: m.start,
                        end: m.end, surface: m.surface, extractor: m.extractor, confidence: m.confidence})
        WHERE row.key IS NOT NULL] AS mentions;

// name: ingest_reads
// What an ingest reads before extracting, in one statement (one round trip where three cost three): the
// stored turns among $turn_ids (ingest_existing_turns' rows), the tenant's catalog version, and the
// session's last turn before $before with its mentions (ingest_prior_turn's row; none when $before is
// null). $before is the first turn's time when that turn is a user turn: it heads the new ones unless it
// is stored already, and then the store asks ingest_prior_turn for the turn that does.
CALL () {
  UNWIND $turn_ids AS turn_id
  MATCH (t:Turn {tenant: $tenant, user_id: $user_id, id: turn_id})
  RETURN collect({turn_id: t.id, session_id: t.session_id, role: t.role, text: t.text}) AS existing
}
CALL () {
  OPTIONAL MATCH (tn:Tenant {id: $tenant})
  RETURN coalesce(tn.catalog_version, 0) AS catalog_version
}
CALL () {
  OPTIONAL MATCH (:Session {tenant: $tenant, user_id: $user_id, id: $session_id})-[:HAS_TURN]->(t:Turn {tenant: $tenant, user_id: $user_id})
  WHERE t.ts < datetime($before)
  WITH t ORDER BY t.ts DESC, t.id DESC LIMIT 1
  OPTIONAL MATCH (t)-[m:MENTIONS]->(c:Concept)
  RETURN t.role AS prior_role, t.language AS prior_language,
         [row IN collect({key: c.key, name: c.name, type: c.type, in_catalog: c.in_catalog, start: m.start,
                          end: m.end, surface: m.surface, extractor: m.extractor, confidence: m.confidence})
          WHERE row.key IS NOT NULL] AS prior_mentions
}
RETURN existing, catalog_version, prior_role, prior_language, prior_mentions;

// name: ingest_merge_concepts
// Creates tenant concepts first seen in conversation; catalog concepts keep their catalog data.
UNWIND $concepts AS row
MERGE (c:Concept {tenant: $tenant, key: row.key})
  ON CREATE SET c.name = row.name, c.type = row.type, c.language = row.language,
                c.in_catalog = false, c.critical = false, c.aliases = [], c.aliases_text = '',
                c.created_at = datetime()
RETURN count(c) AS concepts;

// name: ingest_relations
// Relations extracted from this user's conversation, one row per concept pair (turns, extractors and
// cues aggregated by the store); owned by the user, invisible to others. The user's existing relation
// is found by index seek on (tenant, owner, pair): a MERGE between the two concepts would expand every
// other user's relation between them (62 per pair, 310,000 db hits per batch in the ingest benchmark).
// No other transaction writes this owner's relations: the user's lock is held.
UNWIND $relations AS row
MATCH (a:Concept {tenant: $tenant, key: row.source_key})
MATCH (b:Concept {tenant: $tenant, key: row.target_key})
OPTIONAL MATCH ()-[found:__REL_TYPE__ {tenant: $tenant, owner: $owner, pair: row.pair}]->()
CALL (a, b, row, found) {
  WITH a, b, row, found WHERE found IS NULL
  CREATE (a)-[r:__REL_TYPE__ {tenant: $tenant, owner: $owner, pair: row.pair}]->(b)
  SET r.scope = 'user', r.user_id = $user_id, r.turn_ids = [], r.extractors = [], r.cues = [],
      r.confidence = 0.0, r.created_at = datetime()
  RETURN r
  UNION
  WITH found WHERE found IS NOT NULL
  RETURN found AS r
}
SET r.turn_ids = r.turn_ids + row.turn_ids,
    r.extractors = r.extractors + [x IN row.extractors WHERE NOT x IN r.extractors],
    r.cues = r.cues + [x IN row.cues WHERE NOT x IN r.cues],
    r.confidence = CASE WHEN row.confidence > r.confidence THEN row.confidence ELSE r.confidence END,
    r.count = size(r.turn_ids) + size(row.turn_ids), r.updated_at = datetime()
RETURN count(r) AS relations;

// name: ingest_write_all
// One round trip for the write of new turns (the agent loop's ingest paid one per statement, 2-5 ms apiece
// on a loaded machine): the turns under their session (ingest_write_turns), their mentions
// (ingest_mentions) and stances (ingest_stances), then the user's interest in each touched concept
// recomputed from the stored mentions (ingest_refresh_interests), each part a subquery that sees the
// parts before it. One row: how many mentions and stances were linked (fewer than given: a concept
// vanished meanwhile) and the refreshed interest rows, shaped as user_interests returns them.
CALL () {
  MATCH (u:User {tenant: $tenant, id: $user_id})
  SET u.version = u.version + 1, u.updated_at = datetime()
  MERGE (s:Session {tenant: $tenant, user_id: $user_id, id: $session_id})
    ON CREATE SET s.started_at = datetime($turns[0].ts), s.last_at = datetime($turns[0].ts), s.name = $session_id
  MERGE (u)-[:HAD_SESSION]->(s)
  WITH s
  UNWIND $turns AS row
  CREATE (t:Turn {
    tenant: $tenant, user_id: $user_id, session_id: $session_id, id: row.turn_id,
    role: row.role, text: row.text, ts: datetime(row.ts), language: row.language,
    tokens: row.tokens, ingested_at: datetime()
  })
  CREATE (s)-[:HAS_TURN]->(t)
  WITH s, min(t.ts) AS first_ts, max(t.ts) AS last_ts, count(t) AS written
  SET s.started_at = CASE WHEN first_ts < s.started_at THEN first_ts ELSE s.started_at END,
      s.last_at = CASE WHEN last_ts > s.last_at THEN last_ts ELSE s.last_at END
  RETURN written
}
CALL () {
  UNWIND $mentions AS row
  MATCH (t:Turn {tenant: $tenant, user_id: $user_id, id: row.turn_id})
  MATCH (c:Concept {tenant: $tenant, key: row.key})
  CREATE (t)-[:MENTIONS {
    tenant: $tenant, user_id: $user_id, key: row.key,
    start: row.start, end: row.end, surface: row.surface, extractor: row.extractor,
    confidence: row.confidence, role: row.role, ts: datetime(row.ts), session_id: t.session_id,
    marks: row.marks
  }]->(c)
  RETURN count(*) AS mentions
}
CALL () {
  UNWIND $stances AS row
  MATCH (t:Turn {tenant: $tenant, user_id: $user_id, id: row.turn_id})
  MATCH (c:Concept {tenant: $tenant, key: row.key})
  CREATE (t)-[:EXPRESSES {
    stance: row.stance, start: row.start, end: row.end, cue: row.cue,
    confidence: row.confidence, ts: datetime(row.ts), seq: row.seq
  }]->(c)
  RETURN count(*) AS stances
}
CALL () {
  UNWIND $keys AS key
  MATCH (u:User {tenant: $tenant, id: $user_id})
  MATCH (c:Concept {tenant: $tenant, key: key})
  MERGE (i:Interest {tenant: $tenant, user_id: $user_id, key: key})
    ON CREATE SET i.created_at = datetime(), i.tier = 'related', i:Related, i.weight = 0.0,
                  i.initial_weight = 0.0, i.propagated_weight = 0.0
  MERGE (u)-[:HAS_INTEREST]->(i)
  MERGE (i)-[:ABOUT]->(c)
  // The user's own spelling of a concept outside the catalog: another user who named it first
  // (the shared concept node keeps their spelling) never changes how this user's graph reads.
  SET i.own_name = coalesce(i.own_name, $names[key])
  WITH i, c
  CALL (c) {
    // A turn that names the concept several times counts once: mentions are per turn.
    OPTIONAL MATCH (t:Turn {tenant: $tenant, user_id: $user_id})-[m:MENTIONS {tenant: $tenant, user_id: $user_id, key: c.key}]->(c)
    // The marks around each Chinese name (graphmem/zh_name_likeness.py): one set per interest, below.
    WITH t, min(m.ts) AS ts, head(collect(m.role)) AS role,
         reduce(acc = [], ms IN collect(m.marks) | acc + coalesce(ms, [])) AS marks
    ORDER BY ts, t.id
    RETURN count(t) AS mentions,
           reduce(acc = [], x IN reduce(flat = [], ms IN collect(marks) | flat + ms) |
                  CASE WHEN x IN acc THEN acc ELSE acc + x END) AS context_marks,
           sum(CASE WHEN role = 'user' THEN 1 ELSE 0 END) AS user_mentions,
           sum(CASE WHEN role = 'assistant' THEN 1 ELSE 0 END) AS assistant_mentions,
           min(ts) AS first_seen, max(ts) AS last_seen,
           collect(ts.epochMillis / 1000.0) AS mention_ts,
           collect(role) AS mention_roles,
           collect(DISTINCT t.session_id) AS sessions,
           collect(t.id) AS turn_ids
  }
  CALL (c) {
    OPTIONAL MATCH (t:Turn {tenant: $tenant, user_id: $user_id})-[e:EXPRESSES]->(c)
    WITH e ORDER BY e.ts DESC, e.seq DESC
    RETURN collect(e.stance)[0] AS stance, collect(e.ts)[0] AS stance_at
  }
  SET i.name = CASE WHEN c.in_catalog OR i.own_name IS NULL THEN c.name ELSE i.own_name END,
      i.mentions = mentions, i.user_mentions = user_mentions,
      i.assistant_mentions = assistant_mentions, i.first_seen = first_seen, i.last_seen = last_seen,
      i.mention_ts = mention_ts, i.mention_roles = mention_roles, i.sessions = sessions,
      i.evidence = turn_ids[-20..], i.context_marks = context_marks, i.stance = stance, i.stance_at = stance_at
  // The refreshed rows, shaped as user_interests returns them: the service updates its cached graph
  // with them instead of reloading every interest of the user after each ingest.
  RETURN collect({
    key: i.key,
    name: i.name,
    type: c.type,
    in_catalog: c.in_catalog,
    critical: c.critical,
    user_mentions: coalesce(i.user_mentions, 0),
    assistant_mentions: coalesce(i.assistant_mentions, 0),
    stance: i.stance,
    first_seen_us: i.first_seen.epochSeconds * 1000000 + i.first_seen.microsecond,
    last_seen_us: i.last_seen.epochSeconds * 1000000 + i.last_seen.microsecond,
    sessions: coalesce(i.sessions, []),
    tier: i.tier,
    compacted_at_us: i.compacted_at.epochSeconds * 1000000 + i.compacted_at.microsecond,
    evidence: coalesce(i.evidence, []),
    mention_ts: coalesce(i.mention_ts, []),
    mention_roles: coalesce(i.mention_roles, []),
    context_marks: coalesce(i.context_marks, []),
    weight: i.weight
  }) AS refreshed
}
RETURN written, mentions, stances, refreshed;
