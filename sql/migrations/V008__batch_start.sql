-- Starts many runs of one workflow in one transaction and one round trip.
-- p_items: a JSON array of {input, version?, idempotencyKey?, retentionDays?,
-- traceContext?}. Each item goes through workflow_start, so keys, versions
-- and retention behave exactly as for a single start, and a key given twice
-- in one batch names one run. Returns one row per item in input order (ord
-- counts from 1). A bad item fails the whole batch (22023): the caller may
-- retry the items one by one to learn which.
CREATE FUNCTION queue.workflow_start_batch(p_name text, p_items jsonb, p_max_retention_days int DEFAULT 365)
RETURNS TABLE (ord int, run_id bigint, status queue.workflow_status, created boolean)
LANGUAGE plpgsql AS $$
DECLARE
    i record;
    s record;
BEGIN
    PERFORM queue.check_workflow_name(p_name);
    IF p_items IS NULL OR jsonb_typeof(p_items) <> 'array' THEN
        RAISE EXCEPTION 'runs must be a JSON array' USING ERRCODE = '22023';
    END IF;
    PERFORM queue.check_range('batch size', jsonb_array_length(p_items), 1, 1000);
    FOR i IN SELECT e.value AS item, e.ordinality::int AS n
               FROM jsonb_array_elements(p_items) WITH ORDINALITY e LOOP
        IF jsonb_typeof(i.item) <> 'object' THEN
            RAISE EXCEPTION 'each run must be a JSON object' USING ERRCODE = '22023';
        END IF;
        IF (i.item ? 'version' AND jsonb_typeof(i.item -> 'version') NOT IN ('number', 'null'))
           OR (i.item ? 'retentionDays' AND jsonb_typeof(i.item -> 'retentionDays') NOT IN ('number', 'null'))
           OR (i.item ? 'idempotencyKey' AND jsonb_typeof(i.item -> 'idempotencyKey') NOT IN ('string', 'null'))
           OR (i.item ? 'traceContext' AND jsonb_typeof(i.item -> 'traceContext') NOT IN ('string', 'null')) THEN
            RAISE EXCEPTION 'run %: version and retentionDays must be numbers, idempotencyKey and traceContext strings', i.n
                USING ERRCODE = '22023';
        END IF;
        SELECT * INTO s FROM queue.workflow_start(
            p_name,
            coalesce(i.item -> 'input', 'null'::jsonb),
            (i.item ->> 'version')::int,
            i.item ->> 'idempotencyKey',
            (i.item ->> 'retentionDays')::int,
            p_max_retention_days,
            i.item ->> 'traceContext');
        ord := i.n;
        run_id := s.run_id;
        status := s.status;
        created := s.created;
        RETURN NEXT;
    END LOOP;
END $$;
