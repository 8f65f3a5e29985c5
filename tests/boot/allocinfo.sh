#!/usr/bin/env bash
# /proc/allocinfo of the profiling kernel: the 1.0 header, one line per
# allocation tag of vmlinux (no module is loaded), every line well formed,
# and slab pages charged to mm/slub.c's alloc_slab_page.
. "$(dirname "$0")/../lib.sh"
o=$BUILD/test/allocinfo
obj=$BUILD/obj/profiling
if ! "$TOP/scripts/boot.sh" -k profiling -o "$o" -q 'cat /proc/allocinfo' > "$o.err" 2>&1; then
	fail "the guest prints /proc/allocinfo" "$(cat "$o.err")"
	done_testing
fi
f=$o/out.log
tr -d '\r' < "$f" > "$o/allocinfo"
f=$o/allocinfo

eq "line 1 is the 1.0 header" "allocinfo - version: 1.0" "$(sed -n 1p "$f")"
eq "line 2 names the columns" "#     <size>  <calls> <tag info>" "$(sed -n 2p "$f")"

# The tags of vmlinux, counted two ways from the symbol table: the
# static `_alloc_tag` objects that alloc_hooks() defines, and the size of
# the alloc_tags section divided by the size of one tag.
syms=$(nm -S "$obj/vmlinux")
tags=$(grep -cE ' [dD] _alloc_tag(\.[0-9]+)?$' <<< "$syms")
tagsize=$(awk '$4 ~ /^_alloc_tag(\.[0-9]+)?$/ { print $2; exit }' <<< "$syms")
start=$(awk '$NF == "__start_alloc_tags" { print $1 }' <<< "$syms")
stop=$(awk '$NF == "__stop_alloc_tags" { print $1 }' <<< "$syms")
if [ -z "$tagsize" ] || [ -z "$start" ] || [ -z "$stop" ]; then
	fail "vmlinux has alloc tags" "tag size '$tagsize', section '$start'..'$stop'"
else
	eq "the alloc_tags section holds exactly the _alloc_tag objects" \
		"$tags" "$(((16#$stop - 16#$start) / 16#$tagsize))"
	lines=$(($(wc -l < "$f") - 2))
	eq "one line per tag of vmlinux ($tags tags)" "$tags" "$lines"
	[ "$tags" -ge 100 ] && ok "hundreds of tags ($tags)" || fail "hundreds of tags" "$tags"
fi

bad=$(sed '1,2d' "$f" | grep -vE '^ {0,11}-?[0-9]+ {1,8}[0-9]+ [^ ]+:[0-9]+ func:[A-Za-z0-9_.]+ $' | head -5)
eq "every tag line is '%12lli %8llu file:line func:name '" "" "$bad"
rel=$(sed '1,2d' "$f" | awk '$3 ~ /^(\.|\/)/' | head -5)
eq "kernel tags name their file relative to the tree (mm/..., not ../ or /)" "" "$rel"
neg=$(sed '1,2d' "$f" | awk '$1 < 0' | head -5)
eq "no tag has negative bytes" "" "$neg"

slab=$(awk '$3 ~ /^mm\/slub\.c:/ && $4 == "func:alloc_slab_page" { s += $1 } END { print s + 0 }' "$f")
if [ -n "$slab" ] && [ "$slab" -gt 0 ] && [ $((slab % 4096)) -eq 0 ]; then
	ok "mm/slub.c func:alloc_slab_page holds whole pages ($slab bytes)"
else
	fail "mm/slub.c func:alloc_slab_page holds whole pages" "bytes: '$slab'"
fi
done_testing
