-- next_visible_at answers when a message that is not receivable now becomes
-- receivable: the earliest visibility time still ahead, or null when nothing
-- waits. It returned the earliest of all, so a message visible now but not
-- for this poll (its matcher, or a worker's versions, did not match it) came
-- back as a time already past: the poll set a timer for it, woke at once,
-- found nothing again and asked again, round after round for as long as the
-- message stayed, two statements each time (about 1,700 a second for one
-- waiting poll). A message visible now that the poll can take wakes it
-- through NOTIFY when it is sent; one it cannot take must not wake it at all.
--
-- Looking only ahead also starts the index scan at now, past the entries of
-- received and deleted messages that lie at the low end of the ready index
-- until vacuum removes them.
--
-- CREATE OR REPLACE drops the function's settings; V010's and V018's are set
-- again.
CREATE OR REPLACE FUNCTION queue.next_visible_at(p_name text) RETURNS timestamptz
LANGUAGE plpgsql STABLE AS $$
DECLARE
    v_vt timestamptz;
BEGIN
    PERFORM queue.meta(p_name);
    EXECUTE format('SELECT vt FROM queue.%I WHERE head AND vt > $1 ORDER BY vt, msg_id LIMIT 1', 'q_' || p_name)
        INTO v_vt USING clock_timestamp();
    RETURN v_vt;
END $$;

ALTER FUNCTION queue.next_visible_at(text) SET enable_seqscan = off;
ALTER FUNCTION queue.next_visible_at(text) SET plan_cache_mode = force_generic_plan;
