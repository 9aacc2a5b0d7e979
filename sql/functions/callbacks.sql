-- Callback URLs: a run's step mints a callback (workflow_callback_create) and hands its token to a
-- third party, whose plain POST with it (workflow_callback_resolve) completes the run's wait for
-- it, the event __callback.<name>, with {"ok": true|false, "body": ...}. The token is
-- <runId>.<keyId>.<mac>.<name>, mac the hex HMAC-SHA256, under key keyId, of "<runId>/<name>": it
-- can be checked, and is bound to the run and the callback, without being stored. It is the only
-- credential: it works once, and not after the callback's time.

-- HMAC-SHA256 (RFC 2104) with the core sha256(), so that no extension is needed.
CREATE OR REPLACE FUNCTION queue.hmac_sha256(p_key bytea, p_message bytea)
 RETURNS bytea
 LANGUAGE plpgsql
 IMMUTABLE STRICT
AS $$
DECLARE
    v_key  bytea := CASE WHEN length(p_key) > 64 THEN sha256(p_key) ELSE p_key END;
    v_ipad bytea;
    v_opad bytea;
BEGIN
    v_key := v_key || decode(repeat('00', 64 - length(v_key)), 'hex');
    v_ipad := v_key;
    v_opad := v_key;
    FOR i IN 0 .. 63 LOOP
        v_ipad := set_byte(v_ipad, i, get_byte(v_key, i) # 54);
        v_opad := set_byte(v_opad, i, get_byte(v_key, i) # 92);
    END LOOP;
    RETURN sha256(v_opad || sha256(v_ipad || p_message));
END $$;

-- Makes a new key the one new callbacks are minted under; the older keys still check the tokens
-- minted under them. 32 random bytes from two random UUIDs' 244 random bits and the time. Answers
-- the new key's id.
CREATE OR REPLACE FUNCTION queue.callback_rotate_key()
 RETURNS integer
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'queue', 'pg_temp'
AS $$
DECLARE
    v_id int;
BEGIN
    INSERT INTO queue.callback_key (secret)
    VALUES (sha256(uuid_send(gen_random_uuid()) || uuid_send(gen_random_uuid())
                   || convert_to(clock_timestamp()::text, 'UTF8')))
    RETURNING key_id INTO v_id;
    RETURN v_id;
END $$;

-- A callback's token under key p_key_id.
CREATE OR REPLACE FUNCTION queue.callback_token(p_run_id bigint, p_name text, p_key_id integer)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $$
    SELECT p_run_id || '.' || p_key_id || '.'
           || encode(queue.hmac_sha256(k.secret, convert_to(p_run_id || '/' || p_name, 'UTF8')), 'hex')
           || '.' || p_name
      FROM queue.callback_key k WHERE k.key_id = p_key_id
$$;

-- Mints callback p_name of a running run (a step name), usable for p_timeout_ms (1 second to a
-- year), under the newest key (made first when there is none); a repeat answers the callback
-- minted before, token and time unchanged. 22023 naming the field for a bad name or timeout;
-- P0002 for a run that does not exist; WF003 for one that is not running.
CREATE OR REPLACE FUNCTION queue.workflow_callback_create(p_run_id bigint, p_name text, p_timeout_ms bigint)
 RETURNS TABLE(token text, expires_at timestamp with time zone, created boolean)
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'queue', 'pg_temp'
AS $$
DECLARE
    r     queue.workflow_run;
    c     queue.workflow_callback;
    v_key int;
BEGIN
    PERFORM queue.check_step_name(p_name);
    PERFORM queue.check_range('timeoutMs', p_timeout_ms, 1000, 31536000000);
    SELECT * INTO c FROM queue.workflow_callback x WHERE x.run_id = p_run_id AND x.name = p_name;
    IF FOUND THEN
        RETURN QUERY SELECT queue.callback_token(c.run_id, c.name, c.key_id), c.expires_at, false;
        RETURN;
    END IF;
    r := queue.workflow_lock(p_run_id);
    IF r.status <> 'running' THEN
        RAISE EXCEPTION 'run % is %: it takes no new callback', p_run_id, r.status USING ERRCODE = 'WF003';
    END IF;
    -- The newest key; the first callback ever makes one (concurrent first callers make one each,
    -- and each mints under its own: both keys check).
    SELECT max(k.key_id) INTO v_key FROM queue.callback_key k;
    IF v_key IS NULL THEN
        v_key := queue.callback_rotate_key();
    END IF;
    INSERT INTO queue.workflow_callback (run_id, name, key_id, expires_at)
    VALUES (p_run_id, p_name, v_key, clock_timestamp() + make_interval(secs => p_timeout_ms / 1000.0))
    ON CONFLICT DO NOTHING;
    SELECT * INTO c FROM queue.workflow_callback x WHERE x.run_id = p_run_id AND x.name = p_name;
    RETURN QUERY SELECT queue.callback_token(c.run_id, c.name, c.key_id), c.expires_at, true;
END $$;

-- Completes the callback a token names, once: with p_ok its wait gets {"ok": true, "body":
-- p_body}, else {"ok": false, "body": p_body} (a rejection). Answers the outcome: resolved or
-- rejected; gone (used already, past its time, or its run ended); invalid (not a token of this
-- database: malformed, an unknown key, a wrong mac, or no such callback). The run's wait takes it
-- at once, or from the inbox when the run reaches its wait later.
CREATE OR REPLACE FUNCTION queue.workflow_callback_resolve(p_token text, p_ok boolean, p_body jsonb)
 RETURNS TABLE(outcome text, run_id bigint, workflow_name text)
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'queue', 'pg_temp'
AS $$
DECLARE
    v_parts text[];
    v_run   bigint;
    v_name  text;
    v_key   int;
    c       queue.workflow_callback;
    r       queue.workflow_run;
BEGIN
    v_parts := regexp_match(coalesce(p_token, ''), '^([0-9]{1,18})\.([0-9]{1,9})\.([0-9a-f]{64})\.([a-zA-Z0-9._-]{1,128})$');
    IF v_parts IS NULL THEN
        RETURN QUERY SELECT 'invalid'::text, NULL::bigint, NULL::text;
        RETURN;
    END IF;
    v_run := v_parts[1]::bigint;
    v_key := v_parts[2]::int;
    v_name := v_parts[4];
    IF queue.callback_token(v_run, v_name, v_key) IS DISTINCT FROM p_token THEN
        RETURN QUERY SELECT 'invalid'::text, NULL::bigint, NULL::text;
        RETURN;
    END IF;
    -- The run first, then its callback, as every writer locks them.
    SELECT * INTO r FROM queue.workflow_run wr WHERE wr.run_id = v_run FOR UPDATE;
    SELECT * INTO c FROM queue.workflow_callback x WHERE x.run_id = v_run AND x.name = v_name FOR UPDATE;
    IF c.run_id IS NULL OR r.run_id IS NULL THEN
        RETURN QUERY SELECT 'invalid'::text, NULL::bigint, NULL::text;
        RETURN;
    END IF;
    IF c.resolved_at IS NOT NULL OR c.expires_at <= clock_timestamp() OR r.status <> 'running' THEN
        RETURN QUERY SELECT 'gone'::text, v_run, r.workflow_name;
        RETURN;
    END IF;
    UPDATE queue.workflow_callback x
       SET resolved_at = clock_timestamp(), outcome = CASE WHEN p_ok THEN 'resolved' ELSE 'rejected' END
     WHERE x.run_id = v_run AND x.name = v_name;
    PERFORM * FROM queue.workflow_deliver(v_run, '__callback.' || v_name,
                                          jsonb_build_object('ok', p_ok, 'body', p_body));
    RETURN QUERY SELECT CASE WHEN p_ok THEN 'resolved' ELSE 'rejected' END, v_run, r.workflow_name;
END $$;

-- A run's callbacks, oldest first: name, times and outcome (never the token).
CREATE OR REPLACE FUNCTION queue.workflow_callbacks(p_run_id bigint)
 RETURNS TABLE(name text, created_at timestamp with time zone, expires_at timestamp with time zone, resolved_at timestamp with time zone, outcome text)
 LANGUAGE sql
 STABLE
 SECURITY DEFINER
 SET search_path TO 'queue', 'pg_temp'
AS $$
    SELECT c.name, c.created_at, c.expires_at, c.resolved_at, c.outcome
      FROM queue.workflow_callback c WHERE c.run_id = p_run_id
     ORDER BY c.created_at, c.name
$$;
