-- A receive with a matcher (every workflow poll has one: the worker's
-- versions) could be planned as a bitmap scan of every due message, a sort
-- of all of them and then the few it hands out: the planner's default guess
-- for @> is that few messages match, so walking the ready index in order
-- looked dear. In a burn-down that read thousands of rows per poll. The index
-- already yields due messages oldest first; walking it is never much worse
-- than reading them all, even when few match.
ALTER FUNCTION queue.receive(text, int, int, jsonb, timestamptz) SET enable_bitmapscan = off;
