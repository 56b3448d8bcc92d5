-- SQL functions for 0002_push_functions; filled in by the feature that owns them.
SELECT 1;
