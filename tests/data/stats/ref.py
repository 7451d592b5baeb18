# tests/data/stats/ref.py: reference values from scipy for tests/data/stats/samples.txt (used by orch-stats-scipy).
# Prints per case: name t p df change_pct ci_lo ci_hi u p_mwu_exact p_mwu_asym p_mwu_perm
# (Welch on logs of B against A; U of A; exact = scipy method='exact' (no ties only, else nan);
# perm = exact conditional permutation p with mid-ranks by enumeration when small, else nan).
import itertools
import math
import sys

import numpy as np
from scipy import stats

for line in open(sys.argv[1]):
    if line.startswith('#') or not line.strip():
        continue
    name, a, b = [s.strip() for s in line.split('|')]
    a = [float(x) for x in a.split()]
    b = [float(x) for x in b.split()]
    la, lb = np.log(a), np.log(b)
    r = stats.ttest_ind(lb, la, equal_var=False)
    va, vb = np.var(la, ddof=1) / len(a), np.var(lb, ddof=1) / len(b)
    se = math.sqrt(va + vb)
    df = (va + vb) ** 2 / (va ** 2 / (len(a) - 1) + vb ** 2 / (len(b) - 1))
    d = lb.mean() - la.mean()
    q = stats.t.ppf(0.975, df)
    ties = len(set(a + b)) < len(a) + len(b)
    u = stats.mannwhitneyu(a, b, method='asymptotic')
    pex = float('nan')
    if not ties and len(a) + len(b) <= 40:
        pex = stats.mannwhitneyu(a, b, method='exact').pvalue
    pperm = float('nan')
    z = a + b
    if math.comb(len(z), len(a)) <= 50000:
        rk = stats.rankdata(z)
        ra = sum(rk[:len(a)])
        le = ge = tot = 0
        for c in itertools.combinations(range(len(z)), len(a)):
            s = sum(rk[list(c)])
            le += s <= ra + 1e-9
            ge += s >= ra - 1e-9
            tot += 1
        pperm = min(1.0, 2 * min(le, ge) / tot)
    print(name, repr(r.statistic), repr(r.pvalue), repr(df), repr(100 * math.expm1(d)),
          repr(100 * math.expm1(d - q * se)), repr(100 * math.expm1(d + q * se)),
          repr(float(u.statistic)), repr(pex), repr(u.pvalue), repr(pperm))
