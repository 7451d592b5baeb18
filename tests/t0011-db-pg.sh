#!/bin/bash
test_description='database on PostgreSQL: the database unit tests and klab db against a private server'
. "$(dirname "$0")/lib.sh"

UNITS="orch-db orch-lease orch-job orch-result orch-series orch-sched orch-compare orch-report orch-confirm orch-ksample orch-noise"

if test_have_prereq POSTGRES && test_pg_start >pg-start.err 2>&1; then
	test_set_prereq PG
fi
test_expect_success POSTGRES 'a private PostgreSQL server starts' '
	test_have_prereq PG || { cat pg-start.err "$SCRATCH"/pg/*.log; false; }
'

# each unit test binary on a fresh database, as each makes a fresh sqlite file
for u in $UNITS; do
	test_expect_success PG "unit test $u passes on PostgreSQL" '
		test -x "$KLAB_BUILD/tests/'$u'" &&
		url=$(test_pg_db u_'${u#orch-}') &&
		{ KLAB_TEST_DB=$url "$KLAB_BUILD/tests/'$u'" >'$u'.log 2>&1 || { cat '$u'.log; false; }; } &&
		! grep "^not ok" '$u'.log &&
		grep -q "^1\.\.[1-9]" '$u'.log &&
		say "'$u': $(grep -c "^ok" '$u'.log) ok"
	'
done

test_expect_success PG 'db init creates the schema; db info lists the tables at the newest version' '
	url=$(test_pg_db k) &&
	"$KLAB" --db "$url" db init >out &&
	test_grep "schema version" out &&
	"$KLAB" --db "$url" --json db info >info.json &&
	python3 -c "
import json,sys
d = json.load(open(\"info.json\"))
assert d[\"schema_version\"] == d[\"latest_version\"] >= 13, d
for t in (\"runs\", \"metrics\", \"jobs\", \"steps\", \"machines\", \"leases\", \"lease_history\", \"kernels\",
          \"series\", \"patches\", \"samples\", \"cpu_stats\", \"histograms\", \"profile_rows\", \"comparisons\",
          \"schedules\", \"schema_migrations\"):
    assert d[\"tables\"][t] == 0 or t == \"schema_migrations\", t
assert not any(k.startswith(\"sqlite\") for k in d[\"tables\"]), d
" &&
	n=$(ls "$SRCDIR"/db/migrations/[0-9]*.sql | grep -vc "\.pg\.sql$") &&
	test "$(test_pg_sql k "SELECT count(*) FROM schema_migrations")" = "$n"
'

test_expect_success PG 'the password is never printed; a second db init changes nothing' '
	url=$(test_pg_db k2) &&
	"$KLAB" --db "$url" db init >out 2>&1 &&
	"$KLAB" --db "$url" db info >>out 2>&1 &&
	! grep -F "$PG_PASSWORD" out &&
	test_grep "klab@127.0.0.1:$PG_PORT/k2" out &&
	test "$(test_pg_sql k2 "SELECT count(*) FROM schema_migrations")" -ge 11
'

test_expect_success PG 'types: ids are 64-bit identities, times double precision, foreign keys enforced' '
	test "$(test_pg_sql k "SELECT data_type FROM information_schema.columns WHERE table_name = '"'runs'"' AND column_name = '"'id'"'")" = bigint &&
	test "$(test_pg_sql k "SELECT data_type FROM information_schema.columns WHERE table_name = '"'runs'"' AND column_name = '"'created'"'")" = "double precision" &&
	test_must_fail test_pg_sql k "INSERT INTO metrics (run_id, name, value) VALUES (999, '"'x'"', 1)" 2>err &&
	test_grep "foreign key" err
'

test_done
