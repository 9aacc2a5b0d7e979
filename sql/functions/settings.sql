-- Server settings kept in the database (queue.setting), for starts made through SQL.

-- Stores a setting; an equal value already stored is left as it is (no write, no lock).
CREATE OR REPLACE FUNCTION queue.setting_put(p_name text, p_value text)
 RETURNS void
 LANGUAGE plpgsql
AS $$
BEGIN
    INSERT INTO queue.setting (name, value) VALUES (p_name, p_value)
    ON CONFLICT (name) DO UPDATE SET value = excluded.value, set_at = now()
     WHERE queue.setting.value IS DISTINCT FROM excluded.value;
END $$;

-- The retention ceiling in days: the one servers stored (WORKFLOWS_MAX_RETENTION_DAYS), else 365.
CREATE OR REPLACE FUNCTION queue.max_retention_days()
 RETURNS integer
 LANGUAGE sql
 STABLE
AS $$
    SELECT coalesce((SELECT value::int FROM queue.setting WHERE name = 'max_retention_days'), 365);
$$;
