#!/usr/bin/env bash
# The microbenchmark of `make bench` (tests/modules/pftag_bench.c) with
# tiny loop counts in page-flags mode: it loads, reports every case and
# its output parses with the report's own parser; with memcg=1 on a
# kernel without memcg it refuses to load and says why. No figure is
# checked: the figures are `make bench`'s.
. "$(dirname "$0")/../lib.sh"
o=$BUILD/test/bench-smoke
if guest profiling "$o" "" \
	'k=$(awk '\''$3 == "__start_alloc_tags" { print "0x" $1; exit }'\'' /proc/kallsyms)
	 insmod /opt/pftag/modules/pftag_bench.ko loops=64 runs=2 cpu=1 batch=16 ktag=$k &&
	 rmmod pftag_bench && dmesg | grep "pftag_bench:" &&
	 if insmod /opt/pftag/modules/pftag_bench.ko loops=8 cpu=1 memcg=1; then
		echo "memcg=1: loaded"; rmmod pftag_bench
	 else
		echo "memcg=1: refused"; dmesg | grep "pftag_bench: memcg=1"
	 fi'; then
	ok "pftag_bench loads, runs and unloads"
	if out=$(python3 "$TOP/scripts/bench-report.py" --parse-micro "$o/out.log" 2>&1); then
		ok "its output parses"
		ncases=$(python3 -c "import runpy, sys; print(len(runpy.run_path(sys.argv[1])['CASES']))" \
			"$TOP/scripts/bench-report.py")
		eq "every case reports two runs" "$ncases" "$(awk 'NF == 3 && $2 > 0 && $3 > 0' <<< "$out" | wc -l)"
	else
		fail "its output parses" "$out"
	fi
	log=$(tr -d '\r' < "$o/out.log")
	check "memcg=1 without memcg: the module refuses to load" grep -qx "memcg=1: refused" <<< "$log"
	check "memcg=1 without memcg: the log names the way out" \
		grep -q "memcg's kmem accounting is offline: create a memory cgroup first" <<< "$log"
fi
done_testing
