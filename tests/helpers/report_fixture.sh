#!/bin/bash
# Builds a vmhost.db of NVMS VMs recorded every 10 s for DAYS days, thinned as the recorder thins
# it (raw for the last 2 days, 5-minute means before that; docs/record.md), for the report at
# scale (tests/e2e/report_scale.sh). Rows are written with SQLite's shell: recording 30 days of
# 100 VMs through the store would take as long as the store's downsampling of 26 million rows.
# The schema is the store's own: growth_fixture creates it, and its rows are deleted.
#   web-005, db-001, ci-002, cache-003, batch-004 ...: guest RAM 1, 2, 4 or 8 GiB; every 17th VM's
#   overhead grows 40 MiB/hour over the last day (flagged);
#   CPU and exits follow a day's cycle; KSM merges part of each guest's RAM;
#   one sharing map an hour before the end (vmhost share at 1/64): every pair shares 2% of the
#   smaller guest (a base image: a cell for every pair, the largest map), VMs of one kind 30%.
# Usage: report_fixture.sh GROWTH_FIXTURE FILE.db [NVMS [DAYS]]
set -eu
FIXTURE=$1 DB=$2 NVMS=${3:-100} DAYS=${4:-30}
rm -f "$DB"
"$FIXTURE" "$DB" >/dev/null
T0=1767225600000                 # 2026-01-01 00:00:00 UTC, in ms
END=$((T0 + DAYS * 86400000))
RAW_FROM=$((END - 2 * 86400000)) # the recorder's raw_seconds: 2 days
[ "$RAW_FROM" -lt "$T0" ] && RAW_FROM=$T0
sqlite3 "$DB" >/dev/null <<SQL
PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;
DELETE FROM kvm_samples; DELETE FROM vm_samples; DELETE FROM samples; DELETE FROM vms;
BEGIN;
-- sample times: 5-minute means (the middle of their bucket) before RAW_FROM, raw every 10 s after
CREATE TEMP TABLE times (t_ms INTEGER PRIMARY KEY, resolution INTEGER);
WITH RECURSIVE m(t) AS (SELECT $T0 + 150000 UNION ALL SELECT t + 300000 FROM m WHERE t + 300000 < $RAW_FROM)
INSERT INTO times SELECT t, 300 FROM m;
WITH RECURSIVE r(t) AS (SELECT $RAW_FROM UNION ALL SELECT t + 10000 FROM r WHERE t + 10000 < $END)
INSERT INTO times SELECT t, 0 FROM r;
WITH RECURSIVE v(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM v WHERE i < $NVMS)
INSERT INTO vms (id, pid, start_ticks, boot_ms, started_ms, uuid, name, vmm, guest_ram_bytes)
SELECT i, 4000 + i, 1000 + i, $T0 - 86400000, $T0 - 3600000, NULL,
       printf('%s-%03d', CASE i % 5 WHEN 0 THEN 'web' WHEN 1 THEN 'db' WHEN 2 THEN 'ci' WHEN 3 THEN 'cache'
              ELSE 'batch' END, i),
       'qemu', (1 << (i * 7 % 4)) * 1073741824 FROM v;
-- per VM and time: d = days since T0; d + 0.5 day is a counter's integral of a rate of 1 + 0.5 sin(day)
CREATE TEMP VIEW gen AS
SELECT v.id AS vm_id, t.t_ms, t.resolution, v.guest_ram_bytes AS ram,
       (t.t_ms - $T0) / 86400000.0 AS d,
       (1 - cos(((t.t_ms - $T0) / 86400000.0 + v.id / 7.0) * 6.2832)) / 6.2832 AS day,
       (60 + v.id * 37 % 140) * 1048576
         + CASE WHEN v.id % 17 = 0 AND t.t_ms > $END - 86400000
                THEN (t.t_ms - $END + 86400000) / 3600000.0 * 41943040 ELSE 0 END AS over
FROM vms v, times t;
INSERT INTO vm_samples (vm_id, t_ms, resolution, populated, exact, rss, rss_anon, rss_file, rss_shmem, swap,
       ksm_merging_pages, ksm_zero_pages, ksm_profit, ksm_saved, pss, overhead, cpu_ms, vcpu_delay_ms,
       hugetlb, memory_cost)
SELECT vm_id, t_ms, resolution, 1, 0,
       CAST(ram * 0.9 + over AS INTEGER), CAST(ram * 0.9 + over - 8388608 AS INTEGER), 8388608, 0, 0,
       CAST(ram * (0.1 + vm_id % 3 * 0.1) / 4096 AS INTEGER), 0, 0,
       CAST(ram * (0.05 + vm_id % 3 * 0.05) AS INTEGER),
       CAST(ram * (0.85 - vm_id % 3 * 0.05) + over AS INTEGER), CAST(over AS INTEGER),
       CAST((d + 0.5 * day) * 86400000 * (0.02 + vm_id % 9 * 0.03) AS INTEGER),
       CAST(d * 86400000 * 0.004 * (vm_id % 4) AS INTEGER),
       0, CAST(ram * (0.85 - vm_id % 3 * 0.05) + over AS INTEGER)
FROM gen;
INSERT INTO samples (t_ms, resolution, mem_total, mem_available, mem_free, swap_total, swap_free, page_size,
       ksm_run, ksm_pages_shared, ksm_pages_sharing, ksm_pages_unshared, ksm_pages_volatile, ksm_zero_pages,
       ksm_full_scans, ksm_pages_scanned, ksm_general_profit, ksm_pages_to_scan, ksm_sleep_millisecs,
       ksmd_cpu_ns, vm_count, skipped)
SELECT t.t_ms, t.resolution, 549755813888, 549755813888 - 6442450944 - SUM(s.rss), 1073741824, 0, 0, 4096,
       1, SUM(s.ksm_merging_pages) / 4, SUM(s.ksm_saved) / 4096, 0, 0, 0,
       (t.t_ms - $T0) / 60000, 0, SUM(s.ksm_saved) * 98 / 100, 1000, 20,
       (t.t_ms - $T0) * 45000, COUNT(*), 0
FROM times t JOIN vm_samples s ON s.t_ms = t.t_ms GROUP BY t.t_ms;
INSERT OR IGNORE INTO kvm_counters (name, kind) VALUES ('exits', 'event');
INSERT INTO kvm_samples (vm_id, counter_id, t_ms, resolution, value)
SELECT vm_id, (SELECT id FROM kvm_counters WHERE name = 'exits'), t_ms, resolution,
       CAST((d + 0.5 * day) * 86400 * (200 + vm_id * 13 % 900) AS INTEGER) FROM gen;
INSERT INTO kvm_samples (vm_id, counter_id, t_ms, resolution, value)
SELECT 0, counter_id, t_ms, MIN(resolution), SUM(value) FROM kvm_samples GROUP BY counter_id, t_ms;
INSERT INTO share_vms (run_id, vm, pid, name, pages, zero_pages, unique_pages, error_bound_pages, sketch_bytes)
SELECT 1, id - 1, pid, name, guest_ram_bytes * 9 / 40960, guest_ram_bytes / 40960, guest_ram_bytes * 4 / 40960,
       CAST(2 * sqrt(guest_ram_bytes * 9 / 40960 * 63) AS INTEGER), guest_ram_bytes * 9 / 40960 / 64 * 8 FROM vms;
INSERT INTO share_pairs (run_id, a, b, pages)
SELECT 1, x.id - 1, y.id - 1,
       CASE WHEN x.id = y.id THEN x.guest_ram_bytes / 409600
            ELSE min(x.guest_ram_bytes, y.guest_ram_bytes) / 4096 * (CASE WHEN x.id % 5 = y.id % 5 THEN 30 ELSE 2 END) / 100
                 + (x.id * y.id) % 97 * 64 END
FROM vms x, vms y;
INSERT INTO share_runs (id, t_ms, sample_n, page_size, host_pages, zero_pages, mergeable_savings, ksm_saved, vm_count)
SELECT 1, $END - 3600000, 64, 4096, SUM(pages), SUM(zero_pages), SUM(pages) * 4096 * 35 / 100,
       SUM(pages) * 4096 / 5, COUNT(*)
FROM share_vms;
COMMIT;
SQL
