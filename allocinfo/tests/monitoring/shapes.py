#!/usr/bin/env python3
"""The promtool test of the alerts on the shapes that fooled them: 200 MB
exponential warm-ups that level off (time constants of 20 minutes to 2.5
hours), which must never fire, and a steady 2 KiB/s leak under +-5 MB
of jitter, which must.

Each shape is a host of its own: a capture (the real 6.12 sample plus
the shape's tag) every 5 minutes for 12 hours, recorded with 'record
--time', then 'report leaks -F prometheus' and 'export --by subsys' run
as the timer runs them. Their metrics are the input series of the
test, so what is tested is the rules on what the tool writes. What is
expected comes from the shapes as planted and from the rules' own
windows ('for', the 6 hours of the growth alert), never from an alert's
output:

- the warm-ups: no alert at any time;
- the leak: AllocinfoSubsystemGrowing from 6 hours + its 'for' on (not
  before 6 hours); AllocinfoLeakSuspect from the run from which report
  leaks names the leak at every run (within 4 hours of the boot) + its
  'for' on, and not before the first run that names it.

usage: shapes.py BINARY OUT.yml [RULES]
RULES (default ../../monitoring/allocinfo.rules.yml) is written into
OUT.yml as given. The random jitter is seeded: OUT.yml is the same at
every run (tests/check_monitoring.sh compares it with the shipped
allocinfo.shapes.test.yml).
"""
import hashlib
import math
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
BIN = sys.argv[1]
OUT = sys.argv[2]
RULES = sys.argv[3] if len(sys.argv) > 3 else "../../monitoring/allocinfo.rules.yml"
RULES_PATH = os.path.join(HERE, "../../monitoring/allocinfo.rules.yml")
SAMPLE = os.path.join(HERE, "..", "samples", "linux-6.12-x86_64.txt")
T0 = 1700000000
DT = 300
HOURS = 12
RUNS = HOURS * 3600 // DT + 1
MB = 1000 * 1000

WARM = {"file": "fs/xfs/xfs_icache.c", "line": 85, "module": "xfs", "func": "xfs_inode_alloc",
        "subsys": "fs/"}
LEAK = {"file": "drivers/net/x.c", "line": 12, "module": "xnet", "func": "x_alloc",
        "subsys": "drivers/net/"}
# instance: (tag, bytes above the base at t seconds after the boot)
HOSTS = {}
for tau in (20, 45, 60, 120, 150):
    HOSTS["warm-%dm" % tau] = (WARM, lambda t, rnd, tau=tau:
                               int(200 * MB * (1 - math.exp(-t / (tau * 60)))) +
                               rnd.randint(-256 << 10, 256 << 10))
HOSTS["leak"] = (LEAK, lambda t, rnd: 2048 * t + rnd.randint(-5 * MB, 5 * MB))
BASE = 8 << 20


def duration(s):
    """a Prometheus duration of the rules file: 90m, 1h, 30s"""
    return sum(int(n) * {"s": 1, "m": 60, "h": 3600}[u] for n, u in re.findall(r"(\d+)([smh])", s))


def alert_rule(name):
    """the 'for' and the annotations of an alert of the rules file"""
    text = open(RULES_PATH).read()
    m = re.search(r"- alert: %s\n(.*?)(?=\n      - |\Z)" % name, text, re.S)
    body = m.group(1)
    ann = dict(re.findall(r"^\s+(summary|description): \"(.*)\"$", body, re.M))
    return duration(re.search(r"^\s+for: (\S+)", body, re.M).group(1)), ann


def humanize(v):
    """Prometheus' humanize template function (SI prefixes, %.4g)"""
    p = ""
    for q in ["k", "M", "G", "T", "P", "E", "Z", "Y"]:
        if abs(v) < 1000:
            break
        v /= 1000
        p = q
    s = "%.4g" % v
    return s + p


def render(t, labels, value=None):
    t = re.sub(r"\{\{ \$labels\.(\w+) \}\}", lambda m: labels[m.group(1)], t)
    return t.replace("{{ $value | humanize }}", humanize(value) if value is not None else "")


def run(args):
    p = subprocess.run([BIN] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True)
    return p.returncode, p.stdout


def prom_values(text, name):
    return {m.group(1): float(m.group(2)) for m in
            re.finditer(r"^%s(\{.*\})? (\S+)$" % name, text, re.M)}


def main():
    base = open(SAMPLE).read()
    work = tempfile.mkdtemp()
    series = []	# (selector, [value or None per run])
    truth = {}
    try:
        for host, (tag, shape) in sorted(HOSTS.items()):
            rnd = random.Random(host)
            db = os.path.join(work, host + ".db")
            cap = os.path.join(work, "c.txt")
            rate, sub, exp = [], [], []
            for k in range(RUNS):
                t = k * DT
                with open(cap, "w") as f:
                    f.write(base)
                    f.write("%12d %8d %s:%d [%s] func:%s \n" % (
                        BASE + shape(t, rnd), 1000 + k, tag["file"], tag["line"],
                        tag["module"], tag["func"]))
                rc, _ = run(["record", "-q", "-d", db, "-f", cap, "--time", str(T0 + t),
                             "--host", host, "--machine-id", hashlib.md5(host.encode()).hexdigest(),
                             "--boot-id", "boot-" + host])
                assert rc == 0, "record of %s at run %d: exit %d" % (host, k, rc)
                rc, out = run(["report", "leaks", "-d", db, "-F", "prometheus"])
                assert rc in (0, 4), "report leaks of %s at run %d: exit %d" % (host, k, rc)
                r = prom_values(out, "allocinfo_leak_rate_bytes_per_second")
                rate.append(list(r.values())[0] if r else None)
                rc, out = run(["export", "-q", "-f", cap, "--by", "subsys"])
                assert rc == 0, "export of %s: exit %d" % (host, rc)
                sel = '{subsys="%s"}' % tag["subsys"]
                sub.append(prom_values(out, "allocinfo_subsys_bytes")[sel])
                exp.append(prom_values(out, "allocinfo_subsys_expected_bytes")[sel])
            labels = 'instance="%s",file="%s",line="%d",func="%s",module="%s"' % (
                host, tag["file"], tag["line"], tag["func"], tag["module"])
            series.append(("allocinfo_leak_rate_bytes_per_second{%s}" % labels, rate))
            series.append(('allocinfo_subsys_bytes{instance="%s",subsys="%s"}' % (host, tag["subsys"]), sub))
            series.append(('allocinfo_subsys_expected_bytes{instance="%s",subsys="%s"}' % (host, tag["subsys"]), exp))
            truth[host] = (tag, rate)
    finally:
        shutil.rmtree(work)

    leak_for, leak_ann = alert_rule("AllocinfoLeakSuspect")
    sub_for, sub_ann = alert_rule("AllocinfoSubsystemGrowing")
    tag, rate = truth["leak"]
    first = next((k for k, v in enumerate(rate) if v is not None), RUNS)
    # the run from which report leaks names the leak at every run
    steady = next(k for k in range(RUNS, 0, -1) if rate[k - 1] is None) if rate[-1] is not None else RUNS
    assert steady * DT <= 4 * 3600, \
        "report leaks does not name the 2 KiB/s leak at every run from 4 hours on (from run %d)" % steady
    leak_from = steady * DT + leak_for + DT	# + a run: the alert's evaluation falls between two
    sub_from = 6 * 3600 + sub_for + DT

    def fmt(vals):
        return " ".join("_" if v is None else ("%.3f" % v).rstrip("0").rstrip(".") for v in vals)

    def hm(s):
        return "%dh%dm" % (s // 3600, s % 3600 // 60)

    lab = {"instance": "leak", "file": tag["file"], "func": tag["func"], "line": str(tag["line"]),
           "module": tag["module"], "subsys": tag["subsys"]}
    o = []
    o.append("# Generated by tests/monitoring/shapes.py from the metrics allocinfo writes for")
    o.append("# 200 MB exponential warm-ups (hosts warm-TAUm: time constant TAU minutes) and")
    o.append("# a 2 KiB/s leak under +-5 MB of jitter (host leak), a run every 5 minutes for")
    o.append("# %d hours. report leaks names the leak first at %s, at every run from %s on;" % (
        HOURS, hm(first * DT), hm(steady * DT)))
    o.append("# The growth alert wants 6 hours of series. Do not edit: run the script.")
    o.append("rule_files:")
    o.append("  - %s" % RULES)
    o.append("evaluation_interval: 1m")
    o.append("tests:")
    o.append("  - interval: 5m")
    o.append("    input_series:")
    for sel, vals in series:
        o.append("      - series: '%s'" % sel)
        o.append("        values: '%s'" % fmt(vals))
    o.append("    alert_rule_test:")
    for t in range(30 * 60, HOURS * 3600 + 1, 30 * 60):
        for name, frm, before, ann, value, keys in (
                ("AllocinfoLeakSuspect", leak_from, first * DT, leak_ann,
                 lambda: rate[t // DT], ("instance", "file", "line", "func", "module")),
                ("AllocinfoSubsystemGrowing", sub_from, 6 * 3600, sub_ann, lambda: None,
                 ("instance", "subsys"))):
            if before <= t < frm:
                continue	# pending, or on the edge of a window
            o.append("      - eval_time: %s" % hm(t))
            o.append("        alertname: %s" % name)
            if t < frm:
                o.append("        exp_alerts: []")
                continue
            o.append("        exp_alerts:")
            o.append("          - exp_labels:")
            o.append("              severity: warning")
            for key in keys:
                o.append('              %s: "%s"' % (key, lab[key]))
            o.append("            exp_annotations:")
            for a in ("summary", "description"):
                o.append('              %s: "%s"' % (a, render(ann[a], lab, value())))
    with open(OUT, "w") as f:
        f.write("\n".join(o) + "\n")


main()
