-- 0023_run_ops.sql: a run sized by work (issue 35 item 3, docs/workloads.md "--ops"): the
-- operations its measured window held (ops) and the warm-up before it (warmup_ops), from the
-- agent's timing. Its duration_s is then the window as the guest clock timed it, not a planned
-- length. NULL: a timed run (every run before this migration).
ALTER TABLE runs ADD COLUMN ops BIGINT;
ALTER TABLE runs ADD COLUMN warmup_ops BIGINT;
