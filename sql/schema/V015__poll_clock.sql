-- workflow_poll takes the time it hands tasks out at (p_now, as receive does), so its five-argument
-- form goes; sql/functions/workflow_lease.sql defines the six-argument one. Callers that pass five
-- arguments reach the new form through its default.
DROP FUNCTION IF EXISTS queue.workflow_poll(text, integer[], integer, integer, integer);
