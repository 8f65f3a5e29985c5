#!/usr/bin/env python3
"""The fleet scenario of report leaks (fleet_scenario.py): hosts with
exponential warm-ups and one planted leak each, of different shapes.
Each host's captures are imported into its own database; report leaks
is run as the timer runs it, its window ending at each run (--to), and
at the end. What is checked comes from the scenario as planted, never
from the tool's own output:

- the clean host: no suspect and exit 0 at every run; before the grace
  period ends, "not judged yet";
- at every run of every host, no suspect but the planted leak;
- at the end, exactly the planted leaks that still grow are suspects,
  at the least-squares slope of their bytes (computed here) over the
  window the scenario puts them in (the boot after the grace period, or
  the recent window for the late leak), and the stopped one is listed
  as stopped, with the bytes it holds and when it stopped;
- the late leak is reported within 2 hours of its start, not before;
- the reloaded module's leak is reported, the reload said;
- two clones sharing a machine id are analysed apart;
- none of 1,000 captures cut at random byte offsets is stored as
  complete, and the refused ones add no tag;

usage: check_leaks.py BINARY
"""
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile

from tap import finish, ok

HERE = os.path.dirname(os.path.abspath(__file__))
BIN = sys.argv[1]
SAMPLE = os.path.join(HERE, "samples", "linux-6.12-x86_64.txt")
GRACE, RECENT = 3600, 7200	# report leaks' defaults, as documented
EXIT_FOUND = 4


def run(args):
    p = subprocess.run([BIN] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


def lsq(pts):
    n = len(pts)
    mt = sum(t for t, _ in pts) / n
    my = sum(y for _, y in pts) / n
    stt = sum((t - mt) ** 2 for t, _ in pts)
    return sum((t - mt) * (y - my) for t, y in pts) / stt


def leaks(db, *extra):
    rc, out, err = run(["report", "leaks", "-d", db, "-F", "json"] + list(extra))
    j = json.loads(out) if out.strip() else None
    return rc, j, err


def suspects(j):
    return [(h["host"], x["file"], x["line"], x["func"]) for h in j["hosts"]
            for b in h["boots"] for x in b["suspects"]]


def tagkey(t):
    return (t["file"], t["line"], t["func"])


W = tempfile.mkdtemp()
try:
    cap = os.path.join(W, "cap")
    subprocess.run([sys.executable, os.path.join(HERE, "fleet_scenario.py"), SAMPLE, cap],
                   check=True)
    planted = json.load(open(os.path.join(cap, "planted.json")))
    dt = planted["dt"]
    db = {}
    for host in planted["hosts"]:
        db[host] = os.path.join(W, host + ".db")
        if host.startswith("clone"):
            continue
        rc, out, err = run(["record", "-q", "-d", db[host], "--import", os.path.join(cap, host)])
        ok(rc == 0, "%s: its %d captures recorded" % (host, len(planted["hosts"][host]["runs"])), err)
    # the clones: one machine id, both in one database, their runs interleaved
    db["clones"] = os.path.join(W, "clones.db")
    both = os.path.join(W, "clones")
    os.makedirs(both)
    for host in ("clone1", "clone2"):
        for f in os.listdir(os.path.join(cap, host)):
            shutil.copy(os.path.join(cap, host, f), os.path.join(both, host + "-" + f))
    rc, out, err = run(["record", "-q", "-d", db["clones"], "--import", both])
    ok(rc == 0, "clones: their captures recorded into one database", err)
    def snap_ids(path):
        out = subprocess.run(["sqlite3", path, "SELECT id, taken_at FROM snapshot"
                              " WHERE status = 'ok' ORDER BY taken_at, id"],
                             stdout=subprocess.PIPE, check=True).stdout.decode()
        return [(int(a), float(b)) for a, b in (l.split("|") for l in out.split())]

    # ---- every timer run: the window ends at that run ----
    for host, truth in planted["hosts"].items():
        if host.startswith("clone"):
            continue
        ids = snap_ids(db[host])
        t0 = ids[0][1]
        leak = truth["leak"]
        step = 1 if len(ids) < 200 else 12
        runs = [i for i in range(len(ids)) if i % step == 0 or ids[-1][1] - ids[i][1] < 14 * 3600]
        others, early, exits, judged_bad = [], [], set(), []
        for i in runs:
            sid, t = ids[i]
            rc, j, err = leaks(db[host], "--to", str(sid))
            s = suspects(j)
            exits.add(rc)
            b = j["hosts"][0]["boots"][-1]
            if b["judged"] != (t >= t0 + GRACE and b["judged_snapshots"] >= 4):
                judged_bad.append((i, b["judged"], t - t0))
            for x in s + [(host, y["file"], y["line"], y["func"]) for y in b["stopped"]]:
                if not leak or x[1:] != tagkey(leak):
                    others.append((i, x))
            if s and t < t0 + GRACE:
                early.append((i, s))
        ok(not others, "%s: at each of %d runs no suspect or stopped leak but the planted leak" % (host, len(runs)),
           "\n".join(map(str, others[:10])))
        ok(not early, "%s: nothing reported in the grace period" % host, str(early[:5]))
        ok(not judged_bad, "%s: judged from the run %d s after the boot's first snapshot on, not before"
           % (host, GRACE), str(judged_bad[:5]))
        if host == "clean":
            ok(exits == {0}, "clean: exit 0 at every one of its %d runs" % len(runs), str(exits))

    # ---- at the end: exactly the planted leaks, at their rates ----
    def window_pts(truth, t0, tend, win, since=None):
        pts = []
        for r in truth["runs"]:
            if r.get("bytes") is None:
                continue
            t = r["t"]
            if t < t0 + GRACE or (since is not None and t < since):
                continue
            if win == "recent" and t < tend - RECENT:
                continue
            pts.append((t, r["bytes"]))
        return pts

    for host, truth in planted["hosts"].items():
        if host.startswith("clone"):
            continue
        rc, j, err = leaks(db[host])
        b = j["hosts"][0]["boots"][-1]
        s = b["suspects"]
        t0 = truth["runs"][0]["t"]
        tend = truth["runs"][-1]["t"]
        shape = truth["shape"]
        if shape in (None, "stopped"):
            ok(rc == 0 and not s, "%s: no suspect at the end, exit 0" % host, "exit %d %s" % (rc, s))
        else:
            ok(rc == EXIT_FOUND and [tagkey(x) for x in s] == [tagkey(truth["leak"])],
               "%s: exactly the planted leak (%s), exit 4" % (host, truth["leak"]["func"]),
               "exit %d %s" % (rc, s))
        if shape in ("steady", "step", "late", "reload") and len(s) == 1:
            win = "recent" if shape == "late" else "boot"
            since = truth["reload"]["on"] if shape == "reload" else None
            want = lsq(window_pts(truth, t0, tend, win, since))
            ok(s[0]["window"] == win and "%.2f" % s[0]["rate"] == "%.2f" % want,
               "%s: found over the %s window at the least-squares rate %.2f B/s" % (host, win, want),
               "got %s %.3f" % (s[0]["window"], s[0]["rate"]))
        if shape == "reload" and len(s) == 1:
            ok(s[0]["reloads"] == 1, "reload: the module's reload is said", str(s[0]))
        if shape == "stopped":
            st = b["stopped"]
            first = [r for r in truth["runs"] if r["t"] >= t0 + GRACE][0]["bytes"]
            held = truth["runs"][-1]["bytes"] - first
            stop_t = t0 + 135 * 60
            ok(len(st) == 1 and tagkey(st[0]) == tagkey(truth["leak"]) and st[0]["held"] == held,
               "stopped: listed as a leak that stopped, holding %d bytes (last - first judged)" % held,
               str(st))
            if len(st) == 1:
                ok(abs(st[0]["stopped_at"] - stop_t) <= 2 * dt,
                   "stopped: it stopped within two runs of when it did (%+.0f s)" % (st[0]["stopped_at"] - stop_t))
        if shape is None:
            ok(not b["stopped"], "%s: no stopped leak either" % host, str(b["stopped"]))

    # ---- the late leak: within 2 hours of its start ----
    truth = planted["hosts"]["late"]
    ids = snap_ids(db["late"])
    start = ids[0][1] + 7 * 24 * 3600 - 12 * 3600
    first = None
    for sid, t in ids:
        if t < start - 3600:
            continue
        rc, j, err = leaks(db["late"], "--to", str(sid))
        if suspects(j):
            first = t
            break
    ok(first is not None and start <= first <= start + 2 * 3600,
       "late: 1 KiB/s in the last 12 h of a 7-day boot reported within 2 hours of its start"
       " (%s)" % ("after %.0f min" % ((first - start) / 60) if first else "never"))

    # ---- the clones ----
    rc, j, err = leaks(db["clones"], "--all-hosts")
    got = [(h["shared_by"], sorted((b["host"], b["snapshots"], tuple(tagkey(x) for x in b["suspects"]))
                                   for b in h["boots"])) for h in j["hosts"]]
    want = [(2, [("clone1", len(planted["hosts"]["clone1"]["runs"]), ()),
                 ("clone2", len(planted["hosts"]["clone2"]["runs"]),
                  (tagkey(planted["hosts"]["clone2"]["leak"]),))])]
    ok(rc == EXIT_FOUND and got == want,
       "clones (one machine id, two boots at once): each boot analysed apart, by node name;"
       " the leak on clone2 only", "exit %d\n%s\n%s" % (rc, got, want))
    rc, out, err = run(["report", "leaks", "-d", db["clones"]])
    ok("is shared by 2 systems running at once" in out, "clones: the report says so", out)

    # ---- captures cut at random byte offsets ----
    text = open(SAMPLE, "rb").read()
    for m, n in (("xfs", 40), ("xnet", 12), ("xmod", 25)):
        for i in range(n):
            text += b"%12d %8d drivers/%s/f%d.c:%d [%s] func:%s_f%d \n" % (
                4096 * (i + 1), i + 1, m.encode(), i, 10 + i, m.encode(), m.encode(), i)
    full = os.path.join(W, "full.txt")
    open(full, "wb").write(text)
    tdb = os.path.join(W, "cuts.db")
    args = ["record", "-q", "-d", tdb, "--host", "cuts", "--machine-id", "9" * 32,
            "--boot-id", "cut-boot"]
    rc, out, err = run(args + ["-f", full, "--time", str(planted["t0"])])
    ok(rc == 0, "cuts: the whole capture is recorded", err)
    rnd = random.Random(52)
    ncut = 1000
    cut = os.path.join(W, "cut.txt")
    offsets = [rnd.randrange(0, len(text)) for _ in range(ncut)]
    # a cut in the leading spaces of a line, and just before a newline
    offsets[:2] = [text.rindex(b"\n", 0, len(text) - 1) + 3, len(text) - 1]
    for k, off in enumerate(offsets):
        open(cut, "wb").write(text[:off])
        run(args + ["-f", cut, "--time", str(planted["t0"] + 1 + k)])
    got = subprocess.run(["sqlite3", tdb, "SELECT status, count(*) FROM snapshot GROUP BY status"],
                         stdout=subprocess.PIPE, check=True).stdout.decode().split()
    ok(got == ["ok|1", "refused|%d" % ncut],
       "cuts: none of %d captures cut at random byte offsets is stored as complete" % ncut,
       " ".join(got))
    ntag = subprocess.run(["sqlite3", tdb, "SELECT count(*) FROM tag"], stdout=subprocess.PIPE,
                          check=True).stdout.decode().strip()
    ok(ntag == str(text.count(b"\n") - 2), "cuts: the refused captures added no tag (%s)" % ntag)

    # ---- the timer's metrics ----
    ids = snap_ids(db["steady"])
    rc, out, err = run(["report", "leaks", "-d", db["steady"], "-F", "prometheus", "--to", str(ids[2][0])])
    ok("allocinfo_leak_judged 0\n" in out and "allocinfo_leak_suspects 0\n" in out,
       "prometheus: in the grace period, judged 0 and no suspect", out)
    rc, out, err = run(["report", "leaks", "-d", db["stopped"], "-F", "prometheus"])
    ok("allocinfo_leak_judged 1\n" in out and "allocinfo_leak_stopped 1\n" in out and
       "allocinfo_leak_stopped_bytes{" in out, "prometheus: the stopped leak and its bytes", out)
finally:
    shutil.rmtree(W)
sys.exit(finish())
