#!/bin/bash
test_description='database: init, info, migrations keep data, newer schema refused'
. "$(dirname "$0")/lib.sh"

test_expect_success 'db init creates a database at the newest schema version' '
	"$KLAB" --db k.db db init >out &&
	test_grep "schema version" out &&
	test -f k.db
'

test_expect_success 'db info --json prints the version and the row counts of every table' '
	"$KLAB" --db k.db --json db info >info.json &&
	python3 -c "
import json,sys
d = json.load(open(\"info.json\"))
assert d[\"schema_version\"] == d[\"latest_version\"] >= 1, d
for t in (\"runs\", \"metrics\", \"jobs\", \"steps\", \"machines\", \"leases\", \"kernels\", \"series\",
          \"patches\", \"samples\", \"cpu_stats\", \"histograms\", \"profile_rows\", \"comparisons\", \"schedules\"):
    assert d[\"tables\"][t] == 0, t
"
'

test_expect_success 'the schema is in WAL mode with foreign keys enforced' '
	test "$(sqlite3 k.db "PRAGMA journal_mode")" = wal &&
	test_must_fail sqlite3 k.db "PRAGMA foreign_keys=ON; INSERT INTO metrics(run_id,name,value) VALUES (999,\"x\",1)"
'

test_expect_success 'a database made by migration 1 with data in it survives the upgrade' '
	sqlite3 old.db <"$SRCDIR/db/migrations/0001_init.sql" &&
	sqlite3 old.db "PRAGMA user_version = 1;
		INSERT INTO machines(name, host, state) VALUES (\"dut1\", \"198.18.0.1\", \"free\");
		INSERT INTO runs(uid, workload, created) VALUES (\"r-1\", \"udp_rr_500\", 1.0);
		INSERT INTO metrics(run_id, name, value, unit, better) VALUES (1, \"tps\", 12345.5, \"1/s\", \"higher\");" &&
	"$KLAB" --db old.db db init &&
	test "$(sqlite3 old.db "PRAGMA user_version")" = "$("$KLAB" --db k.db --json db info | python3 -c "import json,sys; print(json.load(sys.stdin)[\"latest_version\"])")" &&
	test "$(sqlite3 old.db "SELECT value FROM metrics JOIN runs ON runs.id = run_id WHERE uid = \"r-1\"")" = 12345.5 &&
	test "$(sqlite3 old.db "SELECT host FROM machines WHERE name = \"dut1\"")" = 198.18.0.1
'

test_expect_success 'a migration numbered below the version that was never applied is applied' '
	sqlite3 gap.db <"$SRCDIR/db/migrations/0001_init.sql" &&
	sqlite3 gap.db "PRAGMA user_version = 1" &&
	"$KLAB" --db gap.db db init >/dev/null &&
	n=$(ls "$SRCDIR"/db/migrations/[0-9]*.sql | grep -vc "\.pg\.sql$") &&
	test "$(sqlite3 gap.db "SELECT count(*) FROM schema_migrations")" = "$n" &&
	last=$(sqlite3 gap.db "SELECT max(version) FROM schema_migrations") &&
	sqlite3 gap.db "DELETE FROM schema_migrations WHERE version = 1" &&
	sqlite3 gap.db "CREATE TABLE canary(x)" &&
	test_expect_code 1 "$KLAB" --db gap.db db info 2>err &&
	test_grep "migration 0001_init failed; the database is unchanged" err &&
	test "$(sqlite3 gap.db "PRAGMA user_version")" = "$last"
'

test_expect_success 'db/schema.sql is the schema the migrations produce' '
	sqlite3 k.db .schema | grep -v "^CREATE TABLE sqlite_" | sed "s/ *$//" | sort >from-migrations &&
	rm -f s.db && sqlite3 s.db <"$SRCDIR/db/schema.sql" &&
	sqlite3 s.db .schema | grep -v "^CREATE TABLE sqlite_" | sed "s/ *$//" | sort >from-schema &&
	test_cmp from-migrations from-schema
'

test_expect_success 'a database from a newer klab is refused, and left untouched' '
	sqlite3 new.db "CREATE TABLE t(x); PRAGMA user_version = 999;" &&
	test_expect_code 1 "$KLAB" --db new.db db info 2>err &&
	test_grep "newer than this klab knows" err &&
	test "$(sqlite3 new.db "PRAGMA user_version")" = 999
'

test_expect_success 'a file that is not a database is a clear error' '
	echo "not a database" >bad.db &&
	test_expect_code 1 "$KLAB" --db bad.db db info 2>err &&
	test_grep "bad.db" err
'
test_done
