#!/usr/bin/env python3
"""tests/data/layers/layers.py [--summary] [--map FILE] OBJDIR: the dependency rules of
docs/architecture.md, checked on the object files of a build (nm): who calls whom is what the
linker sees.

Rules: commands (orchestrator/cmd/) call the library, never the other way; lib/ calls nothing of
orchestrator/, agents/ or workloads/; agents/ and workloads/ call nothing of orchestrator/; no
circle of calls between files, of any length; and the folders of orchestrator/ call only folders
below them in the map of docs/architecture.md (the block that lists them top down, one
"NAME/  text" line each), so no circle between folders either. One error channel: no file but
lib/log.c calls log_last_error() (a callee hands its message up through a struct buf *err filled
by error_to(), or a connection's last failure: db_error(), ssh_error(); the unit tests, not
checked here, may read the log).

Prints one line per broken rule (a circle: its files, then one call for each arrow inside it)
and exits 1 when there is any. --summary prints on stderr the counts: circles between files
(strongly connected components of more than one file), arrows between folders that point up
the map, and circles between folders. --map FILE reads the folder order from FILE instead of
docs/architecture.md beside this script."""
import glob, os, re, subprocess, sys

args = sys.argv[1:]
summary = "--summary" in args
args = [a for a in args if a != "--summary"]
mapfile = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "docs",
                       "architecture.md")
if len(args) >= 2 and args[0] == "--map":
    mapfile = args[1]
    args = args[2:]
if len(args) != 1:
    sys.exit("usage: layers.py [--summary] [--map FILE] OBJDIR")
root = args[0]

MAINS = {"orchestrator/klab", "orchestrator/klabd", "agents/main"}
objs = []
for pat in ("lib/*.o", "orchestrator/*.o", "orchestrator/*/*.o", "agents/*.o", "workloads/*.o"):
    objs += glob.glob(os.path.join(root, pat))
if not objs:
    sys.exit("layers: no object files under %s" % root)
defs, refs = {}, {}
for o in sorted(objs):
    name = os.path.relpath(o, root)[:-2]
    out = subprocess.run(["nm", o], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        f = line.split()
        if len(f) == 3 and f[1] in "TDBRC":
            defs.setdefault(f[2], name)
        elif len(f) == 2 and f[0] == "U":
            refs.setdefault(name, set()).add(f[1])
edges = {}
for a, syms in refs.items():
    for s in syms:
        b = defs.get(s)
        if b and b != a and a not in MAINS:
            edges.setdefault((a, b), []).append(s)


def sccs(nodes, arrows):
    """Tarjan's strongly connected components (iterative), each a sorted list, the list sorted."""
    succ = {}
    for a, b in arrows:
        succ.setdefault(a, []).append(b)
    index, low, on, stack, out, n = {}, {}, set(), [], [], [0]
    for v0 in sorted(nodes):
        if v0 in index:
            continue
        work = [(v0, iter(sorted(succ.get(v0, []))))]
        index[v0] = low[v0] = n[0]; n[0] += 1; stack.append(v0); on.add(v0)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = n[0]; n[0] += 1; stack.append(w); on.add(w)
                    work.append((w, iter(sorted(succ.get(w, [])))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop(); on.discard(w); comp.append(w)
                    if w == v:
                        break
                out.append(sorted(comp))
    return sorted(out)


def folder(name):
    """orchestrator/job/job -> "job"; None for files outside a folder of orchestrator/."""
    p = name.split("/")
    return p[1] if len(p) == 3 and p[0] == "orchestrator" else None


def map_order(path):
    """The folders of orchestrator/ from the top of the map down, from its code block."""
    order, inmap = [], False
    try:
        text = open(path).read()
    except OSError as e:
        sys.exit("layers: cannot read the map: %s" % e)
    m = re.search(r"^## The map.*?^```\n(.*?)^```", text, re.S | re.M)
    for line in (m.group(1) if m else "").splitlines():
        f = re.match(r" ([a-z]+)/ ", line)
        if f and f.group(1) not in ("lib", "agents", "workloads"):
            order.append(f.group(1))
    return order


bad = []
for (a, b), syms in sorted(edges.items()):
    why = None
    s = ",".join(sorted(syms)[:3])
    if not a.startswith("orchestrator/cmd/") and b.startswith("orchestrator/cmd/"):
        why = "library file %s calls the command file %s (%s)" % (a, b, s)
    elif a.startswith("lib/") and not b.startswith("lib/"):
        why = "lib/ file %s calls %s (%s)" % (a, b, s)
    elif a.split("/")[0] in ("agents", "workloads") and b.startswith("orchestrator/"):
        why = "%s calls the orchestrator's %s (%s)" % (a, b, s)
    if why:
        bad.append(why)

# one error channel: nothing reads the log back but lib/log.c itself (and the tests; issue 33
# item 6: the job's steps put their callees' reasons in their messages themselves)
LOG_READERS = {"lib/log"}
for a in sorted(refs):
    if "log_last_error" in refs[a] and a not in LOG_READERS:
        bad.append("%s reads the log back with log_last_error(); hand the message up with a "
                   "struct buf *err (error_to(), lib/buf.h) instead" % a)

# circles between files, of any length
files = {o for e in edges for o in e}
file_cycles = [c for c in sccs(files, edges) if len(c) > 1]
for c in file_cycles:
    inside = sorted((a, b) for (a, b) in edges if a in c and b in c)
    if len(c) == 2:
        head = "%s and %s call each other" % tuple(c)
    else:
        head = "a circle of %d files: %s" % (len(c), " ".join(c))
    bad.append(head + "".join("\n  %s -> %s (%s)" % (a, b, sorted(edges[(a, b)])[0])
                              for a, b in inside))

# the folders of orchestrator/: every call points down the map
order = map_order(mapfile)
fedges = {}
for (a, b), syms in edges.items():
    fa, fb = folder(a), folder(b)
    if fa and fb and fa != fb:
        fedges.setdefault((fa, fb), []).append("%s -> %s (%s)" % (a, b, sorted(syms)[0]))
used = {f for e in fedges for f in e} | {folder(o) for o in files if folder(o)}
for f in sorted(used):
    if f not in order:
        bad.append("folder orchestrator/%s/ is not in the map of %s" % (f, mapfile))
rank = {f: i for i, f in enumerate(order)}
back = sorted(e for e in fedges if e[0] in rank and e[1] in rank and rank[e[0]] > rank[e[1]])
for fa, fb in back:
    bad.append("orchestrator/%s/ calls orchestrator/%s/, which is above it in the map%s" %
               (fa, fb, "".join("\n  " + c for c in sorted(fedges[(fa, fb)])[:3])))
folder_cycles = [c for c in sccs(used, fedges) if len(c) > 1]
for c in folder_cycles:
    bad.append("a circle between folders: %s" % " ".join("orchestrator/%s/" % f for f in c))

for line in bad:
    print(line)
print("layers: %d files, %d calls between files checked" % (len(objs), len(edges)), file=sys.stderr)
if summary:
    print("layers: %d circles between files (%s), %d arrows up the map between folders, "
          "%d circles between folders" %
          (len(file_cycles), "; ".join(" ".join(c) for c in file_cycles) or "none", len(back),
           len(folder_cycles)), file=sys.stderr)
sys.exit(1 if bad else 0)
