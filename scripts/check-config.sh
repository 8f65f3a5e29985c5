#!/usr/bin/env bash
# check-config.sh DOTCONFIG FRAGMENT...: fail when an option that a
# fragment requests did not survive `make olddefconfig` (a dependency is
# missing, or the option vanished from this kernel). A later fragment
# overrides an earlier one, as in the merge itself.
STEP=${STEP:-config}
. "$(dirname "$0")/lib.sh"

[ $# -ge 2 ] || die "usage: check-config.sh DOTCONFIG FRAGMENT..."
dotconfig=$1
shift
[ -f "$dotconfig" ] || die "$dotconfig does not exist" "run the config step first"

awk '
	FNR == NR {
		if ($0 ~ /^CONFIG_[A-Za-z0-9_]+=/) {
			sym = $0; sub(/=.*/, "", sym); have[sym] = $0
		} else if ($0 ~ /^# CONFIG_[A-Za-z0-9_]+ is not set$/) {
			have[$2] = $0
		}
		next
	}
	/^[[:space:]]*$/ { why = ""; next }
	/^# CONFIG_[A-Za-z0-9_]+ is not set$/ {
		want[$2] = "n"; line[$2] = FILENAME ":" FNR; reason[$2] = why; why = ""; next
	}
	/^#/ { r = $0; sub(/^#[[:space:]]*/, "", r); why = why (why == "" ? "" : " ") r; next }
	/^CONFIG_[A-Za-z0-9_]+=([ymn]|-?[0-9]+|0x[0-9a-fA-F]+|"([^"\\]|\\.)*")$/ {
		sym = $0; sub(/=.*/, "", sym)
		want[sym] = $0; line[sym] = FILENAME ":" FNR; reason[sym] = why; why = ""; next
	}
	{ printf "%s:%d: not a config line: %s\n", FILENAME, FNR, $0; bad++ }
	END {
		for (sym in want) {
			got = (sym in have) ? have[sym] : "(absent)"
			if (want[sym] == "n") {
				if (got ~ /=/ && got !~ /=n$/) {
					printf "%s: %s requested off, but the config has %s\n", line[sym], sym, got; bad++
				}
			} else if (got != want[sym]) {
				if (got ~ /is not set/) got = "not set"
				printf "%s: %s requested, but the config has %s (why it is wanted: %s)\n",
					line[sym], want[sym], got, reason[sym]; bad++
			}
		}
		exit bad ? 1 : 0
	}
' "$dotconfig" "$@" >&2 ||
	die "requested options are missing from $dotconfig (see above)" \
	    "add the dependency the option needs to the fragment, or drop the option if this kernel no longer has it"
