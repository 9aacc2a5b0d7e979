-- prepared_sql remembered a prepared statement by its name alone. A session
-- open while a later migration changed a statement's text (a server of the
-- old version during a rolling upgrade, a pooled connection of an
-- application) kept executing the old text under the new function body:
-- the old columns, the old parameter list, or an error.
--
-- The session setting now records each statement under its name and a hash
-- of its text, so a changed text is a miss (names are queue-derived: no
-- characters special to a regular expression). A miss compares the text the
-- session prepared under that name, when there is one, and prepares again
-- when it differs. The hit costs one hashtext() over the statement's text
-- more than before.
--
-- A session that runs DEALLOCATE ALL must also RESET queue.prepared: the
-- setting cannot see that the statements are gone.
CREATE OR REPLACE FUNCTION queue.prepared_sql(p_stmt text, p_tbl text, p_sql text, p_types text, p_args text)
RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    v_seen text := coalesce(current_setting('queue.prepared', true), '');
    v_key  text := '/' || p_stmt || ':' || hashtext(p_types || ')' || p_sql) || '/';
    v_text text;
    v_had  text;
BEGIN
    IF position(v_key IN v_seen) = 0 THEN
        v_text := format('PREPARE %I (%s) AS ', p_stmt, p_types) || format(p_sql, p_tbl);
        SELECT statement INTO v_had FROM pg_prepared_statements WHERE name = p_stmt;
        IF v_had IS DISTINCT FROM v_text THEN
            IF v_had IS NOT NULL THEN
                EXECUTE format('DEALLOCATE %I', p_stmt);
            END IF;
            EXECUTE v_text;
        END IF;
        -- The key of an earlier text of this name goes: its statement is gone.
        PERFORM set_config('queue.prepared',
            regexp_replace(v_seen, '/' || p_stmt || ':-?[0-9]+/', '', 'g') || v_key, false);
    END IF;
    RETURN format('EXECUTE %I (%s)', p_stmt, p_args);
END $$;
