-- Cancel on an event: a workflow's rules (table workflow_cancel_on), set by its workers, and the
-- cancels they make. A signal a rule names, sent to a run of the workflow, cancels that run; a
-- message published on a topic a rule's pattern fits cancels every running run of the workflow it
-- matches. Either way the payload must contain the rule's match (as a wait's match), and its
-- fields named by the rule must equal the same fields of the run's input. A cancel is
-- workflow_cancel's: children started to be cancelled with their parent go first.

-- Replaces a workflow's rules with p_rules, a JSON array (at most 20) of objects with either
-- "signal" (a signal name) or "topic" (a topic pattern), and optionally "match" (an object) and
-- "inputFields" (1 to 10 top-level field names); [] removes them all. 22023 naming the field,
-- and nothing changed, for a rule that is not so. Answers how many rules the workflow has.
CREATE OR REPLACE FUNCTION queue.workflow_set_cancel_on(p_name text, p_rules jsonb)
 RETURNS integer
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'queue', 'pg_temp'
AS $$
DECLARE
    v_rule   jsonb;
    v_n      int := 0;
    v_at     text;
    v_event  text;
    v_fields text[];
BEGIN
    PERFORM queue.check_workflow_name(p_name);
    IF p_rules IS NULL OR jsonb_typeof(p_rules) <> 'array' THEN
        RAISE EXCEPTION 'rules must be a JSON array' USING ERRCODE = '22023';
    END IF;
    PERFORM queue.check_range('rules', jsonb_array_length(p_rules), 0, 20);
    DELETE FROM queue.workflow_cancel_on c WHERE c.workflow_name = p_name;
    FOR v_rule IN SELECT e.value FROM jsonb_array_elements(p_rules) e LOOP
        v_at := format('rules[%s]', v_n);
        IF jsonb_typeof(v_rule) IS DISTINCT FROM 'object' THEN
            RAISE EXCEPTION '% must be an object', v_at USING ERRCODE = '22023';
        END IF;
        IF (v_rule ? 'signal') = (v_rule ? 'topic') THEN
            RAISE EXCEPTION '% must name either a signal or a topic', v_at USING ERRCODE = '22023';
        END IF;
        IF EXISTS (SELECT 1 FROM jsonb_object_keys(v_rule) k
                    WHERE k NOT IN ('signal', 'topic', 'match', 'inputFields')) THEN
            RAISE EXCEPTION '% has a field other than signal, topic, match and inputFields', v_at
                USING ERRCODE = '22023';
        END IF;
        v_event := v_rule ->> CASE WHEN v_rule ? 'signal' THEN 'signal' ELSE 'topic' END;
        IF v_rule ? 'signal' AND (jsonb_typeof(v_rule -> 'signal') <> 'string'
                                  OR v_event = '' OR length(v_event) > 128 OR v_event LIKE '\_\_%') THEN
            RAISE EXCEPTION '%.signal must be a signal name of 1 to 128 characters not starting with "__"', v_at
                USING ERRCODE = '22023';
        END IF;
        IF v_rule ? 'topic' THEN
            IF jsonb_typeof(v_rule -> 'topic') <> 'string' THEN
                RAISE EXCEPTION '%.topic must be a topic pattern', v_at USING ERRCODE = '22023';
            END IF;
            BEGIN
                PERFORM queue.check_topic(v_event, true);
            EXCEPTION WHEN invalid_parameter_value THEN
                RAISE EXCEPTION '%.topic: %', v_at, SQLERRM USING ERRCODE = '22023';
            END;
        END IF;
        IF v_rule ? 'match' AND jsonb_typeof(v_rule -> 'match') NOT IN ('object', 'null') THEN
            RAISE EXCEPTION '%.match must be an object', v_at USING ERRCODE = '22023';
        END IF;
        v_fields := '{}';
        IF v_rule ? 'inputFields' THEN
            IF jsonb_typeof(v_rule -> 'inputFields') <> 'array'
               OR jsonb_array_length(v_rule -> 'inputFields') NOT BETWEEN 1 AND 10
               OR EXISTS (SELECT 1 FROM jsonb_array_elements(v_rule -> 'inputFields') f
                           WHERE jsonb_typeof(f) <> 'string' OR f #>> '{}' = '' OR length(f #>> '{}') > 128) THEN
                RAISE EXCEPTION '%.inputFields must be 1 to 10 field names of 1 to 128 characters', v_at
                    USING ERRCODE = '22023';
            END IF;
            v_fields := ARRAY(SELECT f FROM jsonb_array_elements_text(v_rule -> 'inputFields') f);
        END IF;
        INSERT INTO queue.workflow_cancel_on (workflow_name, rule_no, source, event, pattern_regex,
                                              match, input_fields)
        VALUES (p_name, v_n, CASE WHEN v_rule ? 'signal' THEN 'signal' ELSE 'topic' END, v_event,
                CASE WHEN v_rule ? 'topic' THEN queue.topic_pattern_regex(v_event) END,
                nullif(nullif(v_rule -> 'match', 'null'::jsonb), '{}'::jsonb), v_fields);
        v_n := v_n + 1;
    END LOOP;
    RETURN v_n;
END $$;

-- A workflow's rules, in their order, as workflow_set_cancel_on takes them.
CREATE OR REPLACE FUNCTION queue.workflow_cancel_on_rules(p_name text)
 RETURNS jsonb
 LANGUAGE plpgsql
 STABLE
 SECURITY DEFINER
 SET search_path TO 'queue', 'pg_temp'
AS $$
BEGIN
    PERFORM queue.check_workflow_name(p_name);
    RETURN coalesce((
        SELECT jsonb_agg(jsonb_build_object(c.source, c.event)
                         || CASE WHEN c.match IS NOT NULL THEN jsonb_build_object('match', c.match) ELSE '{}' END
                         || CASE WHEN cardinality(c.input_fields) > 0
                                 THEN jsonb_build_object('inputFields', to_jsonb(c.input_fields)) ELSE '{}' END
                         ORDER BY c.rule_no)
          FROM queue.workflow_cancel_on c WHERE c.workflow_name = p_name), '[]'::jsonb);
END $$;

-- What a run's input must contain for a rule's payload to concern it: the rule's input fields with
-- the payload's values ({} for a rule without fields); null when the payload lacks one of them (it
-- concerns no run).
CREATE OR REPLACE FUNCTION queue.workflow_cancel_on_input(p_fields text[], p_payload jsonb)
 RETURNS jsonb
 LANGUAGE plpgsql
 IMMUTABLE
AS $$
BEGIN
    IF cardinality(p_fields) = 0 THEN
        RETURN '{}'::jsonb;
    END IF;
    IF jsonb_typeof(p_payload) IS DISTINCT FROM 'object'
       OR EXISTS (SELECT 1 FROM unnest(p_fields) f WHERE p_payload -> f IS NULL) THEN
        RETURN NULL;
    END IF;
    RETURN (SELECT jsonb_object_agg(f, p_payload -> f) FROM unnest(p_fields) f);
END $$;

-- Whether a signal sent to run p_run_id, with that name and payload, cancels it by one of its
-- workflow's rules.
CREATE OR REPLACE FUNCTION queue.workflow_cancelled_by_signal(p_run_id bigint, p_event text, p_payload jsonb)
 RETURNS boolean
 LANGUAGE plpgsql
 STABLE
AS $$
BEGIN
    RETURN EXISTS (
        SELECT 1 FROM queue.workflow_run r
          JOIN queue.workflow_cancel_on c ON c.workflow_name = r.workflow_name
         WHERE r.run_id = p_run_id AND c.event = p_event AND c.source = 'signal'
           AND queue.workflow_matches(p_payload, c.match)
           AND (cardinality(c.input_fields) = 0
                OR r.input @> queue.workflow_cancel_on_input(c.input_fields, p_payload)));
END $$;

-- Cancels the running runs that a message published on p_topic concerns, by the rules whose
-- pattern fits the topic; answers each run cancelled with its workflow.
CREATE OR REPLACE FUNCTION queue.workflow_cancel_by_topic(p_topic text, p_payload jsonb)
 RETURNS TABLE(workflow_name text, run_id bigint)
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
 SECURITY DEFINER
 SET search_path TO 'queue', 'pg_temp'
AS $$
DECLARE
    c      queue.workflow_cancel_on;
    v_want jsonb;
    v_run  bigint;
BEGIN
    FOR c IN SELECT * FROM queue.workflow_cancel_on x
              WHERE x.source = 'topic' AND p_topic ~ x.pattern_regex
              ORDER BY x.workflow_name, x.rule_no LOOP
        CONTINUE WHEN NOT queue.workflow_matches(p_payload, c.match);
        v_want := queue.workflow_cancel_on_input(c.input_fields, p_payload);
        CONTINUE WHEN v_want IS NULL;
        FOR v_run IN SELECT wr.run_id FROM queue.workflow_run wr
                      WHERE wr.workflow_name = c.workflow_name AND wr.status = 'running'
                        AND (cardinality(c.input_fields) = 0 OR wr.input @> v_want)
                      ORDER BY wr.run_id LOOP
            IF (SELECT k.cancelled FROM queue.workflow_cancel(v_run) k) THEN
                workflow_name := c.workflow_name;
                run_id := v_run;
                RETURN NEXT;
            END IF;
        END LOOP;
    END LOOP;
END $$;
