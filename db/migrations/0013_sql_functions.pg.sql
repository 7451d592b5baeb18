-- 0013_sql_functions.pg.sql: sqlite's functions that klab's queries call, made on PostgreSQL
-- with the meaning klab relies on (docs/database.md): json_extract(doc, '$.a.b') gives the
-- value as text (NULL when the key is missing or the text is not JSON; callers CAST it where
-- they want a number), json_valid() 1 or 0, json_array_length() of a JSON text,
-- group_concat(x, sep) as string_agg, glob(pattern, text) with * ? and [...].
CREATE FUNCTION json_valid(doc TEXT) RETURNS INTEGER IMMUTABLE LANGUAGE plpgsql AS $$
BEGIN
	PERFORM doc::jsonb;
	RETURN CASE WHEN doc IS NULL THEN NULL ELSE 1 END;
EXCEPTION WHEN others THEN
	RETURN 0;
END $$;
CREATE FUNCTION json_extract(doc TEXT, path TEXT) RETURNS TEXT IMMUTABLE LANGUAGE plpgsql AS $$
BEGIN
	IF path = '$' THEN
		RETURN doc::jsonb #>> '{}';
	END IF;
	RETURN doc::jsonb #>> string_to_array(substr(path, 3), '.');
EXCEPTION WHEN others THEN
	RETURN NULL;
END $$;
CREATE FUNCTION json_array_length(doc TEXT) RETURNS INTEGER IMMUTABLE LANGUAGE sql AS $$
	SELECT CASE WHEN jsonb_typeof(doc::jsonb) = 'array' THEN jsonb_array_length(doc::jsonb) ELSE 0 END
$$;
CREATE FUNCTION group_concat_step(acc TEXT, v TEXT, sep TEXT) RETURNS TEXT IMMUTABLE LANGUAGE sql AS $$
	SELECT CASE WHEN v IS NULL THEN acc WHEN acc IS NULL THEN v ELSE acc || sep || v END
$$;
CREATE AGGREGATE group_concat(TEXT, TEXT) (SFUNC = group_concat_step, STYPE = TEXT);
CREATE FUNCTION glob(pattern TEXT, s TEXT) RETURNS BOOLEAN IMMUTABLE LANGUAGE sql AS $$
	SELECT s ~ ('^' || replace(replace(regexp_replace(pattern, '([.+(){}|^$\\])', '\\\1', 'g'),
		'*', '.*'), '?', '.') || '$')
$$;
