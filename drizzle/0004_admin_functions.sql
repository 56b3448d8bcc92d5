-- SQL functions for 0004_admin_functions; filled in by the feature that owns them.
SELECT 1;
