# tests/data/patchwork/pw.sh: a real Patchwork 3.1.3 for a test (sourced after tests/lib.sh).
#
# The release tarball of ../shared/vendor/ is unpacked into $SCRATCH/pw (never into the
# project), set up on a sqlite file (migrate, the default tags and states, project
# "netdev" with list id netdev.vger.kernel.org, a maintainer "klab" with an API token)
# and served by Django's runserver on 127.0.0.1 on a free port. Recipe:
# ../shared/vendor/README.md.
#
# pw_prereq: skip the script unless the tarball and Debian's django packages are there.
# pw_setup: unpack and set up; $PW_TOKEN is the maintainer's token.
# pw_start / pw_stop: the server ($PW_PORT, $PW_URL); test_cleanup stops it at exit.
# pw_manage ARGS...: manage.py with the settings.
# pw_mail FILE: one RFC 822 mail into the project (parsemail).
# pw_api PATH: GET $PW_URL/api/1.3/PATH, the JSON on stdout.

PW_TARBALL=${PW_TARBALL:-$SHARED/vendor/patchwork-3.1.3.tar.gz}
PW_PY=/usr/bin/python3

pw_prereq() {
	test -f "$PW_TARBALL" || test_skip_all "no Patchwork tarball at $PW_TARBALL (../shared/vendor/README.md)"
	"$PW_PY" -c 'import django, rest_framework, django_filters' 2>/dev/null ||
		test_skip_all "Debian's python3-django, python3-djangorestframework and python3-django-filters are not installed (make deps)"
}

pw_manage() {
	(cd "$SCRATCH/pw/src" && DJANGO_SETTINGS_MODULE=patchwork.settings.dev DATABASE_TYPE=sqlite3 \
		DATABASE_NAME="$SCRATCH/pw/pw.db" "$PW_PY" manage.py "$@")
}

pw_setup() {
	mkdir -p "$SCRATCH/pw/src" &&
	tar -xzf "$PW_TARBALL" -C "$SCRATCH/pw/src" --strip-components=1 &&
	pw_manage migrate -v0 >"$SCRATCH/pw/setup.log" 2>&1 &&
	pw_manage loaddata default_tags default_states >>"$SCRATCH/pw/setup.log" 2>&1 &&
	PW_TOKEN=$(pw_manage shell -c '
from django.contrib.auth.models import User
from patchwork.models import Project
from rest_framework.authtoken.models import Token
p = Project.objects.create(linkname="netdev", name="netdev", listid="netdev.vger.kernel.org",
                           listemail="netdev@vger.kernel.org")
u = User.objects.create_user("klab", "klab@example.org", "klab")
u.profile.maintainer_projects.add(p)
u.profile.save()
print(Token.objects.create(user=u).key)
' 2>>"$SCRATCH/pw/setup.log") && test -n "$PW_TOKEN" || { sed 's/^/# /' "$SCRATCH/pw/setup.log"; return 1; }
}

pw_start() {
	PW_PORT=$(test_free_port)
	PW_URL=http://127.0.0.1:$PW_PORT
	(cd "$SCRATCH/pw/src" && DJANGO_SETTINGS_MODULE=patchwork.settings.dev DATABASE_TYPE=sqlite3 \
		DATABASE_NAME="$SCRATCH/pw/pw.db" exec "$PW_PY" manage.py runserver "127.0.0.1:$PW_PORT" --noreload \
		>>"$SCRATCH/pw/server.log" 2>&1) &
	PW_PID=$!
	echo "$PW_PID" >"$SCRATCH/pw/server.pid"
	test_wait_until 60 "curl -sf -o /dev/null $PW_URL/api/1.3/" || { sed 's/^/# /' "$SCRATCH/pw/server.log"; return 1; }
}

pw_stop() {
	local pid
	pid=$(cat "$SCRATCH/pw/server.pid" 2>/dev/null) || return 0
	kill "$pid" 2>/dev/null
	for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	kill -9 "$pid" 2>/dev/null
	rm -f "$SCRATCH/pw/server.pid"
	return 0
}

pw_mail() {
	pw_manage parsemail --list-id netdev.vger.kernel.org <"$1" >>"$SCRATCH/pw/mail.log" 2>&1
}

pw_api() {
	curl -sf "$PW_URL/api/1.3/$1"
}
