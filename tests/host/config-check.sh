#!/usr/bin/env bash
# The config check: passes when every requested option survived, fails
# naming the option (and why it was wanted) when one did not.
. "$(dirname "$0")/../lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
chk=$TOP/scripts/check-config.sh

cat > "$tmp/.config" <<'CFG'
CONFIG_64BIT=y
CONFIG_NUMA=y
# CONFIG_MEM_ALLOC_PROFILING is not set
CONFIG_NODES_SHIFT=6
CFG
cat > "$tmp/good.config" <<'CFG'
# why: needed
CONFIG_64BIT=y
# why: shift
CONFIG_NODES_SHIFT=6
# why: off
# CONFIG_MEM_ALLOC_PROFILING is not set
CFG
check "a satisfied fragment passes" "$chk" "$tmp/.config" "$tmp/good.config"

printf '# we need it for the test\nCONFIG_MEM_ALLOC_PROFILING=y\n' > "$tmp/missing.config"
check_fails "an option that was dropped fails, naming it and its reason" \
	'missing.config:2: CONFIG_MEM_ALLOC_PROFILING=y requested, but the config has not set.*we need it for the test' \
	"$chk" "$tmp/.config" "$tmp/missing.config"

printf '# vanished from this kernel\nCONFIG_NO_SUCH_OPTION=y\n' > "$tmp/vanished.config"
check_fails "an option the kernel does not have fails" 'CONFIG_NO_SUCH_OPTION=y requested, but the config has \(absent\)' \
	"$chk" "$tmp/.config" "$tmp/vanished.config"

printf '# off please\n# CONFIG_NUMA is not set\n' > "$tmp/off.config"
check_fails "an option requested off but on fails" 'CONFIG_NUMA requested off' "$chk" "$tmp/.config" "$tmp/off.config"

printf '# a value\nCONFIG_NODES_SHIFT=10\n' > "$tmp/value.config"
check_fails "a value that olddefconfig changed fails" 'CONFIG_NODES_SHIFT=10 requested, but the config has CONFIG_NODES_SHIFT=6' \
	"$chk" "$tmp/.config" "$tmp/value.config"

check "a later fragment overrides an earlier one" "$chk" "$tmp/.config" "$tmp/value.config" "$tmp/good.config"

printf 'CONFIG_64BIT=y # trailing comments break kconfig\n' > "$tmp/junk.config"
check_fails "a malformed fragment line fails" 'not a config line' "$chk" "$tmp/.config" "$tmp/junk.config"

# Every line of the project's fragments carries a reason: the line above
# an option is a comment.
for f in "$TOP"/scripts/config/*.config; do
	bad=$(awk '/^(CONFIG_|# CONFIG_.* is not set)/ { if (prev !~ /^#/) print FILENAME ":" FNR ": " $0 } { prev = $0 }' "$f")
	eq "every option of $(basename "$f") has a comment saying why" "" "$bad"
done

# The real build: its .config satisfies its fragments (when built).
obj=$BUILD/obj/profiling
if [ -f "$obj/.pftag-config" ]; then
	check "the profiling build's .config has every requested option" "$chk" "$obj/.config" \
		"$TOP"/scripts/config/{base,mm,profiling}.config
else
	fail "the profiling build's .config has every requested option" "build/obj/profiling is not configured"
fi
done_testing
