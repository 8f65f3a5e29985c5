#!/usr/bin/env python3
# The fleet scenario of check_leaks.sh: JSON captures (allocinfo's export
# format, with their time, host, machine id and boot id) of synthetic
# hosts built on a real capture, one directory a host, one file a timer
# run (5 minutes apart, with up to 20 s of timer jitter).
#
# Every host has what a clean host has: the page cache warming up to
# 4 GiB and anonymous memory growing (expected growth, ignored by
# default), slab and skb jitter, and caches that warm up exponentially
# and level off: dentries, inodes and the XFS inode cache. On top of
# that, one planted leak a host, of one shape each:
#
#   clean    nothing (3 h)
#   steady   500 B/s from the boot on (3 h)
#   step     1 MiB every 30 minutes (4 h)
#   late     1 KiB/s in the last 12 h of a 7-day boot
#   stopped  1 KiB/s for an hour, 75 minutes after the boot, then no more (4 h)
#   reload   200 B/s in module xmod, unloaded 90 minutes after the boot for
#            15 minutes; its bytes given back at the unload (5 h)
#   clone1,  two VMs cloned from one image: one machine id, two node
#   clone2   names, two boots running at once; clone2 leaks 500 B/s (3 h)
#
# usage: fleet_scenario.py SAMPLE OUTDIR
# writes OUTDIR/HOST/run-NNNN.json and OUTDIR/planted.json: the leaks, and
# for each host the true bytes of each planted tag at each run.
import hashlib
import json
import math
import os
import random
import sys

T0 = 1700000000
DT = 300
HOUR = 3600

LEAK = {"file": "drivers/net/x.c", "line": 12, "module": "xnet", "func": "x_alloc"}
XMOD = {"file": "drivers/misc/xmod.c", "line": 40, "module": "xmod", "func": "xmod_buf_alloc"}
XMOD2 = {"file": "drivers/misc/xmod.c", "line": 88, "module": "xmod", "func": "xmod_init"}
XFS = {"file": "fs/xfs/xfs_icache.c", "line": 85, "module": "xfs", "func": "xfs_inode_alloc"}
XFSB = {"file": "fs/xfs/xfs_buf.c", "line": 372, "module": "xfs", "func": "xfs_buf_alloc_pages"}

HOSTS = {
    # name: hours of boot, leak shape
    "clean": (3, None),
    "steady": (3, "steady"),
    "step": (4, "step"),
    "late": (7 * 24, "late"),
    "stopped": (4, "stopped"),
    "reload": (5, "reload"),
    "clone1": (3, None),
    "clone2": (3, "steady"),
}


def read_sample(path):
    tags = []
    for line in open(path):
        f = line.split()
        if len(f) < 4 or not f[0].lstrip("-").isdigit():
            continue
        fl, ln = f[2].rsplit(":", 1)
        mod = None
        rest = f[3:]
        if rest[0].startswith("["):
            mod = rest[0].strip("[]")
            rest = rest[1:]
        tags.append({"file": fl, "line": int(ln), "module": mod,
                     "func": rest[0][len("func:"):], "bytes": int(f[0]), "calls": int(f[1])})
    return tags


def warm(t, amp, tau):
    """an exponential warm-up that levels off at amp"""
    return amp * (1 - math.exp(-t / tau))


def leak_bytes(shape, t):
    """the planted leak's bytes above its base at t seconds after the boot"""
    if shape == "steady":
        return 500 * t
    if shape == "step":
        return 1048576 * int(t // (30 * 60))
    if shape == "late":
        start = 7 * 24 * HOUR - 12 * HOUR
        return 1024 * max(0, t - start)
    if shape == "stopped":
        a, b = 75 * 60, 135 * 60
        return 1024 * (min(t, b) - a) if t > a else 0
    return 0


def main():
    sample, out = sys.argv[1], sys.argv[2]
    base = read_sample(sample)
    names = {(t["file"], t["line"]) for t in base}
    for need in [("mm/filemap.c", 1965), ("mm/memory.c", 1078), ("mm/slub.c", 2474),
                 ("fs/dcache.c", 1667), ("fs/inode.c", 2446), ("net/core/skbuff.c", 590)]:
        assert need in names, need
    planted = {"t0": T0, "dt": DT, "hosts": {}}
    for host, (hours, shape) in HOSTS.items():
        rnd = random.Random(host)
        d = os.path.join(out, host)
        os.makedirs(d, exist_ok=True)
        runs = hours * HOUR // DT + 1
        mid = hashlib.md5(host.encode()).hexdigest() if not host.startswith("clone") else "c" * 32
        boot = "b-%s-%032x" % (host, rnd.getrandbits(128))
        # the clones start 100 s apart: their runs interleave
        start = T0 + (100 if host == "clone2" else 0)
        truth = {"shape": shape, "runs": [], "leak": None, "reload": None}
        if shape:
            truth["leak"] = XMOD if shape == "reload" else LEAK
        for k in range(runs):
            t = k * DT + (rnd.uniform(-20, 20) if k else 0)
            taken = start + t
            tags = []
            for b in base:
                x = dict(b)
                key = (x["file"], x["line"])
                if key == ("mm/filemap.c", 1965):
                    x["bytes"] += int(warm(t, 4 << 30, 40 * 60)) + rnd.randint(-1 << 20, 1 << 20)
                elif key == ("mm/memory.c", 1078):
                    x["bytes"] += int(20000 * t) + rnd.randint(-8 << 20, 8 << 20)
                elif key == ("mm/slub.c", 2474):
                    x["bytes"] += rnd.randint(-2 << 20, 2 << 20)
                elif key == ("net/core/skbuff.c", 590):
                    x["bytes"] += rnd.randint(0, 4 << 20)
                elif key == ("fs/dcache.c", 1667):
                    x["bytes"] += int(warm(t, 150 << 20, 20 * 60)) + rnd.randint(-256 << 10, 256 << 10)
                elif key == ("fs/inode.c", 2446):
                    x["bytes"] += int(warm(t, 100 << 20, 30 * 60)) + rnd.randint(-256 << 10, 256 << 10)
                x["bytes"] = max(0, x["bytes"])
                tags.append(x)
            xfs = dict(XFS, bytes=int(warm(t, 200 << 20, 45 * 60)) + 65536 +
                       rnd.randint(-256 << 10, 256 << 10), calls=1000)
            tags.append(xfs)
            tags.append(dict(XFSB, bytes=65536 + rnd.randint(-16384, 16384), calls=16))
            run = {"k": k, "t": taken}
            if shape and shape != "reload":
                v = 1048576 + int(leak_bytes(shape, t)) + rnd.randint(-16384, 16384)
                tags.append(dict(LEAK, bytes=v, calls=100 + k))
                run["bytes"] = v
            if shape == "reload":
                off, on = 90 * 60, 105 * 60
                if off <= t < on:
                    run["bytes"] = None
                else:
                    since = t - on if t >= on else t
                    v = 4096 + int(200 * since)
                    tags.append(dict(XMOD, bytes=v, calls=10 + k))
                    tags.append(dict(XMOD2, bytes=8192, calls=2))
                    run["bytes"] = v
                truth["reload"] = {"off": start + off, "on": start + on}
            truth["runs"].append(run)
            for x in tags:
                x.setdefault("lines", 1)
            cap = {"version": "1.0", "source": "/proc/allocinfo", "taken_at": taken,
                   "host": host, "machine_id": mid, "boot_id": boot,
                   "kernel": "6.12.0-fleet", "skipped_lines": 0, "tags": tags}
            with open(os.path.join(d, "run-%04d.json" % k), "w") as f:
                json.dump(cap, f, separators=(",", ":"))
        planted["hosts"][host] = truth
    with open(os.path.join(out, "planted.json"), "w") as f:
        json.dump(planted, f)


main()
