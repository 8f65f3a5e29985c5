#!/usr/bin/env python3
"""Random bad forms of the series' boot parameters and of run-time writes.

param-fuzz.py SEED BOOTS prints, for each of BOOTS boots, lines of
  boot N cmdline NAME[=VALUE]    a command-line parameter the kernel must refuse
  boot N write FILE VALUE        a write the kernel must refuse at run time
Every form is checked against a model of the kernel's own parsers
(kstrtouint()/kstrtoul() with base 0, kstrtobool(), the early handler of
sysctl.vm.mem_profiling, proc_dointvec_minmax() with 0..1) and kept only if
that model refuses it; the test then checks that the kernel does too.
Values contain no blank, quote or backslash (the command line would split
or unquote them). The same SEED gives the same forms.
"""
import random
import sys

CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_+-.,:/=%@"
BITS_PER_LONG = 64


def parse_integer(s, limit):
    """kstrtoull(s, 0) then a range check: the value, or None if refused."""
    if s.startswith("+"):
        s = s[1:]
    base = 10
    if s[:1] == "0":
        if s[1:2] in ("x", "X") and s[2:3] and s[2] in "0123456789abcdefABCDEF":
            base, s = 16, s[2:]
        else:
            base = 8
    digits = "0123456789abcdef"[:base]
    n = 0
    while n < len(s) and s[n].lower() in digits:
        n += 1
    if n == 0 or n != len(s):
        return None
    v = int(s, base)
    return v if v <= limit else None


def idx_bits_ok(v):
    if v is None:
        return False
    n = parse_integer(v, 2**32 - 1)
    return n is not None and n <= BITS_PER_LONG


def headroom_ok(v):
    return v is not None and parse_integer(v, 2**64 - 1) is not None


def kstrtobool_ok(s):
    if s[:1] in list("yYtT1nNfF0"):
        return True
    return s[:1] in ("o", "O") and s[1:2] in list("nNfF")


def mem_profiling_ok(v):
    """setup_early_mem_profiling(): VALUE[,compressed|,page_ext]."""
    if v is None:
        return False
    value, comma, suffix = v.partition(",")
    if comma and suffix not in ("compressed", "page_ext"):
        return False
    if not value or len(value) >= 8:
        return False
    return value == "never" or kstrtobool_ok(value)


def junk(rng, lo=1, hi=24):
    return "".join(rng.choice(CHARS) for _ in range(rng.randint(lo, hi)))


def number_form(rng):
    return rng.choice([
        lambda: str(rng.randint(65, 2**70)),
        lambda: "-" + str(rng.randint(0, 2**20)),
        lambda: "0x" + "".join(rng.choice("0123456789abcdef") for _ in range(rng.randint(17, 24))),
        lambda: "0" + "".join(rng.choice("0123456789") for _ in range(rng.randint(1, 6))) + "9",
        lambda: str(rng.randint(0, 64)) + rng.choice(["k", "K", "M", "bits", ".", ".5", "x", ",", "_"]),
        lambda: "+" + junk(rng, 1, 6),
        lambda: "0x",
        lambda: "",
        lambda: junk(rng),
    ])()


def mem_profiling_form(rng):
    value = rng.choice(["0", "1", "never", "y", "n", "on", "off", "true", "", "2", "-1",
                        "nevermore", "enable", "disabled", junk(rng, 1, 12)])
    suffix = rng.choice(["", ",", ",compressed", ",page_ext", ",pageext", ",Compressed",
                         ",compressed,page_ext", "," + junk(rng, 1, 12)])
    return value + suffix


def sysctl_write_form(rng):
    """Forms proc_dointvec_minmax() refuses: no number first, out of 0..1,
    or a number followed at once by a character that is not blank."""
    return rng.choice([
        lambda: rng.choice("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_.,:/=%@") + junk(rng, 0, 12),
        lambda: str(rng.randint(2, 2**31)),
        lambda: "-" + str(rng.randint(1, 2**31)),
        lambda: rng.choice(["0", "1"]) + rng.choice("abcxyz_.,:/=%@+") + junk(rng, 0, 6),
        lambda: "never",
        lambda: "1,compressed",
    ])()


def main():
    seed, boots = int(sys.argv[1]), int(sys.argv[2])
    rng = random.Random(seed)
    checks = [
        ("mem_profiling_idx_bits", number_form, idx_bits_ok, 8),
        ("mem_profiling_headroom", number_form, headroom_ok, 8),
        ("sysctl.vm.mem_profiling", mem_profiling_form, mem_profiling_ok, 3),
    ]
    for b in range(1, boots + 1):
        for name, gen, accepted, count in checks:
            forms = []
            if b == 1:
                forms.append(None)	# the bare name, no "=": the handler gets NULL
            while len(forms) < count:
                v = gen(rng)
                if not accepted(v) and v not in forms:
                    forms.append(v)
            for v in forms:
                print(f"boot {b} cmdline {name}" + ("" if v is None else f"={v}"))
        writes = set()
        while len(writes) < 12:
            writes.add(sysctl_write_form(rng))
        for v in sorted(writes):
            print(f"boot {b} write /proc/sys/vm/mem_profiling {v}")
        for f in ("/proc/sys/vm/mem_profiling_compressed", "/sys/kernel/debug/alloc_tag/storage",
                  "/sys/kernel/debug/alloc_tag/page_tags"):
            print(f"boot {b} write {f} {rng.choice(['0', '1', 'page_ext', junk(rng)])}")


if __name__ == "__main__":
    main()
