#!/usr/bin/env bash
# The distribution layout fragments (scripts/config/layout-*.config) give
# the page->flags layout of the real configurations they stand for: each
# field's width, from scripts/page-flags-layout.sh on the fragment build's
# configuration and on the real one (Debian's amd64 config from
# linux-config-6.12, as shipped or with the 9-bit layout's three changes).
# Also checks the series' spare-bit count (ALLOC_TAG_IDX_SPARE) against
# the word minus every field, computed here, and the index field (at most
# 32 of them) on the profiling build. Both layouts always, however
# many LAYOUTS the boot tests run: a probe takes about 20 s, no kernel is
# built.
. "$(dirname "$0")/../lib.sh"
probe="$TOP/scripts/page-flags-layout.sh"

if [ ! -f "$DEBIAN_CONFIG" ]; then
	fail "Debian's config is there to compare with" \
		"$DEBIAN_CONFIG is missing: install linux-config-6.12 ('make deps' as root)"
	done_testing
fi

# spare_by_hand LAYOUT-TEXT: word - pageflags - every field, as the header
# should count it (never below 0).
spare_by_hand() {
	awk '{ v[$1] = $2 } END {
		s = v["word"] - v["pageflags"] - v["sections"] - v["nodes"] - v["zones"]
		s -= v["last_cpupid"] + v["kasan_tag"] + v["lru_gen"] + v["lru_refs"]
		print (s > 0 ? s : 0) }' <<< "$1"
}

for l in debian nine; do
	# shellcheck disable=SC2046 # layout_real gives several arguments
	if ! real=$("$probe" $(layout_real $l) 2>&1); then
		fail "$l: the real config's layout is computed" "$real"
		continue
	fi
	if ! mine=$("$probe" -f "base mm profiling $(layout_frags $l)" 2>&1); then
		fail "$l: the fragment's layout is computed" "$mine"
		continue
	fi
	eq "$l: the fragment gives the real config's page->flags layout, field by field" \
		"$real" "$mine"
	eq "$l: spare bits = word - page flags - fields" "$(spare_by_hand "$real")" \
		"$(awk '$1 == "spare" { print $2 }' <<< "$real")"
	echo "#   info: $l: $(paste -sd' ' <<< "$real")"
done

# The same count on the layout of the project's other builds (page-flags
# mode: tests/boot/page-flags.sh boots it).
if def=$("$probe" -f "base mm profiling" 2>&1); then
	eq "profiling: spare bits = word - page flags - fields" "$(spare_by_hand "$def")" \
		"$(awk '$1 == "spare" { print $2 }' <<< "$def")"
	eq "profiling: the index field takes the spare bits up to 32" \
		"$(spare_by_hand "$def" | awk '{ print ($1 > 32 ? 32 : $1) }')" \
		"$(awk '$1 == "index" { print $2 }' <<< "$def")"
	echo "#   info: profiling: $(paste -sd' ' <<< "$def")"
else
	fail "the profiling build's layout is computed" "$def"
fi

# Android GKI 6.12's layout on arm64 (scripts/config/layout-gki.config):
# each field as wide as the fragment's options make it by the rules of
# include/linux/page-flags-layout.h and mmzone.h: no NUMA, no node bits;
# no NUMA balancing, no last_cpupid; SPARSEMEM_VMEMMAP, no section bits;
# DMA32, Normal and Movable, ceil(log2(3)) = 2 zone bits; a tag-based
# KASAN, an 8-bit tag; MGLRU, order_base_2(MAX_NR_GENS + 1) = 3 generation
# bits and MAX_NR_TIERS - 2 = 2 reference bits.
if ! command -v aarch64-linux-gnu-gcc > /dev/null; then
	skip "gki (arm64): the GKI layout's fields" "no aarch64-linux-gnu-gcc: run 'make deps ARCH=arm64' (as root)"
elif gki=$(ARCH=arm64 "$probe" -f "base mm profiling layout-gki" 2>&1); then
	eq "gki (arm64): the fields the GKI options give" \
		"sections 0 nodes 0 zones 2 last_cpupid 0 kasan_tag 8 lru_gen 3 lru_refs 2" \
		"$(awk '$1 ~ /^(sections|nodes|zones|last_cpupid|kasan_tag|lru_gen|lru_refs)$/ { printf "%s%s %s", sep, $1, $2; sep = " " }' <<< "$gki")"
	eq "gki (arm64): spare bits = word - page flags - fields" "$(spare_by_hand "$gki")" \
		"$(awk '$1 == "spare" { print $2 }' <<< "$gki")"
	echo "#   info: gki (arm64): $(paste -sd' ' <<< "$gki")"
else
	fail "gki (arm64): the GKI layout is computed" "$gki"
fi
done_testing
