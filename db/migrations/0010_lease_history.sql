-- 0010_lease_history.sql: every machine lease as it was taken and given back (issue 19), so
-- that "no machine was leased to two jobs at once" is a query, not a reading of logs.
-- Kept by triggers on leases, so every path that takes or drops a lease (lease.c, the
-- fencing of a broken machine in deploy.c, klabd failing a job) is recorded; a renewal
-- (an UPDATE of expires) is not a new lease.
CREATE TABLE lease_history (
	id		INTEGER PRIMARY KEY,
	machine		TEXT NOT NULL,
	job_id		INTEGER NOT NULL,
	acquired	REAL NOT NULL,		-- unix time: the lease row's acquired
	released	REAL			-- unix time the row went (ms, rounded down); NULL: held
);
CREATE INDEX lease_history_machine ON lease_history (machine, acquired);
CREATE TRIGGER lease_history_acquire AFTER INSERT ON leases BEGIN
	INSERT INTO lease_history (machine, job_id, acquired) VALUES (NEW.machine, NEW.job_id, NEW.acquired);
END;
CREATE TRIGGER lease_history_release AFTER DELETE ON leases BEGIN
	UPDATE lease_history SET released = (julianday('now') - 2440587.5) * 86400.0
	WHERE machine = OLD.machine AND job_id = OLD.job_id AND released IS NULL;
END;
