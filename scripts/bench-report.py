#!/usr/bin/env python3
"""bench-report.py: the results file and plot of `make bench`.

Reads the guests' outputs that scripts/bench.sh left in --out and writes
a Markdown table of every figure (--md) and a plot of the headline
comparison (--png, with gnuplot). `bench-report.py --parse-micro FILE`
only parses microbenchmark lines and prints them (the smoke test uses it).
"""
import argparse
import os
import platform
import re
import statistics
import subprocess
import sys

CASES = ["page-o0", "page-o1", "page-o3", "page-o9", "kmalloc-8-240"]
CASE_TITLE = {
    "page-o0": "order 0", "page-o1": "order 1", "page-o3": "order 3",
    "page-o9": "order 9", "kmalloc-8-240": "kmalloc 8..240 B",
}
MICRO_RE = re.compile(r"pftag_bench: run=(\d+) case=(\S+) loops=(\d+) ns=(\d+)")


def parse_micro(text):
    """{case: [ns per iteration, one per run]} of pftag_bench's lines."""
    out = {}
    for m in MICRO_RE.finditer(text):
        out.setdefault(m.group(2), []).append(int(m.group(4)) / int(m.group(3)))
    if "pftag_bench: done" not in text:
        raise ValueError("the microbenchmark did not report 'done'")
    missing = [c for c in CASES if c not in out]
    if missing:
        raise ValueError("cases missing from the microbenchmark: " + " ".join(missing))
    return out


def sections(path):
    """{name: text} of the '== name' sections of a guest's out.log."""
    sec, cur = {}, None
    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\r\n")
            if line.startswith("== "):
                cur = line[3:]
                sec[cur] = []
            elif cur is not None:
                sec[cur].append(line)
    return {k: "\n".join(v) for k, v in sec.items()}


def perf_stat(text):
    """{event: value} of `perf stat -x,` lines, plus hackbench's total time."""
    ev = {}
    for line in text.splitlines():
        f = line.split(",")
        if len(f) >= 3 and f[2] and re.match(r"^[0-9.]+$", f[0]):
            ev[f[2]] = float(f[0])
        m = re.search(r"Total time: ([0-9.]+) \[sec\]", line)
        if m:
            ev["total"] = float(m.group(1))
        m = re.match(r"pages=(\d+)", line)
        if m:
            ev["pages"] = int(m.group(1))
    return ev


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def pct(x, base):
    return (x / base - 1) * 100 if base else float("nan")


def fmt_pct(x):
    return "%+.1f%%" % x


def kib(b):
    return "%.1f KiB" % (b / 1024)


def read(path, default=""):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return default


def machine():
    cpu = read("/proc/cpuinfo")
    model = re.search(r"model name\s*:\s*(.*)", cpu)
    mem = re.search(r"MemTotal:\s*(\d+)", read("/proc/meminfo"))
    qemu = subprocess.run(["qemu-system-x86_64", "--version"], capture_output=True, text=True).stdout
    osr = re.search(r'PRETTY_NAME="(.*)"', read("/etc/os-release"))
    return {
        "cpu": model.group(1) if model else platform.processor(),
        "cores": os.cpu_count(),
        "ram": "%.1f GiB" % (int(mem.group(1)) / 1048576) if mem else "?",
        "host kernel": platform.release(),
        "os": osr.group(1) if osr else "?",
        "qemu": qemu.splitlines()[0] if qemu else "?",
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--parse-micro")
    ap.add_argument("--out")
    ap.add_argument("--md")
    ap.add_argument("--png")
    ap.add_argument("--seconds", type=int, default=0)
    ap.add_argument("--rounds", type=int, default=0)
    ap.add_argument("--configs", default="")
    a = ap.parse_args()

    if a.parse_micro:
        with open(a.parse_micro, errors="replace") as f:
            m = parse_micro(f.read())
        for c in CASES:
            print("%s %s" % (c, " ".join("%.1f" % x for x in m[c])))
        return 0

    configs = [l.split("|") for l in a.configs.splitlines() if l]
    names = [c[0] for c in configs]
    o = a.out
    ic, wall, mem4 = {}, {}, {}
    for name, build, append in configs:
        s = sections(os.path.join(o, "icount", name, "out.log"))
        ic[name] = {"sec": s, "micro": parse_micro(s.get("micro", "")),
                    "hb": perf_stat(s.get("hackbench", "")), "pf": perf_stat(s.get("faults", "")),
                    "build": build, "append": append}
        w = {"micro": {c: [] for c in CASES}, "hb": [], "pf": []}
        for r in range(1, a.rounds + 1):
            s = sections(os.path.join(o, "wall", str(r), name, "out.log"))
            for c, xs in parse_micro(s.get("micro", "")).items():
                w["micro"].setdefault(c, []).extend(xs)
            w["hb"].append(perf_stat(s.get("hackbench", "")))
            w["pf"].append(perf_stat(s.get("faults", "")))
        wall[name] = w
        mem4[name] = sections(os.path.join(o, "mem4g", name, "out.log"))

    base = "baseline"
    L = []
    p = L.append
    mach = machine()
    rel = {b: read(os.path.join(o, "release-" + b)) for b in ("baseline", "profiling")}
    p("# make bench: page-flags mode against page_ext and against no profiling")
    p("")
    p("Machine: %s, %s cores, %s RAM; %s, host kernel %s; %s." % (
        mach["cpu"], mach["cores"], mach["ram"], mach["os"], mach["host kernel"], mach["qemu"]))
    p("Guest kernels: `%s` and `%s` (Linux 6.12.117 + the series; configs: "
      "scripts/config/base.config + mm.config + baseline.config or profiling.config). "
      "Every guest: %s, 2 vCPUs, TCG; `make bench` took %d s." % (
          rel["baseline"], rel["profiling"], "512 MiB", a.seconds))
    la = read(os.path.join(o, "loadavg"))
    if la:
        p("Host load average (1, 5, 15 min) at the start and end of each phase: " +
          "; ".join("%s %s" % (l.split()[0], " ".join(l.split()[1:])) for l in la.splitlines()) +
          ". The guests' vCPUs are host threads: anything else running on the host shows in "
          "the wall-clock figures (not in the instruction counts).")
    p("")
    p("| # | configuration | kernel | kernel arguments | mode the guest reports |")
    p("|---|---|---|---|---|")
    for i, (name, build, append) in enumerate(configs, 1):
        s = ic[name]["sec"]
        st = re.search(r"^storage: (.+)$", s.get("storage", ""), re.M)
        mode = "profiling not built in" if build == "baseline" else \
            "mem_profiling=%s, storage %s" % (s.get("mem_profiling", "?").strip(),
                                             st.group(1) if st else "?")
        p("| %d | %s | %s | `%s` | %s |" % (i, name, rel[build], append or "(none)", mode))
    p("")

    # Headline: instructions.
    p("## Microbenchmark: guest instructions per allocation + free")
    p("")
    p("`tests/modules/pftag_bench.c`: %s pairs per case on a kthread bound to CPU 1, "
      "after %s warm-up pairs; cost = ktime_get_ns() delta / pairs under `-icount shift=0` "
      "(1 ns = 1 instruction; exactly repeatable: two runs per boot, the first shown, "
      "the second must agree). The loops run in a module, so in page-flags mode their tags "
      "are module tags: the free decodes the index through the module table "
      "(alloc_tag_module_ct()), where kernel call sites index the tag section directly. "
      "Overhead against baseline in parentheses." % (
          "{:,}".format(int(re.search(r"loops=(\d+)", ic[base]["sec"]["micro"]).group(1))),
          "1/8 as many"))
    p("")
    p("| configuration | " + " | ".join(CASE_TITLE[c] for c in CASES) + " |")
    p("|---|" + "---|" * len(CASES))
    ins = {n: {c: ic[n]["micro"][c][0] for c in CASES} for n in names}
    for n in names:
        cells = []
        for c in CASES:
            v = ins[n][c]
            cells.append("%.0f" % v if n == base else "%.0f (%s)" % (v, fmt_pct(pct(v, ins[base][c]))))
        p("| %s | %s |" % (n, " | ".join(cells)))
    rep = max(abs(ic[n]["micro"][c][-1] / ic[n]["micro"][c][0] - 1) * 100
              for n in names for c in CASES)
    p("")
    p("Largest difference between the two runs of one boot: %.2f%%." % rep)
    p("")

    p("## Microbenchmark: wall-clock time per allocation + free (plain TCG)")
    p("")
    nwall = len(wall[base]["micro"]["page-o0"])
    p("%d rounds of boots, the configurations interleaved within each round, %d runs per boot: "
      "median of %d samples in ns per pair, [min-max] spread; overhead of the medians "
      "against baseline. TCG translates guest code, so a nanosecond here is host time of "
      "the emulation, not of a real CPU." % (a.rounds, nwall // max(a.rounds, 1), nwall))
    p("")
    p("| configuration | " + " | ".join(CASE_TITLE[c] for c in CASES) + " |")
    p("|---|" + "---|" * len(CASES))
    wmed = {n: {c: med(wall[n]["micro"][c]) for c in CASES} for n in names}
    for n in names:
        cells = []
        for c in CASES:
            xs = wall[n]["micro"][c]
            cell = "%.0f [%.0f-%.0f]" % (wmed[n][c], min(xs), max(xs))
            if n != base:
                cell += " (%s)" % fmt_pct(pct(wmed[n][c], wmed[base][c]))
            cells.append(cell)
        p("| %s | %s |" % (n, " | ".join(cells)))
    p("")

    # Targets.
    p("## Targets")
    p("")
    pf, pe = "page-flags", "page_ext"
    pages = ["page-o0", "page-o1", "page-o3", "page-o9"]
    rows = []
    for c in pages:
        oi, ow = pct(ins[pf][c], ins[base][c]), pct(wmed[pf][c], wmed[base][c])
        ei, ew = pct(ins[pe][c], ins[base][c]), pct(wmed[pe][c], wmed[base][c])
        rows.append((c, oi, ow, ei, ew))
        ok = oi < 5.5 and ow < 5.5 and oi < ei and ow < ew
        p("- %s: page-flags %s instructions, %s time; page_ext %s, %s: %s" % (
            CASE_TITLE[c], fmt_pct(oi), fmt_pct(ow), fmt_pct(ei), fmt_pct(ew),
            "**met** (under 5.5%% and below page_ext)" if ok else "**missed** (target: under 5.5% and below page_ext)"))
    c = "kmalloc-8-240"
    ki, kw = pct(ins[pf][c], ins[base][c]), pct(wmed[pf][c], wmed[base][c])
    ei, ew = pct(ins[pe][c], ins[base][c]), pct(wmed[pe][c], wmed[base][c])
    p("- kmalloc: page-flags %s instructions, %s time; page_ext %s, %s: %s" % (
        fmt_pct(ki), fmt_pct(kw), fmt_pct(ei), fmt_pct(ew),
        "**met** (no worse than page_ext)" if ins[pf][c] <= ins[pe][c] * 1.01 else "**missed**"))
    pe_bytes = {}
    for n in names:
        m = re.search(r"allocated (\d+) bytes of page_ext", ic[n]["sec"].get("bootlog", ""))
        pe_bytes[n] = int(m.group(1)) if m else 0
    p("- page_ext memory in page-flags mode: %d bytes: %s" % (
        pe_bytes[pf], "**met**" if pe_bytes[pf] == 0 else "**missed**"))
    ktags = re.search(r"(\d+) kernel tags", ic[pf]["sec"].get("bootlog", ""))
    ktags = int(ktags.group(1)) if ktags else 0
    p("- tag-index memory: %s (8 bytes x %d kernel tags) + module table 4 KiB "
      "(+4 KiB per 512 module tags): a fixed few KiB, independent of RAM." % (kib(8 * ktags), ktags))
    p("")

    # Decomposition.
    p("## Where the instructions go (per pair, from the table above)")
    p("")
    p("| case | hooks built in, off (off - baseline) | page-flags on (page-flags - off) | "
      "page_ext on (page_ext - off) | page-flags - page_ext |")
    p("|---|---|---|---|---|")
    for c in CASES:
        p("| %s | %+.0f | %+.0f | %+.0f | %+.0f |" % (
            CASE_TITLE[c], ins["off"][c] - ins[base][c], ins[pf][c] - ins["off"][c],
            ins[pe][c] - ins["off"][c], ins[pf][c] - ins[pe][c]))
    p("")

    # Macro.
    p("## Macro: perf stat in the guest (software events: TCG has no hardware PMU)")
    p("")
    p("hackbench = `perf bench sched messaging -g 4 -l 40` (Debian's linux-perf %s); page faults = "
      "`pftag-faults 32 8` (8 rounds of mapping 32 MiB anonymous, small pages, writing every "
      "page, unmapping: 65,536 faults). Under `-icount` task-clock counts instructions "
      "(msec = millions); wall = plain TCG, median [min-max] of %d boots." % (
          subprocess.run(["perf", "version"], capture_output=True, text=True).stdout.strip().replace("perf version ", ""),
          a.rounds))
    p("")
    p("| configuration | hackbench Minstr (icount task-clock) | hackbench wall s | "
      "faults Minstr (icount task-clock) | instructions per fault | faults wall task-clock ms |")
    p("|---|---|---|---|---|---|")
    hb0 = ic[base]["hb"].get("task-clock", 0)
    pf0 = ic[base]["pf"].get("task-clock", 0)
    hbw0 = med([x.get("total", 0) for x in wall[base]["hb"]])
    pfw0 = med([x.get("task-clock", 0) for x in wall[base]["pf"]])
    macro = {}
    for n in names:
        hb, pfl = ic[n]["hb"].get("task-clock", 0), ic[n]["pf"].get("task-clock", 0)
        hbw = [x.get("total", 0) for x in wall[n]["hb"]]
        pfw = [x.get("task-clock", 0) for x in wall[n]["pf"]]
        nfault = ic[n]["pf"].get("page-faults", 0) or 1
        macro[n] = (pct(hb, hb0), pct(pfl, pf0))
        p("| %s | %.1f (%s) | %.3f [%.3f-%.3f] (%s) | %.1f (%s) | %.0f | %.1f [%.1f-%.1f] (%s) |" % (
            n, hb, fmt_pct(pct(hb, hb0)), med(hbw), min(hbw), max(hbw), fmt_pct(pct(med(hbw), hbw0)),
            pfl, fmt_pct(pct(pfl, pf0)), pfl * 1e6 / nfault,
            med(pfw), min(pfw), max(pfw), fmt_pct(pct(med(pfw), pfw0))))
    p("")

    # Memory.
    p("## Memory and size")
    p("")
    p("| configuration | page_ext bytes (512 MiB) | page_ext bytes (4 GiB) | MemTotal / MemAvailable 512 MiB (kB) | "
      "MemTotal / MemAvailable 4 GiB (kB) | vmlinux text / data / bss |")
    p("|---|---|---|---|---|---|")
    for n in names:
        def mi(s):
            t = re.search(r"MemTotal:\s*(\d+)", s.get("meminfo", ""))
            v = re.search(r"MemAvailable:\s*(\d+)", s.get("meminfo", ""))
            return "%s / %s" % (t.group(1) if t else "?", v.group(1) if v else "?")
        m4 = re.search(r"allocated (\d+) bytes of page_ext", mem4[n].get("bootlog", ""))
        sz = read(os.path.join(o, "size-" + ic[n]["build"])).split()
        p("| %s | %d | %d | %s | %s | %s |" % (
            n, pe_bytes[n], int(m4.group(1)) if m4 else 0, mi(ic[n]["sec"]), mi(mem4[n]),
            " / ".join(sz[:3]) if len(sz) >= 3 else "?"))
    p("")
    p("page-flags storage as the guest reports it (`/sys/kernel/debug/alloc_tag/storage`, 512 MiB, after boot):")
    p("")
    p("```")
    p(ic[pf]["sec"].get("storage", "").strip())
    p("```")
    p("")

    # Boot.
    p("## Boot: instructions to userspace (`-icount shift=0`)")
    p("")
    p("Read by a static program run first by the guest's command: the TSC (instructions "
      "since the machine's reset: firmware, decompression, kernel, /init's mounts) and "
      "CLOCK_BOOTTIME (since the kernel's timekeeping started).")
    p("")
    p("| configuration | from reset (M) | from timekeeping (M) | against baseline |")
    p("|---|---|---|---|")
    tsc0 = None
    for n in names:
        m = re.search(r"tsc=(\d+) boottime_ns=(\d+)", ic[n]["sec"].get("clock", ""))
        tsc, bt = (int(m.group(1)), int(m.group(2))) if m else (0, 0)
        tsc0 = tsc0 or tsc
        p("| %s | %.1f | %.1f | %s |" % (n, tsc / 1e6, bt / 1e6, fmt_pct(pct(tsc, tsc0))))
    p("")

    top = os.path.dirname(os.path.dirname(os.path.abspath(o)))
    p("hackbench runs 160 tasks on 2 vCPUs: even under -icount the interleaving of the two "
      "vCPUs, and so the total, changes from boot to boot (its spread is larger than the "
      "differences between configurations); the page-fault loop is one task and repeats "
      "closely. Read the page-fault column and the microbenchmark for the hooks' cost.")
    p("")
    p("## QEMU command lines")
    p("")
    for d in ("icount/page-flags", "wall/1/page-flags", "mem4g/page-flags"):
        cmd = read(os.path.join(o, d, "qemu.cmd"))
        cmd = cmd.replace(top + "/", "")
        p("- %s (the initrd is the build's initramfs, then build/bench/bench.cpio with perf, "
          "then the command):" % d.split("/")[0])
        p("")
        p("  ```")
        p("  " + cmd)
        p("  ```")
    p("")
    p("Reproduce: `make bench` (about %d minutes here)." % max(1, round(a.seconds / 60)))

    with open(a.md, "w") as f:
        f.write("\n".join(L) + "\n")

    # Plot: overhead against baseline, instructions and wall time.
    dat = a.png + ".dat"
    others = [n for n in names if n != base]
    with open(dat, "w") as f:
        for c in CASES:
            f.write('"%s" ' % CASE_TITLE[c] + " ".join("%.2f" % pct(ins[n][c], ins[base][c]) for n in others) + "\n")
        f.write("\n\n")
        for c in CASES:
            f.write('"%s" ' % CASE_TITLE[c] + " ".join("%.2f" % pct(wmed[n][c], wmed[base][c]) for n in others) + "\n")
    plots = []
    for idx, title in ((0, "guest instructions (-icount shift=0)"), (1, "wall-clock time, plain TCG (medians)")):
        cols = ", ".join("'%s' index %d using %d:xtic(1) title '%s'" % (dat, idx, i + 2, n)
                         for i, n in enumerate(others))
        plots.append("set title 'Allocation + free overhead against no profiling: %s'\nplot %s" % (title, cols))
    gp = """set terminal pngcairo size 1100,900 font ',10' noenhanced
set output '%s'
set multiplot layout 2,1
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set ylabel 'overhead (%%)'
set grid ytics
set key top left
set xzeroaxis
set arrow 1 from graph 0, first 5.5 to graph 1, first 5.5 nohead dt 2 lc rgb 'red'
%s
%s
unset multiplot
""" % (a.png, plots[0], plots[1])
    r = subprocess.run(["gnuplot"], input=gp, text=True, capture_output=True)
    if r.returncode:
        sys.stderr.write(r.stderr)
        return 1
    os.unlink(dat)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except ValueError as e:
        sys.stderr.write("bench-report: error: %s\n" % e)
        sys.exit(1)
