// A tenant's concept catalog: concepts with aliases and types, and relations owned by the tenant.

// name: catalog_get
// The tenant's catalog as it was loaded, and its version.
MATCH (t:Tenant {id: $tenant})
RETURN t.catalog_json AS catalog_json, coalesce(t.catalog_version, 0) AS catalog_version;

// name: catalog_version
// The tenant's catalog version (0 without a catalog), to know when a cached extractor is stale.
OPTIONAL MATCH (t:Tenant {id: $tenant})
RETURN coalesce(t.catalog_version, 0) AS catalog_version;

// name: catalog_begin_replace
// Stores the catalog document, bumps its version and clears the previous catalog's relations and flags.
MERGE (t:Tenant {id: $tenant})
  ON CREATE SET t.created_at = datetime()
SET t.catalog_json = $catalog_json, t.catalog_version = coalesce(t.catalog_version, 0) + 1,
    t.catalog_updated_at = datetime()
WITH t
CALL () {
  OPTIONAL MATCH (:Concept {tenant: $tenant})-[r]->(:Concept)
  WHERE r.owner = 'catalog'
  DELETE r
  RETURN count(r) AS relations
}
CALL () {
  OPTIONAL MATCH (c:Concept {tenant: $tenant})
  WHERE c.in_catalog
  SET c.in_catalog = false, c.critical = false
  RETURN count(c) AS concepts
}
RETURN t.catalog_version AS catalog_version, relations, concepts;

// name: catalog_merge_concepts
// Upserts catalog concepts (a concept first seen in conversation becomes a catalog concept here).
UNWIND $concepts AS row
MERGE (c:Concept {tenant: $tenant, key: row.key})
  ON CREATE SET c.created_at = datetime()
SET c.name = row.name, c.aliases = row.aliases, c.aliases_text = row.aliases_text, c.type = row.type,
    c.catalog_id = row.id, c.url = row.url, c.critical = row.critical, c.in_catalog = true,
    c.language = row.language
RETURN count(c) AS concepts;

// name: catalog_merge_relations
// Catalog relations of one type, owned by the tenant and visible to all its users.
UNWIND $relations AS row
MATCH (a:Concept {tenant: $tenant, key: row.source_key})
MATCH (b:Concept {tenant: $tenant, key: row.target_key})
MERGE (a)-[r:__REL_TYPE__ {owner: 'catalog'}]->(b)
  ON CREATE SET r.scope = 'catalog', r.tenant = $tenant, r.confidence = 1.0, r.extractors = ['catalog'],
                r.pair = a.key + '\t' + b.key, r.created_at = datetime()
RETURN count(r) AS relations;

// name: catalog_delete_orphans
// Drops concepts that left the catalog and were never mentioned by anyone.
MATCH (c:Concept {tenant: $tenant})
WHERE NOT c.in_catalog AND NOT (c)--()
DELETE c
RETURN count(*) AS deleted;

// name: catalog_concepts
// The tenant's catalog concepts.
MATCH (c:Concept {tenant: $tenant})
WHERE c.in_catalog
RETURN c.key AS key, c.name AS name, c.type AS type, c.aliases AS aliases, c.critical AS critical
ORDER BY c.key;
