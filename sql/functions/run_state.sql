-- Per-run state: the changes each journal row carries (key to value, JSON null for a removed key),
-- checked on the way in and folded in seq order on the way out.

-- Raises 22023 naming p_field unless p_state is a map of state changes that run p_run_id can take:
-- keys of 1 to 128 characters of a-z, A-Z, 0-9, ".", "_" and "-" (not starting "__", kept for the
-- engine), values of bounded size, and at most 100 keys set in the run once these changes are
-- made. The SDK and the server hold values to 65536 bytes of compact JSON; jsonb's text form is
-- longer (it spaces its separators), so the bound here is twice that, a backstop for callers that
-- come straight to SQL. Called only for a row that has state: rows without it cost nothing. A null
-- p_run_id checks the changes alone, not the run's key count.
CREATE OR REPLACE FUNCTION queue.check_run_state(p_field text, p_run_id bigint, p_state jsonb)
 RETURNS void
 LANGUAGE plpgsql
 STABLE
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
AS $$
DECLARE
    v_key  text;
    v_size int;
    v_keys int;
BEGIN
    IF p_state IS NULL THEN
        RETURN;
    END IF;
    IF jsonb_typeof(p_state) <> 'object' THEN
        RAISE EXCEPTION '% must be an object of state keys to JSON values', p_field USING ERRCODE = '22023';
    END IF;
    SELECT e.key INTO v_key FROM jsonb_object_keys(p_state) e(key)
     WHERE e.key !~ '^[a-zA-Z0-9._-]{1,128}$' OR starts_with(e.key, '__')
     LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION '% key "%" must be 1 to 128 characters of a-z, A-Z, 0-9, ".", "_" and "-", not starting "__"',
            p_field, left(v_key, 140) USING ERRCODE = '22023';
    END IF;
    SELECT e.key, octet_length(e.value::text) INTO v_key, v_size FROM jsonb_each(p_state) e
     WHERE octet_length(e.value::text) > 131072
     LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION '% value of key "%" is % bytes of JSON; at most 131072', p_field, v_key, v_size
            USING ERRCODE = '22023';
    END IF;
    IF p_run_id IS NULL THEN
        RETURN;
    END IF;
    v_keys := queue.run_state_keys(p_run_id, p_state);
    IF v_keys > 100 THEN
        RAISE EXCEPTION '% would set % keys in run %; a run holds at most 100', p_field, v_keys, p_run_id
            USING ERRCODE = '22023';
    END IF;
END $$;

-- How many keys run p_run_id holds once the changes p_state are made after its journal.
CREATE OR REPLACE FUNCTION queue.run_state_keys(p_run_id bigint, p_state jsonb)
 RETURNS integer
 LANGUAGE sql
 STABLE
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
AS $$
    SELECT count(*)::int
      FROM (SELECT DISTINCT ON (c.key) c.key, c.value
              FROM (SELECT s.seq, e.key, e.value
                      FROM queue.workflow_step s CROSS JOIN LATERAL jsonb_each(s.state) e
                     WHERE s.run_id = p_run_id AND s.state IS NOT NULL
                    UNION ALL
                    SELECT 2147483647, e.key, e.value FROM jsonb_each(p_state) e) c
             ORDER BY c.key, c.seq DESC) f
     WHERE f.value <> 'null'::jsonb;
$$;

-- A run's state: each key set and not removed, with its value and its version (the state_version
-- of the journal row that last set it: drawn from one sequence, so it only grows, also across a
-- restart), in key order.
CREATE OR REPLACE FUNCTION queue.workflow_state(p_run_id bigint)
 RETURNS TABLE(key text, value jsonb, version bigint)
 LANGUAGE sql
 STABLE
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
 SECURITY DEFINER
 SET search_path TO 'queue', 'pg_temp'
AS $$
    SELECT f.key, f.value, f.state_version
      FROM (SELECT DISTINCT ON (e.key) e.key, e.value, s.state_version
              FROM queue.workflow_step s CROSS JOIN LATERAL jsonb_each(s.state) e
             WHERE s.run_id = p_run_id AND s.state IS NOT NULL
             ORDER BY e.key, s.seq DESC) f
     WHERE f.value <> 'null'::jsonb
     ORDER BY f.key;
$$;

-- The state of each of p_run_ids that exists, with whether it is running, as one read sees both:
-- a row a key, and one row with a null key for a run without state.
CREATE OR REPLACE FUNCTION queue.workflow_states(p_run_ids bigint[])
 RETURNS TABLE(run_id bigint, running boolean, key text, value jsonb, version bigint)
 LANGUAGE sql
 STABLE
 SECURITY DEFINER
 SET search_path TO 'queue', 'pg_temp'
AS $$
    SELECT r.run_id, r.status = 'running', s.key, s.value, s.version
      FROM queue.workflow_run r
      LEFT JOIN LATERAL queue.workflow_state(r.run_id) s ON true
     WHERE r.run_id = ANY (p_run_ids);
$$;
