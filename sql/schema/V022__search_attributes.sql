-- Search attributes (sql/functions/search_attributes.sql): typed values per run, set at start and
-- from the run's body, that a query selects runs by.

-- The attributes runs may carry, each with its type: text (one string, compared whole or by
-- prefix), keyword_list (strings, matched by element), number, boolean, time.
CREATE TABLE queue.search_attribute (
    name       text PRIMARY KEY,
    type       text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT search_attribute_type_check
        CHECK (type IN ('text', 'keyword_list', 'number', 'boolean', 'time'))
);

-- A run's values: one row per attribute, one per element of a keyword list (ord). Exactly one value
-- column is set, the one of the attribute's type (text and keyword_list use v_text, compared
-- bytewise so a prefix is a range of the index). The rows go with their run.
CREATE TABLE queue.run_attribute (
    run_id bigint NOT NULL REFERENCES queue.workflow_run (run_id) ON DELETE CASCADE,
    name   text NOT NULL,
    ord    integer NOT NULL DEFAULT 0,
    v_text text COLLATE "C",
    v_num  numeric,
    v_bool boolean,
    v_time timestamptz,
    PRIMARY KEY (run_id, name, ord),
    CONSTRAINT run_attribute_one_value_check
        CHECK (num_nonnulls(v_text, v_num, v_bool, v_time) = 1)
);
CREATE INDEX run_attribute_text_idx ON queue.run_attribute (name, v_text, run_id) WHERE v_text IS NOT NULL;
CREATE INDEX run_attribute_num_idx ON queue.run_attribute (name, v_num, run_id) WHERE v_num IS NOT NULL;
CREATE INDEX run_attribute_bool_idx ON queue.run_attribute (name, v_bool, run_id) WHERE v_bool IS NOT NULL;
CREATE INDEX run_attribute_time_idx ON queue.run_attribute (name, v_time, run_id) WHERE v_time IS NOT NULL;

-- Queries over every workflow's runs select by start time (by status, they skip through
-- workflow_run_status_idx, one workflow at a time).
CREATE INDEX workflow_run_started_idx ON queue.workflow_run (started_at);
