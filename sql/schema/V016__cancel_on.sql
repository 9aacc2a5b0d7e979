-- A workflow's cancel-on rules, as its workers set them (sql/functions/cancel_on.sql): a signal to
-- one of its runs, or a message published on a topic, that fits a rule cancels the running runs it
-- matches. A deploy's workers replace the whole set, so the last deploy's rules hold.
CREATE TABLE queue.workflow_cancel_on (
    workflow_name text NOT NULL,
    rule_no       integer NOT NULL,
    source        text NOT NULL CHECK (source IN ('signal', 'topic')),
    -- The signal's name, or the topic pattern ("*" one segment, a final "#" the rest).
    event         text NOT NULL,
    -- A topic rule's pattern as the anchored regular expression publish tests topics with.
    pattern_regex text,
    -- What the event's payload must contain, as a wait's match (null: anything).
    match         jsonb,
    -- Fields of the payload that must equal the same fields of the run's input.
    input_fields  text[] NOT NULL DEFAULT '{}',
    PRIMARY KEY (workflow_name, rule_no),
    CHECK ((source = 'topic') = (pattern_regex IS NOT NULL))
);
CREATE INDEX workflow_cancel_on_event_idx ON queue.workflow_cancel_on (workflow_name, event)
    WHERE source = 'signal';
CREATE INDEX workflow_cancel_on_topic_idx ON queue.workflow_cancel_on (source)
    WHERE source = 'topic';
