#!/usr/bin/env python3
"""prof-report.py: instructions by kernel function from the prof= output of
the QEMU plugin bench/plugin/pftag-cache.c (lines `window=N pc=0x... count=C`).

  prof-report.py --map System.map PROF [--window N] [--per N] [--top K]
      one window (default 1) of PROF, its counts summed by function:
      function, instructions per iteration (count / --per), share of the
      window's instructions; sorted by count, the largest first.

  prof-report.py --diff PROF-A MAP-A PROF-B MAP-B [--window N] [--per N] [--top K]
      two kernels, each with its own System.map: per function A, B and
      B-A per iteration, sorted by |B-A|, the largest first (then the
      unchanged ones, by size); which functions cost one kernel's extra
      instructions over the other's.

An address's function is the nearest preceding text symbol (type t, T, W
or w) of System.map, as long as no symbol of another type (data, bss,
rodata; absolute symbols do not count) or an end marker (_etext,
_einittext) lies between the two; other addresses, e.g. a module's code
or user space, are summed as "?". Functions are matched by name: static
functions of one name are one row; --merge-clones also strips GCC's clone
suffixes (.constprop.N, .isra.N, .part.N, .cold, ...) so that a function
cloned in one kernel only still pairs up.
"""
import argparse
import bisect
import re
import sys

TEXT_TYPES = set("tTwW")
IGNORED_TYPES = set("aAUNn?")     # not addresses in the kernel image
END_MARKERS = {"_etext", "_einittext", "__irqentry_text_end", "__softirqentry_text_end"}
CLONE_RE = re.compile(r"(\.(constprop|isra|part|cold|lto_priv|localalias)(\.\d+)?)+$")
UNKNOWN = "?"


class SymbolMap:
    """Address -> function name from a System.map."""

    def __init__(self, path, merge_clones=False):
        by_addr = {}
        try:
            with open(path) as f:
                for lineno, line in enumerate(f, 1):
                    parts = line.split()
                    if len(parts) < 3:
                        continue
                    try:
                        addr = int(parts[0], 16)
                    except ValueError:
                        sys.exit(f"prof-report: {path}:{lineno}: not a System.map line: {line.rstrip()}")
                    typ, name = parts[1], parts[2]
                    if typ in IGNORED_TYPES:
                        continue
                    func = None
                    if typ in TEXT_TYPES and name not in END_MARKERS:
                        func = CLONE_RE.sub("", name) if merge_clones else name
                    # Of several symbols at one address a text one wins,
                    # a global (T) before a local (t) before a weak one,
                    # else the first in the map; a __pfx_ (padding) name
                    # only when there is no other.
                    rank = self._rank(typ, name) if func else 99
                    old = by_addr.get(addr)
                    if old is None or rank < old[0]:
                        by_addr[addr] = (rank, func)
        except OSError as e:
            sys.exit(f"prof-report: cannot read the System.map {path}: {e.strerror}")
        if not any(func for _, func in by_addr.values()):
            sys.exit(f"prof-report: {path} has no text symbols (t, T, W, w): not a System.map?")
        self.addrs = sorted(by_addr)
        self.funcs = [by_addr[a][1] for a in self.addrs]

    @staticmethod
    def _rank(typ, name):
        return ("TtWw".index(typ)) + (10 if name.startswith("__pfx_") else 0)

    def lookup(self, addr):
        i = bisect.bisect_right(self.addrs, addr) - 1
        if i < 0:
            return UNKNOWN
        return self.funcs[i] or UNKNOWN


LINE_RE = re.compile(r"^window=(\d+) pc=0x([0-9a-fA-F]+) count=(\d+)$")


def read_prof(path, window):
    """{pc: count} of WINDOW in the prof file PATH, and the windows it has."""
    counts, windows = {}, set()
    try:
        with open(path) as f:
            for lineno, line in enumerate(f, 1):
                line = line.strip()
                if not line:
                    continue
                m = LINE_RE.match(line)
                if not m:
                    sys.exit(f"prof-report: {path}:{lineno}: not a prof= line: {line}")
                w = int(m.group(1))
                windows.add(w)
                if w == window:
                    pc = int(m.group(2), 16)
                    counts[pc] = counts.get(pc, 0) + int(m.group(3))
    except OSError as e:
        sys.exit(f"prof-report: cannot read {path}: {e.strerror}")
    if not counts:
        have = ", ".join(str(w) for w in sorted(windows)) or "none"
        sys.exit(f"prof-report: {path} has no counts of window {window} (windows: {have})")
    return counts


def by_function(counts, symbols):
    funcs = {}
    for pc, c in counts.items():
        f = symbols.lookup(pc)
        funcs[f] = funcs.get(f, 0) + c
    return funcs


def fmt(v):
    return f"{v:.2f}"


def table(header, rows, align):
    """Print ROWS under HEADER; ALIGN: '<' or '>' per column."""
    widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]
    for r in [header] + rows:
        print("  ".join(f"{str(v):{a}{w}}" for v, a, w in zip(r, align, widths)).rstrip())


def report(args):
    symbols = SymbolMap(args.map, args.merge_clones)
    funcs = by_function(read_prof(args.prof, args.window), symbols)
    total = sum(funcs.values())
    order = sorted(funcs.items(), key=lambda kv: (-kv[1], kv[0]))
    shown = order[:args.top] if args.top else order
    rows = [(f, fmt(c / args.per), f"{100.0 * c / total:.1f}%") for f, c in shown]
    if len(shown) < len(order):
        rest = sum(c for _, c in order[len(shown):])
        rows.append((f"({len(order) - len(shown)} more)", fmt(rest / args.per),
                     f"{100.0 * rest / total:.1f}%"))
    rows.append(("total", fmt(total / args.per), "100.0%"))
    print(f"# {args.prof} window {args.window}: {total} instructions, "
          f"{len(funcs)} functions, per {args.per:g}")
    table(("function", "insns/iter", "share"), rows, "<>>")


def diff(args):
    prof_a, map_a, prof_b, map_b = args.diff
    fa = by_function(read_prof(prof_a, args.window), SymbolMap(map_a, args.merge_clones))
    fb = by_function(read_prof(prof_b, args.window), SymbolMap(map_b, args.merge_clones))
    ta, tb = sum(fa.values()), sum(fb.values())
    names = set(fa) | set(fb)
    per = args.per
    delta = {f: fb.get(f, 0) - fa.get(f, 0) for f in names}
    # Unchanged functions too (B-A 0), the largest first, after the changed.
    order = sorted(names, key=lambda f: (-abs(delta[f]), -max(fa.get(f, 0), fb.get(f, 0)), f))
    shown = order[:args.top] if args.top else order
    rows = [(f, fmt(fa.get(f, 0) / per), fmt(fb.get(f, 0) / per), f"{delta[f] / per:+.2f}")
            for f in shown]
    if len(shown) < len(order):
        rest = order[len(shown):]
        ra, rb = sum(fa.get(f, 0) for f in rest), sum(fb.get(f, 0) for f in rest)
        rows.append((f"({len(rest)} more)", fmt(ra / per), fmt(rb / per), f"{(rb - ra) / per:+.2f}"))
    rows.append(("total", fmt(ta / per), fmt(tb / per), f"{(tb - ta) / per:+.2f}"))
    print(f"# window {args.window}, per {per:g}: A = {prof_a} ({ta} instructions), "
          f"B = {prof_b} ({tb} instructions)")
    table(("function", "A/iter", "B/iter", "B-A/iter"), rows, "<>>>")


def main():
    p = argparse.ArgumentParser(
        description="Sum the prof= counts of the pftag-cache plugin by kernel function.",
        epilog="See the module docstring (head of this file) for the details.")
    p.add_argument("prof", nargs="?", metavar="PROF-FILE", help="the plugin's prof= output")
    p.add_argument("--map", metavar="System.map", help="the kernel's System.map")
    p.add_argument("--diff", nargs=4, metavar=("PROF-A", "MAP-A", "PROF-B", "MAP-B"),
                   help="compare two kernels' profiles, each with its System.map")
    p.add_argument("--window", type=int, default=1, metavar="N", help="the window (default 1)")
    p.add_argument("--per", type=float, default=1, metavar="N",
                   help="divide the counts by N, e.g. the loop iterations (default 1)")
    p.add_argument("--top", type=int, default=0, metavar="K",
                   help="show only the first K functions (default all)")
    p.add_argument("--merge-clones", action="store_true",
                   help="strip GCC clone suffixes (.constprop.N, .isra.N, ...) from names")
    args = p.parse_args()
    if args.per <= 0:
        p.error("--per must be positive")
    if args.top < 0:
        p.error("--top must not be negative")
    if args.diff:
        if args.prof or args.map:
            p.error("--diff takes its files itself: no PROF-FILE nor --map with it")
        diff(args)
    else:
        if not args.prof or not args.map:
            p.error("give --map System.map and PROF-FILE (or --diff PROF-A MAP-A PROF-B MAP-B)")
        report(args)


if __name__ == "__main__":
    try:
        main()
    except BrokenPipeError:
        sys.exit(0)
