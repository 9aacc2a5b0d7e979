-- Streams of output of a run: entries written by its steps and body while it runs, read from an
-- offset or followed live. Offsets are dense per (run, stream) and given here, under the stream
-- row's lock. An entry is known by its write's identity (writer, seq): a retried step attempt or a
-- replayed body writes the same identities again and those already stored are skipped.

-- Raises 22023 unless the text is a valid stream name.
CREATE OR REPLACE FUNCTION queue.check_stream_name(p_stream text)
 RETURNS void
 LANGUAGE plpgsql
 IMMUTABLE
AS $$
BEGIN
    -- Not dots alone: "." and ".." are path segments that URLs resolve away.
    IF p_stream IS NULL OR p_stream !~ '^[a-zA-Z0-9._-]{1,128}$' OR p_stream ~ '^\.+$' THEN
        RAISE EXCEPTION 'stream name "%" must be 1 to 128 characters of a-z, A-Z, 0-9, ".", "_" and "-", not dots alone',
            left(coalesce(p_stream, ''), 140) USING ERRCODE = '22023';
    END IF;
END $$;

-- Appends entries ({"writer", "seq", "value"} each, in order) to a stream of a running run and,
-- with p_close, closes it; one transaction, all or nothing. An entry whose (writer, seq) the stream
-- holds already is skipped, even on a closed stream, so a replay repeats its writes harmlessly; a
-- new one takes the next offset. A write with no entries and no close changes nothing (it creates
-- no stream). Raises P0002 for an unknown run, WF003 when the run has ended, the stream is closed or
-- holds 100000 entries, or the write would create the run's 101st stream, and 22023 for bad input.
-- Answers {"written", "next", "closed"}: how many entries were new, the stream's size, whether it is
-- closed now.
CREATE OR REPLACE FUNCTION queue.run_stream_write(p_name text, p_run_id bigint, p_stream text, p_entries jsonb, p_close boolean DEFAULT false, p_now timestamp with time zone DEFAULT NULL::timestamp with time zone)
 RETURNS jsonb
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'queue', 'pg_temp'
AS $$
DECLARE
    c_max_entries constant bigint := 100000;
    c_max_streams constant int := 100;
    -- A backstop: the server checks 64 KiB of compact JSON first; jsonb's text form adds a space
    -- after every ":" and ",", so it is measured here against twice that.
    c_max_value constant int := 131072;
    v_status queue.workflow_status;
    v_next bigint;
    v_closed timestamptz;
    v_written int := 0;
    v_i int := 0;
    v_entry jsonb;
    v_writer text;
    v_seq bigint;
BEGIN
    PERFORM queue.check_workflow_name(p_name);
    PERFORM queue.check_stream_name(p_stream);
    IF p_entries IS NULL OR jsonb_typeof(p_entries) <> 'array' THEN
        RAISE EXCEPTION 'entries must be a JSON array' USING ERRCODE = '22023';
    END IF;
    PERFORM queue.check_range('number of entries', jsonb_array_length(p_entries), 0, 1000);
    -- FOR SHARE: the run cannot end while the write is in flight, so a reader that sees the run
    -- ended sees every entry written before.
    SELECT r.status INTO v_status FROM queue.workflow_run r
     WHERE r.run_id = p_run_id AND r.workflow_name = p_name
       FOR SHARE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'workflow % has no run %', p_name, p_run_id USING ERRCODE = 'P0002';
    END IF;
    IF v_status <> 'running' THEN
        RAISE EXCEPTION 'run % of % has ended (%): its streams take no more writes', p_run_id, p_name, v_status
            USING ERRCODE = 'WF003';
    END IF;
    SELECT s.next_offset, s.closed_at INTO v_next, v_closed FROM queue.run_stream s
     WHERE s.run_id = p_run_id AND s.stream_name = p_stream
       FOR UPDATE;
    IF NOT FOUND THEN
        IF jsonb_array_length(p_entries) = 0 AND NOT coalesce(p_close, false) THEN
            RETURN jsonb_build_object('written', 0, 'next', 0, 'closed', false);
        END IF;
        -- A new stream: its run's creations are serialised, so the count holds.
        PERFORM pg_advisory_xact_lock(hashtextextended('run_stream' || chr(1) || p_run_id, 13));
        IF (SELECT count(*) FROM queue.run_stream s WHERE s.run_id = p_run_id
               AND s.stream_name <> p_stream) >= c_max_streams THEN
            RAISE EXCEPTION 'run % has % streams, the most a run may have', p_run_id, c_max_streams
                USING ERRCODE = 'WF003';
        END IF;
        INSERT INTO queue.run_stream (run_id, stream_name, created_at)
        VALUES (p_run_id, p_stream, coalesce(p_now, now()))
        ON CONFLICT DO NOTHING;
        SELECT s.next_offset, s.closed_at INTO v_next, v_closed FROM queue.run_stream s
         WHERE s.run_id = p_run_id AND s.stream_name = p_stream
           FOR UPDATE;
    END IF;
    FOR v_entry IN SELECT e FROM jsonb_array_elements(p_entries) e LOOP
        v_writer := v_entry->>'writer';
        IF jsonb_typeof(v_entry) <> 'object' OR v_writer IS NULL
           OR (v_writer <> '' AND NOT queue.is_step_name(v_writer)) THEN
            RAISE EXCEPTION 'entries[%].writer must be "" (the body) or a step name', v_i
                USING ERRCODE = '22023';
        END IF;
        IF jsonb_typeof(v_entry->'seq') IS DISTINCT FROM 'number' THEN
            RAISE EXCEPTION 'entries[%].seq must be a number', v_i USING ERRCODE = '22023';
        END IF;
        v_seq := (v_entry->>'seq')::numeric;
        PERFORM queue.check_range(format('entries[%s].seq', v_i), v_seq, 0, 2147483647);
        IF NOT v_entry ? 'value' THEN
            RAISE EXCEPTION 'entries[%].value is missing', v_i USING ERRCODE = '22023';
        END IF;
        IF octet_length((v_entry->'value')::text) > c_max_value THEN
            RAISE EXCEPTION 'entries[%].value is % bytes of JSON; at most % are allowed',
                v_i, octet_length((v_entry->'value')::text), c_max_value USING ERRCODE = '22023';
        END IF;
        IF NOT EXISTS (SELECT 1 FROM queue.run_stream_entry x
                        WHERE x.run_id = p_run_id AND x.stream_name = p_stream
                          AND x.writer = v_writer AND x.seq = v_seq) THEN
            IF v_closed IS NOT NULL THEN
                RAISE EXCEPTION 'stream % of run % is closed: it takes no more entries', p_stream, p_run_id
                    USING ERRCODE = 'WF003';
            END IF;
            IF v_next >= c_max_entries THEN
                RAISE EXCEPTION 'stream % of run % holds % entries, the most a stream may hold',
                    p_stream, p_run_id, c_max_entries USING ERRCODE = 'WF003';
            END IF;
            INSERT INTO queue.run_stream_entry (run_id, stream_name, stream_offset, writer, seq, value, written_at)
            VALUES (p_run_id, p_stream, v_next, v_writer, v_seq, v_entry->'value', coalesce(p_now, clock_timestamp()))
            ON CONFLICT (run_id, stream_name, writer, seq) DO NOTHING;
            IF FOUND THEN
                v_next := v_next + 1;
                v_written := v_written + 1;
            END IF;
        END IF;
        v_i := v_i + 1;
    END LOOP;
    IF p_close AND v_closed IS NULL THEN
        v_closed := coalesce(p_now, clock_timestamp());
    END IF;
    IF v_written > 0 OR (p_close AND v_closed IS NOT NULL) THEN
        UPDATE queue.run_stream SET next_offset = v_next, closed_at = v_closed
         WHERE run_id = p_run_id AND stream_name = p_stream;
        -- Followers of the run's streams (on any server) read again.
        PERFORM queue.notify_once('#stream:' || p_run_id);
    END IF;
    RETURN jsonb_build_object('written', v_written, 'next', v_next, 'closed', v_closed IS NOT NULL);
END $$;

-- Up to p_limit entries of a stream from offset p_from, in offset order, with the stream's state
-- in the same snapshot: {"stream", "entries": [{"offset", "value", "writtenAt"}], "next" (the
-- offset to read from next), "closed" (no entry will be added: closed, or the run has ended),
-- "end" (closed and nothing left past next), "runStatus"}. A stream nothing was written to yet
-- reads as empty. Raises P0002 for an unknown run.
CREATE OR REPLACE FUNCTION queue.run_stream_read(p_name text, p_run_id bigint, p_stream text, p_from bigint DEFAULT 0, p_limit integer DEFAULT 100)
 RETURNS jsonb
 LANGUAGE plpgsql
 STABLE
 SECURITY DEFINER
 SET search_path TO 'queue', 'pg_temp'
AS $$
DECLARE
    v_status queue.workflow_status;
    v_size bigint;
    v_closed boolean;
    v_entries jsonb;
    v_next bigint;
BEGIN
    PERFORM queue.check_workflow_name(p_name);
    PERFORM queue.check_stream_name(p_stream);
    PERFORM queue.check_range('from', p_from, 0, 9223372036854775806);
    PERFORM queue.check_range('limit', p_limit, 1, 1000);
    SELECT r.status INTO v_status FROM queue.workflow_run r
     WHERE r.run_id = p_run_id AND r.workflow_name = p_name;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'workflow % has no run %', p_name, p_run_id USING ERRCODE = 'P0002';
    END IF;
    SELECT s.next_offset, s.closed_at IS NOT NULL INTO v_size, v_closed FROM queue.run_stream s
     WHERE s.run_id = p_run_id AND s.stream_name = p_stream;
    v_size := coalesce(v_size, 0);
    v_closed := coalesce(v_closed, false) OR v_status <> 'running';
    SELECT coalesce(jsonb_agg(jsonb_build_object(
               'offset', e.stream_offset, 'value', e.value, 'writtenAt', queue.api_instant(e.written_at))
               ORDER BY e.stream_offset), '[]'::jsonb),
           max(e.stream_offset)
      INTO v_entries, v_next
      FROM (SELECT * FROM queue.run_stream_entry x
             WHERE x.run_id = p_run_id AND x.stream_name = p_stream AND x.stream_offset >= p_from
             ORDER BY x.stream_offset
             LIMIT p_limit) e;
    v_next := coalesce(v_next + 1, greatest(p_from, 0));
    RETURN jsonb_build_object('stream', p_stream, 'entries', v_entries, 'next', v_next,
        'closed', v_closed, 'end', v_closed AND v_next >= v_size, 'runStatus', v_status);
END $$;

-- The streams of a run, by name: each with its size and whether it is closed (a stream of an
-- ended run is). Raises P0002 for an unknown run.
CREATE OR REPLACE FUNCTION queue.run_stream_list(p_name text, p_run_id bigint)
 RETURNS jsonb
 LANGUAGE plpgsql
 STABLE
 SECURITY DEFINER
 SET search_path TO 'queue', 'pg_temp'
AS $$
DECLARE
    v_status queue.workflow_status;
BEGIN
    PERFORM queue.check_workflow_name(p_name);
    SELECT r.status INTO v_status FROM queue.workflow_run r
     WHERE r.run_id = p_run_id AND r.workflow_name = p_name;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'workflow % has no run %', p_name, p_run_id USING ERRCODE = 'P0002';
    END IF;
    RETURN jsonb_build_object('runId', p_run_id, 'streams', coalesce((
        SELECT jsonb_agg(jsonb_build_object(
                   'name', s.stream_name, 'size', s.next_offset,
                   'closed', s.closed_at IS NOT NULL OR v_status <> 'running',
                   'createdAt', queue.api_instant(s.created_at)) ORDER BY s.stream_name)
          FROM queue.run_stream s WHERE s.run_id = p_run_id), '[]'::jsonb));
END $$;

-- A restart from journal row p_from_seq (called before that row and the later ones are set aside):
-- the restarted steps and the body past the restart point write again under the identities they
-- had, so the entries those identities hold go, and the run's streams open again. Gone: the
-- entries of the steps set aside (writer = their names), and the body's entries (writer '')
-- written at or after the earliest set-aside row was stored (its completed_at). The body's writes
-- are counted in body order, so those are the ones at or past the restart point; that time
-- separates them because a worker sends the completion of the step before a body write first
-- (a body write made before the step was called is older than the step's row, one made after it
-- is newer). Each stream's later entries move down so that offsets stay dense from 0 (a reader
-- past the restart point reads the stream again from there); followers are woken.
CREATE OR REPLACE FUNCTION queue.run_streams_restart(p_run_id bigint, p_from_seq integer)
 RETURNS void
 LANGUAGE plpgsql
AS $$
DECLARE
    -- Offsets move past this while they are renumbered, clear of the unique key.
    c_aside constant bigint := 1000000000000;
    v_steps text[];
    v_cut timestamptz;
    v_names text[];
    v_firsts bigint[];
BEGIN
    SELECT array_agg(s.step_name), min(s.completed_at) INTO v_steps, v_cut
      FROM queue.workflow_step s WHERE s.run_id = p_run_id AND s.seq >= p_from_seq;
    IF v_steps IS NULL THEN
        RETURN;
    END IF;
    WITH gone AS (
        DELETE FROM queue.run_stream_entry e
         WHERE e.run_id = p_run_id
           AND (e.writer = ANY (v_steps) OR (e.writer = '' AND e.written_at >= v_cut))
        RETURNING e.stream_name, e.stream_offset)
    SELECT array_agg(g.stream_name), array_agg(g.first) INTO v_names, v_firsts
      FROM (SELECT stream_name, min(stream_offset) AS first FROM gone GROUP BY stream_name) g;
    IF v_names IS NOT NULL THEN
        UPDATE queue.run_stream_entry e SET stream_offset = e.stream_offset + c_aside
          FROM unnest(v_names, v_firsts) f(stream_name, first)
         WHERE e.run_id = p_run_id AND e.stream_name = f.stream_name AND e.stream_offset > f.first;
        UPDATE queue.run_stream_entry e SET stream_offset = n.first + n.rn - 1
          FROM (SELECT x.stream_name, x.stream_offset, f.first,
                       row_number() OVER (PARTITION BY x.stream_name ORDER BY x.stream_offset) AS rn
                  FROM queue.run_stream_entry x
                  JOIN unnest(v_names, v_firsts) f(stream_name, first) ON f.stream_name = x.stream_name
                 WHERE x.run_id = p_run_id AND x.stream_offset >= c_aside) n
         WHERE e.run_id = p_run_id AND e.stream_name = n.stream_name AND e.stream_offset = n.stream_offset;
    END IF;
    UPDATE queue.run_stream s
       SET closed_at = NULL,
           next_offset = CASE WHEN s.stream_name = ANY (coalesce(v_names, '{}'))
                              THEN (SELECT count(*) FROM queue.run_stream_entry x
                                     WHERE x.run_id = p_run_id AND x.stream_name = s.stream_name)
                              ELSE s.next_offset END
     WHERE s.run_id = p_run_id;
    PERFORM queue.notify_once('#stream:' || p_run_id);
END $$;
