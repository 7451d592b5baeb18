-- 0021_run_seed.sql: the seed a run's generator drew its source ports from (issue 35 item 2,
-- docs/workloads.md "Seeded ports"). A connected UDP socket the kernel binds gets a random
-- ephemeral port, so each run of a many-flow workload landed on other hash chains; with a
-- workload's `seed` the client binds ports drawn from it, and two runs with one seed on one
-- kernel take the same path. NULL: the kernel picked the ports (runs before this migration, and
-- workloads without a seed).
ALTER TABLE runs ADD COLUMN seed BIGINT;
