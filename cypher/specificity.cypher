// How common concepts are across a tenant's users (document frequency): graphmem/specificity.py.

// name: tenant_user_count
// How many users the tenant has: the tenant node's HAS_USER degree (every user is linked once, when it is
// created; erasing it deletes the link), read from the degree store in 3 db hits. Counting
// (:User {tenant}) nodes scanned every user of every tenant (label scan + filter: 4,500 db hits at 2,250
// users, 2 per user in the database), once per document-frequency TTL (bench/results/SCALE.md).
OPTIONAL MATCH (t:Tenant {id: $tenant})
RETURN coalesce(COUNT { (t)-[:HAS_USER]->() }, 0) AS users;

// name: concept_user_counts
// For each given concept key, how many of the tenant's users have an interest in it. Only Interest nodes have
// ABOUT links, one each, so the count is the concept's incoming ABOUT degree (read from
// the node's degree store, not by expanding every user's interest).
UNWIND $keys AS key
MATCH (c:Concept {tenant: $tenant, key: key})
RETURN key, COUNT { (c)<-[:ABOUT]-() } AS users;
