// How common concepts are across a tenant's users (document frequency): graphmem/specificity.py.

// name: tenant_user_count
// How many users the tenant has.
MATCH (u:User {tenant: $tenant})
RETURN count(u) AS users;

// name: concept_user_counts
// For each given concept key, how many of the tenant's users have an interest in it. Only Interest nodes have
// ABOUT links, one each, so the count is the concept's incoming ABOUT degree (read from
// the node's degree store, not by expanding every user's interest).
UNWIND $keys AS key
MATCH (c:Concept {tenant: $tenant, key: key})
RETURN key, COUNT { (c)<-[:ABOUT]-() } AS users;
