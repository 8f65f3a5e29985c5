#!/usr/bin/env python3
"""bench-arm64-report.py: the results file of `make bench ARCH=arm64`.

Reads what scripts/bench-arm64.sh left in --out (the guests' outputs in
minimal/icount/NAME and minimal/ledger/NAME, as x86_64's make bench lays
them out, so that the parsers of scripts/bench-report.py serve both) and
writes a Markdown report (--md): instructions per allocation + free of
each case and configuration, the overheads against no profiling and
against stock, the issue's targets, the cost of the free path's read
barrier, and the memory ledger after boot.
"""
import argparse
import importlib.util
import os
import re
import subprocess

_spec = importlib.util.spec_from_file_location(
    "bench_report", os.path.join(os.path.dirname(os.path.abspath(__file__)), "bench-report.py"))
br = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(br)

# The targets: (what, value, limit, met).
OFF_LIMIT = 1.0        # % over no profiling, built in but off
FLAGS_LIMIT = 7.0      # % over no profiling, page flags order 0
FLAGS_OF_STOCK = 25.0  # % of stock's overhead, page flags order 0
KMALLOC_OF_STOCK = 100.0 / 3  # % of stock's overhead, kmalloc on


def qemu_version():
    out = subprocess.run(["qemu-system-aarch64", "--version"], capture_output=True, text=True).stdout
    return out.splitlines()[0] if out else "?"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--md", required=True)
    ap.add_argument("--seconds", type=int, default=0)
    ap.add_argument("--configs", required=True)
    a = ap.parse_args()

    configs = [l.split("|") for l in a.configs.splitlines() if l]
    names = [c[0] for c in configs]
    o = a.out
    data = br.load_set(o, "minimal", configs, 0)
    ledger = br.load_ledger(o, "minimal", configs)
    cases = br.CASES
    ins = {n: {c: br.med(data[n]["micro"][c]) for c in cases} for n in names}
    base = ins["baseline"]

    def over(n, c):
        return ins[n][c] - base[c]

    L = []
    p = L.append
    mach = br.machine()
    p("# make bench ARCH=arm64: the series on arm64 against no profiling and stock Linux 6.12")
    p("")
    p("Host: %s, %s cores, %s RAM; %s, host kernel %s; %s. Series: `%s` of the assembled "
      "tree. Every guest: qemu-system-aarch64 `-M virt -cpu max`, 512 MiB, 2 vCPUs, TCG, "
      "`-icount shift=0` (1 ns of the guest clock is 1 instruction); `make bench ARCH=arm64` "
      "took %d s." % (mach["cpu"], mach["cores"], mach["ram"], mach["os"], mach["host kernel"],
                      qemu_version(), br.read(os.path.join(o, "series-head"), "?"), a.seconds))
    p("")
    p("| # | configuration | kernel | kernel arguments | mode the guest reports |")
    p("|---|---|---|---|---|")
    for i, (name, build, append) in enumerate(configs, 1):
        sec = data[name]["sec"]
        stg = re.search(r"^storage: (.+)$", sec.get("storage", ""), re.M)
        mp = sec.get("mem_profiling", "?").strip()
        if build == "baseline":
            mode = "profiling not built in"
        elif build == "stock":
            mode = "mem_profiling=%s, storage page_ext (6.12)" % mp
        else:
            mode = "mem_profiling=%s, storage %s" % (mp, stg.group(1) if stg else "?")
        p("| %d | %s | %s | `%s` | %s |" % (i, name, br.read(os.path.join(o, "release-" + build)),
                                           append or "(none)", mode))
    p("")
    p("`profiling+no-rmb` is the series with the two `smp_rmb()` of "
      "`mm/alloc_tag_storage.h` (the free path's, before the counter table a freed page's "
      "index is looked up in) made `barrier()`: a measurement, not a kernel to run. "
      "`dmb ishld` in the kernels' code: %s in `profiling`, %s in `profiling+no-rmb`." % (
          br.read(os.path.join(o, "rmb-profiling"), "?"),
          br.read(os.path.join(o, "rmb-profiling+no-rmb"), "?")))
    p("")
    loops = int(re.search(r"loops=(\d+)", data["baseline"]["sec"]["micro"]).group(1))
    runs = len(data["baseline"]["micro"]["page-o0"])
    p("## Microbenchmark: guest instructions per allocation + free")
    p("")
    p("`tests/modules/pftag_bench.c`: %s pairs per case on a kthread bound to CPU 1, %d runs a "
      "boot, the median run; + is the overhead over `baseline`." % ("{:,}".format(loops), runs))
    p("")
    p("| case | " + " | ".join(names) + " |")
    p("|---" * (len(names) + 1) + "|")
    for c in cases:
        cells = ["%.0f" % base[c]] + ["%.0f (%+.0f)" % (ins[n][c], over(n, c)) for n in names[1:]]
        p("| %s | %s |" % (br.CASE_TITLE[c], " | ".join(cells)))
    p("")
    p("### Against stock 6.12")
    p("")
    p("The overhead of each configuration of the series as a share of stock's (stock on, "
      "page tags in page_ext as 6.12 ships).")
    p("")
    shown = [n for n in names if n not in ("baseline", "stock")]
    p("| case | stock + | " + " | ".join(shown) + " |")
    p("|---" * (len(shown) + 2) + "|")
    for c in cases:
        st = over("stock", c)
        p("| %s | %+.0f | %s |" % (br.CASE_TITLE[c], st, " | ".join(
            br.ratio(over(n, c), st) if st > 0 else "n/a" for n in shown)))
    p("")
    p("### The read barrier of the free path")
    p("")
    p("Instructions a pair that `smp_rmb()` adds: each storage mode with it less without it "
      "(the same build otherwise). Under TCG a `dmb` is one guest instruction; what it costs "
      "on a real core depends on the loads in flight, which no instruction count shows.")
    p("")
    p("| case | page flags | page_ext |")
    p("|---|---|---|")
    for c in cases:
        p("| %s | %+.0f | %+.0f |" % (br.CASE_TITLE[c],
                                     ins["page-flags"][c] - ins["page-flags-no-rmb"][c],
                                     ins["page_ext"][c] - ins["page_ext-no-rmb"][c]))
    p("")
    p("## Targets")
    p("")
    rows = []
    for c in ("page-o0", "kmalloc-8-240"):
        x = 100.0 * over("off", c) / base[c]
        rows.append(("built in but off, %s: over no profiling" % br.CASE_TITLE[c],
                     "%+.2f%%" % x, "at most +%.0f%%" % OFF_LIMIT, x <= OFF_LIMIT))
    x = 100.0 * over("page-flags", "page-o0") / base["page-o0"]
    rows.append(("page flags, order 0: over no profiling", "%+.2f%%" % x,
                 "at most +%.0f%%" % FLAGS_LIMIT, x <= FLAGS_LIMIT))
    st = over("stock", "page-o0")
    x = 100.0 * over("page-flags", "page-o0") / st if st > 0 else float("inf")
    rows.append(("page flags, order 0: share of stock's overhead (%+.0f)" % st, "%.0f%%" % x,
                 "at most %.0f%%" % FLAGS_OF_STOCK, x <= FLAGS_OF_STOCK))
    st = over("stock", "kmalloc-8-240")
    x = 100.0 * over("page-flags", "kmalloc-8-240") / st if st > 0 else float("inf")
    rows.append(("kmalloc 8..240 B on: share of stock's overhead (%+.0f)" % st, "%.0f%%" % x,
                 "at most %.0f%%" % KMALLOC_OF_STOCK, x <= KMALLOC_OF_STOCK))
    p("| target | measured | limit | met |")
    p("|---|---|---|---|")
    for what, val, lim, met in rows:
        p("| %s | %s | %s | %s |" % (what, val, lim, "yes" if met else "**no**"))
    p("")
    p("## Memory ledger after boot")
    p("")
    p("Bytes profiling holds once the guest has booted (`/sys/kernel/debug/alloc_tag/memory`; "
      "stock's from its page_ext boot line, its slab vectors' `/proc/allocinfo` line and its "
      "per-CPU counters, as x86_64's report derives them).")
    p("")
    led = [n for n in names if n in ledger and ledger[n]["boot"]]
    p("| kind | " + " | ".join(led) + " |")
    p("|---" * (len(led) + 1) + "|")
    for k in br.LEDGER_KINDS:
        p("| %s | %s |" % (br.LEDGER_TITLE[k], " | ".join(
            br.fmt_bytes(ledger[n]["boot"][k]) for n in led)))
    p("")
    with open(a.md, "w") as f:
        f.write("\n".join(L))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
