-- Event batches (schema V019__fleet_control.sql): a workflow subscription with batch settings
-- gathers published messages into batches, one per value at its batch key, and starts one run per
-- batch with the messages' bodies as its input array, oldest first: as soon as a batch holds
-- batch_max messages (in the publish that fills it), or batch_timeout_ms after its first message
-- (batch_flush_due, run by the servers' timer). A message waits in queue.batch_item until the run of
-- its batch is started, in the transaction that deletes it, so a server that dies with a batch
-- half full loses nothing: the batch is started when its time comes, by any server.

-- The lock of one batch: publishes to it and its flush take it in turn.
CREATE OR REPLACE FUNCTION queue.batch_lock(p_subscription_id bigint, p_key text)
 RETURNS void
 LANGUAGE sql
AS $$
    SELECT pg_advisory_xact_lock(hashtextextended('batch' || chr(1) || p_subscription_id || chr(1) || p_key, 13));
$$;

-- Adds a published message to its batch of subscription s (one that batches); starts the batch's
-- run when this message fills it. ('workflow', run id) when it did, else ('batched', the message's
-- batch item id).
CREATE OR REPLACE FUNCTION queue.batch_add(s queue.subscription, p_topic text, p_body jsonb)
 RETURNS TABLE(outcome text, id bigint)
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
AS $$
DECLARE
    v_key  text := '';
    v_item bigint;
    v_n    int;
BEGIN
    IF s.batch_key IS NOT NULL THEN
        v_key := coalesce(jsonb_path_query_first(coalesce(p_body, 'null'::jsonb), s.batch_key::jsonpath) #>> '{}', '');
    END IF;
    PERFORM queue.batch_lock(s.subscription_id, v_key);
    INSERT INTO queue.batch_item (subscription_id, batch_key, topic, body)
    VALUES (s.subscription_id, v_key, p_topic, p_body)
    RETURNING item_id INTO v_item;
    INSERT INTO queue.batch_open (subscription_id, batch_key, due_at)
    VALUES (s.subscription_id, v_key, clock_timestamp() + make_interval(secs => s.batch_timeout_ms / 1000.0))
    ON CONFLICT (subscription_id, batch_key) DO NOTHING;
    SELECT count(*) INTO v_n
      FROM (SELECT 1 FROM queue.batch_item bi
             WHERE bi.subscription_id = s.subscription_id AND bi.batch_key = v_key
             LIMIT s.batch_max) x;
    IF v_n >= s.batch_max THEN
        RETURN QUERY SELECT 'workflow'::text, f.run_id FROM queue.batch_flush(s.subscription_id, v_key) f;
        RETURN;
    END IF;
    RETURN QUERY SELECT 'batched'::text, v_item;
END $$;

-- Starts the run of one batch (its lock held by the caller): up to batch_max of its oldest messages,
-- their bodies as the run's input array; the batch stays open (due a timeout from now) for any
-- messages left. Answers the run and how many messages it took (no row when the batch was empty).
CREATE OR REPLACE FUNCTION queue.batch_flush(p_subscription_id bigint, p_key text)
 RETURNS TABLE(run_id bigint, size integer)
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
AS $$
DECLARE
    s       queue.subscription;
    v_input jsonb;
    v_n     int;
BEGIN
    SELECT * INTO s FROM queue.subscription x WHERE x.subscription_id = p_subscription_id;
    WITH taken AS (
        DELETE FROM queue.batch_item bi
         WHERE bi.item_id IN (SELECT b.item_id FROM queue.batch_item b
                               WHERE b.subscription_id = p_subscription_id AND b.batch_key = p_key
                               ORDER BY b.item_id
                               LIMIT s.batch_max)
        RETURNING bi.item_id, bi.body)
    SELECT jsonb_agg(coalesce(t.body, 'null'::jsonb) ORDER BY t.item_id), count(*) INTO v_input, v_n FROM taken t;
    IF EXISTS (SELECT 1 FROM queue.batch_item b WHERE b.subscription_id = p_subscription_id AND b.batch_key = p_key) THEN
        UPDATE queue.batch_open bo
           SET due_at = clock_timestamp() + make_interval(secs => s.batch_timeout_ms / 1000.0)
         WHERE bo.subscription_id = p_subscription_id AND bo.batch_key = p_key;
    ELSE
        DELETE FROM queue.batch_open bo WHERE bo.subscription_id = p_subscription_id AND bo.batch_key = p_key;
    END IF;
    IF v_n = 0 THEN
        RETURN;
    END IF;
    RETURN QUERY SELECT w.run_id, v_n FROM queue.workflow_start(s.target, v_input) w;
END $$;

-- Starts the runs of up to p_limit batches whose time has come, oldest due first; batches another
-- transaction holds are left for the next call. A row per run started.
CREATE OR REPLACE FUNCTION queue.batch_flush_due(p_limit integer)
 RETURNS TABLE(subscription_id bigint, workflow_name text, batch_key text, run_id bigint, size integer)
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
 SECURITY DEFINER
 SET search_path TO 'queue', 'pg_temp'
AS $$
DECLARE
    b queue.batch_open;
    f record;
BEGIN
    PERFORM queue.check_range('limit', p_limit, 1, 10000);
    FOR b IN SELECT * FROM queue.batch_open bo WHERE bo.due_at <= clock_timestamp()
              ORDER BY bo.due_at LIMIT p_limit FOR UPDATE SKIP LOCKED LOOP
        PERFORM queue.batch_lock(b.subscription_id, b.batch_key);
        SELECT * INTO f FROM queue.batch_flush(b.subscription_id, b.batch_key);
        IF f.run_id IS NOT NULL THEN
            subscription_id := b.subscription_id;
            workflow_name := (SELECT x.target FROM queue.subscription x WHERE x.subscription_id = b.subscription_id);
            batch_key := b.batch_key;
            run_id := f.run_id;
            size := f.size;
            RETURN NEXT;
        END IF;
    END LOOP;
END $$;

-- Raises 22023 naming the field unless batch settings are whole: maxSize 1 to 1000 and timeoutMs
-- 1 to a day, both or neither, only for a workflow subscription, and key (optional) a JSON path.
CREATE OR REPLACE FUNCTION queue.check_batch(p_type text, p_max integer, p_timeout_ms bigint, p_key text)
 RETURNS void
 LANGUAGE plpgsql
 IMMUTABLE
AS $$
BEGIN
    IF p_max IS NULL AND p_timeout_ms IS NULL AND p_key IS NULL THEN
        RETURN;
    END IF;
    IF p_type IS DISTINCT FROM 'workflow' THEN
        RAISE EXCEPTION 'batch goes with a workflow subscription only' USING ERRCODE = '22023';
    END IF;
    IF p_max IS NULL OR p_timeout_ms IS NULL THEN
        RAISE EXCEPTION 'batch.maxSize and batch.timeoutMs go together' USING ERRCODE = '22023';
    END IF;
    PERFORM queue.check_range('batch.maxSize', p_max, 1, 1000);
    PERFORM queue.check_range('batch.timeoutMs', p_timeout_ms, 1, 86400000);
    PERFORM queue.check_json_path('batch.key', p_key, '$.customerId');
END $$;
