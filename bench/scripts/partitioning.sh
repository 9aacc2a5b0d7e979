#!/usr/bin/env bash
# partitioning.sh: how the hot workflow tables behave when they grow, and what declarative
# partitioning buys.
#
# What it measures. On a table of N runs (default 10,000,000) with 3 journal rows each, built
# twice in a schema of its own (partbench):
#   (a) plain tables, as queue.workflow_run / queue.workflow_step are today (same columns, same
#       indexes, the same empty tables that reference a run: step_aside, run_stream(_entry),
#       signal). That includes V014: the column expires_at and the sweeper's index on it,
#       workflow_run_expiry_idx, as V014 has it (in place of the index of end times it dropped);
#       expires_at is filled in the load, for ended runs, as completed_at + make_interval(days =>
#       retention_days), which is what the trigger workflow_run_expiry sets when a run ends (the
#       trigger itself is left out: no run ends here);
#   (b) the same tables partitioned BY RANGE (run_id), ten partitions of N/10 run ids each, the
#       journal partitioned on the same run-id bounds.
# It prints, each with its elapsed time (clock_timestamp differences) and its WAL (differences of
# pg_current_wal_insert_lsn(); cluster-wide, so run it on an otherwise idle server):
#   - the build (insert, VACUUM ANALYZE, index builds) of each layout;
#   - retention of the oldest 10% of runs and their journal rows. On (a), the sweeper as it is now:
#     queue.sweep_workflow_runs, read from sql/functions/retention.sql as this checkout has it and
#     created with the bench tables' names in place of queue's (as is queue.check_range), called in
#     batches of 1000, one transaction each, until a batch comes back short, as
#     dev.pgworkflows.sweeper.Sweeper drains it. The first batch runs as the function's statement
#     under EXPLAIN ANALYZE (the due runs an Index Cond on expires_at, the delete a nested loop
#     over the primary key), the rest by the function: time per batch (median, p95), total, WAL.
#     Then the dead tuples left (pg_stat_user_tables), the VACUUM that follows, and one sweeper
#     pass that finds nothing due (what every idle 5-minute pass costs), with its EXPLAIN ANALYZE.
#     On (b), the check that the oldest partition is wholly expired, DETACH PARTITION ...
#     CONCURRENTLY (plain DETACH should that fail) of the run and of the journal partition, and
#     DROP TABLE;
#   - hot-path lookups after retention on both layouts: a run by id, its journal, its next seq,
#     a run by idempotency key, a workflow's newest runs, the deadline ("due") query of
#     workflow_expire: median and p95 of 200 executions each (a DO loop, timed per execution,
#     second of two passes, so warm), with custom plans (planned every time) and generic plans
#     (planned once, as the functions that SET plan_cache_mode = force_generic_plan do), and an
#     EXPLAIN (ANALYZE, BUFFERS) of each;
#   - heap + index sizes of both layouts before and after retention;
#
# How the data looks: run ids 1..N in start order, started evenly over the 30 days before the
# script's start; ~90% completed, ~7% failed, ~1% cancelled, ~2% running (all among the newest 3%);
# ended runs completed 1-300 s after they started; input, output/error and each journal row's
# output are JSON objects of ~120 bytes; every 5th run has an idempotency key, every 20th is a
# child of the run before it, every 2nd has a trace context, every 4th a deadline. retention_days
# is 30 for every run; the sweeper is called with a p_now such that the newest run of the oldest
# partition has just expired, which is also the moment that partition may be dropped. The plain
# tables are generated with generate_series in ten batches (one transaction each), the
# partitioned ones copied from them (INSERT ... SELECT, routed). Indexes are built after the load.
# Autovacuum is off on the bench tables so that what is measured is what the script does. The
# CHECK constraints that call queue.workflow_run_valid / workflow_step_valid are left out, so that
# the script needs nothing of the pgworkflows schema.
#
# How to run it: against a PostgreSQL 17 or later (identity columns on partitioned tables), as a
# role that may create a schema and run CHECKPOINT (a superuser), with the connection in the
# standard PG* variables:
#
#   PGHOST=127.0.0.1 PGPORT=7701 PGUSER=postgres PGPASSWORD=... PGDATABASE=postgres \
#     bash bench/scripts/partitioning.sh [RUNS]
#
# RUNS defaults to 10000000 and must be a multiple of 10, at least 1000. Everything is in schema
# partbench, dropped at the start and at the end (also on failure); nothing of queue.* is read or
# written. Disk: about 2.8 kB per run for both layouts together (~28 GB at 10M) plus WAL. At 10M
# on 2 cores and the server's default settings (shared_buffers 128MB, max_wal_size 1GB) the whole
# takes about a quarter of an hour, most of it the build; RUNS=100000 takes about 15 seconds,
# RUNS=1000 about 2.
set -euo pipefail

RUNS=${1:-10000000}
if ! [[ "$RUNS" =~ ^[0-9]+$ ]] || (( RUNS < 1000 || RUNS % 10 != 0 )); then
  echo "usage: $0 [RUNS]   (RUNS: a multiple of 10, at least 1000; default 10000000)" >&2
  exit 2
fi
PART=$(( RUNS / 10 ))
EXECS=200

PSQL=(psql -X -v ON_ERROR_STOP=1 -P pager=off -P footer=off)

server_version=$("${PSQL[@]}" -Atc 'SHOW server_version_num')
if (( server_version < 170000 )); then
  echo "PostgreSQL 17 or later needed (identity column on a partitioned table); this is $server_version" >&2
  exit 2
fi

SWEEPER=$(mktemp)
cleanup() {
  "${PSQL[@]}" -qc 'DROP SCHEMA IF EXISTS partbench CASCADE' >/dev/null 2>&1 || true
  rm -f "$SWEEPER"
}
trap cleanup EXIT

# A function of sql/functions, from its CREATE line to its end.
FUNCTIONS="$(cd "$(dirname "$0")/../../sql/functions" && pwd)"
function_of() {
  awk -v head="CREATE OR REPLACE FUNCTION $2(" \
    'index($0, head) == 1 { on = 1 } on { print } on && /^END \$\$;/ { exit }' "$FUNCTIONS/$1"
}
# queue's tables and functions under the bench's names.
to_bench() {
  sed -e 's/queue\.sweep_workflow_runs(/partbench.sweep_plain(/' \
      -e 's/queue\.workflow_run /partbench.run_plain /g' \
      -e 's/queue\.workflow_step /partbench.step_plain /g' \
      -e 's/queue\.workflow_signal /partbench.signal_plain /g' \
      -e 's/queue\.check_range(/partbench.check_range(/g' \
      -e "s/'queue', 'pg_temp'/'partbench', 'pg_temp'/"
}
{
  function_of common.sql queue.check_range | to_bench
  echo
  function_of retention.sql queue.sweep_workflow_runs | to_bench
  echo
  echo 'PREPARE sweep_current(integer, timestamptz) AS'
  function_of retention.sql queue.sweep_workflow_runs | to_bench \
    | sed -n '/^    WITH due AS (/,/^    SELECT count(\*) INTO v_count FROM gone;/p' \
    | sed -e 's/\bp_limit\b/$1/g' -e 's/\bv_now\b/$2/g' -e 's/ INTO v_count//'
} > "$SWEEPER"
if ! grep -q '^CREATE OR REPLACE FUNCTION partbench.sweep_plain(' "$SWEEPER" \
   || ! grep -q '^PREPARE sweep_current' "$SWEEPER" || grep -q 'queue\.' "$SWEEPER"; then
  echo "could not take the sweeper from $FUNCTIONS/retention.sql: its shape has changed" >&2
  exit 1
fi

"${PSQL[@]}" -q -v runs="$RUNS" -v part="$PART" -v execs="$EXECS" -v sweeper="$SWEEPER" <<'SQL'
\set QUIET on
SET client_min_messages = warning;
-- Index builds only (the server's default is 64MB); the measured statements run with the defaults.
SET maintenance_work_mem = '1GB';

\echo '== partitioning bench:' :runs 'runs,' :part 'per partition'
SELECT version();
SELECT name, setting, unit FROM pg_settings
 WHERE name IN ('shared_buffers', 'max_wal_size', 'checkpoint_timeout', 'wal_level', 'wal_compression',
                'full_page_writes', 'fsync', 'synchronous_commit', 'data_checksums', 'work_mem',
                'maintenance_work_mem', 'max_parallel_maintenance_workers', 'jit')
 ORDER BY name;

DROP SCHEMA IF EXISTS partbench CASCADE;
CREATE SCHEMA partbench;

-- ---------------------------------------------------------------------------------------------
-- Helpers: a timer/WAL meter kept in session settings, and a table of what it measured.
CREATE TABLE partbench.result (ord serial, label text, ms numeric, wal_bytes numeric);
CREATE FUNCTION partbench.mark() RETURNS void LANGUAGE sql AS $$
    SELECT set_config('partbench.t0', clock_timestamp()::text, false),
           set_config('partbench.l0', pg_current_wal_insert_lsn()::text, false);
    SELECT NULL::void;
$$;
CREATE FUNCTION partbench.took(p_label text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    v_ms  numeric := round((extract(epoch FROM clock_timestamp()
                             - current_setting('partbench.t0')::timestamptz) * 1000)::numeric, 1);
    v_wal numeric := pg_wal_lsn_diff(pg_current_wal_insert_lsn(), current_setting('partbench.l0')::pg_lsn);
BEGIN
    INSERT INTO partbench.result (label, ms, wal_bytes) VALUES (p_label, v_ms, v_wal);
    RETURN format('%-62s %12s ms   WAL %16s B (%s)', p_label, to_char(v_ms, 'FM999G999G990D0'),
                  to_char(v_wal, 'FM999G999G999G990'), pg_size_pretty(v_wal));
END $$;
-- Heap (with TOAST, FSM, VM) and index sizes of a layout's tables, partitions summed.
CREATE FUNCTION partbench.sizes()
RETURNS TABLE (tbl text, partitions bigint, est_rows bigint, heap text, indexes text, total text)
LANGUAGE sql AS $$
    SELECT t.name, count(*) FILTER (WHERE l.relid::regclass::text <> 'partbench.' || t.name),
           sum(greatest(c.reltuples, 0))::bigint,
           pg_size_pretty(sum(pg_table_size(l.relid))), pg_size_pretty(sum(pg_indexes_size(l.relid))),
           pg_size_pretty(sum(pg_total_relation_size(l.relid)))
      FROM (VALUES (1, 'run_plain'), (2, 'step_plain'), (3, 'run_part'), (4, 'step_part')) t(ord, name)
      CROSS JOIN LATERAL (SELECT p.relid FROM pg_partition_tree(to_regclass('partbench.' || t.name)) p
                           WHERE p.isleaf
                          UNION
                          SELECT to_regclass('partbench.' || t.name)) l
      JOIN pg_class c ON c.oid = l.relid AND c.relkind = 'r'
     GROUP BY t.ord, t.name ORDER BY t.ord;
$$;
SELECT set_config('partbench.base', date_trunc('second', now())::text, false) AS base \gset

CREATE TYPE partbench.workflow_status AS ENUM ('running', 'completed', 'failed', 'cancelled', 'timed_out');

-- ---------------------------------------------------------------------------------------------
-- (a) Plain tables: queue.workflow_run and queue.workflow_step as of V014 (columns in the same
-- order), indexes after the load. expires_at is filled by the load, as the trigger
-- workflow_run_expiry would fill it (the trigger itself is left out: nothing here ends a run).
CREATE TABLE partbench.run_plain (
    run_id           bigint GENERATED ALWAYS AS IDENTITY,
    workflow_name    text NOT NULL,
    workflow_version integer NOT NULL,
    status           partbench.workflow_status NOT NULL DEFAULT 'running',
    input            jsonb,
    output           jsonb,
    error            jsonb,
    idempotency_key  text,
    current_msg_id   bigint,
    retention_days   integer NOT NULL,
    wait_step        text,
    wait_event       text,
    wait_match       jsonb,
    wait_since       timestamptz,
    trace_context    text,
    started_at       timestamptz NOT NULL DEFAULT now(),
    completed_at     timestamptz,
    parent_run_id    bigint,
    parent_step      text,
    on_parent_cancel text,
    wait_arms        jsonb,
    wait_all         boolean,
    wait_fired       jsonb,
    due_at           timestamptz,
    deadline_at      timestamptz,
    debounce_key     text,
    concurrency_key  text,
    priority         smallint,
    slot_held        boolean,
    paused_at        timestamptz,
    forked_from_run  bigint,
    forked_from_step text,
    continued_from   bigint,
    continued_to     bigint,
    chain_first      bigint,
    expires_at       timestamptz
) WITH (autovacuum_enabled = off);

CREATE TABLE partbench.step_plain (
    run_id        bigint NOT NULL,
    step_name     text NOT NULL,
    seq           integer NOT NULL,
    kind          text NOT NULL,
    output        jsonb,
    error         jsonb,
    timed_out     boolean NOT NULL DEFAULT false,
    attempts      integer NOT NULL DEFAULT 1,
    started_at    timestamptz NOT NULL,
    completed_at  timestamptz NOT NULL DEFAULT now(),
    state         jsonb,
    state_version bigint
) WITH (autovacuum_enabled = off);

-- Deterministic rows for run ids p_lo..p_hi of p_n (no random(): both layouts get the same data).
CREATE FUNCTION partbench.gen_runs(p_lo bigint, p_hi bigint, p_n bigint, p_base timestamptz)
RETURNS SETOF partbench.run_plain LANGUAGE sql STABLE AS $$
SELECT i,
       'wf_' || (i % 20),
       (1 + i % 3)::int,
       (CASE WHEN r THEN 'running' WHEN i % 100 < 7 THEN 'failed' WHEN i % 100 = 7 THEN 'cancelled'
             ELSE 'completed' END)::partbench.workflow_status,
       jsonb_build_object('orderId', i, 'customerId', 'cus_' || (h % 1000000), 'amount', (h % 100000) / 100.0,
                          'currency', 'EUR', 'items', 1 + h % 7, 'channel', 'web'),
       CASE WHEN NOT r AND i % 100 > 7 THEN
           jsonb_build_object('invoiceId', 'inv_' || i, 'charged', (h % 100000) / 100.0,
                              'shipmentId', 'shp_' || (h % 9999999), 'status', 'shipped', 'carrier', 'dhl') END,
       CASE WHEN NOT r AND i % 100 <= 7 THEN
           jsonb_build_object('type', CASE WHEN i % 100 = 7 THEN 'Cancelled' ELSE 'PaymentDeclined' END,
                              'message', 'card declined by the issuer, code ' || (h % 100),
                              'step', 'charge-card') END,
       CASE WHEN i % 5 = 0 THEN 'order-' || i END,
       CASE WHEN r THEN i END,
       30,
       CASE WHEN r AND i % 3 = 1 THEN 'await-payment' END,
       CASE WHEN r AND i % 3 = 1 THEN 'payment.settled' END,
       CASE WHEN r AND i % 3 = 1 THEN jsonb_build_object('orderId', i) END,
       CASE WHEN r AND i % 3 = 1 THEN st + interval '7 seconds' END,
       CASE WHEN i % 2 = 0 THEN '00-' || md5(i::text) || '-' || left(md5(h::text), 16) || '-01' END,
       st,
       ca,
       CASE WHEN i % 20 = 0 THEN i - 1 END,
       CASE WHEN i % 20 = 0 THEN 'spawn-child' END,
       CASE WHEN i % 20 = 0 THEN 'cancel' END,
       NULL::jsonb, NULL::boolean, NULL::jsonb,
       NULL::timestamptz,
       CASE WHEN i % 4 = 0 THEN st + CASE WHEN i % 1000 = 0 THEN interval '1 hour' ELSE interval '1 day' END END,
       NULL::text,
       CASE WHEN i % 10 = 0 THEN 'tenant-' || (h % 500) END,
       NULL::smallint,
       CASE WHEN r AND i % 10 = 0 THEN true END,
       NULL::timestamptz, NULL::bigint, NULL::text, NULL::bigint, NULL::bigint, NULL::bigint,
       -- expires_at: completed_at + make_interval(days => retention_days) for an ended run
       ca + make_interval(days => 30)
  FROM generate_series(p_lo, p_hi) i
 CROSS JOIN LATERAL (SELECT hashint8(i)::bigint + 2147483648 AS h,
                            i > p_n * 97 / 100 AND i % 3 <> 0 AS r,
                            p_base - make_interval(secs => (p_n - i) * (2592000.0 / p_n)) AS st) x
 CROSS JOIN LATERAL (SELECT CASE WHEN NOT x.r THEN x.st + make_interval(secs => 1 + x.h % 300) END AS ca) y
$$;

CREATE FUNCTION partbench.gen_steps(p_lo bigint, p_hi bigint, p_n bigint, p_base timestamptz)
RETURNS SETOF partbench.step_plain LANGUAGE sql STABLE AS $$
SELECT i,
       (ARRAY['reserve-stock', 'charge-card', 'create-shipment'])[s],
       s,
       'run',
       jsonb_build_object('ok', true, 'sku', 'SKU-' || (i * 3 + s) % 100000, 'qty', 1 + (i + s) % 5,
                          'warehouse', 'eu-central-1', 'reservationId', 'res_' || (i * 3 + s),
                          'latencyMs', (i * 7 + s) % 900),
       NULL::jsonb, false, 1,
       st + make_interval(secs => s * 2), st + make_interval(secs => s * 2 + 1),
       NULL::jsonb, NULL::bigint
  FROM generate_series(p_lo, p_hi) i
 CROSS JOIN generate_series(1, 3) s
 CROSS JOIN LATERAL (SELECT p_base - make_interval(secs => (p_n - i) * (2592000.0 / p_n)) AS st) x
$$;

\echo
\echo '== (a) plain tables: build'
\t on
\pset format unaligned
SELECT partbench.mark() \gset
SELECT format('INSERT INTO partbench.run_plain OVERRIDING SYSTEM VALUE SELECT * FROM partbench.gen_runs(%s, %s, %s, %L)',
              1 + k * :part, (k + 1) * :part, :runs, current_setting('partbench.base')),
       format('INSERT INTO partbench.step_plain SELECT * FROM partbench.gen_steps(%s, %s, %s, %L)',
              1 + k * :part, (k + 1) * :part, :runs, current_setting('partbench.base'))
  FROM generate_series(0, 9) k \gexec
SELECT partbench.took('plain: insert runs + 3 steps/run (10 batches, generate_series)');
SELECT setval(pg_get_serial_sequence('partbench.run_plain', 'run_id'), :runs) \gset
SELECT partbench.mark() \gset
VACUUM (ANALYZE) partbench.run_plain, partbench.step_plain;
SELECT partbench.took('plain: VACUUM ANALYZE after load (hint bits, VM)');

SELECT partbench.mark() \gset
ALTER TABLE partbench.run_plain ADD CONSTRAINT run_plain_pkey PRIMARY KEY (run_id);
CREATE UNIQUE INDEX run_plain_idempotency_idx ON partbench.run_plain (workflow_name, idempotency_key)
    WHERE idempotency_key IS NOT NULL;
CREATE INDEX run_plain_listing_idx ON partbench.run_plain (workflow_name, run_id DESC);
CREATE INDEX run_plain_status_idx ON partbench.run_plain (workflow_name, status, run_id DESC);
CREATE INDEX run_plain_parent_idx ON partbench.run_plain (parent_run_id, run_id) WHERE parent_run_id IS NOT NULL;
CREATE INDEX run_plain_deadline_idx ON partbench.run_plain (deadline_at)
    WHERE status = 'running' AND deadline_at IS NOT NULL;
CREATE INDEX run_plain_debounce_idx ON partbench.run_plain (workflow_name, debounce_key, run_id DESC)
    WHERE debounce_key IS NOT NULL;
CREATE INDEX run_plain_slot_idx ON partbench.run_plain (workflow_name, concurrency_key) WHERE slot_held;
CREATE INDEX run_plain_chain_idx ON partbench.run_plain (chain_first, run_id) WHERE chain_first IS NOT NULL;
CREATE INDEX run_plain_expiry_idx ON partbench.run_plain (expires_at)
    WHERE status <> 'running' AND (chain_first IS NULL OR run_id <> chain_first);
SELECT partbench.took('plain: 10 run indexes');
SELECT partbench.mark() \gset
ALTER TABLE partbench.step_plain ADD CONSTRAINT step_plain_pkey PRIMARY KEY (run_id, step_name);
CREATE INDEX step_plain_seq_idx ON partbench.step_plain (run_id, seq);
SELECT partbench.took('plain: 2 step indexes');

-- The tables that hang off a run (empty here): retention's DELETE runs their FK cascades and
-- deletes signals.
CREATE TABLE partbench.step_aside_plain (
    run_id bigint NOT NULL REFERENCES partbench.run_plain (run_id) ON DELETE CASCADE,
    step_name text NOT NULL, seq integer NOT NULL, kind text NOT NULL, output jsonb, error jsonb,
    timed_out boolean NOT NULL, attempts integer NOT NULL, started_at timestamptz NOT NULL,
    completed_at timestamptz NOT NULL, set_aside_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    state jsonb, state_version bigint);
CREATE INDEX ON partbench.step_aside_plain (run_id, seq, set_aside_at);
CREATE TABLE partbench.run_stream_plain (
    run_id bigint NOT NULL REFERENCES partbench.run_plain (run_id) ON DELETE CASCADE,
    stream_name text NOT NULL, next_offset bigint NOT NULL DEFAULT 0,
    created_at timestamptz NOT NULL DEFAULT now(), closed_at timestamptz,
    PRIMARY KEY (run_id, stream_name));
CREATE TABLE partbench.run_stream_entry_plain (
    run_id bigint NOT NULL, stream_name text NOT NULL, stream_offset bigint NOT NULL,
    writer text NOT NULL, seq integer NOT NULL, value jsonb NOT NULL,
    written_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (run_id, stream_name, stream_offset), UNIQUE (run_id, stream_name, writer, seq),
    FOREIGN KEY (run_id, stream_name) REFERENCES partbench.run_stream_plain (run_id, stream_name) ON DELETE CASCADE);
CREATE TABLE partbench.signal_plain (
    signal_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, run_id bigint NOT NULL,
    event text NOT NULL, payload jsonb, idempotency_key text,
    sent_at timestamptz NOT NULL DEFAULT clock_timestamp(), delivered_at timestamptz, delivered_to text);
CREATE INDEX ON partbench.signal_plain (run_id, event, signal_id) WHERE delivered_at IS NULL;
CREATE INDEX ON partbench.signal_plain (run_id, signal_id);
CREATE UNIQUE INDEX ON partbench.signal_plain (run_id, idempotency_key) WHERE idempotency_key IS NOT NULL;

-- ---------------------------------------------------------------------------------------------
-- (b) Partitioned by range of run_id: ten partitions of N/10 ids, the last one open-ended so
-- that new runs still go in (in production a job creates the next partition ahead of the
-- identity). The journal is partitioned on the same bounds, so a run and its journal go together.
\echo
\echo '== (b) partitioned by RANGE (run_id): build'
CREATE TABLE partbench.run_part (LIKE partbench.run_plain INCLUDING DEFAULTS INCLUDING IDENTITY)
    PARTITION BY RANGE (run_id);
CREATE TABLE partbench.step_part (LIKE partbench.step_plain INCLUDING DEFAULTS)
    PARTITION BY RANGE (run_id);
SELECT format('CREATE TABLE partbench.%s_p%s PARTITION OF partbench.%s FOR VALUES FROM (%s) TO (%s) WITH (autovacuum_enabled = off)',
              t || '_part', lpad(k::text, 2, '0'), t || '_part', 1 + k * :part,
              CASE WHEN k = 9 THEN 'MAXVALUE' ELSE (1 + (k + 1) * :part)::text END)
  FROM generate_series(0, 9) k, (VALUES ('run'), ('step')) v(t) \gexec
SELECT 'pg_get_serial_sequence(run_part.run_id) = ' || coalesce(pg_get_serial_sequence('partbench.run_part', 'run_id'), 'NULL');

SELECT partbench.mark() \gset
INSERT INTO partbench.run_part OVERRIDING SYSTEM VALUE SELECT * FROM partbench.run_plain;
INSERT INTO partbench.step_part SELECT * FROM partbench.step_plain;
SELECT partbench.took('partitioned: insert (copy of the plain rows, routed)');
SELECT setval(pg_get_serial_sequence('partbench.run_part', 'run_id'), :runs) \gset
SELECT partbench.mark() \gset
VACUUM (ANALYZE) partbench.run_part, partbench.step_part;
SELECT partbench.took('partitioned: VACUUM ANALYZE after load');

SELECT partbench.mark() \gset
ALTER TABLE partbench.run_part ADD CONSTRAINT run_part_pkey PRIMARY KEY (run_id);
\echo '-- the unique idempotency index cannot be had on a table partitioned by run_id:'
\set ON_ERROR_STOP 0
CREATE UNIQUE INDEX run_part_idempotency_idx ON partbench.run_part (workflow_name, idempotency_key)
    WHERE idempotency_key IS NOT NULL;
\set ON_ERROR_STOP 1
-- ... so it is built non-unique, which is what the lookup by key gets.
CREATE INDEX run_part_idempotency_idx ON partbench.run_part (workflow_name, idempotency_key)
    WHERE idempotency_key IS NOT NULL;
CREATE INDEX run_part_listing_idx ON partbench.run_part (workflow_name, run_id DESC);
CREATE INDEX run_part_status_idx ON partbench.run_part (workflow_name, status, run_id DESC);
CREATE INDEX run_part_parent_idx ON partbench.run_part (parent_run_id, run_id) WHERE parent_run_id IS NOT NULL;
CREATE INDEX run_part_deadline_idx ON partbench.run_part (deadline_at)
    WHERE status = 'running' AND deadline_at IS NOT NULL;
CREATE INDEX run_part_debounce_idx ON partbench.run_part (workflow_name, debounce_key, run_id DESC)
    WHERE debounce_key IS NOT NULL;
CREATE INDEX run_part_slot_idx ON partbench.run_part (workflow_name, concurrency_key) WHERE slot_held;
CREATE INDEX run_part_chain_idx ON partbench.run_part (chain_first, run_id) WHERE chain_first IS NOT NULL;
CREATE INDEX run_part_expiry_idx ON partbench.run_part (expires_at)
    WHERE status <> 'running' AND (chain_first IS NULL OR run_id <> chain_first);
SELECT partbench.took('partitioned: 10 run indexes (x10 partitions)');
SELECT partbench.mark() \gset
ALTER TABLE partbench.step_part ADD CONSTRAINT step_part_pkey PRIMARY KEY (run_id, step_name);
CREATE INDEX step_part_seq_idx ON partbench.step_part (run_id, seq);
SELECT partbench.took('partitioned: 2 step indexes (x10 partitions)');
\echo '-- and workflow_start''s ON CONFLICT on the idempotency key finds no arbiter:'
\set ON_ERROR_STOP 0
INSERT INTO partbench.run_part (workflow_name, workflow_version, retention_days, idempotency_key)
VALUES ('wf_0', 1, 30, 'order-x')
ON CONFLICT (workflow_name, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING;
\set ON_ERROR_STOP 1

CREATE TABLE partbench.step_aside_part (LIKE partbench.step_aside_plain INCLUDING DEFAULTS,
    FOREIGN KEY (run_id) REFERENCES partbench.run_part (run_id) ON DELETE CASCADE);
CREATE INDEX ON partbench.step_aside_part (run_id, seq, set_aside_at);
CREATE TABLE partbench.run_stream_part (LIKE partbench.run_stream_plain INCLUDING DEFAULTS,
    PRIMARY KEY (run_id, stream_name),
    FOREIGN KEY (run_id) REFERENCES partbench.run_part (run_id) ON DELETE CASCADE);

\t off
\pset format aligned
\echo
\echo '== sizes after the build'
SELECT * FROM partbench.sizes();

-- ---------------------------------------------------------------------------------------------
-- Retention of the oldest 10%: p_now is when the newest run of the first partition has expired.
\echo
\echo '== retention of the oldest 10% of runs'
SELECT set_config('partbench.pnow', (max(expires_at) + interval '1 millisecond')::text, false) AS pnow
  FROM partbench.run_plain WHERE run_id <= :part \gset
SELECT (SELECT count(*) FROM partbench.run_plain WHERE run_id <= :part) AS runs_in_first_partition,
       (SELECT count(*) FROM partbench.run_plain r
         WHERE r.status <> 'running' AND (r.chain_first IS NULL OR r.run_id <> r.chain_first)
           AND r.expires_at < :'pnow'::timestamptz) AS runs_past_retention;

-- The sweeper and the range check it calls first, as sql/functions has them (tables renamed), and
-- its statement for EXPLAIN, with p_limit as $1 and v_now as $2 as PL/pgSQL passes them: written
-- by the shell above into a file of their own.
\i :sweeper

-- The sweeper's drain: batches of 1000, each its own transaction, until one comes back short
-- (or p_max batches).
CREATE TABLE partbench.sweep_log (fn text, batch int, runs int, ms numeric, wal_bytes numeric);
CREATE PROCEDURE partbench.sweep_loop(p_fn text, p_max int, p_now timestamptz)
LANGUAGE plpgsql AS $$
DECLARE
    v_n   int;
    v_t   timestamptz;
    v_l   pg_lsn;
BEGIN
    FOR v_b IN 1..p_max LOOP
        v_t := clock_timestamp();
        v_l := pg_current_wal_insert_lsn();
        EXECUTE format('SELECT partbench.%I(1000, $1)', p_fn) INTO v_n USING p_now;
        INSERT INTO partbench.sweep_log
        VALUES (p_fn, v_b, v_n, round((extract(epoch FROM clock_timestamp() - v_t) * 1000)::numeric, 1),
                pg_wal_lsn_diff(pg_current_wal_insert_lsn(), v_l));
        COMMIT;
        EXIT WHEN v_n < 1000;
    END LOOP;
END $$;
-- Per-batch figures of one function's drain (full batches; the short last one apart).
CREATE FUNCTION partbench.sweep_stats(p_fn text)
RETURNS TABLE (batches bigint, runs_deleted bigint, median_ms numeric, p95_ms numeric, max_ms numeric,
               first_10_avg_ms numeric, last_10_avg_ms numeric, short_batch_ms numeric, median_wal text)
LANGUAGE sql AS $$
SELECT count(*), sum(runs),
       round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) FILTER (WHERE runs = 1000)::numeric, 1),
       round(percentile_cont(0.95) WITHIN GROUP (ORDER BY ms) FILTER (WHERE runs = 1000)::numeric, 1),
       max(ms) FILTER (WHERE runs = 1000),
       round(avg(ms) FILTER (WHERE batch <= 10 AND runs = 1000), 1),
       round(avg(ms) FILTER (WHERE batch > max_batch - 10 AND runs = 1000), 1),
       max(ms) FILTER (WHERE runs < 1000),
       pg_size_pretty(percentile_cont(0.5) WITHIN GROUP (ORDER BY wal_bytes)::numeric)
  FROM (SELECT *, max(batch) OVER () AS max_batch FROM partbench.sweep_log WHERE fn = p_fn) l;
$$;

\echo '-- (a) plain: the sweeper (current), batches of 1000 runs, one transaction each, until one comes'
\echo '--     back short: batch 1 as its statement under EXPLAIN ANALYZE, then the rest by the function'
CHECKPOINT;
SELECT clock_timestamp() AS del_t0, pg_current_wal_insert_lsn() AS del_l0 \gset
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) EXECUTE sweep_current(1000, :'pnow');
\t on
\pset format unaligned
SELECT partbench.mark() \gset
CALL partbench.sweep_loop('sweep_plain', 1000000, :'pnow'::timestamptz);
SELECT partbench.took('plain: sweeper DELETE, current function, batches 2..');
SELECT set_config('partbench.t0', :'del_t0', false), set_config('partbench.l0', :'del_l0', false) \gset
SELECT partbench.took('plain: sweeper DELETE of the oldest 10%, all batches');
SELECT pg_stat_force_next_flush() \gset
\t off
\pset format aligned
\echo '-- per batch, current function (batches 2..; median, p95, max and averages over full batches)'
SELECT * FROM partbench.sweep_stats('sweep_plain');
SELECT 'expired runs the pass left (children whose parent went in the same batch wait for the next pass): '
       || count(*) AS left_over
  FROM partbench.run_plain r
 WHERE r.status <> 'running' AND r.expires_at < :'pnow'::timestamptz;
SELECT relname, n_dead_tup, n_tup_del
  FROM pg_stat_user_tables WHERE relid IN ('partbench.run_plain'::regclass, 'partbench.step_plain'::regclass)
 ORDER BY relname;

\echo '-- (a) plain: the VACUUM that follows'
\t on
\pset format unaligned
CHECKPOINT;
SELECT partbench.mark() \gset
VACUUM partbench.run_plain;
SELECT partbench.took('plain: VACUUM run table after the delete');
SELECT partbench.mark() \gset
VACUUM partbench.step_plain;
SELECT partbench.took('plain: VACUUM step table after the delete');

\echo '-- (a) plain: a sweeper pass that finds nothing due (p_now = script start), after VACUUM'
SELECT partbench.mark() \gset
SELECT 'runs swept: ' || partbench.sweep_plain(1000, :'base'::timestamptz);
SELECT partbench.took('plain: idle sweeper pass (nothing due), current function');
\t off
\pset format aligned
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) EXECUTE sweep_current(1000, :'base');

\echo '-- (b) partitioned: check, DETACH, DROP of the oldest partition'
\t on
\pset format unaligned
CHECKPOINT;
SELECT partbench.mark() \gset
SELECT 'runs in run_part_p00 that block its drop (running or not yet expired): ' || count(*)
  FROM partbench.run_part_p00 r
 WHERE r.status = 'running' OR r.expires_at >= :'pnow'::timestamptz;
SELECT partbench.took('partitioned: check p00 is wholly expired (seq scan)');
SELECT partbench.mark() \gset
\set ON_ERROR_STOP 0
ALTER TABLE partbench.run_part DETACH PARTITION partbench.run_part_p00 CONCURRENTLY;
\set ON_ERROR_STOP 1
\if :ERROR
  \echo '-- DETACH ... CONCURRENTLY failed; plain DETACH (ACCESS EXCLUSIVE on run_part):'
  ALTER TABLE partbench.run_part DETACH PARTITION partbench.run_part_p00;
  SELECT partbench.took('partitioned: DETACH run_part_p00 (plain)');
\else
  SELECT partbench.took('partitioned: DETACH run_part_p00 CONCURRENTLY');
\endif
SELECT partbench.mark() \gset
\set ON_ERROR_STOP 0
ALTER TABLE partbench.step_part DETACH PARTITION partbench.step_part_p00 CONCURRENTLY;
\set ON_ERROR_STOP 1
\if :ERROR
  \echo '-- DETACH ... CONCURRENTLY failed; plain DETACH (ACCESS EXCLUSIVE on step_part):'
  ALTER TABLE partbench.step_part DETACH PARTITION partbench.step_part_p00;
  SELECT partbench.took('partitioned: DETACH step_part_p00 (plain)');
\else
  SELECT partbench.took('partitioned: DETACH step_part_p00 CONCURRENTLY');
\endif
SELECT partbench.mark() \gset
DROP TABLE partbench.run_part_p00, partbench.step_part_p00;
SELECT partbench.took('partitioned: DROP TABLE run_part_p00, step_part_p00');
\t off
\pset format aligned

\echo
\echo '== sizes after retention (plain: after its VACUUM)'
SELECT * FROM partbench.sizes();

-- ---------------------------------------------------------------------------------------------
-- Hot-path lookups after retention. {L} is the layout (plain / part); $1 a random surviving run id.
\echo
\echo '== lookups after retention'
CREATE TABLE partbench.lookup_q (ord int, name text, sql text);
INSERT INTO partbench.lookup_q VALUES
 (1, 'run by id (workflow_get)',
     'SELECT * FROM partbench.run_{L} WHERE run_id = $1'),
 (2, 'journal by run id (workflow_journal)',
     'SELECT * FROM partbench.step_{L} WHERE run_id = $1 ORDER BY seq'),
 (3, 'next seq of a run (every completion)',
     'SELECT coalesce(max(seq), 0) + 1 FROM partbench.step_{L} WHERE run_id = $1'),
 (4, 'run by idempotency key (workflow_start)',
     'SELECT run_id, status FROM partbench.run_{L} WHERE workflow_name = ''wf_'' || (($1 / 5 * 5) % 20) AND idempotency_key = ''order-'' || ($1 / 5 * 5)'),
 (5, 'newest 50 runs of a workflow (workflow_list)',
     'SELECT * FROM partbench.run_{L} WHERE workflow_name = ''wf_'' || ($1 % 20) ORDER BY run_id DESC LIMIT 50'),
 (6, 'deadline due (workflow_expire)',
     'SELECT run_id FROM partbench.run_{L} WHERE status = ''running'' AND deadline_at <= now() ORDER BY deadline_at LIMIT 100');
CREATE TABLE partbench.lookup_result (ord int, name text, layout text, mode text, median_ms numeric, p95_ms numeric);

\t on
\pset format unaligned
SELECT format('SET plan_cache_mode = %s', m.mode),
       format($f$DO $d$
DECLARE
    v_id bigint;
    v_t  timestamptz;
    v_ms float8[];
BEGIN
    FOR v_rep IN 1..2 LOOP
        PERFORM setseed(0.25);
        v_ms := '{}';
        FOR v_i IN 1..%s LOOP
            v_id := %s + floor(random() * %s)::bigint;
            v_t := clock_timestamp();
            PERFORM * FROM (%s) q;
            v_ms := v_ms || (extract(epoch FROM clock_timestamp() - v_t) * 1000)::float8;
        END LOOP;
    END LOOP;
    INSERT INTO partbench.lookup_result
    SELECT %s, %L, %L, %L,
           round(percentile_cont(0.5) WITHIN GROUP (ORDER BY x)::numeric, 3),
           round(percentile_cont(0.95) WITHIN GROUP (ORDER BY x)::numeric, 3)
      FROM unnest(v_ms) x;
END $d$$f$, :execs, :part + :part / 10, :runs - :part - :part / 10 + 1,
              replace(replace(q.sql, '{L}', l.layout), '$1', 'v_id'), q.ord, q.name, l.layout, m.mode),
       'RESET plan_cache_mode'
  FROM partbench.lookup_q q, (VALUES (1, 'plain'), (2, 'part')) l(o, layout),
       (VALUES (1, 'force_custom_plan'), (2, 'force_generic_plan')) m(o, mode)
 ORDER BY q.ord, m.o, l.o \gexec
\t off
\pset format aligned
\echo '-- median / p95 of' :execs 'executions, ms (custom: planned each time; generic: planned once)'
SELECT r.ord, r.name,
       max(r.median_ms) FILTER (WHERE layout = 'plain' AND mode = 'force_custom_plan')  AS plain_custom_med,
       max(r.median_ms) FILTER (WHERE layout = 'part'  AND mode = 'force_custom_plan')  AS part_custom_med,
       max(r.median_ms) FILTER (WHERE layout = 'plain' AND mode = 'force_generic_plan') AS plain_generic_med,
       max(r.median_ms) FILTER (WHERE layout = 'part'  AND mode = 'force_generic_plan') AS part_generic_med,
       max(r.p95_ms) FILTER (WHERE layout = 'plain' AND mode = 'force_custom_plan')     AS plain_custom_p95,
       max(r.p95_ms) FILTER (WHERE layout = 'part'  AND mode = 'force_custom_plan')     AS part_custom_p95,
       max(r.p95_ms) FILTER (WHERE layout = 'plain' AND mode = 'force_generic_plan')    AS plain_generic_p95,
       max(r.p95_ms) FILTER (WHERE layout = 'part'  AND mode = 'force_generic_plan')    AS part_generic_p95
  FROM partbench.lookup_result r GROUP BY r.ord, r.name ORDER BY r.ord;

\echo
\echo '== plans (EXPLAIN ANALYZE, BUFFERS; custom plan, one surviving run id)'
SELECT (:part * 5 + :part / 2 + 7)::text AS probe \gset
\t on
\pset format unaligned
SELECT format('SELECT %L', '---- ' || q.name || ' / ' || l.layout),
       format('EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) %s', replace(replace(q.sql, '{L}', l.layout), '$1', :'probe'))
  FROM partbench.lookup_q q, (VALUES (1, 'plain'), (2, 'part')) l(o, layout)
 ORDER BY q.ord, l.o \gexec
SELECT '---- run by id / part, generic plan (run-time pruning)';
PREPARE run_by_id(bigint) AS SELECT * FROM partbench.run_part WHERE run_id = $1;
SET plan_cache_mode = force_generic_plan;
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) EXECUTE run_by_id(:probe);
RESET plan_cache_mode;
\t off
\pset format aligned

\echo
\echo '== summary of timed steps'
SELECT label, to_char(ms, 'FM999G999G990D0') AS ms, to_char(wal_bytes, 'FM999G999G999G990') AS wal_bytes,
       pg_size_pretty(wal_bytes) AS wal
  FROM partbench.result ORDER BY ord;

DROP SCHEMA partbench CASCADE;
SQL
