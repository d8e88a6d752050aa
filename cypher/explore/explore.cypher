// Saved exploration queries for the Neo4j Browser. `graphmem explore USER` prints them with
// their :param lines filled in; the Browser guide (:play http://127.0.0.1:8000/browser/guide)
// runs them with one click. All are read-only. Relations extracted from one user's turns are
// owned by 'u:<user_id>' and are filtered out for everyone else; catalog relations are shared.
// Style the results with cypher/graphmem.grass (docs/browser.md).

// name: explore_user_graph
// One user's interest graph: the user, its Interest nodes (labelled Core / Related / Compacted, so size and colour show the tier) and their Concepts, with the concept relations this user may see.
MATCH (u:User {tenant: $tenant, id: $user_id})
OPTIONAL MATCH (u)-[has:HAS_INTEREST]->(i:Interest)-[about:ABOUT]->(c:Concept)
WITH u, collect(DISTINCT i) AS interests, collect(DISTINCT c) AS concepts,
     collect(DISTINCT has) + collect(DISTINCT about) AS links
// Only relations between the user's own concepts, and only the catalog's or this user's own.
OPTIONAL MATCH (a:Concept)-[r:PREREQUISITE_OF|USES|REQUIRES|PART_OF|RELATED_TO]->(b:Concept)
WHERE a IN concepts AND b IN concepts AND r.owner IN ['catalog', 'u:' + $user_id]
WITH u, interests, concepts, links, a, b, type(r) AS rel_type, collect(r) AS same
// A relation that is both in the catalog and stated by the user is drawn once: the user's own, which names its turns.
WITH u, interests, concepts, links,
     [x IN same WHERE x.owner <> 'catalog'] + [x IN same WHERE x.owner = 'catalog'] AS preferred
RETURN u AS user, interests, concepts, links, collect(preferred[0]) AS relations;

// name: explore_tiers
// Core vs related vs compacted: one row per interest, by tier then weight, with the weight's parts, mentions, stance and when it was folded away.
MATCH (:User {tenant: $tenant, id: $user_id})-[:HAS_INTEREST]->(i:Interest)-[:ABOUT]->(c:Concept)
OPTIONAL MATCH (s:Summary)-[:FOLDS]->(i)
RETURN coalesce(i.tier, 'unranked') AS tier, coalesce(i.name, c.name) AS concept, round(coalesce(i.weight, 0.0), 2) AS weight,
       round(coalesce(i.initial_weight, 0.0), 2) AS initial_weight,
       round(coalesce(i.propagated_weight, 0.0), 2) AS propagated_weight,
       coalesce(i.user_mentions, 0) AS user_mentions, coalesce(i.assistant_mentions, 0) AS assistant_mentions,
       i.stance AS stance, size(coalesce(i.sessions, [])) AS sessions, i.last_seen AS last_seen,
       i.compacted_at AS compacted_at, s.name AS folded_into
ORDER BY CASE tier WHEN 'core' THEN 0 WHEN 'related' THEN 1 WHEN 'compacted' THEN 2 ELSE 3 END,
         weight DESC, concept;

// name: explore_gaps
// Knowledge gaps for a focus concept ($focus: name, alias or key; null means the user's core topics): the dependency paths (up to 2 hops) that end at concepts the user has not shown, graded-attempt mastery included.
OPTIONAL MATCH (:User {tenant: $tenant, id: $user_id})-[:HAS_INTEREST]->(:Interest:Core)-[:ABOUT]->(core:Concept)
WITH collect(core) AS cores, toLower(trim(coalesce($focus, ''))) AS wanted
// What the user has shown, and what graded answers say they struggle with (graphmem/evidence.py):
// decisive mastery (>= 0.95 known, < 0.4 low) newer than the user's own "I know" / "confuses me" wins;
// otherwise shown = said they know it, or mentioned it themselves without saying it confuses them.
CALL () {
  OPTIONAL MATCH (x:Interest {tenant: $tenant, user_id: $user_id})
  OPTIONAL MATCH (m:Mastery {tenant: $tenant, user_id: $user_id, key: x.key})
  RETURN x.key AS key, x, m
  UNION
  OPTIONAL MATCH (m:Mastery {tenant: $tenant, user_id: $user_id})
  OPTIONAL MATCH (x:Interest {tenant: $tenant, user_id: $user_id, key: m.key})
  RETURN m.key AS key, x, m
}
WITH cores, wanted, key, x, m,
     m IS NOT NULL AND (m.mastery >= 0.95 OR m.mastery < 0.4)
       AND (x IS NULL OR x.stance_at IS NULL OR NOT coalesce(x.stance, '') IN ['knows', 'confused']
            OR m.last_ts >= x.stance_at) AS by_mastery
WITH cores, wanted,
     collect(CASE WHEN (by_mastery AND m.mastery >= 0.95) OR (NOT by_mastery AND (coalesce(x.stance, '') = 'knows'
                  OR (coalesce(x.user_mentions, 0) > 0 AND coalesce(x.stance, '') <> 'confused'))) THEN key END) AS shown,
     collect(CASE WHEN by_mastery AND m.mastery < 0.4 THEN key END) AS low
MATCH (root:Concept {tenant: $tenant})
WHERE CASE WHEN wanted = '' THEN root IN cores
           ELSE root.key = wanted OR toLower(root.name) = wanted
                OR wanted IN [a IN coalesce(root.aliases, []) | toLower(a)] END
// A -PREREQUISITE_OF-> B, B -REQUIRES-> A and B -USES-> A all make A a dependency of B, so the
// walk from the root checks each hop's direction against its type.
MATCH path = (root)-[:PREREQUISITE_OF|REQUIRES|USES*1..2]-(gap:Concept)
WHERE gap <> root
  AND all(k IN range(0, length(path) - 1) WHERE
        relationships(path)[k].owner IN ['catalog', 'u:' + $user_id]
        AND CASE type(relationships(path)[k])
              WHEN 'PREREQUISITE_OF' THEN endNode(relationships(path)[k]) = nodes(path)[k]
              ELSE startNode(relationships(path)[k]) = nodes(path)[k] END)
  // The walk stops at what the user has shown: knowing B presumes knowing what B needs.
  AND all(n IN nodes(path)[1..-1] WHERE NOT n.key IN shown)
  AND NOT gap.key IN shown
OPTIONAL MATCH (i:Interest {tenant: $tenant, user_id: $user_id, key: gap.key})
OPTIONAL MATCH (gm:Mastery {tenant: $tenant, user_id: $user_id, key: gap.key})
RETURN root.name AS focus, gap.name AS gap, length(path) AS depth,
       CASE WHEN gap.key IN low THEN 'low mastery: ' + toString(round(gm.mastery, 2)) + ' after ' + toString(gm.attempts) + ' graded attempts'
            WHEN i IS NULL THEN 'never mentioned'
            WHEN i.stance = 'confused' THEN 'said it confuses them'
            ELSE 'only the assistant mentioned it' END AS reason,
       [r IN relationships(path) | type(r)] AS via, path
ORDER BY depth, gap;

// name: explore_provenance
// From a block item back to its evidence: paths User -> Session -> Turn -> Concept for every turn that mentions $concept (name, alias or key) or states a stance on it.
WITH toLower(trim($concept)) AS wanted
MATCH (c:Concept {tenant: $tenant})
WHERE c.key = wanted OR toLower(c.name) = wanted OR wanted IN [a IN coalesce(c.aliases, []) | toLower(a)]
MATCH path = (:User {tenant: $tenant, id: $user_id})-[:HAD_SESSION]->(s:Session)-[:HAS_TURN]->(t:Turn)-[e:MENTIONS|EXPRESSES]->(c)
RETURN s.id AS session, t.id AS turn, t.role AS role, t.ts AS ts, type(e) AS evidence,
       coalesce(e.surface, e.cue) AS said, e.stance AS stance, e.extractor AS extractor, e.confidence AS confidence,
       t.text AS text, path
ORDER BY t.ts, t.id, e.start;

// name: explore_timeline
// The user's interest over time: one row per session (oldest first) with the concepts its turns mention and how often.
MATCH (:User {tenant: $tenant, id: $user_id})-[:HAD_SESSION]->(s:Session)
OPTIONAL MATCH (s)-[:HAS_TURN]->(t:Turn)-[m:MENTIONS]->(c:Concept)
WITH s, c, count(m) AS mentions, sum(CASE WHEN m.role = 'user' THEN 1 ELSE 0 END) AS by_user
// The name as this user's interest spells it (a concept first seen in another user's turns may be spelled theirs).
OPTIONAL MATCH (i:Interest {tenant: $tenant, user_id: $user_id, key: c.key})
WITH s, c, coalesce(i.name, c.name) AS name, mentions, by_user
ORDER BY mentions DESC, name
WITH s, [x IN collect(CASE WHEN c IS NULL THEN null ELSE {concept: name, mentions: mentions, by_user: by_user} END)
         WHERE x IS NOT NULL] AS concepts
RETURN s.id AS session, s.started_at AS started_at, s.last_at AS last_at,
       reduce(total = 0, x IN concepts | total + x.mentions) AS mentions, concepts
ORDER BY started_at, session;

// name: explore_shared_interests
// The tenant's most-shared interests, aggregate only: concept names and how many users mentioned them themselves (never whose, never a turn); $min_users hides rarer ones, and a concept outside the catalog needs two users.
MATCH (i:Interest {tenant: $tenant})-[:ABOUT]->(c:Concept)
WHERE coalesce(i.user_mentions, 0) > 0 AND coalesce(i.stance, '') <> 'dislikes'
WITH c, count(DISTINCT i.user_id) AS users,
     count(DISTINCT CASE WHEN i.tier = 'core' THEN i.user_id END) AS core_for_users
// Open-vocabulary concepts come from someone's own words: they show only once two users share them.
WHERE users >= coalesce($min_users, 1) AND (c.in_catalog OR users >= 2)
RETURN c.name AS concept, users, core_for_users
ORDER BY users DESC, core_for_users DESC, concept
LIMIT 25;

// name: explore_compaction
// What compaction folded away: the user's related_to_core_topics summary and the compacted interests it points at, plus the runs that produced them.
MATCH (u:User {tenant: $tenant, id: $user_id})
OPTIONAL MATCH folded = (u)-[:HAS_SUMMARY]->(:Summary)-[:FOLDS]->(:Interest)-[:ABOUT]->(:Concept)
OPTIONAL MATCH ran = (u)-[:HAD_COMPACTION]->(:CompactionRun)
RETURN collect(DISTINCT folded) AS summary, collect(DISTINCT ran) AS runs;

// name: explore_mastery
// The learner model: per concept the user said they know or are confused by, or answered graded questions on, the stance they stated, the BKT mastery of their attempts, and which is newer (the newer evidence wins; see graphmem/evidence.py).
MATCH (u:User {tenant: $tenant, id: $user_id})
CALL (u) {
  MATCH (u)-[:HAS_INTEREST]->(i:Interest)-[:ABOUT]->(c:Concept)
  WHERE i.stance IN ['knows', 'confused']
  RETURN c
  UNION
  MATCH (u)-[:HAS_MASTERY]->(:Mastery)-[:OF]->(c:Concept)
  RETURN c
}
OPTIONAL MATCH (i:Interest {tenant: $tenant, user_id: $user_id, key: c.key})
OPTIONAL MATCH (m:Mastery {tenant: $tenant, user_id: $user_id, key: c.key})
RETURN coalesce(i.name, m.name, c.name) AS concept, i.stance AS stance, i.stance_at AS stance_at,
       round(m.mastery, 3) AS mastery, m.attempts AS attempts, m.correct AS correct, m.last_ts AS mastery_at,
       CASE WHEN m IS NULL THEN CASE WHEN i.stance IS NULL THEN null ELSE 'stance' END
            WHEN i.stance IS NULL OR i.stance_at IS NULL OR m.last_ts >= i.stance_at THEN 'mastery'
            ELSE 'stance' END AS newer_evidence,
       m AS mastery_node, c AS concept_node
ORDER BY mastery_at DESC, concept;
