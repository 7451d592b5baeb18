-- 0010_lease_history.pg.sql: 0010_lease_history.sql on PostgreSQL, whose triggers call a
-- function and have no julianday(); the table and the times kept are the same.
CREATE TABLE lease_history (
	id		INTEGER PRIMARY KEY,
	machine		TEXT NOT NULL,
	job_id		INTEGER NOT NULL,
	acquired	REAL NOT NULL,
	released	REAL
);
CREATE INDEX lease_history_machine ON lease_history (machine, acquired);
CREATE FUNCTION lease_history_acquire() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO lease_history (machine, job_id, acquired) VALUES (NEW.machine, NEW.job_id, NEW.acquired);
	RETURN NULL;
END $$;
CREATE FUNCTION lease_history_release() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	UPDATE lease_history SET released = floor(extract(epoch FROM clock_timestamp()) * 1000) / 1000.0
	WHERE machine = OLD.machine AND job_id = OLD.job_id AND released IS NULL;
	RETURN NULL;
END $$;
CREATE TRIGGER lease_history_acquire AFTER INSERT ON leases FOR EACH ROW EXECUTE FUNCTION lease_history_acquire();
CREATE TRIGGER lease_history_release AFTER DELETE ON leases FOR EACH ROW EXECUTE FUNCTION lease_history_release();
