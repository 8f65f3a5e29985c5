# Page allocation tags in page->flags: build, boot and test.
# `make help` lists the targets. V=1 shows the kernel build's commands.

SHELL := /bin/bash
CONFIG ?= profiling
FRAGMENTS ?=
# ARCH=i386: the kernels are built for 32-bit x86 and boot in
# qemu-system-i386; ARCH=arm64: cross-built, booted in qemu-system-aarch64
# (scripts/lib.sh). run, test, build, boot, initramfs and deps take it,
# make test runs the tests that are not x86_64's alone.
ARCH_FRAG := $(if $(filter-out x86_64,$(ARCH)),+arch-$(ARCH))
ID := $(CONFIG)$(foreach f,$(FRAGMENTS),+$(basename $(notdir $(f))))$(ARCH_FRAG)
export V FRAGMENTS
# Targets that build or measure x86_64 kernels only (bench takes arm64 too).
X86_ONLY := $(if $(filter arm64,$(ARCH)),,bench) mm-selftests stress check-bisect
ifneq ($(ARCH_FRAG),)
ifneq ($(filter $(X86_ONLY),$(MAKECMDGOALS)),)
$(error make $(filter $(X86_ONLY),$(MAKECMDGOALS)) is for x86_64 only, not ARCH=$(ARCH): drop ARCH=, or use make run/test/build/boot ARCH=$(ARCH))
endif
endif

# Guest options of `make boot`, passed to scripts/boot.sh as they are.
export APPEND CMD MEM CPUS NUMA TIMEOUT ICOUNT ACCEL OUT

.PHONY: help deps assemble export check-export series check-bisect build allocinfo selftest initramfs boot run test stress mm-selftests bench clean distclean

help:
	@echo 'make run          build, boot the profiling kernel in QEMU, show the profile'
	@echo 'make test         every test; prints "N passed, N failed", non-zero on failure;'
	@echo '                  ends with the arm64 part (the tests marked for any architecture); ARM64=0 skips it'
	@echo '                  ARCH=i386 or ARCH=arm64: the tests that are not x86_64 only, on such kernels'
	@echo '                  LAYOUTS="debian nine" adds the 9-bit page->flags layout (one more build)'
	@echo 'make boot CMD=... run CMD in a guest; APPEND= MEM= CPUS= NUMA= TIMEOUT= ICOUNT=1'
	@echo '                  CONFIG= FRAGMENTS= select the kernel (default: profiling)'
	@echo 'make build        configure and build CONFIG (profiling|baseline) + FRAGMENTS'
	@echo 'make assemble     build/linux = linux-source + overlay + patches/series'
	@echo 'make export       write build/linux (base..HEAD) back to patches/ and the overlay'
	@echo 'make check-export fail when build/linux and patches/ + overlay disagree'
	@echo 'make series       build/series: the series numbered for mailing, git am-able,'
	@echo '                  and a cover letter (patches/cover-letter.txt)'
	@echo 'make check-bisect build and boot every patch of the series on its own (long);'
	@echo "                  BISECT='-n' dry run, '-f N' from step N, '-a' redo passed steps"
	@echo 'make bench        cost of page-flags mode vs page_ext and no profiling:'
	@echo '                  bench/results/<date>-<host>.md and .png (about 25 min);'
	@echo '                  ARCH=arm64: instructions and ledger on arm64 (<date>-<host>-arm64.md)'
	@echo 'make allocinfo    the allocinfo tool: host build, and a static one for the guest'
	@echo 'make selftest     the alloc_tag kselftest'"'"'s programs, static, for the guest (build/guest;'
	@echo '                  ARCH=arm64: build/guest-arm64 too)'
	@echo 'make stress       the concurrent stress test, long (STRESS_SECONDS=, default 240)'
	@echo 'make mm-selftests the kernel'"'"'s mm selftests on baseline, both modes, the debug build,'
	@echo '                  kernels with what the tests need, compared test by test'
	@echo '                  (about 55 min with the kernels built; NO_BUILD=1: kernels as built)'
	@echo 'make deps         install the Debian packages that are missing (root)'
	@echo 'make clean        remove the build outputs, keep build/linux and ccache'
	@echo 'make distclean    remove build/ entirely'

deps:
	@scripts/deps.sh
	@$(MAKE) -s -C allocinfo deps

assemble: deps
	@scripts/assemble.sh

export:
	@scripts/export.sh

check-export: assemble
	@tests/host/check-export.sh

# The series for review: every new file in the first patch that refers to
# it, a cover letter, in build/series (scripts/series.sh).
series: assemble
	@scripts/series.sh

# Long: builds and boots every prefix of the series.
check-bisect: assemble
	@scripts/check-bisect.sh $(BISECT)

build: assemble
	@scripts/build.sh $(CONFIG)

# The static allocinfo goes into the guest (build/guest is copied there);
# ARCH=arm64 cross-builds one for arm64 guests too (build/guest-arm64),
# with Debian's arm64 SQLite (make deps ARCH=arm64).
allocinfo: deps
	@$(MAKE) -s -C allocinfo all static
	@mkdir -p build/guest && cp allocinfo/build/allocinfo.static build/guest/allocinfo
	@$(if $(filter arm64,$(ARCH)),$(MAKE) -s -C allocinfo B=build/arm64 CC=aarch64-linux-gnu-gcc \
		build/arm64/allocinfo.static && \
		mkdir -p build/guest-arm64 && cp allocinfo/build/arm64/allocinfo.static build/guest-arm64/allocinfo)

# The alloc_tag kselftest (tests/selftests/alloc_tag, also in build/linux at
# tools/testing/selftests/alloc_tag): each program of its TEST_GEN_PROGS,
# static, with the helpers they share, for the guest.
SELFTEST_DIR := tests/selftests/alloc_tag
SELFTEST_PROGS := $(shell sed -n 's/^TEST_GEN_PROGS *+*:*= *//p' $(SELFTEST_DIR)/Makefile)
SELFTEST_LIB := $(SELFTEST_DIR)/alloc_tag_lib.c $(SELFTEST_DIR)/alloc_tag_lib.h
build/guest/%_test: $(SELFTEST_DIR)/%_test.c $(SELFTEST_LIB) | assemble
	@mkdir -p build/guest
	gcc -static -Wall -O2 -I build/linux/tools/testing/selftests -o $@ $< $(SELFTEST_DIR)/alloc_tag_lib.c
# The same for arm64 guests (scripts/initramfs.sh takes build/guest-arm64),
# with Debian's cross compiler and libc (make deps ARCH=arm64).
build/guest-arm64/%_test: $(SELFTEST_DIR)/%_test.c $(SELFTEST_LIB) | assemble
	@mkdir -p build/guest-arm64
	aarch64-linux-gnu-gcc -static -Wall -O2 -I build/linux/tools/testing/selftests -o $@ $< $(SELFTEST_DIR)/alloc_tag_lib.c

# The one program the kselftest was before it was split is gone from the
# guest. ARCH=arm64 builds the arm64 programs too.
selftest: assemble $(addprefix build/guest/,$(SELFTEST_PROGS)) \
		$(if $(filter arm64,$(ARCH)),$(addprefix build/guest-arm64/,$(SELFTEST_PROGS)))
	@rm -f build/guest/alloc_tag_test

initramfs: build allocinfo selftest
	@scripts/initramfs.sh $(ID)

boot: initramfs
	@scripts/boot.sh -k $(ID)

run: initramfs
	@scripts/boot.sh -k $(ID) -q -o build/boot/run /opt/pftag/bin/show-profile; \
	rc=$$?; cat build/boot/run/out.log; \
	[ $$rc = 0 ] || echo "make run: the guest reported exit status $$rc (logs in build/boot/run)" >&2; \
	exit $$rc

# make test on x86_64 ends with the arm64 part (tests/run.sh), for which it
# installs and builds what arm64 needs; ARM64=0 leaves it out.
ARM64 ?= 1
test: deps assemble allocinfo selftest
	@$(if $(and $(filter 1,$(ARM64)),$(if $(ARCH_FRAG),,x)),$(MAKE) -s deps allocinfo selftest ARCH=arm64 &&) \
		ARM64=$(ARM64) tests/run.sh

# The stress test of tests/boot/stress.sh, longer than in `make test`.
stress: deps assemble allocinfo selftest
	@STRESS_SECONDS=$${STRESS_SECONDS:-240} tests/run.sh boot/stress

# The kernel's mm selftests (tools/testing/selftests/mm), static, in
# guests of the baseline kernel and of both modes of the profiling kernel
# and of its debug build, each built with scripts/config/mm-selftests.config
# (what the tests need), compared test by test; the failures allowed are
# those of tests/long/mm-selftests.known (tests/long/mm-selftests.sh).
# Not part of `make test`: three more kernels, and five boots of about
# 18 minutes under TCG, two at a time (about 55 minutes).
mm-selftests: deps assemble
	@mkdir -p build/test
	@set -o pipefail; tests/long/mm-selftests.sh | tee build/test/long-mm-selftests.log

# Not part of `make test`: figures, not assertions (tests/boot/bench-smoke.sh
# only checks that the microbenchmark runs and parses).
bench: deps assemble
	@$(if $(filter arm64,$(ARCH)),scripts/bench-arm64.sh,scripts/bench.sh)

clean:
	rm -rf build/obj build/boot build/guest build/test build/mm-selftests
	@$(MAKE) -s -C allocinfo clean

distclean:
	rm -rf build
