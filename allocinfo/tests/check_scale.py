#!/usr/bin/env python3
"""Scale: a database of N snapshots (default 10,000) of 7,000 tags, 5
minutes apart, with a kernel upgrade (a reboot into a kernel whose
7,000 tags all have other lines) half way, and a leak planted in the
second kernel. Times record, report leaks, report growth, prune (of the
first kernel's snapshots, which orphans its 7,000 tags) and plot, and
prints them. What is checked comes from the scenario: prune removes the
first kernel's snapshots and tags, exactly, in under 5 seconds at N =
10,000 (N / 2,000 s below, 1 s at least); report leaks finds the planted leak
and nothing else.

usage: check_scale.py BINARY PLOT-BINARY
       SCALE_SNAPSHOTS=N (default 10000), SCALE_PRUNE_LIMIT=S (default 5),
       SCALE_SAVE=FILE (a copy of the database before prune)
"""
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

from tap import finish, ok

BIN, PLOT = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None
N = int(os.environ.get("SCALE_SNAPSHOTS", "10000"))
LIMIT = float(os.environ.get("SCALE_PRUNE_LIMIT", "5"))
NTAGS, T0, DT, CHUNK = 7000, 1600000000, 300, 200
LEAK_RATE = 100		# bytes/s, the second kernel's tag 0


def timed(args):
    t = time.monotonic()
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return time.monotonic() - t, p.returncode, p.stdout.decode(), p.stderr.decode()


def sq(db, q):
    return subprocess.run(["sqlite3", db, q], stdout=subprocess.PIPE,
                          check=True).stdout.decode().strip()


W = tempfile.mkdtemp()
try:
    db = os.path.join(W, "s.db")
    rnd = random.Random(52)
    half = N // 2
    base = [0 if rnd.random() < 0.7 else int(2 ** (rnd.random() * 20)) * 64 for _ in range(NTAGS)]
    cur = list(base)

    def pre(i, kern):
        return ('{"file":"d%d/sub%d/f%d.c","line":%d,"module":%s,"func":"alloc_%d","bytes":'
                % (i % 47, i % 13, i % 701, 100 + i + kern * 100000,
                   "null" if i % 20 else '"mod%d"' % (i % 7), i))
    pres = [[pre(i, kern) for i in range(NTAGS)] for kern in (0, 1)]

    def capture(k):
        """snapshot k: a tenth of the tags move around their level (no drift)"""
        kern = 0 if k < half else 1
        for i in range(k % 10, NTAGS, 10):
            if base[i]:
                cur[i] = max(0, base[i] + (i * k * 2654435761) % 60001 - 30000)
        b = list(cur)
        if kern:
            # the leak: steady, exact, in the second kernel
            b[0] = 4096 + LEAK_RATE * (k - half) * DT
        p = pres[kern]
        tags = ",".join('%s%d,"calls":%d}' % (p[i], b[i], b[i] // 512) for i in range(NTAGS))
        return ('{"version":"1.0","taken_at":%d,"host":"big","machine_id":"%s","boot_id":"boot-%d",'
                '"kernel":"6.12.%d","tags":[%s]}' % (T0 + k * DT, "5" * 32, kern, kern, tags))
    t_rec = 0.0
    for c0 in range(0, N, CHUNK):
        d = os.path.join(W, "chunk")
        os.makedirs(d)
        for k in range(c0, min(N, c0 + CHUNK)):
            with open(os.path.join(d, "%06d.json" % k), "w") as f:
                f.write(capture(k))
        dt, rc, out, err = timed([BIN, "record", "-q", "-d", db, "--import", d])
        t_rec += dt
        shutil.rmtree(d)
        if rc:
            ok(False, "record --import of snapshots %d.." % c0, err)
            break
    size = os.path.getsize(db)
    print("# %d snapshots of %d tags recorded in %.1f s (%.1f ms a snapshot), %d bytes" %
          (N, NTAGS, t_rec, 1000 * t_rec / N, size))
    ok(sq(db, "SELECT count(*), count(DISTINCT boot_id) FROM snapshot") == "%d|2" % N,
       "the database holds the %d snapshots of 2 boots" % N)

    # one more snapshot, as the timer records it
    cap = os.path.join(W, "one.json")
    with open(cap, "w") as f:
        f.write(capture(N))
    dt, rc, out, err = timed([BIN, "record", "-q", "-d", db, "-f", cap])
    print("# record of one snapshot into it: %.3f s" % dt)
    ok(rc == 0, "record into the %d-snapshot database" % N, err)

    dt, rc, out, err = timed([BIN, "report", "leaks", "-d", db, "-F", "json"])
    print("# report leaks (the last boot, %d snapshots): %.2f s" % (N - half + 1, dt))
    j = json.loads(out)
    got = [(x["func"], round(x["rate"], 2)) for h in j["hosts"] for b in h["boots"] for x in b["suspects"]]
    ok(rc == 4 and got == [("alloc_0", float(LEAK_RATE))],
       "report leaks: the planted leak at %d B/s, nothing else" % LEAK_RATE, "exit %d %s" % (rc, got[:5]))
    dt, rc, out, err = timed([BIN, "report", "growth", "-d", db])
    print("# report growth (first to last): %.2f s" % dt)
    ok(rc == 0, "report growth", err)
    if PLOT and os.access(PLOT, os.X_OK):
        dt, rc, out, err = timed([PLOT, "-d", db, "-o", os.path.join(W, "p.png")])
        print("# plot (%d snapshots): %.2f s" % (N + 1, dt))
        ok(rc == 0 and os.path.getsize(os.path.join(W, "p.png")) > 0, "plot", err)

    if os.environ.get("SCALE_SAVE"):
        # a copy for measuring prune again: SCALE_SAVE=FILE
        subprocess.run(["sqlite3", db, "VACUUM INTO '%s'" % os.environ["SCALE_SAVE"]], check=True)
    # prune the first kernel's snapshots: its 7,000 tags are no more used
    keep = (N + 1 - half) * DT - DT // 2
    dt, rc, out, err = timed([BIN, "prune", "-d", db, "--keep", "%ds" % keep, "--now", str(T0 + N * DT)])
    print("# prune of %d snapshots and %d tags: %.2f s" % (half, NTAGS, dt))
    ok(rc == 0 and "removed %d snapshot(s); %d left" % (half, N + 1 - half) in out and
       "removed %d tag(s)" % NTAGS in out,
       "prune removes the first kernel's %d snapshots and its %d tags" % (half, NTAGS), out + err)
    # the target is 5 s at 10,000 snapshots; prune's time goes with what it
    # removes (the snapshots, half of N), so a smaller N gets its share
    limit = LIMIT * min(max(N, 2000), 10000) / 10000
    ok(dt < limit, "prune of %d snapshots and %d tags took under %.2g s (%g s at 10,000): %.2f s"
       % (half, NTAGS, limit, LIMIT, dt))
    dt, rc, out, err = timed([BIN, "report", "leaks", "-d", db, "-F", "json"])
    got = [(x["func"], round(x["rate"], 2)) for h in json.loads(out)["hosts"] for b in h["boots"] for x in b["suspects"]]
    ok(rc == 4 and got == [("alloc_0", float(LEAK_RATE))], "after prune, report leaks the same (%.2f s)" % dt,
       str(got[:5]))
finally:
    shutil.rmtree(W)
sys.exit(finish())
