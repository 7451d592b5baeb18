# tests/data/stats/gen.py: deterministic SQL fixtures for the statistics shell tests (t06NN).
#
#   python3 gen.py job      > job.sql       one A/B job (job 1) with two workloads, per-CPU, profiles, claims
#   python3 gen.py values   > values.txt    the per-boot means of job 1 (workload metric side value...)
#   python3 gen.py nightly  > nightly.sql   30 nightly jobs (ids 100..) with a +5% step at night 20 on tps
#
# Values come from random.Random(seed) so the data are the same on every machine.
import random
import sys

BOOTS = 6
RUNS = 3          # per boot, seq 0 is the warm-up (given an absurd value: it must be discarded)
T0 = 1764633600   # 2025-12-02 00:00:00 UTC


def q(s):
    return "NULL" if s is None else "'" + str(s).replace("'", "''") + "'"


def job_values():
    """(workload, metric, unit, better, side) -> list of per-run values per boot."""
    r = random.Random(8)
    spec = {
        ("udp_rr_500", "tps", "1/s", "higher"): (2268000, 1.0494, 0.004),
        ("udp_rr_500", "latency_p99_us", "us", "lower"): (210, 1.0, 0.01),
        ("udp_rr_500", "cpu_us_per_op", "us", "lower"): (3.1, 0.85, 0.01),
        ("udp_rr_500", "cpu_busy_pct", "%", "none"): (61.0, 1.0, 0.01),
        ("udp_tx_64", "tx_pps", "1/s", "higher"): (80e6, 1.002, 0.02),
        ("udp_tx_64", "udp.SndbufErrors", "1/s", "lower"): (0.0, 1.0, 0.0),
    }
    out = {}
    for (wl, m, unit, better), (base, ratio, cov) in spec.items():
        for side in "AB":
            boots = []
            for b in range(BOOTS):
                level = base * (ratio if side == "B" else 1.0) * (1 + cov * r.gauss(0, 1))
                runs = [round(level * (1 + cov / 3 * r.gauss(0, 1)), 6) for _ in range(RUNS - 1)]
                boots.append(runs)
            out[(wl, m, unit, better, side)] = boots
    return out


def gen_job():
    vals = job_values()
    print("BEGIN;")
    print("INSERT INTO series (id, source, subject, content_sha256, created) VALUES "
          "(1, 'mbox:udp.mbox', 'udp: optimise write wakeups', 'sha-1', %d);" % T0)
    print("INSERT INTO expectations (series_id, patch_seq, metric, direction, lo_pct, hi_pct, before, after, unit, text) VALUES "
          "(1, 0, 'tps', 'higher', NULL, NULL, 2268, 2380, 'Krps', '2268 Krps -> 2380');")
    print("INSERT INTO expectations (series_id, patch_seq, metric, direction, lo_pct, hi_pct, before, after, unit, text) VALUES "
          "(1, 0, 'cpu_us_per_op', 'lower', 10, 20, NULL, NULL, NULL, 'saves between 10% and 20% of cycles');")
    print("INSERT INTO kernels (id, key, tree, variant, release, state, created) VALUES "
          "(7, 'k7', 'net-next', 'base', '6.1.0-klab-base', 'ok', %d);" % T0)
    print("INSERT INTO kernels (id, key, tree, variant, release, state, created) VALUES "
          "(8, 'k8', 'net-next', 'patched', '6.1.0-klab-patched', 'ok', %d);" % T0)
    print("INSERT INTO jobs (id, name, state, spec, tree, series_id, dut, peer, created) VALUES "
          "(1, 'udp-wakeups', 'done', '{\"warmup_runs\": 1, \"boots\": %d, \"runs\": %d}', 'net-next', 1, 'dut1', 'peer1', %d);"
          % (BOOTS, RUNS - 1, T0))
    print("INSERT INTO job_sides (job_id, side, label, kernel_id) VALUES (1, 'A', 'base', 7), (1, 'B', 'patched', 8);")
    run = 0
    boot = 0
    for b in range(BOOTS):
        for side in "AB":
            boot += 1
            kid = 7 if side == "A" else 8
            print("INSERT INTO boots (id, job_id, seq, side, kernel_id, machine) VALUES (%d, 1, %d, '%s', %d, 'dut1');"
                  % (boot, boot, side, kid))
            for wl in ("udp_rr_500", "udp_tx_64"):
                for seq in range(RUNS):
                    run += 1
                    t = T0 + run * 60
                    print("INSERT INTO runs (id, uid, job_id, boot_id, side, kernel_id, workload, seq, machine, peer, started, created) "
                          "VALUES (%d, 'j1-r%d', 1, %d, '%s', %d, '%s', %d, 'dut1', 'peer1', %d, %d);"
                          % (run, run, boot, side, kid, wl, seq, t, t))
                    for (w, m, unit, better, s), boots in vals.items():
                        if w != wl or s != side:
                            continue
                        v = 1.0 if seq == 0 else boots[b][seq - 1]
                        print("INSERT INTO metrics (run_id, name, value, unit, better) VALUES (%d, %s, %r, %s, %s);"
                              % (run, q(m), v, q(unit), q(better)))
                    if wl == "udp_rr_500":
                        soft = (12.0 if side == "A" else 18.5) if seq else 99
                        for cpu in (-1, 0, 1):
                            print("INSERT INTO cpu_stats (run_id, cpu, usr, nice, sys, iowait, irq, soft, steal, idle) "
                                  "VALUES (%d, %d, 5, 0, 20, 0, 1, %r, 0, %r);" % (run, cpu, soft, 74.0 - soft))
                        prof = [("queued_spin_lock_slowpath", 31.0 if side == "A" else 9.0),
                                ("udp_sendmsg", 7.0), ("__dev_queue_xmit", 4.0 if side == "A" else 6.5)]
                        for sym, pct in prof:
                            print("INSERT INTO profile_rows (run_id, comm, dso, symbol, percent) VALUES "
                                  "(%d, 'udp-rr', '[kernel.kallsyms]', '%s', %r);" % (run, sym, pct))
    # A run without a job and without a boot: counts as its own boot for kernel compares.
    print("INSERT INTO runs (id, uid, kernel_label, workload, seq, machine, started, created) VALUES "
          "(9000, 'imported-1', 'imported-k', 'udp_rr_500', 1, 'dut9', %d, %d);" % (T0 + 86400, T0 + 86400))
    print("INSERT INTO metrics (run_id, name, value, unit, better) VALUES (9000, 'tps', 1000, '1/s', 'higher');")
    print("COMMIT;")


def gen_values():
    for (wl, m, unit, better, side), boots in sorted(job_values().items()):
        print(wl, m, side, " ".join(repr(sum(b) / len(b)) for b in boots))


def gen_nightly():
    r = random.Random(20)
    print("BEGIN;")
    run = 100000
    for n in range(30):
        jid = 100 + n
        t = T0 + n * 86400
        print("INSERT INTO jobs (id, name, state, spec, tree, schedule, dut, peer, created) VALUES "
              "(%d, 'nightly', 'done', '{\"warmup_runs\": 1}', 'net-next', 'nightly', 'dut1', 'peer1', %d);" % (jid, t))
        # A second tree on other machines: flat, with one spike night.
        print("INSERT INTO jobs (id, name, state, spec, tree, schedule, dut, peer, created) VALUES "
              "(%d, 'nightly-stable', 'done', '{\"warmup_runs\": 1}', 'stable', 'nightly', 'dut2', 'peer2', %d);"
              % (jid + 1000, t))
        for j, tree_level in ((jid, 2268000 * (1.05 if n >= 20 else 1.0)),
                              (jid + 1000, 1500000 * (1.3 if n == 12 else 1.0))):
            for b in range(3):
                bid = j * 10 + b
                print("INSERT INTO boots (id, job_id, seq, side, machine) VALUES (%d, %d, %d, 'B', 'dut');" % (bid, j, b + 1))
                for seq in range(3):
                    run += 1
                    v = 5.0 if seq == 0 else tree_level * (1 + 0.004 * r.gauss(0, 1))
                    print("INSERT INTO runs (id, uid, job_id, boot_id, side, workload, seq, started, created) VALUES "
                          "(%d, 'n%d', %d, %d, 'B', 'udp_rr_500', %d, %d, %d);" % (run, run, j, bid, seq, t, t))
                    print("INSERT INTO metrics (run_id, name, value, unit, better) VALUES (%d, 'tps', %r, '1/s', 'higher');"
                          % (run, v))
    print("COMMIT;")


if __name__ == "__main__":
    {"job": gen_job, "values": gen_values, "nightly": gen_nightly}[sys.argv[1]]()
