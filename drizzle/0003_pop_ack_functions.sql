-- SQL functions for 0003_pop_ack_functions; filled in by the feature that owns them.
SELECT 1;
