#!/usr/bin/env python3
"""Data-driven checks of allocinfo against every file in tests/samples/
and tests/samples/bad/ (drop more captures in and they are checked too).

The expected results come from an independent reading of each sample
here (regular expressions, Python integers), never from the tool's own
output. Prints TAP lines: "ok N - ..." / "not ok N - ...".

usage: check_samples.py BINARY [ASAN_BINARY] [STATIC_BINARY]
"""
import csv
import difflib
import fnmatch
import glob
import io
import json
import os
import re
import subprocess
import sys

from tap import finish, ok

HERE = os.path.dirname(os.path.abspath(__file__))
BIN = sys.argv[1]
ASAN = sys.argv[2] if len(sys.argv) > 2 else None
STATIC = sys.argv[3] if len(sys.argv) > 3 else None
INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1
UINT64_MAX = (1 << 64) - 1
UINT32_MAX = (1 << 32) - 1


def run(args, binary=None, stdin=None):
    p = subprocess.run([binary or BIN] + args, input=stdin,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return p.returncode, p.stdout.decode("latin-1"), p.stderr.decode("latin-1")


# ---- the reference reader ----

TOKEN_SEP = re.compile(rb"[ \t]+")
NUM = re.compile(rb"-?[0-9]+\Z")
UNUM = re.compile(rb"[0-9]+\Z")
LOC = re.compile(rb"(.+):([0-9]+)\Z")
KV = re.compile(rb"[^:]+:.*\Z")


def parse_line(raw):
    """A tag line -> dict, or None when it is malformed."""
    if any(b < 0x20 and b != 0x09 or b >= 0x7f for b in raw):
        return None
    toks = [t for t in TOKEN_SEP.split(raw) if t]
    if len(toks) < 4 or len(toks) > 64:
        return None
    if not NUM.match(toks[0]) or not UNUM.match(toks[1]):
        return None
    b, c = int(toks[0]), int(toks[1])
    if not INT64_MIN <= b <= INT64_MAX or c > UINT64_MAX:
        return None
    m = LOC.match(toks[2])
    if not m or int(m.group(2)) > UINT32_MAX:
        return None
    t = {"bytes": b, "calls": c, "file": m.group(1).decode(),
         "line": int(m.group(2)), "module": "", "func": None, "extra": [],
         "n": 1}
    rest = toks[3:]
    i = 0
    if rest and len(rest[0]) >= 3 and rest[0][:1] == b"[" and rest[0][-1:] == b"]":
        t["module"] = rest[0][1:-1].decode()
        i = 1
    elif rest and rest[0].startswith(b"module:") and len(rest[0]) > 7:
        t["module"] = rest[0][7:].decode()
        i = 1
    if i >= len(rest) or not rest[i].startswith(b"func:") or len(rest[i]) <= 5:
        return None
    t["func"] = rest[i][5:].decode()
    for kv in rest[i + 1:]:
        if not KV.match(kv):
            return None
        t["extra"].append(kv.decode())
    t["inaccurate"] = "accurate:no" in t["extra"]
    t["extra"] = " ".join(t["extra"])
    return t


def reference(path):
    data = open(path, "rb").read()
    lines = data.split(b"\n")
    last_has_nl = data.endswith(b"\n")
    if last_has_nl:
        lines = lines[:-1]
    tags, bad, warnings = [], [], 0
    version = "1.0"
    if not data:
        warnings += 1
    has_header = False
    for no, raw in enumerate(lines, 1):
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        # the header anywhere (sort -g -r moves it); a second one is bad
        if raw.startswith(b"allocinfo - version:"):
            if has_header:
                bad.append(no)
                continue
            has_header = True
            # N or N.N...: nothing else on the line ("1.x" is unreadable)
            v = re.fullmatch(rb"[ \t]*([0-9]+(?:\.[0-9]+)*)[ \t]*", raw[20:])
            if not v or len(v.group(1)) >= 16:
                warnings += 1
            else:
                version = v.group(1).decode()
                if int(version.split(".")[0] or 0) > 2:
                    warnings += 1
            continue
        if raw.startswith(b"#") or not raw.strip(b" \t"):
            continue
        if no == len(lines) and not last_has_nl and not raw.endswith(b" "):
            bad.append(no)
            continue
        t = parse_line(raw)
        if t is None:
            bad.append(no)
        else:
            tags.append(t)
    if data and not has_header:
        warnings += 1
    merged, order = {}, []
    for t in tags:
        k = (t["file"], t["line"], t["module"], t["func"])
        if k not in merged:
            merged[k] = dict(t)
            order.append(k)
            continue
        m = merged[k]
        m["bytes"] += t["bytes"]
        m["calls"] += t["calls"]
        m["n"] += 1
        m["inaccurate"] = m["inaccurate"] or t["inaccurate"]
    for k in order:
        m = merged[k]
        if not INT64_MIN <= m["bytes"] <= INT64_MAX:
            warnings += 1
            m["bytes"] = max(INT64_MIN, min(INT64_MAX, m["bytes"]))
        if m["calls"] > UINT64_MAX:
            warnings += 1
            m["calls"] = UINT64_MAX
    return {"raw": tags, "tags": [merged[k] for k in order], "bad": bad,
            "warnings": warnings, "version": version}


def key(t):
    return (t["file"], t["line"], t["module"], t["func"])


def pkey(t):
    # Prometheus: built-in code is module="vmlinux", as in allocinfo_module_bytes
    return (t["file"], t["line"], t["module"] or "vmlinux", t["func"])


# the functions of expected growth (page cache, anonymous memory): the
# globs of src/model.c, matched here with Python's fnmatch
EXPECTED = re.findall(r'"([^"]+)"', re.search(
    r"ai_expected_growth\[\] = \{(.*?)NULL", open(os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "src", "model.c")).read(), re.S).group(1))


def expected(t):
    return any(fnmatch.fnmatchcase(t["func"], g) for g in EXPECTED)


def name_key(t):
    # the tool compares with strcmp: byte order
    return (t["file"].encode(), t["line"], t["module"].encode(),
            t["func"].encode())


def fmt_tag(t):
    s = "%s:%d" % (t["file"], t["line"])
    if t["module"]:
        s += " [%s]" % t["module"]
    s += " func:%s" % t["func"]
    if t["extra"]:
        s += " " + t["extra"]
    return s


def tag_lines(out):
    """top --bytes -H output -> [(bytes, calls, tag text)]"""
    res = []
    for line in out.splitlines():
        m = re.match(r"\s*(-?\d+)\s+(\d+)  (.*?)(  \(\d+ lines\))?(  NEGATIVE)?(  CLAMPED)?$", line)
        res.append((int(m.group(1)), int(m.group(2)), m.group(3)) if m else line)
    return res


def subsys(f):
    p = [c for c in f.split("/") if c]
    if p[0] in ("drivers", "arch", "sound") and len(p) > 2:
        return p[0] + "/" + p[1] + "/"
    return p[0] + "/" if len(p) > 1 else p[0]


def group_lines(out):
    """tree -H --bytes output -> {name: (bytes, calls, tags)}"""
    res = {}
    for line in out.splitlines():
        m = re.match(r"\s*(-?\d+)\s+(\S+)\s+(\d+)\s+(\d+)  \s*(.*)$", line)
        if m:
            res[m.group(5)] = (int(m.group(1)), int(m.group(3)), int(m.group(4)))
    return res


def sums(tags, keyf):
    res = {}
    for t in tags:
        k = keyf(t)
        b, c, n = res.get(k, (0, 0, 0))
        res[k] = (max(INT64_MIN, min(INT64_MAX, b + t["bytes"])),
                  min(UINT64_MAX, c + t["calls"]), n + 1)
    return res


def prom_unescape(s):
    return re.sub(r'\\(.)', lambda m: "\n" if m.group(1) == "n" else m.group(1), s)


def check_sample(path):
    rel = os.path.relpath(path, HERE)
    ref = reference(path)
    tags = ref["tags"]
    want_rc = 3 if ref["bad"] or ref["warnings"] else 0

    # exit status and one message per bad line, with its line number
    rc, out, err = run(["top", "-f", path, "--bytes", "-H", "-n", "0"])
    ok(rc == want_rc, "%s: exit status %d" % (rel, want_rc), "got %d\n%s" % (rc, err))
    said = sorted({int(m) for m in re.findall(r"^allocinfo: [^\n]*?:(\d+): (?!.*clamped$)", err, re.M)}
                  - ({1} if ref["warnings"] and 1 not in ref["bad"] else set()))
    ok(said == ref["bad"], "%s: a message for each malformed line %s" % (rel, ref["bad"]),
       "messages for lines %s\n%s" % (said, err))

    # top: every tag, by size, then calls, then name
    # ties: in input order (first occurrence)
    pos = {key(t): i for i, t in enumerate(tags)}
    want = sorted(tags, key=lambda t: (-t["bytes"], -t["calls"], pos[key(t)]))
    got = tag_lines(out)
    exp = [(t["bytes"], t["calls"], fmt_tag(t)) for t in want]
    ok(got == exp, "%s: top --bytes lists the %d summed tags in size order" % (rel, len(exp)),
       "\n".join("want %s\ngot  %s" % (a, b) for a, b in zip(exp, got) if a != b)
       or "want %d lines, got %d" % (len(exp), len(got)))

    # top -n 5 --sort calls, --sort name
    rc, out, _ = run(["top", "-q", "-f", path, "-b", "-H", "-n", "5", "-s", "calls"])
    want = sorted(tags, key=lambda t: (-t["calls"], -t["bytes"], pos[key(t)]))[:5]
    ok(tag_lines(out) == [(t["bytes"], t["calls"], fmt_tag(t)) for t in want],
       "%s: top -n 5 --sort calls" % rel, out)
    rc, out, _ = run(["top", "-q", "-f", path, "-b", "-H", "-n", "0", "-s", "name"])
    want = sorted(tags, key=name_key)
    ok(tag_lines(out) == [(t["bytes"], t["calls"], fmt_tag(t)) for t in want],
       "%s: top --sort name" % rel, out)

    # the total line
    rc, out, _ = run(["top", "-q", "-f", path, "-b", "-n", "3"])
    tot = max(INT64_MIN, min(INT64_MAX, sum(t["bytes"] for t in tags)))
    m = re.search(r"^\s*(-?\d+)\s+(\d+)  total of (\d+) tags?", out, re.M)
    ok(m and int(m.group(1)) == tot and int(m.group(3)) == len(tags),
       "%s: total %d bytes in %d tags" % (rel, tot, len(tags)), out)

    # --keep-dups: one line per input line
    rc, out, _ = run(["top", "-q", "-k", "-f", path, "-b", "-H", "-n", "0"])
    ok(len(out.splitlines()) == len(ref["raw"]),
       "%s: --keep-dups keeps the %d input lines apart" % (rel, len(ref["raw"])), out)

    # filters (fnmatch): module, path, func, min
    if tags:
        t0 = max(tags, key=lambda t: (t["bytes"], name_key(t)))
        d = t0["file"].split("/")[0]
        if re.search(r"[\\*?\[\]]", d):
            d = "*"
        for args, pred in (
                (["--path", d + "/*"], lambda t: fnmatch.fnmatchcase(t["file"], d + "/*")),
                (["--func", "*alloc*"], lambda t: fnmatch.fnmatchcase(t["func"], "*alloc*")),
                (["--module", "vmlinux"], lambda t: t["module"] == ""),
                (["--module", "[!v]*"],
                 lambda t: fnmatch.fnmatchcase(t["module"] or "vmlinux", "[!v]*")),
                (["--min", "4K"], lambda t: t["bytes"] >= 4096)):
            rc, out, _ = run(["top", "-q", "-f", path, "-b", "-H", "-n", "0", "-s", "name"] + args)
            want = sorted([t for t in tags if pred(t)], key=name_key)
            ok(tag_lines(out) == [(t["bytes"], t["calls"], fmt_tag(t)) for t in want],
               "%s: top %s" % (rel, " ".join(args)), out)

    # tree by module, by subsystem, by path at depth 1 and 2
    for by, keyf in (("module", lambda t: t["module"] or "vmlinux"),
                     ("subsys", lambda t: subsys(t["file"]))):
        rc, out, _ = run(["tree", "-q", "-f", path, "-b", "-H", "--by", by])
        ok(group_lines(out) == sums(tags, keyf), "%s: tree --by %s sums" % (rel, by),
           "want %s\ngot  %s" % (sums(tags, keyf), group_lines(out)))
    for depth in (1, 2, 3):
        want = {}
        for d in range(1, depth + 1):
            def pre(t, d=d):
                full = [c for c in t["file"].split("/") if c]
                return "/".join(full[:d]) + ("/" if len(full) > d else "")
            want.update(sums([t for t in tags
                              if len([c for c in t["file"].split("/") if c]) >= d], pre))
        rc, out, _ = run(["tree", "-q", "-f", path, "-b", "-H", "--depth", str(depth)])
        got = group_lines(out)
        ok(got == want, "%s: tree --depth %d sums every prefix" % (rel, depth),
           "want %s\ngot  %s" % (want, got))

    # export csv: every summed tag, RFC 4180
    rc, out, _ = run(["export", "-q", "-F", "csv", "-f", path])
    rows = list(csv.reader(io.StringIO(out, newline="")))
    exp = [["bytes", "calls", "file", "line", "module", "func", "extra"]] + [
        [str(t["bytes"]), str(t["calls"]), t["file"], str(t["line"]), t["module"],
         t["func"], t["extra"]] for t in tags]
    ok(rows == exp, "%s: export csv round-trips %d tags" % (rel, len(tags)),
       "\n".join("want %s\ngot  %s" % (a, b) for a, b in zip(exp, rows) if a != b))

    # export json
    rc, out, _ = run(["export", "-q", "-F", "json", "-f", path])
    try:
        j = json.loads(out)
        got = [(x["file"], x["line"], x["module"] or "", x["func"], x["bytes"], x["calls"],
                " ".join("%s:%s" % kv for kv in x["extra"].items())) for x in j["tags"]]
        exp = [key(t) + (t["bytes"], t["calls"], t["extra"]) for t in tags]
        ok(got == exp and j["skipped_lines"] == len(ref["bad"]) and j["version"] == ref["version"],
           "%s: export json" % rel,
           "\n".join("want %s\ngot  %s" % (a, b) for a, b in zip(exp, got) if a != b))
    except (ValueError, KeyError) as e:
        ok(False, "%s: export json" % rel, "%s\n%s" % (e, out[:500]))

    # export prometheus
    rc, out, _ = run(["export", "-q", "-F", "prometheus", "--all", "-f", path])
    series = {}
    accurate = {}
    okfmt = True
    seen_type = set()
    for line in out.splitlines():
        if line.startswith("# TYPE "):
            seen_type.add(line.split()[2])
            continue
        if line.startswith("# HELP "):
            continue
        m = re.match(r'^(allocinfo_(?:bytes|calls))\{file="((?:[^"\\]|\\.)*)",line="(\d+)",'
                     r'func="((?:[^"\\]|\\.)*)",module="((?:[^"\\]|\\.)*)",'
                     r'accurate="(yes|no)"\} (-?\d+)$', line)
        if m:
            k = (m.group(1), prom_unescape(m.group(2)), int(m.group(3)),
                 prom_unescape(m.group(5)), prom_unescape(m.group(4)))
            okfmt = okfmt and k not in series
            series[k] = int(m.group(7))
            accurate[k[1:]] = m.group(6)
        elif not re.match(r"^allocinfo_[a-z_]+ -?\d+$", line):
            okfmt = False
    want = {}
    for t in tags:
        want[("allocinfo_bytes",) + pkey(t)] = t["bytes"]
        want[("allocinfo_calls",) + pkey(t)] = t["calls"]
    ok(okfmt and series == want and {"allocinfo_bytes", "allocinfo_calls"} <= seen_type,
       "%s: export prometheus: one series per tag, labels escaped" % rel,
       out[:2000])
    want = {pkey(t): "no" if t["inaccurate"] else "yes" for t in tags}
    ok(accurate == want, "%s: export prometheus: accurate=\"no\" on the %d accurate:no tags"
       % (rel, sum(1 for t in tags if t["inaccurate"])), "want %s\ngot  %s" % (want, accurate))

    # export prometheus without --all: bounded, the 50 largest tags by
    # bytes (ties: first in the input) and the rest summed in other;
    # --top N and -n N the same for N
    clamp = lambda v: max(INT64_MIN, min(INT64_MAX, v))
    order = sorted(range(len(tags)), key=lambda i: (-tags[i]["bytes"], i))
    for args, top in (([], 50), (["--top", "3"], 3), (["-n", "3"], 3)):
        keep = {pkey(tags[i]) for i in order[:top]}
        rc, out, _ = run(["export", "-q"] + args + ["-f", path])
        names = {(prom_unescape(m.group(1)), int(m.group(2)), prom_unescape(m.group(4)), prom_unescape(m.group(3)))
                 for m in re.finditer(r'^allocinfo_bytes\{file="((?:[^"\\]|\\.)*)",line="(\d+)",'
                                      r'func="((?:[^"\\]|\\.)*)",module="((?:[^"\\]|\\.)*)"', out, re.M)}
        other = re.search(r"^allocinfo_other_bytes (-?\d+)$", out, re.M)
        want_other = clamp(sum(tags[i]["bytes"] for i in order[top:]))
        ok(rc in (0, 3) and names == keep and other and int(other.group(1)) == want_other,
           "%s: export %s: the %d largest of %d tags, the rest (%d bytes) in allocinfo_other_bytes"
           % (rel, " ".join(args) or "(default)", len(keep), len(tags), want_other),
           "series %d, want %d; other %s\n%s" % (len(names), len(keep), other and other.group(1), out[:800]))

    # export prometheus --by module|subsys|file: one series per group,
    # no line label; -n N: the N largest, the rest in allocinfo_other_bytes
    for by, keyf in (("module", lambda t: t["module"] or "vmlinux"),
                     ("subsys", lambda t: subsys(t["file"])),
                     ("file", lambda t: t["file"])):
        groups = {}
        for t in tags:
            g = groups.setdefault(keyf(t), [0, 0, 0, 0, 0])
            g[0] += t["bytes"]
            g[1] += t["calls"]
            g[2] += t["bytes"] if t["inaccurate"] else 0
            g[3] += t["bytes"] if expected(t) else 0
            g[4] += 1
        rc, out, _ = run(["export", "-q", "--by", by, "--all", "-f", path])
        got, plain, okfmt = {}, {}, True
        for line in out.splitlines():
            if line.startswith("#"):
                continue
            m = re.match(r'^allocinfo_%s_(bytes|calls|inaccurate_bytes|expected_bytes|tags)\{%s="((?:[^"\\]|\\.)*)"\} (-?\d+)$'
                         % (by, by), line)
            if m:
                g = got.setdefault(prom_unescape(m.group(2)), [None] * 5)
                g[["bytes", "calls", "inaccurate_bytes", "expected_bytes", "tags"].index(m.group(1))] = int(m.group(3))
                continue
            m = re.match(r"^(allocinfo_[a-z_]+) (-?\d+)$", line)
            if m:
                plain[m.group(1)] = int(m.group(2))
            else:
                okfmt = False
        clamp = lambda v: max(INT64_MIN, min(INT64_MAX, v))
        want = {k: [clamp(v[0]), min(UINT64_MAX, v[1]), clamp(v[2]), clamp(v[3]), v[4]]
                for k, v in groups.items()}
        ok(okfmt and got == want and "line=" not in out,
           "%s: export --by %s: %d series, sums of bytes, calls, inaccurate bytes, expected bytes, tags"
           % (rel, by, len(want)), "want %s\ngot  %s\n%s" % (want, got, out[:1500]))
        total = clamp(sum(t["bytes"] for t in tags))
        ok(plain.get("allocinfo_profile_bytes") == total and plain.get("allocinfo_tags") == len(tags)
           and plain.get("allocinfo_%s_other_bytes" % by) == 0,
           "%s: export --by %s: profile bytes %d, %d tags, nothing in other" % (rel, by, total, len(tags)),
           str(plain))
        if len(want) > 2:
            # the 2 largest groups (ties: first seen), the rest summed in other
            first = {}
            for i, t in enumerate(tags):
                first.setdefault(keyf(t), i)
            top = sorted(want, key=lambda k: (-want[k][0], first[k]))[:2]
            rc, out, _ = run(["export", "-q", "--by", by, "-n", "2", "-f", path])
            names = re.findall(r'^allocinfo_%s_bytes\{%s="((?:[^"\\]|\\.)*)"\}' % (by, by), out, re.M)
            other = re.search(r"^allocinfo_%s_other_bytes (-?\d+)$" % by, out, re.M)
            want_other = clamp(sum(want[k][0] for k in want if k not in top))
            ok(sorted(prom_unescape(x) for x in names) == sorted(top) and other
               and int(other.group(1)) == want_other,
               "%s: export --by %s -n 2: %s, the rest (%d bytes) in other" % (rel, by, top, want_other),
               out[:1500])

    # JSON input: the tool's own export read back gives the same tags
    rc, js, _ = run(["export", "-q", "-F", "json", "-f", path])
    rc1, a, _ = run(["top", "-q", "-b", "-H", "-n", "0", "-s", "name", "-f", path])
    rc2, b, err = run(["top", "-b", "-H", "-n", "0", "-s", "name", "-f", "-"], stdin=js.encode("latin-1"))
    ok(rc2 == 0 and a == b and not err, "%s: export -F json | top -f -: the same tags, no message" % rel,
       "exit %d\n%s\n%s" % (rc2, err, "\n".join(difflib.unified_diff(a.splitlines(), b.splitlines(), lineterm=""))))
    rc, js, _ = run(["export", "-q", "-k", "-F", "json", "-f", path])
    rc1, a, _ = run(["tree", "-q", "-b", "-H", "--depth", "3", "-f", path])
    rc2, b, _ = run(["tree", "-b", "-H", "--depth", "3", "-f", "-"], stdin=js.encode("latin-1"))
    ok(a == b, "%s: export -k -F json | tree -f -: duplicates summed again, the same tree" % rel, b[:1500])

    # the sanitized build and the static build read it the same way
    if ASAN:
        for args in (["top", "-n", "0"], ["top", "-k"], ["tree", "--depth", "9"],
                     ["tree", "--by", "subsys"], ["tree", "--by", "module"], ["export", "-F", "json"],
                     ["export", "-F", "csv", "-k"], ["export"],
                     ["diff", path, os.path.join(HERE, "samples", "linux-6.12-x86_64.txt")]):
            a = args + ([] if args[0] == "diff" else ["-f", path])
            rc, out, err = run(a, ASAN)
            if rc not in (0, 3) or "Sanitizer" in err or "runtime error" in err:
                ok(False, "%s: ASan+UBSan build: %s" % (rel, " ".join(args)), err[-3000:])
                break
        else:
            ok(True, "%s: ASan+UBSan build runs top, tree, export, diff cleanly" % rel)
    if STATIC:
        a = run(["tree", "-q", "-f", path, "--depth", "3"])
        b = run(["tree", "-q", "-f", path, "--depth", "3"], STATIC)
        ok(a == b, "%s: the static build prints the same tree" % rel)
    return ref


def check_diff(pa, pb):
    ra, rb = reference(pa), reference(pb)
    ta = {key(t): t for t in ra["tags"]}
    tb = {key(t): t for t in rb["tags"]}
    rows = []
    for k in set(ta) | set(tb):
        a, b = ta.get(k), tb.get(k)
        db = (b["bytes"] if b else 0) - (a["bytes"] if a else 0)
        dc = (b["calls"] if b else 0) - (a["calls"] if a else 0)
        st = "new" if not a else "gone" if not b else ""
        if db or dc or st:
            rows.append((db, dc, a["bytes"] if a else None, b["bytes"] if b else None, st,
                         fmt_tag(b or a), name_key(b or a)))
    rows.sort(key=lambda r: (-r[0], -r[1], r[6]))
    rc, out, err = run(["diff", "-q", "-b", "-H", pa, pb])
    got = []
    for line in out.splitlines():
        m = re.match(r"\s*([+-]?\d+)\s+([+-]?\d+)\s+(-|-?\d+)\s+(-|-?\d+) (new |gone|    )  (.*?)(  NEGATIVE)?$", line)
        if not m:
            got.append(line)
            continue
        got.append((int(m.group(1)), int(m.group(2)),
                    None if m.group(3) == "-" else int(m.group(3)),
                    None if m.group(4) == "-" else int(m.group(4)),
                    m.group(5).strip(), m.group(6)))
    exp = [r[:6] for r in rows]
    ok(got == exp, "diff %s %s: %d changed tags, by growth, new and gone marked"
       % (os.path.basename(pa), os.path.basename(pb), len(exp)),
       "\n".join("want %s\ngot  %s" % (a, b) for a, b in zip(exp, got) if a != b)
       or "want %d, got %d" % (len(exp), len(got)))


def main():
    samples = sorted(glob.glob(os.path.join(HERE, "samples", "*.txt")) +
                     glob.glob(os.path.join(HERE, "samples", "*.allocinfo")))
    bad = sorted(glob.glob(os.path.join(HERE, "samples", "bad", "*")))
    for p in samples:
        r = check_sample(p)
        ok(not r["bad"] and not r["warnings"],
           "%s: a well-formed sample (reference reader agrees)" % os.path.relpath(p, HERE))
    for p in bad:
        r = check_sample(p)
        ok(r["bad"] or r["warnings"],
           "%s: the reference reader finds it malformed too" % os.path.relpath(p, HERE))
    # every pair of neighbouring samples, both ways
    allp = samples + bad
    for a, b in zip(allp, allp[1:] + allp[:1]):
        check_diff(a, b)
        check_diff(b, a)
    # stdin
    p = samples[0]
    data = open(p, "rb").read()
    a = run(["export", "-F", "csv", "-f", p])
    b = run(["export", "-F", "csv", "-f", "-"], stdin=data)
    ok(a == b, "-f - reads stdin like a file")
    return finish()


if __name__ == "__main__":
    sys.exit(main())
