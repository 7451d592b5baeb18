#!/usr/bin/env python3
"""tests/data/layers/layers.py OBJDIR: the dependency rules of docs/architecture.md, checked on
the object files of a build (nm): who calls whom is what the linker sees.

Rules: commands (orchestrator/cmd/) call the library, never the other way; lib/ calls nothing of
orchestrator/, agents/ or workloads/; no two files call each other both ways. Prints one line per
broken rule (nothing when all hold) and exits 1 when there is any."""
import glob, os, subprocess, sys

root = sys.argv[1]
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
        if b and b != a:
            edges.setdefault((a, b), []).append(s)
bad = 0
for (a, b), syms in sorted(edges.items()):
    why = None
    if a in MAINS:
        continue
    if (b, a) in edges and a < b:
        why = "%s and %s call each other (%s / %s)" % (a, b, ",".join(sorted(syms)[:3]),
                                                        ",".join(sorted(edges[(b, a)])[:3]))
    elif not a.startswith("orchestrator/cmd/") and b.startswith("orchestrator/cmd/"):
        why = "library file %s calls the command file %s (%s)" % (a, b, ",".join(sorted(syms)[:3]))
    elif a.startswith("lib/") and not b.startswith("lib/"):
        why = "lib/ file %s calls %s (%s)" % (a, b, ",".join(sorted(syms)[:3]))
    elif a.split("/")[0] in ("agents", "workloads") and b.startswith("orchestrator/"):
        why = "%s calls the orchestrator's %s (%s)" % (a, b, ",".join(sorted(syms)[:3]))
    if why:
        print(why)
        bad = 1
print("layers: %d files, %d calls between files checked" % (len(objs), len(edges)), file=sys.stderr)
sys.exit(bad)
