#!/usr/bin/env python3
# jv.py: print a value from a JSON document for the workload shell tests.
#   python3 jv.py FILE 'd["tps"]'      -> the value (JSON for lists/objects)
#   python3 jv.py FILE --check EXPR    -> exit 1 (printing EXPR and the document) unless EXPR is true
import json
import sys

with open(sys.argv[1]) as f:
    d = json.load(f)
if sys.argv[2] == "--check":
    for expr in sys.argv[3:]:
        if not eval(expr, {"d": d}):
            print("check failed: %s" % expr, file=sys.stderr)
            print(json.dumps(d, indent=1)[:4000], file=sys.stderr)
            sys.exit(1)
    sys.exit(0)
v = eval(sys.argv[2], {"d": d})
print(json.dumps(v) if isinstance(v, (dict, list)) else v)
