-- tests/data/report/fixture.sql: a synthetic database for the report tests.
-- Load into a database klab created (klab --db FILE db init), then: sqlite3 FILE < fixture.sql
--
-- Job 1: base vs patched kernel (6.1.192-klab-base / -patched) of a series whose
-- subject, author and a machine's host carry hostile strings; 8 boots in ABBA order
-- (4 per side) x 3 runs x 2 workloads, per-second samples, per-CPU stats modelled on
-- seed 004's mpstat, the __dev_queue_xmit_ns histogram of seed 000 before (side A only:
-- bpftrace was unavailable on every B run, as in the demo; run_monitors says why), perf
-- profiles modelled on seed 004's before/after tables with folded call stacks, and
-- comparisons rows.
-- Job 2: an A/A job (the noise floor). Jobs 3-10: nightly runs of udp_rr_500 with a
-- change point at job 7. Every value is a function of ids: the fixture is deterministic.
BEGIN;

INSERT INTO machines (name, host, port, role, state, state_since, state_reason, last_kernel, last_seen) VALUES
 ('dut1', 'dut1<b>.lab.example', 22, 'dut', 'free', 1764650000, NULL, '6.1.192-klab-patched', 1764662000),
 ('peer1', '198.18.0.2', 22, 'peer', 'free', 1764650000, NULL, '6.1.192-klab-base', 1764662000),
 ('dut2', 'dut2.lab.example', 22, 'dut', 'broken', 1764655000, 'boot timeout after "kexec" & <hang>', NULL, 1764654000);

INSERT INTO series (id, source, source_url, subject, author, date, message_id, version, total, cover, content_sha256, created) VALUES
 (1, 'lore:20251016000000.1-edumazet@google.com',
  'https://lore.kernel.org/netdev/20251016000000.1-edumazet@google.com/',
  '[PATCH net-next 2/3] net: fix napi_consume_skb() with alien skbs <script>alert(1)</script> "quoted" ''single''',
  'Eric "E." Dumazet & Co <edumazet@google.com>', 'Thu, 16 Oct 2025 00:00:00 +0000',
  '<20251016000000.1-edumazet@google.com>', 1, 3, NULL,
  'fixture-series-0001', 1764640000);

INSERT INTO expectations (series_id, patch_seq, metric, direction, lo_pct, hi_pct, before, after, unit, text) VALUES
 (1, 2, 'tx_pps', 'higher', 40, 60, 80, 120, 'Mpps', '80 Mpps -> 120 Mpps.'),
 (1, 0, 'cpu_us_per_op', 'lower', 10, 20, NULL, NULL, NULL, 'This patch saves between 10% and 20% of cycles <b>&</b>');

INSERT INTO kernels (id, key, tree, commit_id, variant, series_id, config_sha256, compiler, release, build_id, state, created) VALUES
 (1, 'fixture-kernel-base', 'net-next', 'a1b2c3d4e5f60718293a4b5c6d7e8f9012345678', 'base', NULL, 'cfg1', 'gcc 12.2.0',
  '6.1.192-klab-base', 'b1d0000000000000000000000000000000000001', 'ok', 1764640100),
 (2, 'fixture-kernel-patched', 'net-next', 'a1b2c3d4e5f60718293a4b5c6d7e8f9012345678', 'patched', 1, 'cfg1', 'gcc 12.2.0',
  '6.1.192-klab-patched', 'b1d0000000000000000000000000000000000002', 'ok', 1764640200);

INSERT INTO jobs (id, name, state, spec, tree, series_id, schedule, order_seed, dut, peer, created, started, finished) VALUES
 (1, 'napi-alien-skbs', 'done', '{}', 'net-next', 1, NULL, 20251016, 'dut1', 'peer1', 1764650000, 1764650100, 1764662000),
 (2, 'aa-noise', 'done', '{}', 'net-next', NULL, NULL, 7, 'dut1', 'peer1', 1764600000, 1764600100, 1764610000);

INSERT INTO job_sides (job_id, side, label, kernel_id, profile) VALUES
 (1, 'A', '6.1.192-klab-base', 1, 'xps-auto'),
 (1, 'B', '6.1.192-klab-patched', 2, 'xps-auto'),
 (2, 'A', '6.1.192-klab-base', 1, 'xps-auto'),
 (2, 'B', '6.1.192-klab-base', 1, 'xps-auto');

-- ABBA ABBA: boot seq -> side
WITH b(seq, side) AS (VALUES (1,'A'),(2,'B'),(3,'B'),(4,'A'),(5,'A'),(6,'B'),(7,'B'),(8,'A'))
INSERT INTO boots (id, job_id, seq, side, kernel_id, machine, release, build_id, cmdline, sysinfo, started)
SELECT seq, 1, seq, side, CASE side WHEN 'A' THEN 1 ELSE 2 END, 'dut1',
       CASE side WHEN 'A' THEN '6.1.192-klab-base' ELSE '6.1.192-klab-patched' END,
       CASE side WHEN 'A' THEN 'b1d0000000000000000000000000000000000001' ELSE 'b1d0000000000000000000000000000000000002' END,
       'BOOT_IMAGE=/vmlinuz root=/dev/vda1 ro console=ttyS0 mitigations=off',
       '{"sysinfo_version":1,"host":"dut1<b>","kernel":{"release":"6.1.192","cmdline":"root=/dev/vda1 ro"},' ||
       '"nics":{"lo":{"driver":null,"tx_queues":1,"rx_queues":1},' ||
       '"eth1":{"driver":"idpf","speed_mbps":200000,"mtu":1500,"tx_queues":32,"rx_queues":32}}}',
       1764650100 + seq * 1000
FROM b;

-- runs: id = (boot-1)*6 + workload*3 + n
WITH b(seq, side) AS (SELECT seq, side FROM boots WHERE job_id = 1),
 w(wi, wl) AS (VALUES (0, 'udp_tx_dummy_iouring'), (1, 'udp_rr_500')),
 n(k) AS (VALUES (1), (2), (3))
INSERT INTO runs (id, uid, job_id, boot_id, side, kernel_id, kernel_label, workload, seq, machine, peer, profile,
                  started, duration_s, warmup_s, status, result, created)
SELECT (b.seq - 1) * 6 + w.wi * 3 + n.k, format('j1-b%s-%s-r%s', b.seq, w.wl, n.k), 1, b.seq, b.side,
       CASE b.side WHEN 'A' THEN 1 ELSE 2 END,
       CASE b.side WHEN 'A' THEN '6.1.192-klab-base' ELSE '6.1.192-klab-patched' END,
       w.wl, n.k, 'dut1', 'peer1', 'xps-auto', 1764650200 + b.seq * 1000 + w.wi * 100 + n.k * 20, 10, 2, 'ok',
       '{"schema_version":1,"spec":{"nic":"eth1"}}', 1764650200 + b.seq * 1000
FROM b, w, n;

-- noise in [-1, 1] from the run id
CREATE TEMP VIEW noise AS
SELECT id, workload, side, ((id * 7919) % 17 - 8) / 8.0 AS f FROM runs WHERE job_id = 1;

INSERT INTO metrics (run_id, name, value, unit, better)
SELECT id, 'tx_pps', CASE side WHEN 'A' THEN 1600000 ELSE 2380000 END * (1 + 0.006 * f), '1/s', 'higher'
FROM noise WHERE workload = 'udp_tx_dummy_iouring'
UNION ALL
SELECT id, 'cpu_us_per_op', CASE side WHEN 'A' THEN 1.25 ELSE 0.85 END * (1 + 0.01 * f), 'us', 'lower'
FROM noise WHERE workload = 'udp_tx_dummy_iouring'
UNION ALL
SELECT id, 'tps', CASE side WHEN 'A' THEN 226800 ELSE 238000 END * (1 + 0.008 * f), '1/s', 'higher'
FROM noise WHERE workload = 'udp_rr_500'
UNION ALL
SELECT id, 'cpu_us_per_op', CASE side WHEN 'A' THEN 8.8 ELSE 7.6 END * (1 + 0.012 * f), 'us', 'lower'
FROM noise WHERE workload = 'udp_rr_500'
UNION ALL
SELECT id, 'latency_p99_us', CASE side WHEN 'A' THEN 41.0 ELSE 40.6 END * (1 + 0.02 * f), 'us', 'lower'
FROM noise WHERE workload = 'udp_rr_500';

-- per-second samples of the headline metric, 10 s per run
WITH t(s) AS (VALUES (1),(2),(3),(4),(5),(6),(7),(8),(9),(10))
INSERT INTO samples (run_id, metric, t, value)
SELECT m.run_id, m.name, t.s, m.value * (1 + 0.01 * (((m.run_id * 31 + t.s * 17) % 9) - 4) / 4.0)
FROM metrics m, t WHERE m.name IN ('tps', 'tx_pps');

-- per-CPU time, as seed 004's mpstat: before the softirq CPU is saturated, after it idles half the time
WITH c(wl, side, cpu, usr, sys, irq, soft, idle) AS (VALUES
 ('udp_tx_dummy_iouring', 'A', 0, 0.0, 0.0, 0.0, 98.0, 2.0),
 ('udp_tx_dummy_iouring', 'A', 1, 11.0, 72.0, 1.0, 9.0, 7.0),
 ('udp_tx_dummy_iouring', 'A', 2, 4.0, 21.0, 0.5, 4.5, 70.0),
 ('udp_tx_dummy_iouring', 'A', 3, 1.0, 2.0, 0.0, 0.0, 97.0),
 ('udp_tx_dummy_iouring', 'B', 0, 0.0, 0.0, 0.0, 51.49, 48.51),
 ('udp_tx_dummy_iouring', 'B', 1, 13.0, 75.0, 1.0, 6.0, 5.0),
 ('udp_tx_dummy_iouring', 'B', 2, 6.0, 30.0, 0.5, 3.5, 60.0),
 ('udp_tx_dummy_iouring', 'B', 3, 1.0, 2.0, 0.0, 0.0, 97.0),
 ('udp_rr_500', 'A', 0, 8.0, 30.0, 2.0, 40.0, 20.0),
 ('udp_rr_500', 'A', 1, 9.0, 31.0, 2.0, 38.0, 20.0),
 ('udp_rr_500', 'A', 2, 7.0, 28.0, 1.0, 35.0, 29.0),
 ('udp_rr_500', 'A', 3, 6.0, 25.0, 1.0, 30.0, 38.0),
 ('udp_rr_500', 'B', 0, 8.0, 27.0, 2.0, 33.0, 30.0),
 ('udp_rr_500', 'B', 1, 9.0, 28.0, 2.0, 32.0, 29.0),
 ('udp_rr_500', 'B', 2, 7.0, 26.0, 1.0, 30.0, 36.0),
 ('udp_rr_500', 'B', 3, 6.0, 24.0, 1.0, 27.0, 42.0))
INSERT INTO cpu_stats (run_id, cpu, usr, nice, sys, iowait, irq, soft, steal, idle)
SELECT n.id, c.cpu, c.usr, 0, c.sys, 0, c.irq, c.soft, 0, c.idle
FROM noise n JOIN c ON c.wl = n.workload AND c.side = n.side;
INSERT INTO cpu_stats (run_id, cpu, usr, nice, sys, iowait, irq, soft, steal, idle)
SELECT run_id, -1, AVG(usr), 0, AVG(sys), 0, AVG(irq), AVG(soft), 0, AVG(idle) FROM cpu_stats GROUP BY run_id;

-- seed 000's bpftrace histogram (totals over the 12 runs of a side), and an RTT histogram
WITH h(name, side, lo, hi, total) AS (VALUES
 ('__dev_queue_xmit_ns', 'A', 128, 256, 6), ('__dev_queue_xmit_ns', 'A', 256, 512, 116283),
 ('__dev_queue_xmit_ns', 'A', 512, 1024, 1888205), ('__dev_queue_xmit_ns', 'A', 1024, 2048, 8106167),
 ('__dev_queue_xmit_ns', 'A', 2048, 4096, 8699293), ('__dev_queue_xmit_ns', 'A', 4096, 8192, 2600676),
 ('__dev_queue_xmit_ns', 'A', 8192, 16384, 721688), ('__dev_queue_xmit_ns', 'A', 16384, 32768, 122995),
 ('__dev_queue_xmit_ns', 'A', 32768, 65536, 10639), ('__dev_queue_xmit_ns', 'A', 65536, 131072, 119),
 ('__dev_queue_xmit_ns', 'A', 131072, 262144, 1),
 ('__dev_queue_xmit_ns', 'B', 128, 256, 3), ('__dev_queue_xmit_ns', 'B', 256, 512, 651112),
 ('__dev_queue_xmit_ns', 'B', 512, 1024, 8109938), ('__dev_queue_xmit_ns', 'B', 1024, 2048, 16081031),
 ('__dev_queue_xmit_ns', 'B', 2048, 4096, 2411692), ('__dev_queue_xmit_ns', 'B', 4096, 8192, 98994),
 ('__dev_queue_xmit_ns', 'B', 8192, 16384, 1536), ('__dev_queue_xmit_ns', 'B', 16384, 32768, 587),
 ('__dev_queue_xmit_ns', 'B', 32768, 65536, 2),
 ('rtt_us', 'A', 8, 16, 1200), ('rtt_us', 'A', 16, 32, 9600), ('rtt_us', 'A', 32, 64, 3600), ('rtt_us', 'A', 64, 128, 240),
 ('rtt_us', 'B', 8, 16, 1800), ('rtt_us', 'B', 16, 32, 10200), ('rtt_us', 'B', 32, 64, 2640), ('rtt_us', 'B', 64, 128, 120))
INSERT INTO histograms (run_id, name, lo, hi, count)
SELECT n.id, h.name, h.lo, h.hi, (h.total + n.id % 12) / 12
FROM noise n JOIN h ON h.side = n.side WHERE n.workload = 'udp_rr_500'
 -- as in the demo: bpftrace could not attach on the patched kernel, so B has no __dev_queue_xmit_ns
 AND NOT (h.name = '__dev_queue_xmit_ns' AND n.side = 'B');

-- what each run's monitors said: all ok but bpftrace on every B run of udp_rr_500, and
-- perf-stat on one A run of udp_tx_dummy_iouring (the reason as the agent words it)
INSERT INTO run_monitors (run_id, monitor, status, reason)
SELECT n.id, m.name,
       CASE WHEN m.name = 'bpftrace' AND n.side = 'B' THEN 'unavailable'
            WHEN m.name = 'perf-stat' AND n.id = 1 THEN 'unavailable' ELSE 'ok' END,
       CASE WHEN m.name = 'bpftrace' AND n.side = 'B'
            THEN 'bpftrace: ERROR: kprobe:__dev_queue_xmit: __dev_queue_xmit is not traceable (either non-existing, inlined, or marked as "notrace")'
            WHEN m.name = 'perf-stat' AND n.id = 1 THEN 'perf stat: <not counted> task-clock & co (exit status 1)' END
FROM noise n, (SELECT 'cpu' AS name UNION ALL SELECT 'perf-stat' UNION ALL SELECT 'perf-profile' UNION ALL SELECT 'nic'
               UNION ALL SELECT 'bpftrace') m
WHERE m.name != 'bpftrace' OR n.workload = 'udp_rr_500';

-- seed 004's perf profiles, before (A) and after (B), with a little noise per run
WITH p(side, comm, symbol, pct) AS (VALUES
 ('A', 'ksoftirqd/0', 'queued_spin_lock_slowpath', 31.01), ('A', 'swapper', 'queued_spin_lock_slowpath', 12.45),
 ('A', 'ksoftirqd/0', '__slab_free', 5.60), ('A', 'ksoftirqd/0', 'idpf_tx_clean_buf_ring', 3.31),
 ('A', 'ksoftirqd/0', 'idpf_tx_splitq_clean_all', 3.27), ('A', 'ksoftirqd/0', 'idpf_tx_splitq_start', 2.95),
 ('A', 'ksoftirqd/0', 'fq_dequeue', 2.52), ('A', 'ksoftirqd/0', 'read_tsc', 2.32),
 ('A', 'ksoftirqd/0', 'build_detached_freelist', 2.25), ('A', 'ksoftirqd/0', 'kmem_cache_free', 2.15),
 ('A', 'swapper', '__slab_free', 2.11), ('A', 'ksoftirqd/0', 'idpf_tx_splitq_clean_hdr', 2.01),
 ('A', 'ksoftirqd/0', 'sock_wfree', 1.52), ('A', 'ksoftirqd/0', 'dma_unmap_page_attrs', 1.15),
 ('A', 'ksoftirqd/0', 'napi_consume_skb', 0.81), ('A', 'ksoftirqd/0', 'skb_release_head_state', 0.58),
 ('A', 'ksoftirqd/0', 'tpl<script>alert(1)</script>&"x"', 1.40),
 ('B', 'swapper', 'idpf_tx_splitq_clean_hdr', 19.10), ('B', 'swapper', 'idpf_tx_clean_buf_ring', 13.86),
 ('B', 'swapper', 'skb_attempt_defer_free', 10.80), ('B', 'swapper', 'idpf_tx_splitq_clean_all', 10.57),
 ('B', 'swapper', 'queued_spin_lock_slowpath', 7.18), ('B', 'swapper', 'sock_wfree', 6.69),
 ('B', 'swapper', 'dma_unmap_page_attrs', 5.55), ('B', 'swapper', 'fq_dequeue', 3.10),
 ('B', 'swapper', 'skb_release_head_state', 3.00), ('B', 'swapper', 'read_tsc', 2.73),
 ('B', 'swapper', 'idpf_tx_splitq_start', 2.48), ('B', 'swapper', 'napi_consume_skb', 1.13),
 ('B', 'swapper', 'idpf_vport_splitq_napi_poll', 0.93), ('B', 'swapper', 'tpl<script>alert(1)</script>&"x"', 1.35))
INSERT INTO profile_rows (run_id, comm, dso, symbol, percent)
SELECT n.id, p.comm, '[kernel.kallsyms]', p.symbol, round(p.pct * (1 + 0.03 * n.f), 2)
FROM noise n JOIN p ON p.side = n.side WHERE n.workload = 'udp_tx_dummy_iouring';

-- folded call stacks of the same profiles (perf record -g): before, the softirq CPU spins on the
-- slab lock freeing alien skbs; after, the TX completion path defers the free. Counts per run
-- are the share in per mille with the run's noise; one frame name is hostile.
WITH st(side, stack, pm) AS (VALUES
 ('A', 'ksoftirqd/0;ret_from_fork;kthread;smpboot_thread_fn;run_ksoftirqd;handle_softirqs;net_rx_action;__napi_poll;idpf_vport_splitq_napi_poll;idpf_tx_splitq_clean_all;napi_consume_skb;skb_release_data;kmem_cache_free;__slab_free;queued_spin_lock_slowpath', 310),
 ('A', 'swapper;secondary_startup_64;start_secondary;cpu_startup_entry;do_idle;handle_softirqs;net_rx_action;__napi_poll;idpf_vport_splitq_napi_poll;idpf_tx_splitq_clean_all;napi_consume_skb;skb_release_data;kmem_cache_free;__slab_free;queued_spin_lock_slowpath', 125),
 ('A', 'ksoftirqd/0;ret_from_fork;kthread;smpboot_thread_fn;run_ksoftirqd;handle_softirqs;net_rx_action;__napi_poll;idpf_vport_splitq_napi_poll;idpf_tx_splitq_clean_all;napi_consume_skb;skb_release_data;kmem_cache_free;__slab_free', 56),
 ('A', 'ksoftirqd/0;ret_from_fork;kthread;smpboot_thread_fn;run_ksoftirqd;handle_softirqs;net_rx_action;__napi_poll;idpf_vport_splitq_napi_poll;idpf_tx_splitq_clean_all;idpf_tx_clean_buf_ring', 33),
 ('A', 'ksoftirqd/0;ret_from_fork;kthread;smpboot_thread_fn;run_ksoftirqd;handle_softirqs;net_rx_action;__napi_poll;idpf_vport_splitq_napi_poll;idpf_tx_splitq_clean_all;idpf_tx_splitq_clean_hdr', 20),
 ('A', 'ksoftirqd/0;ret_from_fork;kthread;smpboot_thread_fn;run_ksoftirqd;handle_softirqs;net_tx_action;fq_dequeue', 25),
 ('A', 'klab-agent;[libc.so.6];io_uring_enter;__x64_sys_io_uring_enter;io_submit_sqes;io_sendmsg;udp_sendmsg;ip_output;__dev_queue_xmit;idpf_tx_splitq_start', 30),
 ('A', 'klab-agent;[libc.so.6];io_uring_enter;__x64_sys_io_uring_enter;io_submit_sqes;io_sendmsg;udp_sendmsg;sock_wfree', 15),
 ('A', 'klab-agent;[libc.so.6];io_uring_enter;__x64_sys_io_uring_enter;io_submit_sqes;io_sendmsg;tpl<script>alert(1)</script>&"x"', 14),
 ('A', 'swapper;secondary_startup_64;start_secondary;cpu_startup_entry;do_idle;default_idle_call;read_tsc', 23),
 ('B', 'swapper;secondary_startup_64;start_secondary;cpu_startup_entry;do_idle;handle_softirqs;net_rx_action;__napi_poll;idpf_vport_splitq_napi_poll;idpf_tx_splitq_clean_all;idpf_tx_splitq_clean_hdr', 191),
 ('B', 'swapper;secondary_startup_64;start_secondary;cpu_startup_entry;do_idle;handle_softirqs;net_rx_action;__napi_poll;idpf_vport_splitq_napi_poll;idpf_tx_splitq_clean_all;idpf_tx_clean_buf_ring', 139),
 ('B', 'swapper;secondary_startup_64;start_secondary;cpu_startup_entry;do_idle;handle_softirqs;net_rx_action;__napi_poll;idpf_vport_splitq_napi_poll;idpf_tx_splitq_clean_all;napi_consume_skb;skb_attempt_defer_free', 108),
 ('B', 'swapper;secondary_startup_64;start_secondary;cpu_startup_entry;do_idle;handle_softirqs;net_rx_action;__napi_poll;idpf_vport_splitq_napi_poll;idpf_tx_splitq_clean_all', 106),
 ('B', 'swapper;secondary_startup_64;start_secondary;cpu_startup_entry;do_idle;handle_softirqs;net_rx_action;__napi_poll;idpf_vport_splitq_napi_poll;idpf_tx_splitq_clean_all;napi_consume_skb;skb_release_data;kmem_cache_free;__slab_free;queued_spin_lock_slowpath', 72),
 ('B', 'swapper;secondary_startup_64;start_secondary;cpu_startup_entry;do_idle;handle_softirqs;net_tx_action;fq_dequeue', 31),
 ('B', 'klab-agent;[libc.so.6];io_uring_enter;__x64_sys_io_uring_enter;io_submit_sqes;io_sendmsg;udp_sendmsg;ip_output;__dev_queue_xmit;idpf_tx_splitq_start', 25),
 ('B', 'klab-agent;[libc.so.6];io_uring_enter;__x64_sys_io_uring_enter;io_submit_sqes;io_sendmsg;udp_sendmsg;sock_wfree', 67),
 ('B', 'klab-agent;[libc.so.6];io_uring_enter;__x64_sys_io_uring_enter;io_submit_sqes;io_sendmsg;tpl<script>alert(1)</script>&"x"', 14),
 ('B', 'swapper;secondary_startup_64;start_secondary;cpu_startup_entry;do_idle;default_idle_call;read_tsc', 27),
 ('B', 'swapper;secondary_startup_64;start_secondary;cpu_startup_entry;do_idle;dma_unmap_page_attrs', 55))
INSERT INTO profile_stacks (run_id, stack, count)
SELECT n.id, st.stack, CAST(round(st.pm * (1 + 0.03 * n.f)) AS INTEGER)
FROM noise n JOIN st ON st.side = n.side WHERE n.workload = 'udp_tx_dummy_iouring';

INSERT INTO comparisons (job_id, label_a, label_b, workload, metric, unit, better, n_a, n_b, mean_a, mean_b, cov_a, cov_b,
                         change_pct, ci_lo, ci_hi, p_welch, p_holm, p_mwu, hl_ratio, mde_pct, threshold_pct, verdict,
                         extra_boots, claim, created) VALUES
 (1, '6.1.192-klab-base', '6.1.192-klab-patched', 'udp_tx_dummy_iouring', 'tx_pps', '1/s', 'higher', 4, 4,
  1600000, 2380000, 0.81, 0.62, 48.75, 46.91, 50.62, 1.2e-9, 4.8e-9, 0.0286, 1.4875, 1.93, 1, 'CHANGED', 0, 'consistent', 1764662000),
 (1, '6.1.192-klab-base', '6.1.192-klab-patched', 'udp_tx_dummy_iouring', 'cpu_us_per_op', 'us', 'lower', 4, 4,
  1.25, 0.85, 1.02, 0.97, -32.00, -34.12, -29.81, 3.1e-8, 9.3e-8, 0.0286, 0.68, 2.41, 1, 'CHANGED', 0, NULL, 1764662000),
 (1, '6.1.192-klab-base', '6.1.192-klab-patched', 'udp_rr_500', 'tps', '1/s', 'higher', 4, 4,
  226800, 238000, 0.84, 0.79, 4.94, 3.12, 6.79, 0.00041, 0.00082, 0.0286, 1.0491, 2.05, 1, 'CHANGED', 0, NULL, 1764662000),
 (1, '6.1.192-klab-base', '6.1.192-klab-patched', 'udp_rr_500', 'cpu_us_per_op', 'us', 'lower', 4, 4,
  8.80, 7.60, 1.21, 1.18, -13.64, -15.98, -11.23, 2.0e-6, 8.0e-6, 0.0286, 0.864, 2.6, 1, 'CHANGED', 0, 'consistent', 1764662000),
 (1, '6.1.192-klab-base', '6.1.192-klab-patched', 'udp_rr_500', 'latency_p99_us', 'us', 'lower', 4, 4,
  41.0, 40.6, 2.05, 1.98, -0.98, -2.91, 0.99, 0.28, 0.28, 0.343, 0.99, 4.1, 5, 'EQUIVALENT', 0, NULL, 1764662000),
 -- a secondary counter with a long bpftrace map name, as a demo job has dozens (outside the Holm family)
 (1, '6.1.192-klab-base', '6.1.192-klab-patched', 'udp_rr_500',
  'bpf.@xmit_latency_ns_by_queue[idpf_tx_splitq_start/eth1-TxRx-31]', '', 'none', 4, 4,
  1520, 1498, 2.1, 2.4, -1.45, -4.2, 1.4, 0.31, NULL, 0.343, 0.985, 3.5, 1, 'INCONCLUSIVE', 9, NULL, 1764662000),
 (2, '6.1.192-klab-base', '6.1.192-klab-base', 'udp_rr_500', 'tps', '1/s', 'higher', 4, 4,
  226700, 227150, 0.82, 0.86, 0.20, -1.10, 1.51, 0.71, 0.71, 0.686, 1.002, 2.1, 1, 'EQUIVALENT', 0, NULL, 1764610000);

-- nightly jobs 3..10: udp_rr_500 tps of the tree tip, a step up at job 7
WITH k(j, v) AS (VALUES (3, 225000), (4, 226000), (5, 225500), (6, 226500), (7, 238000), (8, 237500), (9, 238500), (10, 239000))
INSERT INTO jobs (id, name, state, spec, tree, schedule, order_seed, dut, peer, created, started, finished)
SELECT j, 'nightly', 'done', '{}', 'net-next', 'nightly', j, 'dut1', 'peer1',
       1763000000 + j * 86400, 1763000000 + j * 86400 + 60, 1763000000 + j * 86400 + 3600 FROM k;
INSERT INTO job_sides (job_id, side, label, kernel_id, profile)
SELECT id, 'A', format('net-next-%s', id), 1, 'xps-auto' FROM jobs WHERE schedule = 'nightly';
WITH k(j, v) AS (VALUES (3, 225000), (4, 226000), (5, 225500), (6, 226500), (7, 238000), (8, 237500), (9, 238500), (10, 239000)),
 n(r) AS (VALUES (1), (2))
INSERT INTO runs (id, uid, job_id, side, kernel_id, workload, seq, machine, peer, status, created)
SELECT 100 + k.j * 2 + n.r, format('nightly-%s-%s', k.j, n.r), k.j, 'A', 1, 'udp_rr_500', n.r, 'dut1', 'peer1', 'ok',
       1763000000 + k.j * 86400 FROM k, n;
WITH k(j, v) AS (VALUES (3, 225000), (4, 226000), (5, 225500), (6, 226500), (7, 238000), (8, 237500), (9, 238500), (10, 239000))
INSERT INTO metrics (run_id, name, value, unit, better)
SELECT r.id, 'tps', k.v + (r.seq - 1.5) * 400, '1/s', 'higher' FROM runs r JOIN k ON k.j = r.job_id;

INSERT INTO changepoints (tree, machines, workload, metric, job_id, idx, mean_before, mean_after, change_pct, p, created)
VALUES ('net-next', 'dut1+peer1', 'udp_rr_500', 'tps', 7, 4, 225750, 238250, 5.54, 0.0012, 1763700000);

-- Job 11: hostile strings in every other field a page shows (names, labels, tree,
-- profile, workload, metric, unit, histogram, comm, dso, NIC, cmdline, error, claim).
INSERT INTO machines (name, host, port, role, state, state_reason) VALUES
 ('m<script>alert(1)</script>', 'h"onload="alert(1)', 22, 'dut', 'drained', '<img src=x onerror=alert(1)>');
INSERT INTO kernels (id, key, tree, commit_id, variant, release, state, created) VALUES
 (11, 'hostile-a', 't<script>alert(1)</script>', 'c"><script>alert(1)</script>', 'v<script>', 'r<script>alert(1)</script>', 'ok', 1764670000),
 (12, 'hostile-b', 't<script>alert(1)</script>', 'c''b', 'v''', 'r2<script>alert(1)</script>', 'ok', 1764670000);
INSERT INTO jobs (id, name, state, spec, tree, schedule, order_seed, dut, peer, error, created, started, finished) VALUES
 (11, 'n<script>alert(1)</script>', 'failed', '{}', 't<script>alert(1)</script>', NULL, 1,
  'm<script>alert(1)</script>', 'p"<script>alert(1)</script>', 'e<script>alert(1)</script> & "q"', 1764670000, 1764670001, 1764670100);
INSERT INTO job_sides (job_id, side, label, kernel_id, profile) VALUES
 (11, 'A', 'la<script>alert(1)</script>', 11, 'pa<script>alert(1)</script>'),
 (11, 'B', 'lb"''<script>alert(1)</script>', 12, 'pb<script>alert(1)</script>');
INSERT INTO boots (id, job_id, seq, side, kernel_id, machine, cmdline, sysinfo, started) VALUES
 (111, 11, 1, 'A', 11, 'm<script>alert(1)</script>', 'c<script>alert(1)</script>',
  '{"nics":{"n<script>":{"driver":"d<script>alert(1)</script>","tx_queues":1,"rx_queues":1}}}', 1764670010),
 (112, 11, 2, 'B', 12, 'm<script>alert(1)</script>', 'c2<script>alert(1)</script>', NULL, 1764670020);
WITH n(k, side, boot) AS (VALUES (1, 'A', 111), (2, 'A', 111), (3, 'B', 112), (4, 'B', 112))
INSERT INTO runs (id, uid, job_id, boot_id, side, kernel_id, workload, seq, machine, status, result, created)
SELECT 1100 + k, format('hostile-%s', k), 11, boot, side, CASE side WHEN 'A' THEN 11 ELSE 12 END,
       'w<script>alert(1)</script>', k, 'm<script>alert(1)</script>', 'ok',
       '{"spec":{"nic":"n<script>"}}', 1764670030 FROM n;
INSERT INTO metrics (run_id, name, value, unit, better)
SELECT id, 'tps', 1000 + id, 'u<script>', 'higher' FROM runs WHERE job_id = 11
UNION ALL SELECT id, 'x<script>alert(1)</script>', 5 + id % 2, 'u"''<b>', 'lower' FROM runs WHERE job_id = 11;
INSERT INTO samples (run_id, metric, t, value) SELECT id, 'tps', 1, 1000 FROM runs WHERE job_id = 11;
INSERT INTO cpu_stats (run_id, cpu, usr, sys, irq, soft, idle) SELECT id, 0, 10, 10, 0, 10, 70 FROM runs WHERE job_id = 11;
INSERT INTO histograms (run_id, name, lo, hi, count) SELECT id, 'h<script>alert(1)</script>', 1, 2, 5 FROM runs WHERE job_id = 11;
INSERT INTO profile_rows (run_id, comm, dso, symbol, percent)
SELECT id, 'c<script>', 'd<script>alert(1)</script>', 's"''<script>alert(1)</script>', 10 FROM runs WHERE job_id = 11;
INSERT INTO run_monitors (run_id, monitor, status, reason)
SELECT id, 'perf-profile', CASE side WHEN 'A' THEN 'ok' ELSE 'unavailable' END,
       CASE side WHEN 'B' THEN 'perf record: <script>alert(1)</script> & "x"' END FROM runs WHERE job_id = 11;
INSERT INTO profile_stacks (run_id, stack, count)
SELECT id, 'c<script>;f"''<script>alert(1)</script>;leaf&amp;', 10 FROM runs WHERE job_id = 11
UNION ALL SELECT id, 'c<script>;g<b>', 5 + id % 2 FROM runs WHERE job_id = 11;
INSERT INTO comparisons (job_id, label_a, label_b, workload, metric, unit, better, n_a, n_b, mean_a, mean_b, cov_a, cov_b,
                         change_pct, ci_lo, ci_hi, p_welch, p_holm, p_mwu, verdict, claim, created) VALUES
 (11, 'la<script>alert(1)</script>', 'lb"''<script>alert(1)</script>', 'w<script>alert(1)</script>', 'tps', 'u<script>', 'higher',
  1, 1, 1001.5, 1003.5, 0, 0, 0.2, -1, 1.4, 0.5, 0.5, 0.6, 'INCONCLUSIVE', 'c<script>alert(1)</script>', 1764670100),
 (11, 'la<script>alert(1)</script>', 'lb"''<script>alert(1)</script>', 'w<script>alert(1)</script>',
  'x<script>alert(1)</script>', 'u"''<b>', 'lower', 1, 1, 5.5, 5.5, 0, 0, 0, -1, 1, 1, 1, 1, 'EQUIVALENT', NULL, 1764670100);
INSERT INTO changepoints (tree, machines, workload, metric, job_id, idx, change_pct, created) VALUES
 ('t<script>alert(1)</script>', 'm<script>+p', 'w<script>alert(1)</script>', 'x<script>alert(1)</script>', 11, 1, 3, 1764670200);

COMMIT;
