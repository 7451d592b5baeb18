/* orch-result.c (fuzz): an agent's result document (JSON from a test machine): result_parse, then result_store in sqlite. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <json-c/json.h>

#include "store/db.h"
#include "log.h"
#include "store/result.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct db *db;
	static unsigned n;
	struct json_object *o = NULL;
	int64_t id;

	if (!db || ++n % 2000 == 0) {	/* a fresh database now and then, so it stays small */
		if (db)
			db_close(db);
		db = NULL;
		log_init("fuzz-result", 0, LOG_EMERG);
		if (db_open(":memory:", &db) < 0)
			abort();
	}
	if (result_parse((const char *)data, size, "fuzz", &o, NULL) == 0) {
		json_object_put(o);
		/* what passed the checks must store, or fail cleanly */
		(void)result_store(db, (const char *)data, size, NULL, &id);
	}
	return 0;
}
