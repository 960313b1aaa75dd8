-- plan: merge 2 key(s) of "public"."people" into 01890a5d-ac96-774b-bcce-b302099a8057 (row kept: 01890a5d-ac96-774b-bcce-b302099a8057), one transaction
--   01900a5d-ac96-774b-bcce-b302099a8058 → 01890a5d-ac96-774b-bcce-b302099a8057
--   references moved in "public"."Notizen".Person (Notizen_Person_fkey)
--   references moved in "public"."memberships".person_id (memberships_person_id_fkey)
--   parameters: new = 01890a5d-ac96-774b-bcce-b302099a8057, olds = {01900a5d-ac96-774b-bcce-b302099a8058}, survivor = 01890a5d-ac96-774b-bcce-b302099a8057, priority = {01890a5d-ac96-774b-bcce-b302099a8057,01900a5d-ac96-774b-bcce-b302099a8058}, reason = same person
BEGIN;
CREATE TABLE IF NOT EXISTS "public"."uuidforge_merge_log" (merge_id bigint NOT NULL, old uuid NOT NULL UNIQUE, new uuid NOT NULL, direct uuid NOT NULL, merged_at timestamptz NOT NULL DEFAULT now(), reason text, merged_by text NOT NULL DEFAULT current_user, table_name text NOT NULL, row_images jsonb NOT NULL);
CREATE INDEX IF NOT EXISTS "uuidforge_merge_log_new_idx" ON "public"."uuidforge_merge_log" (new);
CREATE OR REPLACE FUNCTION "public"."uuid_resolve"(id uuid) RETURNS uuid LANGUAGE sql STABLE PARALLEL SAFE AS $uuidforge$ SELECT coalesce((SELECT l.new FROM "public"."uuidforge_merge_log" l WHERE l.old = id), id) $uuidforge$;
LOCK TABLE "public"."uuidforge_merge_log" IN SHARE ROW EXCLUSIVE MODE;
SELECT (coalesce(max(merge_id), 0) + 1)::text FROM "public"."uuidforge_merge_log";
UPDATE "public"."uuidforge_merge_log" SET new = $1 WHERE new = ANY ($2::uuid[]);  -- $1 = new, $2 = olds
INSERT INTO "public"."uuidforge_merge_log" (merge_id, old, new, direct, reason, table_name, row_images) SELECT $1, o, $2, $2, $3, '"public"."people"', jsonb_build_object('row', (SELECT to_jsonb(t) FROM "public"."people" t WHERE t."id" = o), 'survivor', o = $4, 'references', jsonb_build_array(jsonb_build_object('table', '"public"."Notizen"', 'column', 'Person', 'rows', (SELECT coalesce(jsonb_agg(to_jsonb(x)), '[]') FROM "public"."Notizen" x WHERE x."Person" = o)), jsonb_build_object('table', '"public"."memberships"', 'column', 'person_id', 'rows', (SELECT coalesce(jsonb_agg(to_jsonb(x)), '[]') FROM "public"."memberships" x WHERE x."person_id" = o))), 'deleted', '[]'::jsonb, 'implicit', '[]'::jsonb) FROM unnest($5::uuid[]) o;  -- $1 = merge_id, $2 = new, $3 = reason, $4 = survivor, $5 = olds
ALTER TABLE "public"."Notizen" ALTER CONSTRAINT "Notizen_Person_fkey" DEFERRABLE;
ALTER TABLE "public"."memberships" ALTER CONSTRAINT "memberships_person_id_fkey" DEFERRABLE;
SET CONSTRAINTS ALL DEFERRED;
SELECT coalesce(string_agg(c.name || ': ' || c.n, ', ' ORDER BY c.name), '') FROM (VALUES ('public.memberships.person_id (memberships_pkey)', (SELECT count(*) FROM (SELECT x.ctid AS row_id, x."person_id" AS ref, row_number() OVER (PARTITION BY x."group_name" ORDER BY array_position($1::uuid[], x."person_id")) AS pos, count(*) OVER (PARTITION BY x."group_name" ) AS n FROM "public"."memberships" x WHERE x."person_id" = ANY ($1::uuid[]) AND x."group_name" IS NOT NULL) r WHERE n > 1 AND pos > 1))) c(name, n) WHERE c.n > 0;  -- $1 = priority
UPDATE "public"."uuidforge_merge_log" l SET row_images = jsonb_set(l.row_images, '{deleted}', l.row_images->'deleted' || jsonb_build_array(jsonb_build_object('table', '"public"."memberships"', 'column', 'person_id', 'rows', d.images))) FROM (SELECT x."person_id" AS ref, jsonb_agg(to_jsonb(x)) AS images FROM "public"."memberships" x WHERE x.ctid = ANY (ARRAY(SELECT row_id FROM (SELECT x.ctid AS row_id, x."person_id" AS ref, row_number() OVER (PARTITION BY x."group_name" ORDER BY array_position($1::uuid[], x."person_id")) AS pos, count(*) OVER (PARTITION BY x."group_name" ) AS n FROM "public"."memberships" x WHERE x."person_id" = ANY ($1::uuid[]) AND x."group_name" IS NOT NULL) r WHERE n > 1 AND pos > 1)) GROUP BY x."person_id") d WHERE l.merge_id = $2 AND l.old = d.ref;  -- $1 = priority, $2 = merge_id
DELETE FROM "public"."memberships" x WHERE x.ctid = ANY (ARRAY(SELECT row_id FROM (SELECT x.ctid AS row_id, x."person_id" AS ref, row_number() OVER (PARTITION BY x."group_name" ORDER BY array_position($1::uuid[], x."person_id")) AS pos, count(*) OVER (PARTITION BY x."group_name" ) AS n FROM "public"."memberships" x WHERE x."person_id" = ANY ($1::uuid[]) AND x."group_name" IS NOT NULL) r WHERE n > 1 AND pos > 1));  -- $1 = priority
UPDATE "public"."Notizen" SET "Person" = $1 WHERE "Person" = ANY ($2::uuid[]);  -- $1 = new, $2 = olds
UPDATE "public"."memberships" SET "person_id" = $1 WHERE "person_id" = ANY ($2::uuid[]);  -- $1 = new, $2 = olds
DELETE FROM "public"."people" WHERE "id" = ANY ($1::uuid[]) AND "id" <> $2;  -- $1 = olds, $2 = survivor
SET CONSTRAINTS ALL IMMEDIATE;
ALTER TABLE "public"."Notizen" ALTER CONSTRAINT "Notizen_Person_fkey" NOT DEFERRABLE;
ALTER TABLE "public"."memberships" ALTER CONSTRAINT "memberships_person_id_fkey" NOT DEFERRABLE;
-- verify (every count 0, else rollback):
SELECT (jsonb_build_object('rows left with an old key', (SELECT count(*) FROM "public"."people" WHERE "id" = ANY ($1::uuid[])), 'references left in public.Notizen.Person', (SELECT count(*) FROM "public"."Notizen" WHERE "Person" = ANY ($1::uuid[])), 'references left in public.memberships.person_id', (SELECT count(*) FROM "public"."memberships" WHERE "person_id" = ANY ($1::uuid[]))))::text;  -- $1 = olds
COMMIT;

-- nothing was changed: run again with --apply
