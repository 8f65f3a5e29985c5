"""TAP output for the allocinfo Python tests: ok() prints one result line
(and up to 30 detail lines under a failure), finish() the count and the
exit status."""
import sys

_counts = {"tests": 0, "failed": 0}


def ok(cond, name, detail=""):
    _counts["tests"] += 1
    if cond:
        print("ok %d - %s" % (_counts["tests"], name))
    else:
        _counts["failed"] += 1
        print("not ok %d - %s" % (_counts["tests"], name))
        for line in str(detail).splitlines()[:30]:
            print("#   " + line)
    sys.stdout.flush()


def finish():
    """Print the summary line; the exit status: 1 if anything failed."""
    print("# %d tests, %d failed" % (_counts["tests"], _counts["failed"]))
    return 1 if _counts["failed"] else 0
