// One-time data migrations, run by Neo4jStore.apply_schema after the indexes exist. Each is
// database-wide maintenance (every tenant), runs once and leaves a (:Migration {id}) marker.

// name: migration_done
MATCH (m:Migration {id: $id})
RETURN m.id AS id;

// name: migration_mark
MERGE (m:Migration {id: $id})
  ON CREATE SET m.done_at = datetime()
RETURN m.id AS id;

// name: migrate_mention_owner
// Mentions written before mentions carried their owner: copy tenant, user and concept key onto them.
MATCH (t:Turn)-[m:MENTIONS]->(c:Concept)
WHERE m.user_id IS NULL
CALL (t, m, c) {
  SET m.tenant = t.tenant, m.user_id = t.user_id, m.key = c.key
} IN TRANSACTIONS OF 10000 ROWS;

// name: migrate_rel_pair
// Relations written before they carried their concept pair.
MATCH (a:Concept)-[r:__REL_TYPE__]->(b:Concept)
WHERE r.pair IS NULL
CALL (a, r, b) {
  SET r.pair = a.key + '\t' + b.key
} IN TRANSACTIONS OF 10000 ROWS;
