-- The application's own table, beside the server's schema "queue" in the same database.
CREATE TABLE IF NOT EXISTS shop_order (
  order_id text PRIMARY KEY,
  item     text NOT NULL,
  quantity int  NOT NULL CHECK (quantity BETWEEN 1 AND 100),
  status   text NOT NULL,
  run_id   bigint NOT NULL
);
