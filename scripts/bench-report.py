#!/usr/bin/env python3
"""bench-report.py: the results files and plot of `make bench`.

Reads the guests' outputs that scripts/bench.sh left in --out and writes
a Markdown report of every figure (--md), the instruction and cache
figures as JSON (--json, compared with --previous when given) and a plot
of the headline comparison (--png, with gnuplot).
`bench-report.py --parse-micro FILE` only parses microbenchmark lines and
prints them (the smoke test and scripts/bench-commits.sh use it).
"""
import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys

CASES = ["page-o0", "page-o0-ktag", "page-o0-batch", "page-o0-batch-ktag",
         "page-o1", "page-o3", "page-o9", "kmalloc-8-240"]
CASE_TITLE = {
    "page-o0": "order 0", "page-o0-ktag": "order 0, kernel tag",
    "page-o0-batch": "order 0, batch", "page-o0-batch-ktag": "order 0, batch, kernel tag",
    "page-o1": "order 1", "page-o3": "order 3", "page-o9": "order 9",
    "kmalloc-8-240": "kmalloc 8..240 B",
    "kmalloc-8-240-memcg": "kmalloc 8..240 B, memcg online",
}
# run-bench's memcg part: the kmalloc case once a memory cgroup exists,
# in the kernels that have memcg.
MEMCG_CASE = "kmalloc-8-240-memcg"
# The cases of the cache table and of the plot.
CACHE_CASES = ["page-o0", "page-o0-ktag", "page-o0-batch", "page-o0-batch-ktag", "kmalloc-8-240"]
PLOT_CASES = ["page-o0", "page-o0-ktag", "page-o0-batch", "page-o1", "page-o3", "kmalloc-8-240"]
MICRO_RE = re.compile(r"pftag_bench: run=(\d+) case=(\S+) loops=(\d+) ns=(\d+)")
CACHE_RE = re.compile(r"pftag-cache: window=(\d+) vcpu=(\d+) insns=(\d+) loads=(\d+) "
                      r"stores=(\d+) l1_misses=(\d+) l2_misses=(\d+)")
MODEL_RE = re.compile(r"pftag-cache: model (.*)")
SET_TITLE = {
    "minimal": "minimal kernel (base + mm fragments)",
    "distro": "distribution-like kernel (+ distro.config)",
}
DISTRO_DIFF = """\
What the distribution-like configuration still does not share with
Debian's 6.12 amd64 config on these paths: the `page->flags` layout
(NR_CPUS 8192, NODES_SHIFT 10, NUMA balancing and MGLRU leave Debian one
spare bit, so the series keeps the tag index in page_ext there, as the
`debian-layout` configuration, built with that layout, does; the other
guests keep page-flags storage), `DEFERRED_STRUCT_PAGE_INIT`, `PAGE_REPORTING`, `HUGETLB_PAGE_OPTIMIZE_VMEMMAP`, CPU
mitigations (retpolines and the return thunks, which change the cost of
every indirect call and return), module signing and the thousands of
drivers, file systems and their tags (Debian's kernel holds about ten
times the tags of these guests). Memory allocation profiling is off in
Debian's config (`MEM_ALLOC_PROFILING` not set)."""


# The memory ledger: debugfs alloc_tag/memory, one "name: bytes" line a
# kind (total: all but the slab tag blocks in slabs' leftover space).
LEDGER_KINDS = ["page_ext_slots", "slab_tag_blocks_kmalloc", "slab_tag_blocks_in_slab",
                "percpu_counters", "module_map", "counter_table", "tag_indices", "total"]
LEDGER_TITLE = {
    "page_ext_slots": "page_ext slots", "slab_tag_blocks_kmalloc": "slab tags, kmalloc'd",
    "slab_tag_blocks_in_slab": "slab tags in leftover space", "percpu_counters": "per-CPU counters",
    "module_map": "module map", "counter_table": "counter table",
    "tag_indices": "tag indices", "total": "total",
}
NONE_HERE = "—"     # a kind the kernel has no storage of (stock 6.12's module map, ...)
# struct alloc_tag_counters: two u64, per tag and possible CPU.
COUNTERS_BYTES = 16


def parse_runs(text, cases, what):
    """{case: [ns per iteration, one per run]} of pftag_bench's lines in
    TEXT, which must report 'done' and every case of CASES (WHAT names the
    part in the errors)."""
    out = {}
    for m in MICRO_RE.finditer(text):
        out.setdefault(m.group(2), []).append(int(m.group(4)) / int(m.group(3)))
    if "pftag_bench: done" not in text:
        raise ValueError("the %s did not report 'done'" % what)
    missing = [c for c in cases if c not in out]
    if missing:
        raise ValueError("cases missing from the %s: %s" % (what, " ".join(missing)))
    return out


def parse_micro(text):
    """{case: [ns per iteration, one per run]} of the micro part."""
    return parse_runs(text, CASES, "microbenchmark")


def parse_memcg(text):
    """{MEMCG_CASE: [ns per iteration, ...]} of run-bench's memcg part; {}
    for a kernel without memcg."""
    if not text.strip() or text.strip() == "none":
        return {}
    return parse_runs(text, [MEMCG_CASE], "memcg part")


def micro_order(text):
    """The case names in the order the module ran them (one per window)."""
    return [m.group(2) for m in MICRO_RE.finditer(text)]


def parse_cache(text, order, loops):
    """{case: {insns, loads, stores, l1, l2} per pair} of the plugin's windows:
    the median over the runs of each figure, as for the instructions."""
    wins = [tuple(int(x) for x in m.groups()) for m in CACHE_RE.finditer(text)]
    wins.sort()
    if len(wins) != len(order):
        raise ValueError("the cache plugin reported %d windows for %d measured loops"
                         % (len(wins), len(order)))
    runs = {}
    for case, w in zip(order, wins):
        _, _, insns, loads, stores, l1, l2 = w
        runs.setdefault(case, []).append({"insns": insns / loops, "loads": loads / loops,
                                          "stores": stores / loops, "l1": l1 / loops,
                                          "l2": l2 / loops})
    return {case: {k: med([r[k] for r in rs]) for k in rs[0]} for case, rs in runs.items()}


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


def perf_runs(text):
    """[{event: value}] of the `perf stat -x,` runs in TEXT, in order, each
    with its load's own figures (hackbench's total time, pftag-faults'
    pages): a run ends where a figure it already has comes again."""
    runs, ev = [], {}

    def put(k, v):
        nonlocal ev
        if k in ev:
            runs.append(ev)
            ev = {}
        ev[k] = v
    for line in text.splitlines():
        f = line.split(",")
        if len(f) >= 3 and f[2] and re.match(r"^[0-9.]+$", f[0]):
            put(f[2], float(f[0]))
        m = re.search(r"Total time: ([0-9.]+) \[sec\]", line)
        if m:
            put("total", float(m.group(1)))
        m = re.match(r"pages=(\d+)", line)
        if m:
            put("pages", int(m.group(1)))
    if ev:
        runs.append(ev)
    return runs


def perf_stat(text):
    """{event: value} of the first `perf stat -x,` run in TEXT."""
    runs = perf_runs(text)
    return runs[0] if runs else {}


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def pct(x, base):
    return (x / base - 1) * 100 if base else float("nan")


def fmt_pct(x):
    return "%+.1f%%" % x


def ovh(x, base, f="%.0f"):
    """'673 (+43, +6.8%)': X, then its overhead against BASE in the same
    unit, then in percent (F formats the figures)."""
    return (f + " (%s, %s)") % (x, (f.replace("%", "%+", 1)) % (x - base), fmt_pct(pct(x, base)))


def table(p, rows, cases, cell):
    """A markdown table: a row per configuration of ROWS, a column per case
    of CASES, CELL(configuration, case) the text of a cell."""
    p("| configuration | " + " | ".join(CASE_TITLE[c] for c in cases) + " |")
    p("|---|" + "---|" * len(cases))
    for n in rows:
        p("| %s | %s |" % (n, " | ".join(cell(n, c) for c in cases)))


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


def obj_id(build, s):
    return build + ("+distro" if s == "distro" else "")


def load_set(o, s, configs, rounds):
    """Everything the guests of set @s reported."""
    d = {}
    for name, build, append in configs:
        sec = sections(os.path.join(o, s, "icount", name, "out.log"))
        e = {"sec": sec, "micro": parse_micro(sec.get("micro", "")),
             "hb": perf_runs(sec.get("hackbench", "")), "pf": perf_stat(sec.get("faults", "")),
             "build": build, "append": append}
        e["micro"].update(parse_memcg(sec.get("memcg", "")))
        cdir = os.path.join(o, s, "cache", name)
        if os.path.isdir(cdir):
            csec = sections(os.path.join(cdir, "out.log"))
            loops = int(re.search(r"loops=(\d+)", csec.get("micro", "")).group(1))
            ctext = read(os.path.join(cdir, "cache.log"))
            e["cache"] = parse_cache(ctext, micro_order(csec.get("micro", "")), loops)
            m = MODEL_RE.search(ctext)
            e["model"] = m.group(1) if m else "?"
            e["cache_loops"] = loops
            e["cache_runs"] = micro_order(csec.get("micro", "")).count("page-o0")
        w = {"micro": {c: [] for c in CASES}, "hb": [], "pf": []}
        for r in range(1, rounds + 1):
            p = os.path.join(o, s, "wall", str(r), name, "out.log")
            if not os.path.exists(p):
                continue
            ws = sections(p)
            for c, xs in parse_micro(ws.get("micro", "")).items():
                w["micro"].setdefault(c, []).extend(xs)
            w["hb"].extend(perf_runs(ws.get("hackbench", "")))
            w["pf"].append(perf_stat(ws.get("faults", "")))
        e["wall"] = w
        p = os.path.join(o, s, "mem4g", name, "out.log")
        e["mem4g"] = sections(p) if os.path.exists(p) else {}
        d[name] = e
    return d


def rep_stos_note(data, ins, sets):
    """The paragraph on TCG's count of string instructions, with the figures
    of this run: what zeroing a page adds to the distro set's baseline."""
    I = ins["distro"]
    b = I["baseline"]["page-o0"]
    m = ins["minimal"] if "minimal" in sets else None
    try:
        z = (data["distro"]["baseline"]["cache"]["page-o0"]["stores"] -
             data["minimal"]["baseline"]["cache"]["page-o0"]["stores"])
        zs = " (the cache model counts {:,.0f} more stores a pair than in the minimal set)".format(z)
    except KeyError:
        z, zs = 4096, ""
    rest = b - z
    return ("**Reading the distribution-like set.** Under TCG, `rep stos` and `rep movs` count "
            "one instruction per iteration. This set zeroes every page it allocates "
            "(`init_on_alloc`) with `clear_page_erms()`'s `rep stosb`, 4,096 iterations a "
            "page{zs}. Of its order-0 baseline of {b:,.0f} instructions a pair{mb}, about "
            "{z:,.0f} are that one instruction, which hardware with fast string operations runs "
            "in about a hundred cycles. Without it the pair is about {rest:,.0f} instructions; "
            "counting the page clear as worth 0 to 200 instructions, the baseline is {lo:.0f} to "
            "{hi:.0f} times what hardware would show, and every percentage of this set reads "
            "that many times smaller than it would there (its kmalloc baseline, {kb:,.0f}{km}, "
            "zeroes each object too). Compare the sets in instructions: the page-flags overhead "
            "at order 0 is {pd:+.0f} a pair here{pm}. Quote no percentage of this set without "
            "its absolute figure.").format(
                zs=zs, b=b, z=z, rest=rest, lo=b / (rest + 200), hi=b / rest,
                mb=" (the minimal set's: {:,.0f})".format(m["baseline"]["page-o0"]) if m else "",
                kb=I["baseline"]["kmalloc-8-240"],
                km=" against {:,.0f}".format(m["baseline"]["kmalloc-8-240"]) if m else "",
                pd=I["page-flags"]["page-o0"] - b,
                pm=" and {:+.0f} in the minimal set".format(
                    m["page-flags"]["page-o0"] - m["baseline"]["page-o0"]) if m else "")


def kv(text):
    """{key: value} of "key: value" lines; the "allocinfo" lines in a list."""
    d = {"allocinfo": []}
    for line in text.splitlines():
        m = re.match(r"^([A-Za-z_][\w()]*):\s*(.*?)\s*$", line)
        if not m:
            continue
        if m.group(1) == "allocinfo":
            d["allocinfo"].append(m.group(2))
        else:
            d[m.group(1)] = m.group(2)
    return d


def ncpus(spec):
    """The CPUs of a cpulist such as 0-1 or 0-3,8."""
    n = 0
    for part in spec.split(","):
        a, _, b = part.partition("-")
        n += int(b or a) - int(a) + 1
    return n


def allocinfo_bytes(src, func):
    """Bytes of /proc/allocinfo's lines of function FUNC, None without one."""
    xs = [int(l.split()[0]) for l in src["allocinfo"] if l.split()[-1] == "func:" + func]
    return sum(xs) if xs else None


def ledger_figures(build, sec, phase):
    """({kind: bytes, None when not reported, NONE_HERE}, where from) of one
    phase ("boot", "load") of a ledger boot; (None, why) without one."""
    if "ledger-sources " + phase not in sec:
        return None, "no figures"
    if build == "baseline":
        return None, "not built in"
    src = kv(sec["ledger-sources " + phase])
    if src.get("ledger_file") == "present":
        led = kv(sec.get("ledger " + phase, ""))
        return ({k: int(led[k]) if re.match(r"^\d+$", led.get(k, "")) else None
                 for k in LEDGER_KINDS}, "alloc_tag/memory")
    if not build.startswith("stock"):
        return {k: None for k in LEDGER_KINDS}, "no alloc_tag/memory"
    # Stock 6.12: page_ext's boot line, the slab vectors' allocinfo line,
    # and a pair of u64 counters per tag (allocinfo's lines but its two
    # header lines) and possible CPU.
    f = dict.fromkeys(LEDGER_KINDS, NONE_HERE)
    m = re.match(r"allocated (\d+) bytes of page_ext", src.get("bootlog", ""))
    f["page_ext_slots"] = int(m.group(1)) if m else None
    f["slab_tag_blocks_kmalloc"] = allocinfo_bytes(src, "alloc_slab_obj_exts")
    lines = src.get("allocinfo_lines", "")
    cpus = src.get("possible_cpus", "")
    f["percpu_counters"] = ((int(lines) - 2) * ncpus(cpus) * COUNTERS_BYTES
                            if lines.isdigit() and re.match(r"^[\d,-]+$", cpus) else None)
    parts = [f[k] for k in ("page_ext_slots", "slab_tag_blocks_kmalloc", "percpu_counters")]
    f["total"] = None if None in parts else sum(parts)
    return f, "6.12: allocinfo, boot line"


def load_ledger(o, s, configs):
    """{name: {boot, load: figures; src: where from; slab: {phase: kB}; load_ns,
    files, pairs}} of the ledger boots of set S; {} when the run has none."""
    out = {}
    for name, build, append in configs:
        path = os.path.join(o, s, "ledger", name, "out.log")
        if not os.path.exists(path):
            continue
        sec = sections(path)
        e = {}
        for ph in ("boot", "load"):
            e[ph], e["src_" + ph] = ledger_figures(build, sec, ph)
            src = kv(sec.get("ledger-sources " + ph, ""))
            m = re.match(r"(\d+) kB", src.get("Slab", ""))
            e.setdefault("slab", {})[ph] = int(m.group(1)) if m else None
            # A function without a line in an allocinfo: no such call site.
            e.setdefault("allocinfo", {})[ph] = {
                f: (allocinfo_bytes(src, f) if src.get("allocinfo_lines", "").isdigit() else None)
                for f in ("alloc_slab_obj_exts", "slab_tag_block_create")}
            if src.get("allocinfo_lines", "").isdigit():
                for f, v in e["allocinfo"][ph].items():
                    if v is None:
                        e["allocinfo"][ph][f] = NONE_HERE
        ld = sec.get("ledger-load", "")
        m = re.search(r"files=(\d+) .*ns=(\d+)", ld)
        e["files"], e["files_ns"] = (int(m.group(1)), int(m.group(2))) if m else (None, None)
        m = re.search(r"socketpairs=(\d+) .*ns=(\d+)", ld)
        e["pairs"], e["pairs_ns"] = (int(m.group(1)), int(m.group(2))) if m else (None, None)
        out[name] = e
    return out


def fmt_bytes(x):
    if x is None:
        return "n/a"
    if x == NONE_HERE:
        return NONE_HERE
    return "{:,}".format(x)


def delta(a, b):
    """B - A, None when either is missing; NONE_HERE when both are."""
    if a == NONE_HERE and b == NONE_HERE:
        return NONE_HERE
    return b - a if isinstance(a, int) and isinstance(b, int) else None


def ratio(x, y):
    """'23%': X of Y, n/a when either is missing."""
    return "%.0f%%" % (100.0 * x / y) if x is not None and y else "n/a"


def per_set(counts):
    """'20,000 (2,000 in the distro set)': the first set's count, the others in parentheses."""
    sets = list(counts)
    text = "{:,}".format(counts[sets[0]])
    if len(sets) > 1:
        text += " (%s)" % ", ".join("{:,} in the %s set".format(counts[s]) % s for s in sets[1:])
    return text


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--parse-micro")
    ap.add_argument("--out")
    ap.add_argument("--md")
    ap.add_argument("--png")
    ap.add_argument("--json")
    ap.add_argument("--previous")
    ap.add_argument("--seconds", type=int, default=0)
    ap.add_argument("--rounds", type=int, default=0)
    ap.add_argument("--sets", default="minimal distro")
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
    sets = a.sets.split()
    o = a.out
    data = {s: load_set(o, s, configs, a.rounds) for s in sets}
    ledger = {s: load_ledger(o, s, configs) for s in sets}
    base, pf, pe, st, st_off = "baseline", "page-flags", "page_ext", "stock", "stock-off"
    # The median of a boot's runs: a run that some other work of the
    # guest (a kworker, a timer) interrupts for ~0.1 M instructions stands
    # out from the others and does not move the figure.
    # The cases of each set: the memcg case where every kernel of the set
    # has memcg.
    cases = {s: CASES + ([MEMCG_CASE] if all(MEMCG_CASE in data[s][n]["micro"] for n in names)
                         else []) for s in sets}
    ins = {s: {n: {c: med(data[s][n]["micro"][c]) for c in cases[s]} for n in names}
           for s in sets}

    L = []
    p = L.append
    mach = machine()
    p("# make bench: the series against no profiling and against stock Linux 6.12")
    p("")
    p("Machine: %s, %s cores, %s RAM; %s, host kernel %s; %s." % (
        mach["cpu"], mach["cores"], mach["ram"], mach["os"], mach["host kernel"], mach["qemu"]))
    p("Series: `%s` of the assembled tree. Every guest: 512 MiB, 2 vCPUs, TCG; `make bench` "
      "took %d s." % (read(os.path.join(o, "series-head"), "?"), a.seconds))
    la = read(os.path.join(o, "loadavg"))
    if la:
        p("Host load average (1, 5, 15 min) at the start and end of each phase: " +
          "; ".join("%s %s" % (l.split()[0], " ".join(l.split()[1:])) for l in la.splitlines()) +
          ". The guests' vCPUs are host threads: anything else running on the host shows in "
          "the wall-clock figures (not in the instruction or cache counts).")
    p("")
    version = (read(os.path.join(o, "release-" + obj_id("baseline", sets[0])), "?")
               .split("-")[0])
    p("Kernels: for each set, `baseline` (profiling not built in), `stock` (Linux %s "
      "without the series, profiling built in and on, page tags in page_ext as 6.12 ships) and "
      "`profiling` (%s + the series); `+layout-debian` builds the same with the " % (version, version) +
      "`page->flags` layout of Debian's kernel (1 spare bit: the series keeps page tags in "
      "page_ext there), stock included, so that debian-layout is compared with stock on its "
      "own layout. Every config has `CONFIG_JUMP_LABEL=y` (static keys patched as "
      "distributions build them).")
    p("")
    for s in sets:
        p("### %s" % SET_TITLE[s])
        p("")
        p("| # | configuration | kernel | kernel arguments | mode the guest reports |")
        p("|---|---|---|---|---|")
        for i, (name, build, append) in enumerate(configs, 1):
            sec = data[s][name]["sec"]
            stg = re.search(r"^storage: (.+)$", sec.get("storage", ""), re.M)
            mp = sec.get("mem_profiling", "?").strip()
            if build.split("+")[0] == "baseline":
                mode = "profiling not built in"
            elif build.startswith("stock"):
                mode = "mem_profiling=%s, storage page_ext (6.12)" % mp
            else:
                mode = "mem_profiling=%s, storage %s" % (mp, stg.group(1) if stg else "?")
            p("| %d | %s | %s | `%s` | %s |" % (i, name, read(os.path.join(o, "release-" + obj_id(build, s))),
                                               append or "(none)", mode))
        p("")
    p(DISTRO_DIFF)
    p("")

    # Instructions.
    p("## Microbenchmark: guest instructions per allocation + free")
    p("")
    loops = per_set({s: int(re.search(r"loops=(\d+)", data[s][base]["sec"]["micro"]).group(1))
                     for s in sets})
    runs = len(data[sets[0]][base]["micro"]["page-o0"])
    fracs = {m.group(1) for s in sets for d in data[s].values()
             for m in [re.search(r"pcp_high_fraction=(\d+)", d["sec"].get("micro", ""))] if m}
    pcp_note = (" The per-CPU lists' sizes are fixed (`vm.percpu_pagelist_high_fraction=%s`: "
                "no auto-tuning of `pcp->high`); before every case the module takes CPU 1 "
                "offline and back, so that its lists start empty, and before orders 1 and 3 "
                "leaves the buddy allocator free blocks of that order (the watermark check's walk "
                "over the free areas then ends at the first); vmstat's periodic work is held off "
                "while the loops run (`vm.stat_interval=3600`). Without that, what boot left there "
                "moved the batch and order-9 cases by up to 1.6 times and orders 1 and 3 by 4 to 8 "
                "instructions a pair from one boot to the next." %
                "/".join(sorted(fracs))) if fracs else \
        " The per-CPU lists' sizes were left to the allocator's auto-tuning."
    p("`tests/modules/pftag_bench.c`: %s pairs per case on a kthread bound to CPU 1, after 1/8 "
      "as many warm-up pairs; cost = ktime_get_ns() delta / pairs under `-icount shift=0` "
      "(1 ns = 1 instruction; %s runs per boot, their median shown). The loops run in a module: \"order N\" is charged to the module's "
      "own call site (a module tag: the free decodes its index through the module table), "
      "\"kernel tag\" to the kernel's first tag (`__start_alloc_tags`), set around the "
      "allocation exactly as `alloc_hooks()` does at a kernel call site. \"batch\" allocates "
      "4096 pages before freeing them, so that every operation touches another struct page "
      "(and page_ext entry).%s Overhead against baseline in parentheses: instructions per pair, "
      "then percent." % (loops, runs, pcp_note))
    p("")
    if any(MEMCG_CASE in cases[s] for s in sets):
        p("\"%s\": the kmalloc case again at the end of the same boot, once a memory cgroup "
          "exists (the memory controller enabled in the root's `cgroup.subtree_control` and a "
          "child created, as systemd does at boot), which brings memcg's kmem accounting "
          "online for good: memcg's slab hooks, patched NOPs until then, run at every "
          "kmalloc() and kfree(), of caches memcg does not account too. It is what the "
          "kernels with memcg cost on a machine whose init creates cgroups; the allocations "
          "themselves are not accounted (no `__GFP_ACCOUNT`)." % CASE_TITLE[MEMCG_CASE])
        p("")
    rep = 0.0
    for s in sets:
        p("### %s" % SET_TITLE[s])
        p("")
        table(p, names, cases[s], lambda n, c: "%.0f" % ins[s][n][c] if n == base else
              ovh(ins[s][n][c], ins[s][base][c]))
        for n in names:
            for c in cases[s]:
                xs = data[s][n]["micro"][c]
                rep = max(rep, (max(xs) / min(xs) - 1) * 100)
        p("")
    p("Largest spread (largest run over smallest) of the runs of one boot, over every case "
      "and configuration: %.2f%%." % rep)
    p("")
    if "distro" in sets:
        p(rep_stos_note(data, ins, sets))
        p("")

    # Previous run.
    cur = {"series": read(os.path.join(o, "series-head")),
           "instructions": ins,
           "cache": {s: {n: data[s][n].get("cache", {}) for n in names} for s in sets},
           "ledger": {s: {n: {k: ledger[s][n][k] for k in ("boot", "load", "slab", "allocinfo",
                                                          "files", "pairs")}
                          for n in ledger[s]} for s in sets}}
    if a.previous and os.path.exists(a.previous):
        with open(a.previous) as f:
            prev = json.load(f)
        diffs = []
        for s in sets:
            for n in names:
                for c in cases[s]:
                    try:
                        q = prev["instructions"][s][n][c]
                    except KeyError:
                        continue
                    diffs.append((abs(ins[s][n][c] / q - 1) * 100, s, n, c, q))
        if diffs:
            d = max(diffs)
            p("Against the previous run (`%s`, series `%s`): %d figures compared, largest "
              "difference %+.1f instructions, %.2f%% (%s, %s, %s: %.1f then %.1f)." % (
                  os.path.basename(a.previous), prev.get("series", "?"), len(diffs),
                  ins[d[1]][d[2]][d[3]] - d[4], d[0], d[1], d[2], CASE_TITLE[d[3]], d[4],
                  ins[d[1]][d[2]][d[3]]))
            p("")

    def slab_added(lg, n):
        """Bytes profiling added to slab during the load: the ledger's kmalloc'd
        slab tags (stock: its slab vectors, from allocinfo)."""
        e = lg.get(n)
        if not e or not e["boot"] or not e["load"]:
            return None
        return delta(e["boot"]["slab_tag_blocks_kmalloc"], e["load"]["slab_tag_blocks_kmalloc"])

    def slab_growth(lg, n):
        """kB meminfo's Slab grew by during the load, over baseline's growth."""
        g = {}
        for m in (n, base):
            e = lg.get(m)
            g[m] = delta(e["slab"]["boot"], e["slab"]["load"]) if e else None
        return g[n] - g[base] if None not in g.values() else None

    def load_words(lg):
        e = lg.get(base) or next(iter(lg.values()))
        return "{:,} tmpfs files and {:,} socket pairs".format(e["files"] or 0, e["pairs"] or 0)

    def slab_targets(lg, s):
        if pf not in lg or st not in lg:
            return []
        x, y = slab_added(lg, pf), slab_added(lg, st)
        memcg = "with" if s == "distro" else "without"
        out = ["- slab, %s (%s `CONFIG_MEMCG`): bytes page-flags profiling added to slab (the "
               "ledger's kmalloc'd slab tags), %s against stock 6.12's %s (its slab vectors): %s "
               "(target: at most a quarter)" % (
                   load_words(lg), memcg, fmt_bytes(x), fmt_bytes(y),
                   "n/a (no ledger in this kernel)" if x is None or y is None else
                   "%s, **%s**" % (ratio(x, y), "met" if x <= y / 4 else "missed"))]
        gx, gy = slab_growth(lg, pf), slab_growth(lg, st)
        if gx is not None and gy is not None:
            out.append("- the same load, `Slab` of /proc/meminfo: page-flags grew by %s kB over "
                       "no profiling's growth, stock 6.12 by %s kB: %s, %s (target: at most a "
                       "quarter)" % ("{:+,}".format(gx), "{:+,}".format(gy), ratio(gx, gy),
                                     "**met**" if gy > 0 and gx <= gy / 4 else "**missed**"))
        return out

    def debian_targets(I, s):
        """Debian's layout against no profiling on that layout (issue 51's
        targets), where make bench measured that baseline."""
        dl, sdl, bdl = "debian-layout", "stock-debian-layout", "baseline-debian-layout"
        if not all(n in I for n in (dl, sdl, bdl)):
            return []
        out = ["Debian's `page->flags` layout (the series in page_ext by itself), against no "
               "profiling on that layout (`%s`): instructions a pair, the series' overhead, "
               "stock's, their ratio." % bdl, "",
               "| case | no profiling | series | stock | series / stock |",
               "|---|---|---|---|---|"]
        for c in cases[s]:
            if c not in I[bdl]:
                continue
            b = I[bdl][c]
            so, po = I[sdl][c] - b, I[dl][c] - b
            out.append("| %s | %.0f | %.0f (%+.0f) | %.0f (%+.0f) | %s |" % (
                CASE_TITLE[c], b, I[dl][c], po, I[sdl][c], so,
                "%.0f%%" % (100 * po / so) if so > 0 else "n/a"))
        out.append("")
        b0 = I[bdl]["page-o0"]
        so, po = I[sdl]["page-o0"] - b0, I[dl]["page-o0"] - b0
        out.append("- order 0, Debian's layout: %+.0f against stock's %+.0f (%.1f%%): %s "
                   "(target: at most a quarter)" % (
                       po, so, 100 * po / so if so else float("nan"),
                       "**met**" if so > 0 and po <= so / 4 else "**missed**"))
        for c in ("page-o1", "page-o3"):
            b = I[bdl][c]
            out.append("- %s, Debian's layout: %+.0f against order 0's %+.0f: %s (target: at "
                       "most order 0's plus 10)" % (
                           CASE_TITLE[c], I[dl][c] - b, po,
                           "**met**" if I[dl][c] - b <= po + 10 else "**missed**"))
        out.append("")
        return out

    # Targets.
    p("## Targets")
    p("")
    p("Instructions per pair, the overhead against no profiling in instructions, then in "
      "percent.%s" % (" In the distribution-like set, read the instructions: its percentages "
                     "are against a baseline that TCG inflates (above)." if "distro" in sets else ""))
    p("")
    for s in sets:
        I = ins[s]
        p("### %s" % SET_TITLE[s])
        p("")
        for c in ("page-o0", "page-o0-ktag"):
            b = I[base][c]
            off = pct(I["off"][c], b)
            p("- %s, built in but off: %s against no profiling's %.0f: %s (target: at most +1%%)" % (
                CASE_TITLE[c], ovh(I["off"][c], b), b, "**met**" if off <= 1.0 else "**missed**"))
            on = pct(I[pf][c], b)
            p("- %s, page flags on: %s against no profiling's %.0f: %s (target: at most +7%%)" % (
                CASE_TITLE[c], ovh(I[pf][c], b), b, "**met**" if on <= 7.0 else "**missed**"))
            so, po = I[st][c] - b, I[pf][c] - b
            p("- %s, page-flags overhead against stock 6.12's: %+.0f against %+.0f instructions "
              "(%.0f%%): %s (target: at most a quarter)" % (
                  CASE_TITLE[c], po, so, 100 * po / so if so else float("nan"),
                  "**met**" if so > 0 and po <= so / 4 else "**missed**"))
            p("- %s, page_ext storage of the series: %.0f against stock's %.0f instructions: %s "
              "(target: no more than stock)" % (
                  CASE_TITLE[c], I[pe][c], I[st][c], "**met**" if I[pe][c] <= I[st][c] else "**missed**"))
            p("- %s, built in but off, series against stock off: %.0f against %.0f" % (
                CASE_TITLE[c], I["off"][c], I[st_off][c]))
        c = "kmalloc-8-240"
        b = I[base][c]
        off = pct(I["off"][c], b)
        p("- %s, built in but off: %s against no profiling's %.0f: %s (target: at most +1%%)" % (
            CASE_TITLE[c], ovh(I["off"][c], b), b, "**met**" if off <= 1.0 else "**missed**"))
        so, po = I[st][c] - b, I[pf][c] - b
        p("- %s, on: %+.0f against stock 6.12's %+.0f instructions (%.0f%%): %s (target: at most "
          "a third)" % (CASE_TITLE[c], po, so, 100 * po / so if so else float("nan"),
                        "**met**" if so > 0 and po <= so / 3 else "**missed**"))
        if MEMCG_CASE in I[base]:
            c = MEMCG_CASE
            b = I[base][c]
            so, po = I[st][c] - b, I[pf][c] - b
            p("- %s (memcg's kmem accounting online, as on a machine whose init creates cgroups): "
              "built in but off %s against no profiling's %.0f; on %+.0f against stock 6.12's "
              "%+.0f (%.0f%%); stock off %+.0f" % (
                  CASE_TITLE[c], ovh(I["off"][c], b), b, po, so,
                  100 * po / so if so else float("nan"), I[st_off][c] - b))
        o0 = I[pf]["page-o0"] - I[base]["page-o0"]
        for c in ("page-o1", "page-o3"):
            b = I[base][c]
            p("- %s, page flags: %+.0f against order 0's %+.0f: %s (target: at most order 0's "
              "plus 10)" % (CASE_TITLE[c], I[pf][c] - b, o0,
                            "**met**" if I[pf][c] - b <= o0 + 10 else "**missed**"))
            for n, ref in ((pe, st), ("debian-layout", "stock-debian-layout")):
                if n not in I:
                    continue
                # Stock on the same page->flags layout where it was measured.
                ref = ref if ref in I else st
                p("- %s, %s: %.0f against %s's %.0f instructions: %s (target: no more "
                  "than stock)" % (CASE_TITLE[c], n, I[n][c], ref, I[ref][c],
                                   "**met**" if I[n][c] <= I[ref][c] else "**missed**"))
        for line in slab_targets(ledger[s], s):
            p(line)
        p("")
        for line in debian_targets(I, s):
            p(line)

    # Decomposition.
    p("## Where the instructions go (per pair)")
    p("")
    for s in sets:
        I = ins[s]
        p("### %s" % SET_TITLE[s])
        p("")
        p("| case | stock off - baseline | stock on - stock off | series off - baseline | "
          "page flags - series off | page_ext - series off | page flags - stock |")
        p("|---|---|---|---|---|---|---|")
        for c in cases[s]:
            p("| %s | %+.0f | %+.0f | %+.0f | %+.0f | %+.0f | %+.0f |" % (
                CASE_TITLE[c], I[st_off][c] - I[base][c], I[st][c] - I[st_off][c],
                I["off"][c] - I[base][c], I[pf][c] - I["off"][c], I[pe][c] - I["off"][c],
                I[pf][c] - I[st][c]))
        p("")
    p("kmalloc/kfree never touches a page tag: its overhead is the slab hooks "
      "(`alloc_tagging_slab_alloc_hook()` and `alloc_tagging_slab_free_hook()`). Stock 6.12 "
      "keeps a `codetag_ref` pointer for every object in each slab's `slabobj_ext` vector; "
      "the series keeps the tag's index in a block per slab, the same in both page storage "
      "modes, so their kmalloc columns agree. The columns above give what each spends per pair.")
    p("")

    # Memory traffic.
    have_cache = all("cache" in data[s][n] for s in sets for n in names)
    if have_cache:
        model = data[sets[0]][base]["model"]
        cl = per_set({s: data[s][base]["cache_loops"] for s in sets})
        cruns = data[sets[0]][base]["cache_runs"]
        p("## Memory traffic per allocation + free (cache model)")
        p("")
        p("The same microbenchmark (%s pairs per case, %d run%s per boot, the median of each "
          "figure shown) under the TCG plugin "
          "`bench/plugin/pftag-cache.c`, which counts the guest's loads and stores and simulates "
          "a data cache on their addresses (%s: size/ways/line bytes of L1 and L2, LRU; L2 is "
          "looked up on L1 misses), only between the module's window markers, so nothing but "
          "the measured loop is counted; the model also sees every access outside the windows "
          "(warm=on), so the warm-up before each loop warms it as it would a real cache. Under "
          "`-icount` TCG runs one vCPU at a time and a locked read-modify-write counts as a load "
          "and a store. Per pair: loads / stores / L1 misses / L2 misses." % (
              cl, cruns, "" if cruns == 1 else "s", model))
        p("")
        for s in sets:
            p("### %s" % SET_TITLE[s])
            p("")
            cache = data[s]
            table(p, names, CACHE_CASES, lambda n, c: "%.1f / %.1f / %.2f / %.2f" % (
                cache[n]["cache"][c]["loads"], cache[n]["cache"][c]["stores"],
                cache[n]["cache"][c]["l1"], cache[n]["cache"][c]["l2"]))
            p("")
            p("Extra per pair against baseline (loads, stores, L1 misses):")
            p("")
            def extra(n, c):
                v, b = cache[n]["cache"][c], cache[base]["cache"][c]
                return "%+.1f / %+.1f / %+.2f" % (v["loads"] - b["loads"],
                                                 v["stores"] - b["stores"], v["l1"] - b["l1"])
            table(p, [n for n in names if n != base], CACHE_CASES, extra)
            p("")

    # Wall clock.
    wset = "minimal"
    if wset in data and all(data[wset][n]["wall"]["micro"]["page-o0"] for n in names):
        W = data[wset]
        p("## Microbenchmark: wall-clock time per allocation + free (plain TCG, minimal set)")
        p("")
        nwall = len(W[base]["wall"]["micro"]["page-o0"])
        p("%d rounds of boots, the configurations interleaved within each round: median of %d "
          "samples in ns per pair, [min-max] spread; overhead of the medians against baseline, "
          "ns then percent. "
          "TCG translates guest code, so a nanosecond here is host time of the emulation, not "
          "of a real CPU: read the instruction and cache tables for the cost." % (a.rounds, nwall))
        p("")
        wc = ["page-o0", "page-o0-ktag", "page-o0-batch", "page-o1", "page-o3", "kmalloc-8-240"]
        def wall(n, c):
            xs = W[n]["wall"]["micro"][c]
            cell = "%.0f [%.0f-%.0f]" % (med(xs), min(xs), max(xs))
            if n != base:
                b = med(W[base]["wall"]["micro"][c])
                cell += " (%+.0f, %s)" % (med(xs) - b, fmt_pct(pct(med(xs), b)))
            return cell
        table(p, names, wc, wall)
        p("")
    elif a.rounds == 0:
        p("No wall-clock phase in this run (`ROUNDS=0`): the instruction and cache figures "
          "above are the measure; `make bench` with ROUNDS of 1 or more adds it.")
        p("")

    # Macro.
    def hb_clock(e):
        return med([r["task-clock"] for r in e["hb"] if "task-clock" in r])
    hb_runs = {len(data[s][n]["hb"]) for s in sets for n in names}
    pinned = min(hb_runs) > 1
    hb_spread = max([(max(xs) / min(xs) - 1) * 100 for s in sets for n in names
                     for xs in [[r["task-clock"] for r in data[s][n]["hb"] if "task-clock" in r]]
                     if xs] or [float("nan")])
    p("## Macro: perf stat in the guest under -icount")
    p("")
    p("hackbench = `perf bench sched messaging -g 4 -l 40` (Debian's linux-perf); page faults "
      "= `pftag-faults 32 8` (8 rounds of mapping 32 MiB anonymous, small pages, writing every "
      "page, unmapping: 65,536 faults, each an order-0 allocation charged to the kernel call "
      "site in mm/memory.c and its free). task-clock counts instructions under `-icount` "
      "(msec = millions); overheads against baseline in millions of instructions first.")
    if pinned:
        p("hackbench runs on one vCPU (`taskset -c 1`), %s times per boot, the median shown; "
          "the runs of one boot spread by at most %.2f%%. On both vCPUs its total moved by "
          "tens of percent from one boot to the next (the clock counts the instructions of "
          "both vCPUs, run in turn, and the 160 tasks interleave differently every boot)."
          % ("/".join(str(x) for x in sorted(hb_runs)), hb_spread))
        again = []
        for s in sets:
            ag = os.path.join(o, s, "icount", "baseline-again", "out.log")
            xs = [r["task-clock"] for r in perf_runs(sections(ag).get("hackbench", ""))
                  if "task-clock" in r] if os.path.exists(ag) else []
            if xs and hb_clock(data[s][base]):
                first, second = hb_clock(data[s][base]), med(xs)
                again.append("%s %.1f then %.1f Minstr, %+.2f%%" % (
                    s, first, second, (second / first - 1) * 100))
        if again:
            p("The baseline booted a second time for hackbench alone: %s (the median of "
              "each boot; the bar for keeping the row is 2%%)." % "; ".join(again))
    else:
        p("hackbench ran its 160 tasks on 2 vCPUs, once per boot: the interleaving, and so "
          "its total, changes from boot to boot by tens of percent; read its row as noise. "
          "The fault loop is one task and repeats closely.")
    p("")
    for s in sets:
        D = data[s]
        p("### %s" % SET_TITLE[s])
        p("")
        p("| configuration | hackbench Minstr | faults Minstr | instructions per fault |")
        p("|---|---|---|---|")
        hb0 = hb_clock(D[base])
        pf0 = D[base]["pf"].get("task-clock", 0)
        nf0 = D[base]["pf"].get("page-faults", 0) or 1
        for n in names:
            hb, pfl = hb_clock(D[n]), D[n]["pf"].get("task-clock", 0)
            nfault = D[n]["pf"].get("page-faults", 0) or 1
            if n == base:
                p("| %s | %.1f | %.1f | %.0f |" % (n, hb, pfl, pfl * 1e6 / nfault))
                continue
            p("| %s | %s | %s | %s |" % (
                n, ovh(hb, hb0, "%.1f"), ovh(pfl, pf0, "%.1f"),
                ovh(pfl * 1e6 / nfault, pf0 * 1e6 / nf0, "%.0f")))
        p("")

    # Memory.
    D = data[sets[0]]
    p("## Memory and size (%s)" % SET_TITLE[sets[0]])
    p("")
    p("| configuration | page_ext bytes (512 MiB) | page_ext bytes (4 GiB) | bytes a page, per TiB of RAM "
      "(from 4 GiB) | MemTotal / MemAvailable "
      "512 MiB (kB) | MemTotal / MemAvailable 4 GiB (kB) | vmlinux text / data / bss |")
    p("|---|---|---|---|---|---|---|")
    pe_bytes = {}
    for n in names:
        def mi(sec):
            t = re.search(r"MemTotal:\s*(\d+)", sec.get("meminfo", ""))
            v = re.search(r"MemAvailable:\s*(\d+)", sec.get("meminfo", ""))
            return "%s / %s" % (t.group(1) if t else "?", v.group(1) if v else "?")
        m = re.search(r"allocated (\d+) bytes of page_ext", D[n]["sec"].get("bootlog", ""))
        pe_bytes[n] = int(m.group(1)) if m else 0
        m4 = re.search(r"allocated (\d+) bytes of page_ext", D[n]["mem4g"].get("bootlog", ""))
        sz = read(os.path.join(o, "size-" + obj_id(D[n]["build"], sets[0]))).split()
        b4 = int(m4.group(1)) if m4 else 0
        # 4 GiB is 2^20 pages of 4 KiB; a TiB is 2^8 times as many.
        per_tib = "%g B, %.1f GiB (%.3f%%)" % (b4 / 2**20, b4 * 256 / 2**30, 100.0 * b4 / 2**32)
        p("| %s | %d | %d | %s | %s | %s | %s |" % (
            n, pe_bytes[n], b4, per_tib, mi(D[n]["sec"]), mi(D[n]["mem4g"]),
            " / ".join(sz[:3]) if len(sz) >= 3 else "?"))
    p("")
    dl = "debian-layout"
    if dl in pe_bytes and pe_bytes.get(st) and pe_bytes[dl]:
        m4 = {n: re.search(r"allocated (\d+) bytes of page_ext", D[n]["mem4g"].get("bootlog", ""))
              for n in (st, dl)}
        b4 = {n: int(m4[n].group(1)) if m4[n] else 0 for n in m4}
        if b4[st] and b4[dl]:
            p("On Debian's `page->flags` layout (1 spare bit) the series keeps the tag index in "
              "page_ext by itself: %d bytes at 4 GiB against stock 6.12's %d with the pointer, "
              "%.1f times less; %.3f%% of RAM instead of %.3f%%, %.1f GiB instead of %.1f GiB "
              "a TiB. Page-flags mode needs none." % (
                  b4[dl], b4[st], b4[st] / b4[dl], 100.0 * b4[dl] / 2**32,
                  100.0 * b4[st] / 2**32, b4[dl] * 256 / 2**30, b4[st] * 256 / 2**30))
            p("")
    ktags = re.search(r"(\d+) kernel tags", D[pf]["sec"].get("bootlog", ""))
    ktags = int(ktags.group(1)) if ktags else 0
    p("Page-flags mode allocates no page_ext for tags; its own memory is %s of tag indices "
      "(8 bytes x %d kernel tags) and the 4 KiB module table (+4 KiB per 512 module tags), "
      "independent of RAM. page-flags storage as the guest reports it "
      "(`/sys/kernel/debug/alloc_tag/storage`, 512 MiB, after boot):" % (kib(8 * ktags), ktags))
    p("")
    p("```")
    p(D[pf]["sec"].get("storage", "").strip())
    p("```")
    p("")

    # Ledger.
    if any(ledger[s] for s in sets):
        p("## Memory ledger: the bytes profiling holds")
        p("")
        p("A boot of its own per configuration (`-icount`, 512 MiB): the ledger right after "
          "boot, then again while a load holds its objects: %s (`bench/guest/pftag-slab`: empty "
          "files in a tmpfs of their own, then AF_UNIX stream socket pairs kept open with 64 "
          "bytes queued on each). The series reports its ledger in "
          "`/sys/kernel/debug/alloc_tag/memory`; a kernel without that file has n/a. Stock "
          "6.12 has no such file: its figures are its page_ext boot line (\"allocated N bytes "
          "of page_ext\"), its `alloc_slab_obj_exts` line of /proc/allocinfo (the slab "
          "vectors), and per-CPU counters of %d bytes (`struct alloc_tag_counters`) for each "
          "tag (the lines of /proc/allocinfo but its 2 header lines) and possible CPU; "
          "`%s`: no such storage in that kernel. Slab tags in leftover space lie in slabs' "
          "unused space past their last object and cost no allocation: the total leaves "
          "them out." % (load_words(ledger[sets[0]]), COUNTERS_BYTES, NONE_HERE))
        p("")
        for s in sets:
            LG = ledger[s]
            if not LG:
                continue
            failed = [n for n in names if n in LG and (LG[n]["files"] is None or LG[n]["pairs"] is None)]
            for ph, title in (("boot", "after boot"), ("load", "under the load")):
                p("### %s: bytes %s" % (SET_TITLE[s], title))
                p("")
                p("| configuration | from | " + " | ".join(LEDGER_TITLE[k] for k in LEDGER_KINDS) + " |")
                p("|---|---|" + "---|" * len(LEDGER_KINDS))
                for n in names:
                    e = LG.get(n)
                    if not e:
                        p("| %s | no ledger boot |%s" % (n, " n/a |" * len(LEDGER_KINDS)))
                        continue
                    f = e[ph]
                    p("| %s | %s | %s |" % (n, e["src_" + ph], " | ".join(
                        NONE_HERE if f is None and e["src_" + ph] == "not built in" else
                        fmt_bytes(f[k] if f else None) for k in LEDGER_KINDS)))
                p("")
            p("### %s: what the load added to slab" % SET_TITLE[s])
            p("")
            p("| configuration | profiling's slab bytes added (ledger) | against stock's | "
              "allocinfo: slab_tag_block_create added | allocinfo: alloc_slab_obj_exts added | "
              "Slab (kB): boot → load | Slab growth (kB) | over no profiling's growth (kB) | "
              "against stock's | files: M instructions | socket pairs: M instructions |")
            p("|---|---|---|---|---|---|---|---|---|---|---|")
            eb = LG.get(base, {})
            ys, gy = slab_added(LG, st), slab_growth(LG, st)
            for n in names:
                e = LG.get(n)
                if not e:
                    continue
                x = slab_added(LG, n)
                g = delta(e["slab"]["boot"], e["slab"]["load"])
                gx = slab_growth(LG, n)
                ai = [delta(e["allocinfo"]["boot"][f], e["allocinfo"]["load"][f])
                      for f in ("slab_tag_block_create", "alloc_slab_obj_exts")]
                def minstr(k):
                    if e[k] is None:
                        return "n/a"
                    if n == base or not eb.get(k):
                        return "%.1f" % (e[k] / 1e6)
                    return ovh(e[k] / 1e6, eb[k] / 1e6, "%.1f")
                p("| %s | %s | %s | %s | %s | %s → %s | %s | %s | %s | %s | %s |" % (
                    n, NONE_HERE if n == base else fmt_bytes(x),
                    NONE_HERE if n in (base, st) else ratio(x, ys),
                    fmt_bytes(ai[0]) if n != base else NONE_HERE,
                    fmt_bytes(ai[1]) if n != base else NONE_HERE,
                    fmt_bytes(e["slab"]["boot"]), fmt_bytes(e["slab"]["load"]),
                    "n/a" if g is None else "{:+,}".format(g),
                    NONE_HERE if n == base else ("n/a" if gx is None else "{:+,}".format(gx)),
                    NONE_HERE if n in (base, st) else ratio(gx, gy),
                    minstr("files_ns"), minstr("pairs_ns")))
            p("")
            if failed:
                p("The load did not complete in: %s (see their out.log): their figures under "
                  "the load are n/a." % ", ".join(failed))
                p("")
        p("\"profiling's slab bytes added\": the growth of the ledger's kmalloc'd slab tags "
          "during the load (stock: of its slab vectors); \"over no profiling's growth\": "
          "/proc/meminfo's `Slab` growth during the same load less the baseline kernel's, "
          "everything profiling changes in slab, measured without its own accounting. "
          "Growths are in kB, as meminfo gives them; the ratios are of the same columns of "
          "stock 6.12 (profiling on) in the same set. The load's instructions (guest clock "
          "under `-icount`), against no profiling's in millions, then percent: creating the "
          "files, then opening the socket pairs and queueing their bytes.")
        p("")

    # Boot.
    p("## Boot: instructions to userspace (`-icount shift=0`, %s)" % SET_TITLE[sets[0]])
    p("")
    p("| configuration | from reset (M) | from timekeeping (M) | against baseline (M, from reset) |")
    p("|---|---|---|---|")
    tsc0 = None
    for n in names:
        m = re.search(r"tsc=(\d+) boottime_ns=(\d+)", D[n]["sec"].get("clock", ""))
        tsc, bt = (int(m.group(1)), int(m.group(2))) if m else (0, 0)
        tsc0 = tsc0 or tsc
        p("| %s | %.1f | %.1f | %+.1f (%s) |" % (n, tsc / 1e6, bt / 1e6, (tsc - tsc0) / 1e6,
                                               fmt_pct(pct(tsc, tsc0))))
    p("")

    top = os.path.dirname(os.path.dirname(os.path.abspath(o)))
    p("## QEMU command lines")
    p("")
    for d in ("minimal/icount/page-flags", "minimal/ledger/page-flags", "minimal/cache/page-flags",
              "minimal/wall/1/page-flags", "minimal/mem4g/page-flags"):
        cmd = read(os.path.join(o, d, "qemu.cmd"))
        if not cmd:
            continue
        p("- %s (the initrd is the build's initramfs, then build/bench/bench.cpio with perf, "
          "then the command):" % d)
        p("")
        p("  ```")
        p("  " + cmd.replace(top + "/", ""))
        p("  ```")
    p("")
    p("Reproduce: `make bench` (about %d minutes here, kernels built; building its ten kernels "
      "(five a set) cold adds about an hour on 2 cores)." % max(1, round(a.seconds / 60)))

    with open(a.md, "w") as f:
        f.write("\n".join(L) + "\n")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(cur, f, indent=1, sort_keys=True)
            f.write("\n")

    # Plot: instruction overhead against baseline, both sets, in
    # instructions (percentages of the distro set's inflated baseline
    # would hide it).
    dat = a.png + ".dat"
    others = [n for n in names if n != base]
    with open(dat, "w") as f:
        for s in sets:
            for c in PLOT_CASES:
                f.write('"%s" ' % CASE_TITLE[c] + " ".join(
                    "%.1f" % (ins[s][n][c] - ins[s][base][c]) for n in others) + "\n")
            f.write("\n\n")
    plots = []
    for idx, s in enumerate(sets):
        cols = ", ".join("'%s' index %d using %d:xtic(1) title '%s'" % (dat, idx, i + 2, n)
                         for i, n in enumerate(others))
        # The +7% target at order 0, in instructions of this set.
        t7 = 0.07 * ins[s][base]["page-o0"]
        plots.append("set title 'Extra guest instructions per allocation + free against no "
                     "profiling: %s'\nset arrow 1 from graph 0, first %.1f to graph 1, first %.1f "
                     "nohead dt 2 lc rgb 'red'\nset label 1 '+7%% of order 0' at graph 0.99, "
                     "first %.1f right front offset 0,-0.7 tc rgb 'red'\nplot %s" % (
                         SET_TITLE[s], t7, t7, t7, cols))
    gp = """set terminal pngcairo size 1200,%d font ',10' noenhanced
set output '%s'
set multiplot layout %d,1
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set ylabel 'extra instructions per pair'
set grid ytics
set key outside right top
set xzeroaxis
%s
unset multiplot
""" % (450 * len(sets), a.png, len(sets), "\n".join(plots))
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
