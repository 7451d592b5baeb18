#!/usr/bin/env python3
"""tests/data/layers/tables.py SRCDIR [--count]: one owner per table (STYLE.md, "Data: one owner
per table"), checked on the sources.

Reads the tables of SRCDIR/db/schema.sql and the owner map of SRCDIR/docs/database.md (the rows of
the table under "## Who owns which table": `| tables, ... | owning files, ... |`), then the C string
literals of SRCDIR/orchestrator/**/*.c, adjacent literals joined as the compiler joins them (a
statement built from several macros is checked macro by macro). SQL names a table where an
uppercase FROM, JOIN, INTO, UPDATE or TABLE is followed by its name (and in a FROM list, each name
after a comma). A file may name a table in SQL when it owns the table; a file of store/ that owns
a table may also read (FROM, JOIN) another family's: a join belongs to the family whose rows it
returns, and a statement may be built from fragments. Writing (INSERT INTO, UPDATE, DELETE FROM,
a TABLE statement) is for the owners alone. Prints `file:line: SQL on 'table' outside its owners (...)` for every other name,
and `table 'x' has no owner` for a table of the schema that the map leaves out; exits 1 when it
printed anything.

Lines `FILE TABLE` of SRCDIR/tests/data/layers/tables.todo are exceptions still to be moved (none, once
issue 33's item 2 is done); one that no longer happens is reported too, so the list only shrinks.

--count prints, per table, the files with SQL on it and the number of files with SQL in all (the
figure issue 33 tracks), and exits 0."""
import glob, os, re, sys

src = sys.argv[1]
count = "--count" in sys.argv[2:]

tables = re.findall(r"^CREATE TABLE ([a-z_]+)", open(os.path.join(src, "db/schema.sql")).read(), re.M)
if not tables:
    sys.exit("tables: no CREATE TABLE in %s/db/schema.sql" % src)

owners = {}
doc = open(os.path.join(src, "docs/database.md")).read()
m = re.search(r"^## Who owns which table\n(.*?)(?=^## |\Z)", doc, re.M | re.S)
if not m and not count:
    sys.exit("tables: no section '## Who owns which table' in docs/database.md")
for line in (m.group(1) if m else "").splitlines():
    cells = [c.strip() for c in line.strip().strip("|").split("|")]
    if not line.startswith("|") or len(cells) < 2 or cells[0].startswith("-") or cells[0] == "tables":
        continue
    files = {f.strip(" `") for f in cells[1].split(",") if f.strip(" `")}
    for t in cells[0].split(","):
        owners.setdefault(t.strip(" `"), set()).update(files)


def literals(text):
    """The string literals of a C file, adjacent ones joined: (text, line of each character)."""
    out, cur, lines, i, line, n = [], [], [], 0, 1, len(text)
    joined = False          # the last thing seen outside a literal was a literal (or space after one)
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            i += 1
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            line += text.count("\n", i, j)
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif c == "'":
            j = i + 1
            while j < n and text[j] != "'":
                j += 2 if text[j] == "\\" else 1
            i = j + 1
            joined = False
        elif c == '"':
            if not joined and cur:
                out.append(("".join(cur), lines))
                cur, lines = [], []
            j = i + 1
            while j < n and text[j] != '"':
                if text[j] == "\\":
                    cur.append(" " if text[j + 1] in "nt" else text[j + 1])
                    lines.append(line)
                    j += 2
                else:
                    if text[j] == "\n":
                        line += 1
                    cur.append(text[j])
                    lines.append(line)
                    j += 1
            i = j + 1
            joined = True
        elif c in " \t\r\\":
            i += 1
        else:
            if joined and cur:
                out.append(("".join(cur), lines))
                cur, lines = [], []
            joined = False
            i += 1
    if cur:
        out.append(("".join(cur), lines))
    return out


KEY = re.compile(r"\b(FROM|JOIN|INTO|UPDATE|TABLE)\s+(?:IF\s+(?:NOT\s+)?EXISTS\s+)?([A-Za-z_]\w*)")
STOP = re.compile(r"\s*\b(WHERE|GROUP|ORDER|LIMIT|JOIN|LEFT|INNER|CROSS|ON|USING|UNION|HAVING|"
                  r"WINDOW|SET|RETURNING|VALUES|EXCEPT|INTERSECT|NATURAL)\b")


def named(sql):
    """(offset, table name, writes) for each table an SQL text names."""
    for m in KEY.finditer(sql):
        write = m.group(1) in ("INTO", "UPDATE", "TABLE") or \
            (m.group(1) == "FROM" and re.search(r"\bDELETE\s+$", sql[:m.start()]) is not None)
        yield m.start(2), m.group(2), write
        if m.group(1) != "FROM" or write:
            continue
        # FROM a x, b y: the names after the commas, at the FROM's depth
        i, depth = m.end(), 0
        while i < len(sql):
            c = sql[i]
            if c == "(":
                depth += 1
            elif c == ")":
                if depth == 0:
                    break
                depth -= 1
            elif depth == 0 and c == ",":
                n = re.match(r"\s*([A-Za-z_]\w*)", sql[i + 1:])
                if n:
                    yield i + 1 + n.start(1), n.group(1), False
            elif depth == 0 and (c == ";" or c.isspace() and STOP.match(sql, i)):
                break
            i += 1


found = {}                  # table -> {file: [lines]}
joined = {}                 # table -> {file: [lines]} where a store/ file that owns a table reads it
store_owners = {f for fs in owners.values() for f in fs if f.startswith("store/")}
for path in sorted(glob.glob(os.path.join(src, "orchestrator/**/*.c"), recursive=True)):
    rel = os.path.relpath(path, os.path.join(src, "orchestrator"))
    for sql, lines in literals(open(path, errors="replace").read()):
        for off, t, write in named(sql):
            if t not in tables:
                continue
            found.setdefault(t, {}).setdefault(rel, []).append(lines[off])
            if rel in store_owners and not write:
                joined.setdefault(t, {}).setdefault(rel, []).append(lines[off])

todo = set()
tpath = os.path.join(src, "tests/data/layers/tables.todo")
if os.path.exists(tpath):
    for line in open(tpath):
        f = line.split("#")[0].split()
        if len(f) == 2:
            todo.add((f[0], f[1]))

if count:
    allf = set()
    for t in tables:
        fs = sorted(found.get(t, {}))
        allf.update(fs)
        print("%s %d: %s" % (t, len(fs), " ".join(fs)))
    print("files with SQL on a table: %d" % len(allf))
    sys.exit(0)

bad = 0
for t in tables:
    if t not in owners:
        print("table '%s' has no owner in docs/database.md" % t)
        bad = 1
        continue
    for f, ls in sorted(found.get(t, {}).items()):
        ls = set(ls) - set(joined.get(t, {}).get(f, ()))
        if f not in owners[t] and ls and (f, t) not in todo:
            for ln in sorted(ls):
                print("orchestrator/%s:%d: SQL on '%s' outside its owners (%s)" %
                      (f, ln, t, ", ".join(sorted(owners[t]))))
            bad = 1
for f, t in sorted(todo):
    if f in owners.get(t, ()) or f not in found.get(t, {}):
        print("tests/data/layers/tables.todo: '%s %s' is done: remove the line" % (f, t))
        bad = 1
for t in sorted(set(owners) - set(tables)):
    print("docs/database.md names an owner of '%s', which db/schema.sql does not have" % t)
    bad = 1
print("tables: %d tables, %d files with SQL on them" %
      (len(tables), len({f for d in found.values() for f in d})), file=sys.stderr)
sys.exit(bad)
