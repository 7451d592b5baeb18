-- 0013_sql_functions.sql: the SQL functions klab's queries call that sqlite has built in
-- (json_extract, json_valid, json_array_length, group_concat, glob) and PostgreSQL lacks;
-- 0013_sql_functions.pg.sql makes them there, with sqlite's meaning for what klab asks
-- of them (docs/database.md). Nothing to do on sqlite.
SELECT 1;
