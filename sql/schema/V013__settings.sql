-- Server settings the database must know because something other than the server acts on them: a
-- start made through SQL in a caller's own transaction applies the same retention ceiling as the
-- server's routes. Servers write their value at startup; with several servers configured apart,
-- the last one to start wins.

CREATE TABLE queue.setting (
    name   text PRIMARY KEY,
    value  text NOT NULL,
    set_at timestamptz NOT NULL DEFAULT now()
);
