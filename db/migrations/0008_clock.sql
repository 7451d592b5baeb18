-- 0008_clock.sql: the clock that timed every machine, boot and run.
-- 'real': the machine's own time (hardware, or a qemu guest under plain TCG/KVM:
-- rates follow what else the host does). 'icount': a qemu guest run with
-- -icount shift=0,sleep=off, whose clock counts executed instructions (1 ns per
-- instruction), so its rates and CPU times are path lengths, not hardware speed
-- (docs/qemu-icount.md). Rows stored before this migration were all real time.
-- compare refuses to put runs of different clocks into one comparison.
ALTER TABLE machines ADD COLUMN clock TEXT NOT NULL DEFAULT 'real' CHECK (clock IN ('real', 'icount'));
ALTER TABLE boots ADD COLUMN clock TEXT NOT NULL DEFAULT 'real' CHECK (clock IN ('real', 'icount'));
ALTER TABLE runs ADD COLUMN clock TEXT NOT NULL DEFAULT 'real' CHECK (clock IN ('real', 'icount'));
