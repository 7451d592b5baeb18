-- 0019_observation_runs.sql: measurement runs apart from observation runs (issue 34,
-- docs/observation.md). A probe (bpftrace) or a sampler (perf record) adds work per event, so a
-- run that carries one measures klab as well as the kernel: on the icount lab the demo's
-- monitors doubled a packet's path (3081 -> 6654 instructions) and, probing a function only the
-- baseline calls, made seed 003 look 6.8% faster instead of 0.7%. A run is now one or the other:
--   kind 'measure'  the headline and counter metrics, with only the monitors read at the window's
--                   edges (cpu, nic, perf-stat); the only runs a verdict, a claim check, a nightly
--                   point, a confirmation or a bisection step reads
--   kind 'observe'  after the measurement runs of a boot, the same workload with one observation
--                   monitor (observes = its name), or with none (observes = 'bare', which gives
--                   the measurement monitors' own cost): the explanation and each monitor's cost
-- Every run stored before this migration ran with the monitors its workload listed: they stay
-- 'measure', as they were read then.
ALTER TABLE runs ADD COLUMN kind TEXT NOT NULL DEFAULT 'measure' CHECK (kind IN ('measure', 'observe'));
ALTER TABLE runs ADD COLUMN observes TEXT;
