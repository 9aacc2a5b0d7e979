-- The audit trail of operator actions: recording, the token configuration's changes, listing.

-- Records an operator action and returns its id; 22023 for an empty actor, a malformed action
-- (dot-separated lower-case words, such as queue.purge) or details that are not a JSON object.
CREATE OR REPLACE FUNCTION queue.audit_record(p_actor text, p_action text, p_target text, p_details jsonb DEFAULT '{}'::jsonb, p_request_id text DEFAULT NULL::text, p_now timestamp with time zone DEFAULT NULL::timestamp with time zone)
 RETURNS bigint
 LANGUAGE plpgsql
AS $$
DECLARE
    v_id bigint;
BEGIN
    IF p_actor IS NULL OR length(p_actor) NOT BETWEEN 1 AND 64 THEN
        RAISE EXCEPTION 'audit actor must be 1 to 64 characters' USING ERRCODE = '22023';
    END IF;
    IF p_action IS NULL OR length(p_action) > 64 OR p_action !~ '^[a-z][a-z_]*(\.[a-z][a-z_]*)+$' THEN
        RAISE EXCEPTION 'audit action "%" must be dot-separated lower-case words, such as queue.purge', p_action
            USING ERRCODE = '22023';
    END IF;
    IF p_details IS NOT NULL AND jsonb_typeof(p_details) <> 'object' THEN
        RAISE EXCEPTION 'audit details must be a JSON object, got %', jsonb_typeof(p_details)
            USING ERRCODE = '22023';
    END IF;
    INSERT INTO queue.audit (at, actor, action, target, details, request_id)
    VALUES (coalesce(p_now, clock_timestamp()), p_actor, p_action, left(nullif(p_target, ''), 512),
            coalesce(p_details, '{}'::jsonb), p_request_id)
    RETURNING audit_id INTO v_id;
    RETURN v_id;
END $$;

-- Records the server's token configuration (token names and scopes, never tokens) as action
-- tokens.configured when it differs from the last one recorded; returns whether it recorded.
-- Serialised, so servers starting at once with the same configuration record it once.
CREATE OR REPLACE FUNCTION queue.audit_tokens(p_details jsonb, p_now timestamp with time zone DEFAULT NULL::timestamp with time zone)
 RETURNS boolean
 LANGUAGE plpgsql
AS $$
DECLARE
    v_last jsonb;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtext('queue.audit_tokens'));
    SELECT a.details INTO v_last FROM queue.audit a
     WHERE a.action = 'tokens.configured' ORDER BY a.audit_id DESC LIMIT 1;
    IF v_last IS NOT DISTINCT FROM p_details THEN
        RETURN false;
    END IF;
    PERFORM queue.audit_record('(configuration)', 'tokens.configured', NULL, p_details, NULL, p_now);
    RETURN true;
END $$;

-- Audit entries, newest first, before an audit_id cursor, of one action or all.
CREATE OR REPLACE FUNCTION queue.audit_list(p_before bigint DEFAULT NULL::bigint, p_limit integer DEFAULT 100, p_action text DEFAULT NULL::text)
 RETURNS SETOF queue.audit
 LANGUAGE plpgsql
 STABLE
AS $$
BEGIN
    PERFORM queue.check_range('limit', p_limit, 1, 1000);
    RETURN QUERY
        SELECT * FROM queue.audit a
         WHERE (p_action IS NULL OR a.action = p_action)
           AND (p_before IS NULL OR a.audit_id < p_before)
         ORDER BY a.audit_id DESC
         LIMIT p_limit;
END $$;
