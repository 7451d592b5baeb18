# klab: top-level GNU Makefile.
#
# make              build everything into build/rel and copy the programs to
#                   orchestrator/klab, orchestrator/klabd, agents/klab-agent,
#                   workloads/klab-udp-rr, workloads/klab-udp-tx
# make check        sanitizer build (ASan + UBSan, -Werror) into build/asan, then
#                   run the C unit tests and the shell tests against it, J test
#                   files at once (default 3); T='t04* lib-*' selects some
# make deps         install the Debian packages the build and the tests need
# make install      PREFIX, DESTDIR as usual
# make fuzz         libFuzzer targets (clang) into build/fuzz
# make demo         README command 1: the main job on the local lab
# make man          docs/man/klab.1 and klabd.8 from the option tables
#
# Sources are found by wildcard so a new file needs no Makefile edit:
#   lib/*.c                       the helper library, linked by everything (but
#                                 SHA-256, in two versions: see SHA_SRC)
#   orchestrator/*/*.c            the library of klab and klabd, a folder per concern
#                                 (docs/architecture.md); klab.c and klabd.c hold main
#   orchestrator/cmd/*.c          the klab commands, linked into klab only
#   agents/*.c                    klab-agent (main.c holds main)
#   workloads/*.c                 generators; workloads/bin-NAME.c holds the main
#                                 of the standalone program klab-NAME, the rest is
#                                 linked into klab-agent as well
#   tests/unit/GROUP-NAME.c       a unit test; GROUP is lib, orch, agent or wl and
#                                 says which objects it links with
#   tests/fuzz/GROUP-NAME.c       a libFuzzer target, same groups

SHELL := /bin/bash
CC ?= cc
PREFIX ?= /usr/local
DESTDIR ?=
BUILD ?= build/rel
SAN ?=

WARN := -Wall -Wextra -Wshadow -Wformat=2 -Wstrict-prototypes \
	-Wmissing-prototypes -Wvla -Wno-unused-parameter
CFLAGS ?= -O2 -g
# libpq (PostgreSQL's client library, libpq-dev) keeps its header in a folder of its own
PG_INCLUDE := $(shell pg_config --includedir 2>/dev/null || echo /usr/include/postgresql)
ALL_CFLAGS := -std=gnu11 $(WARN) $(CFLAGS) -MMD -MP
ALL_CPPFLAGS := -I$(PG_INCLUDE) -iquote lib -iquote orchestrator -iquote agents -iquote workloads -iquote kernels/qemu/cache-model -iquote $(BUILD)/gen -D_GNU_SOURCE \
	-DKLAB_SRCDIR='"$(CURDIR)"' $(CPPFLAGS)
ALL_LDFLAGS := $(LDFLAGS)

# The checked build turns every warning into an error, so a warning cannot
# reach main unseen.
ifeq ($(SAN),1)
ALL_CFLAGS += -Werror -O1 -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
ALL_LDFLAGS += -fsanitize=address,undefined
endif

# klab-agent and the generators are copied to test machines that may lack
# json-c or liburing, so those two are linked statically (Debian ships the .a
# files in libjson-c-dev and liburing-dev); glibc stays dynamic.
STATIC_LIBS := -Wl,-Bstatic -ljson-c -luring -Wl,-Bdynamic -lpthread -lm
ORCH_LIBS := -lsqlite3 -lpq -lcurl -lssh2 -lcrypto -ljson-c -lz -lpthread -lm

# SHA-256: the orchestrator uses OpenSSL's EVP (sha256_evp.c); klab-agent,
# linked statically and copied to test machines, the portable sha256.c, so
# it needs no libcrypto there. sha256_hex.c works over either.
SHA_SRC := lib/sha256.c lib/sha256_evp.c lib/sha256_hex.c
LIB_SRC := $(filter-out $(SHA_SRC),$(wildcard lib/*.c))
ORCH_MAINS := orchestrator/klab.c orchestrator/klabd.c
ORCH_SRC := $(filter-out $(ORCH_MAINS) $(wildcard orchestrator/cmd/*.c),$(wildcard orchestrator/*.c orchestrator/*/*.c)) \
	$(BUILD)/gen/migrations.c
CMD_SRC := $(wildcard orchestrator/cmd/*.c)
AGENT_MAINS := agents/main.c
AGENT_SRC := $(filter-out $(AGENT_MAINS),$(wildcard agents/*.c))
WL_MAINS := $(wildcard workloads/bin-*.c)
WL_SRC := $(filter-out $(WL_MAINS),$(wildcard workloads/*.c))

obj = $(patsubst %.c,$(BUILD)/obj/%.o,$(patsubst $(BUILD)/%,%,$(1)))

LIB_OBJ := $(call obj,$(LIB_SRC))
SHA_OBJ := $(call obj,lib/sha256.c lib/sha256_hex.c)
SHA_EVP_OBJ := $(call obj,lib/sha256_evp.c lib/sha256_hex.c)
ORCH_OBJ := $(call obj,$(ORCH_SRC))
CMD_OBJ := $(call obj,$(CMD_SRC))
AGENT_OBJ := $(call obj,$(AGENT_SRC))
WL_OBJ := $(call obj,$(WL_SRC))

WL_BINS := $(patsubst workloads/bin-%.c,$(BUILD)/bin/klab-%,$(WL_MAINS))

# The cache model (docs/cache-model.md): a QEMU plugin loaded into qemu by `klab lab
# up --qemu --cache-model`, and the guest programs that mark and validate its
# windows (static: they run in the qemu lab's guests from the host root). Built
# with flags of their own, never with the sanitizers: the plugin runs inside
# qemu, the programs in a guest.
CM_DIR := kernels/qemu/cache-model
CM_BINS := $(BUILD)/lib/klab-cache.so $(BUILD)/bin/klab-cache-mark \
	$(BUILD)/cache-model/cm-walk $(BUILD)/cache-model/cm-share
CM_CFLAGS := -std=gnu11 $(WARN) -O2 -g $(if $(filter 1,$(SAN)),-Werror)

BINS := $(BUILD)/bin/klab $(BUILD)/bin/klabd $(BUILD)/bin/klab-agent $(WL_BINS) $(CM_BINS)

UNIT_SRC := $(wildcard tests/unit/*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRC))

INTREE := orchestrator/klab orchestrator/klabd agents/klab-agent \
	$(patsubst workloads/bin-%.c,workloads/klab-%,$(WL_MAINS))

.PHONY: all bins unit-tests check test deps sandbox-user install clean fuzz demo demo-netns schema man
.DEFAULT_GOAL := all

ifeq ($(BUILD),build/rel)
all: bins $(INTREE)
else
all: bins
endif

bins: $(BINS)
unit-tests: $(UNIT_BINS)

# --- objects ---------------------------------------------------------------
$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) -c -o $@ $<

$(BUILD)/obj/gen/%.o: $(BUILD)/gen/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) -c -o $@ $<

# The database migrations are compiled into the orchestrator so that klab
# works from any folder; db/embed.sh turns db/migrations/*.sql into C (the
# folder too is a prerequisite: a migration removed changes only its mtime).
$(BUILD)/gen/migrations.c: db/embed.sh db/migrations $(wildcard db/migrations/*.sql)
	@mkdir -p $(dir $@)
	bash db/embed.sh db/migrations > $@.tmp && mv $@.tmp $@

# --- programs --------------------------------------------------------------
$(BUILD)/bin/klab: $(call obj,orchestrator/klab.c) $(CMD_OBJ) $(ORCH_OBJ) $(LIB_OBJ) $(SHA_EVP_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $^ $(ALL_LDFLAGS) $(ORCH_LIBS)

$(BUILD)/bin/klabd: $(call obj,orchestrator/klabd.c) $(ORCH_OBJ) $(LIB_OBJ) $(SHA_EVP_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $^ $(ALL_LDFLAGS) $(ORCH_LIBS)

$(BUILD)/bin/klab-agent: $(call obj,$(AGENT_MAINS)) $(AGENT_OBJ) $(WL_OBJ) $(LIB_OBJ) $(SHA_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $^ $(ALL_LDFLAGS) $(STATIC_LIBS)

$(BUILD)/bin/klab-%: $(BUILD)/obj/workloads/bin-%.o $(WL_OBJ) $(LIB_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $^ $(ALL_LDFLAGS) $(STATIC_LIBS)

$(BUILD)/lib/klab-cache.so: $(CM_DIR)/klab-cache.c $(CM_DIR)/qemu-plugin-api.h $(CM_DIR)/cache-mark.h
	@mkdir -p $(dir $@)
	$(CC) $(CM_CFLAGS) -fPIC -shared -fvisibility=hidden -o $@ $<

$(BUILD)/bin/klab-cache-mark: $(CM_DIR)/klab-cache-mark.c $(CM_DIR)/cache-mark.h
	@mkdir -p $(dir $@)
	$(CC) $(CM_CFLAGS) -static -o $@ $<

$(BUILD)/cache-model/cm-%: $(CM_DIR)/cm-%.c $(CM_DIR)/cache-mark.h
	@mkdir -p $(dir $@)
	$(CC) $(CM_CFLAGS) -static -pthread -o $@ $<

orchestrator/klab: $(BUILD)/bin/klab ; cp $< $@
orchestrator/klabd: $(BUILD)/bin/klabd ; cp $< $@
agents/klab-agent: $(BUILD)/bin/klab-agent ; cp $< $@
workloads/klab-%: $(BUILD)/bin/klab-% ; cp $< $@

# --- unit tests ------------------------------------------------------------
$(BUILD)/tests/lib-%: $(BUILD)/obj/tests/unit/lib-%.o $(LIB_OBJ) $(SHA_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $^ $(ALL_LDFLAGS) -ljson-c -lm
$(BUILD)/tests/orch-%: $(BUILD)/obj/tests/unit/orch-%.o $(ORCH_OBJ) $(LIB_OBJ) $(SHA_EVP_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $^ $(ALL_LDFLAGS) $(ORCH_LIBS)
$(BUILD)/tests/agent-%: $(BUILD)/obj/tests/unit/agent-%.o $(AGENT_OBJ) $(WL_OBJ) $(LIB_OBJ) $(SHA_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $^ $(ALL_LDFLAGS) $(STATIC_LIBS)
$(BUILD)/tests/wl-%: $(BUILD)/obj/tests/unit/wl-%.o $(WL_OBJ) $(LIB_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $^ $(ALL_LDFLAGS) $(STATIC_LIBS)

# --- check -------------------------------------------------------------------
# The sanitizer build lives beside the release build; tests/run.sh runs every
# unit test binary and every tests/tNNNN-*.sh against it, J files at once, and
# prints the closing "N passed, N failed, N skipped" line. J=3: the files
# mostly wait (sshd, qemu, sleeps), so 3 keep 2 cores busy without slowing
# the timed ones (docs/building.md); J=1 runs them one after another.
J ?= 3
check:
	$(MAKE) BUILD=build/asan SAN=1 bins unit-tests
	KLAB_BUILD=$(CURDIR)/build/asan bash tests/run.sh -j $(J) $(T)

# test: the same suites against the release build (faster, for benchmarks)
test: all unit-tests
	KLAB_BUILD=$(CURDIR)/build/rel bash tests/run.sh -j $(J) $(T)

# --- fuzz --------------------------------------------------------------------
# Every tests/fuzz/GROUP-NAME.c is linked with libFuzzer (clang, and
# libclang-rt-14-dev for the runtime) against the objects of its group,
# built once with clang, ASan and UBSan into build/fuzz. tests/t0009-fuzz.sh
# runs each target for a fixed budget over tests/fuzz/corpus/NAME/; a
# longer run by hand: build/fuzz/NAME -max_total_time=600 CORPUS_DIR
# (docs/fuzzing.md).
FUZZ_SRC := $(wildcard tests/fuzz/*.c)
FUZZ_FLAGS := -O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined
fuzz:
	@mkdir -p build && $(MAKE) --no-print-directory BUILD=build/fuzz CC=clang CFLAGS="$(FUZZ_FLAGS)" bins >build/fuzz.log 2>&1 || \
		{ tail -n 30 build/fuzz.log; exit 1; }
	@for f in $(FUZZ_SRC); do \
		n=$$(basename $$f .c); g=$${n%%-*}; \
		objs="$$(ls build/fuzz/obj/lib/*.o | grep -v -e /sha256.o -e /sha256_evp.o) build/fuzz/obj/lib/sha256.o"; \
		case $$g in orch) objs="$$(ls build/fuzz/obj/lib/*.o | grep -v /sha256.o) $$(ls build/fuzz/obj/orchestrator/*/*.o | grep -v /cmd/) build/fuzz/obj/gen/migrations.o"; libs="$(ORCH_LIBS)";; \
			agent) objs="$$objs $$(ls build/fuzz/obj/agents/*.o | grep -v /main.o) $$(ls build/fuzz/obj/workloads/*.o | grep -v /bin-)"; libs="-ljson-c -luring -lpthread -lm";; \
			wl) objs="$$objs $$(ls build/fuzz/obj/workloads/*.o | grep -v /bin-)"; libs="-ljson-c -luring -lpthread -lm";; \
			*) libs="-ljson-c -lm";; esac; \
		if [ -x build/fuzz/$$n ] && [ -z "$$(find $$f $$objs -newer build/fuzz/$$n 2>/dev/null | head -n 1)" ]; then continue; fi; \
		echo "FUZZ $$n"; \
		clang -std=gnu11 -D_GNU_SOURCE -iquote lib -iquote orchestrator -iquote agents -iquote workloads \
			$(subst fuzzer-no-link,fuzzer,$(FUZZ_FLAGS)) -o build/fuzz/$$n $$f $$objs $$libs || exit 1; \
	done

# --- deps --------------------------------------------------------------------
# Idempotent and quick when everything is there: dpkg-query first, apt only
# for what is missing.
DEB_PKGS := build-essential pkg-config libjson-c-dev libcurl4-openssl-dev \
	libsqlite3-dev sqlite3 libpq-dev postgresql libssh2-1-dev zlib1g-dev liburing-dev gnuplot-nox \
	openssh-server openssh-client iproute2 ethtool sysstat linux-perf \
	bpftrace kexec-tools qemu-system-x86 linux-source-6.1 ccache bc bison \
	flex libelf-dev libssl-dev cpio python3-scipy sockperf iperf3 \
	chromium busybox-static clang libclang-rt-14-dev xz-utils git curl \
	python3 procps psmisc kmod util-linux nftables patch binutils bubblewrap \
	python3-django python3-djangorestframework python3-django-filters
deps:
	@missing=$$(for p in $(DEB_PKGS); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'install ok installed' || echo $$p; done); \
	if [ -z "$$missing" ]; then echo "deps: all $(words $(DEB_PKGS)) packages present"; \
	else echo "deps: installing:" $$missing; \
		export DEBIAN_FRONTEND=noninteractive; \
		apt-get update -q && apt-get install -y -q --no-install-recommends $$missing; fi
	@$(MAKE) --no-print-directory sandbox-user

# The unprivileged user that applies patches, builds kernels and reads mail
# (docs/security.md): made once, never a login, no home. Idempotent.
SANDBOX_USER := klab
sandbox-user:
	@if getent passwd $(SANDBOX_USER) >/dev/null; then echo "deps: user '$(SANDBOX_USER)' present"; \
	elif [ "$$(id -u)" != 0 ]; then echo "deps: user '$(SANDBOX_USER)' missing (run as root to create it)" >&2; \
	else useradd --system --user-group --no-create-home --home-dir /nonexistent \
		--shell /usr/sbin/nologin --comment "klab sandbox (patches, builds, intake)" $(SANDBOX_USER) && \
		echo "deps: user '$(SANDBOX_USER)' created"; fi

# --- install -----------------------------------------------------------------
install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/libexec/klab \
		$(DESTDIR)$(PREFIX)/share/klab/db/migrations $(DESTDIR)$(PREFIX)/share/klab/web-static \
		$(DESTDIR)$(PREFIX)/share/klab/kernels/configs $(DESTDIR)$(PREFIX)/share/klab/workloads \
		$(DESTDIR)$(PREFIX)/lib/systemd/system
	install -m 0755 orchestrator/klab orchestrator/klabd $(DESTDIR)$(PREFIX)/bin/
	install -m 0755 agents/klab-agent $(patsubst workloads/bin-%.c,workloads/klab-%,$(WL_MAINS)) \
		$(DESTDIR)$(PREFIX)/libexec/klab/
	install -m 0644 db/schema.sql $(DESTDIR)$(PREFIX)/share/klab/db/
	install -m 0644 db/migrations/*.sql $(DESTDIR)$(PREFIX)/share/klab/db/migrations/
	cp -R web-static/. $(DESTDIR)$(PREFIX)/share/klab/web-static/
	-cp kernels/configs/* $(DESTDIR)$(PREFIX)/share/klab/kernels/configs/ 2>/dev/null
	-cp workloads/*.conf $(DESTDIR)$(PREFIX)/share/klab/workloads/ 2>/dev/null
	install -m 0644 config.example $(DESTDIR)$(PREFIX)/share/klab/
	sed 's|@PREFIX@|$(PREFIX)|g' docs/klabd.service.in > $(DESTDIR)$(PREFIX)/lib/systemd/system/klabd.service
	@if ls docs/man/*.1 >/dev/null 2>&1; then install -d $(DESTDIR)$(PREFIX)/share/man/man1; \
		install -m 0644 docs/man/*.1 $(DESTDIR)$(PREFIX)/share/man/man1/; fi
	@if ls docs/man/*.8 >/dev/null 2>&1; then install -d $(DESTDIR)$(PREFIX)/share/man/man8; \
		install -m 0644 docs/man/*.8 $(DESTDIR)$(PREFIX)/share/man/man8/; fi
	@if [ -z "$(DESTDIR)" ]; then $(MAKE) --no-print-directory sandbox-user; fi

# --- demo (README command 1) --------------------------------------------------
demo: deps all
	bash tests/demo.sh qemu
demo-netns: deps all
	bash tests/demo.sh netns

clean:
	rm -rf build $(INTREE)

-include $(shell find build -name '*.d' 2>/dev/null)

# db/schema.sql is the schema the migrations produce (tests/t0002 checks it):
# regenerate it after adding a migration.
schema: bins
	rm -f $(BUILD)/schema.db* && $(BUILD)/bin/klab --db $(BUILD)/schema.db db init >/dev/null
	( echo "-- db/schema.sql: the current schema, as db/migrations/*.sql produce it"; \
	  echo "-- (generated by 'make schema'; the orchestrator applies the migrations)"; \
	  sqlite3 $(BUILD)/schema.db .schema ) > db/schema.sql

# The man pages are what the option tables say (klab help --man, klabd --man);
# tests/t0005 fails when they are not regenerated after a table changed.
man: bins
	$(BUILD)/bin/klab help --man > docs/man/klab.1.tmp && mv docs/man/klab.1.tmp docs/man/klab.1
	$(BUILD)/bin/klabd --man > docs/man/klabd.8.tmp && mv docs/man/klabd.8.tmp docs/man/klabd.8
