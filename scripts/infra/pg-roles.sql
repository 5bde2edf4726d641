-- A PostgreSQL role per service on the local server (docs/adr/0031, "Locally"): the grants of the
-- chart's role SQL, applied by scripts/infra/up.sh as the admin (kb) at every run, so it is
-- idempotent. Local-only credentials: each role's password is its name, like kb/kb.
-- Run twice by servers.sh (pg_roles_up): `-v vectors=false` in the metadata database (kb),
-- `-v vectors=true` in the pgvector database (kb_vectors).
\set ON_ERROR_STOP on
SET client_min_messages = warning;
-- Two runs of up.sh at once (two checkouts on one machine) take turns.
SELECT pg_advisory_lock(hashtext('kb-local-roles'));

DO $$
DECLARE
  name text;
BEGIN
  FOREACH name IN ARRAY ARRAY['kb_document', 'kb_embedding', 'kb_indexing', 'kb_query', 'kb_acl',
                              'kb_webhook'] LOOP
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = name) THEN
      BEGIN
        EXECUTE format('CREATE ROLE %I LOGIN PASSWORD %L', name, name);
      EXCEPTION WHEN duplicate_object THEN NULL; -- created meanwhile by another database's run
      END;
    END IF;
  END LOOP;
END $$;

-- kb_local_give(schema, role): the role owns every table, sequence and routine in the schema.
-- On this machine the services migrated as kb before the roles existed (and a run with
-- KB_SHARED_DB_ROLE=1 still does), so their objects belong to kb; a later migration run by the
-- service's role must own what it alters. A no-op once everything is the role's.
CREATE OR REPLACE FUNCTION pg_temp.kb_local_give(schema_name text, role_name text)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  object record;
BEGIN
  FOR object IN
    SELECT c.relname, c.relkind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = schema_name AND c.relkind IN ('r', 'p', 'v', 'm', 'S')
       AND c.relowner <> (SELECT oid FROM pg_roles WHERE rolname = role_name)
       -- a column's sequence (serial, identity) moves with its table; an extension's stays
       AND NOT EXISTS (SELECT FROM pg_depend d
                        WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid
                          AND (d.deptype = 'e' OR (c.relkind = 'S' AND d.deptype IN ('a', 'i'))))
  LOOP
    EXECUTE format('ALTER %s %I.%I OWNER TO %I',
                   CASE object.relkind WHEN 'S' THEN 'SEQUENCE' WHEN 'v' THEN 'VIEW'
                                       WHEN 'm' THEN 'MATERIALIZED VIEW' ELSE 'TABLE' END,
                   schema_name, object.relname, role_name);
  END LOOP;
  FOR object IN
    SELECT p.oid::regprocedure AS signature FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
     WHERE n.nspname = schema_name
       AND p.proowner <> (SELECT oid FROM pg_roles WHERE rolname = role_name)
       AND NOT EXISTS (SELECT FROM pg_depend d
                        WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e')
  LOOP
    EXECUTE format('ALTER ROUTINE %s OWNER TO %I', object.signature, role_name);
  END LOOP;
  -- What the admin creates there later (a migration run with the shared role) stays usable.
  EXECUTE format('ALTER DEFAULT PRIVILEGES FOR ROLE %I IN SCHEMA %I GRANT ALL ON TABLES TO %I',
                 current_user, schema_name, role_name);
  EXECUTE format('ALTER DEFAULT PRIVILEGES FOR ROLE %I IN SCHEMA %I GRANT ALL ON SEQUENCES TO %I',
                 current_user, schema_name, role_name);
END $$;

\if :vectors
-- ------------------------------------------------------------ the pgvector database (kb_vectors)
-- indexing-service writes the vector tables (and creates one per new dimension and a partition per
-- index space, which needs ownership of the table); query-service only reads them.
DO $$
BEGIN
  EXECUTE format('REVOKE ALL ON DATABASE %I FROM PUBLIC', current_database());
  EXECUTE format('GRANT CONNECT ON DATABASE %I TO kb_indexing, kb_query', current_database());
END $$;
REVOKE ALL ON SCHEMA public FROM PUBLIC;
GRANT USAGE, CREATE ON SCHEMA public TO kb_indexing;
GRANT USAGE ON SCHEMA public TO kb_query;
SELECT pg_temp.kb_local_give('public', 'kb_indexing');
GRANT SELECT ON ALL TABLES IN SCHEMA public TO kb_query;
ALTER DEFAULT PRIVILEGES FOR ROLE kb_indexing IN SCHEMA public GRANT SELECT ON TABLES TO kb_query;
DO $$
BEGIN
  EXECUTE format('ALTER DEFAULT PRIVILEGES FOR ROLE %I IN SCHEMA public GRANT SELECT ON TABLES TO kb_query',
                 current_user);
END $$;
\else
-- ------------------------------------------------------------ the metadata database (kb)
DO $$
BEGIN
  EXECUTE format('REVOKE ALL ON DATABASE %I FROM PUBLIC', current_database());
  -- The migrations run CREATE SCHEMA IF NOT EXISTS on their own schema, and PostgreSQL checks
  -- CREATE on the database before it notices that the schema exists.
  EXECUTE format('GRANT CONNECT, CREATE ON DATABASE %I TO kb_document, kb_embedding, kb_indexing, kb_acl, kb_webhook',
                 current_database());
  EXECUTE format('GRANT CONNECT ON DATABASE %I TO kb_query', current_database());
END $$;
REVOKE ALL ON SCHEMA public FROM PUBLIC;

-- Each schema to its own service: USAGE and CREATE, and what is already in it.
CREATE SCHEMA IF NOT EXISTS document_service;
CREATE SCHEMA IF NOT EXISTS embedding_cache;
CREATE SCHEMA IF NOT EXISTS search_index;
CREATE SCHEMA IF NOT EXISTS acl_service;
CREATE SCHEMA IF NOT EXISTS webhook_service;
GRANT USAGE, CREATE ON SCHEMA document_service TO kb_document;
GRANT USAGE, CREATE ON SCHEMA embedding_cache TO kb_embedding;
GRANT USAGE, CREATE ON SCHEMA search_index TO kb_indexing;
GRANT USAGE, CREATE ON SCHEMA acl_service TO kb_acl;
GRANT USAGE, CREATE ON SCHEMA webhook_service TO kb_webhook;
SELECT pg_temp.kb_local_give('document_service', 'kb_document');
SELECT pg_temp.kb_local_give('embedding_cache', 'kb_embedding');
SELECT pg_temp.kb_local_give('search_index', 'kb_indexing');
SELECT pg_temp.kb_local_give('acl_service', 'kb_acl');
SELECT pg_temp.kb_local_give('webhook_service', 'kb_webhook');

-- query-service searches indexing-service's lexical index and reads its generations and spaces.
GRANT USAGE ON SCHEMA search_index TO kb_query, kb_document;
GRANT SELECT ON ALL TABLES IN SCHEMA search_index TO kb_query;
ALTER DEFAULT PRIVILEGES FOR ROLE kb_indexing IN SCHEMA search_index GRANT SELECT ON TABLES TO kb_query;
DO $$
BEGIN
  EXECUTE format('ALTER DEFAULT PRIVILEGES FOR ROLE %I IN SCHEMA search_index GRANT SELECT ON TABLES TO kb_query',
                 current_user);
END $$;

-- document-service retires cached results by bumping the tenant's generation (ADR 29). The chart
-- grants this after the first migration; here an event trigger grants it when indexing-service's
-- migration creates the table (on a fresh machine that is after this script has run).
CREATE OR REPLACE FUNCTION public.kb_local_generations_grant() RETURNS event_trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog AS $$
BEGIN
  IF EXISTS (SELECT FROM pg_event_trigger_ddl_commands()
              WHERE object_type = 'table' AND object_identity = 'search_index.generations') THEN
    GRANT SELECT, INSERT, UPDATE ON search_index.generations TO kb_document;
  END IF;
END $$;
REVOKE ALL ON FUNCTION public.kb_local_generations_grant() FROM PUBLIC;
DO $$
BEGIN
  IF NOT EXISTS (SELECT FROM pg_event_trigger WHERE evtname = 'kb_local_generations_grant') THEN
    CREATE EVENT TRIGGER kb_local_generations_grant ON ddl_command_end WHEN TAG IN ('CREATE TABLE')
      EXECUTE FUNCTION public.kb_local_generations_grant();
  END IF;
  IF to_regclass('search_index.generations') IS NOT NULL THEN
    GRANT SELECT, INSERT, UPDATE ON search_index.generations TO kb_document;
  END IF;
END $$;
\endif

SELECT pg_advisory_unlock(hashtext('kb-local-roles'));
