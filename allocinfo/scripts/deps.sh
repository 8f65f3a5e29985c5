#!/bin/sh
# make deps: install the Debian 12 packages allocinfo needs to build and
# test, only those missing. Needs root when something is missing.
set -eu
# package: what needs it
pkgs="
gcc make libc6-dev pkg-config
libsqlite3-dev
libcairo2-dev
clang libclang-rt-dev
python3
sqlite3
busybox-static
man-db
strace
prometheus
prometheus-node-exporter
curl
systemd
"
# gcc, make, libc6-dev, pkg-config: the build, static included
# libsqlite3-dev: record/report (libsqlite3.a for the static build)
# libcairo2-dev: plot (host build only)
# clang, libclang-rt-dev: make fuzz (libFuzzer, ASan, UBSan)
# python3: the sample tests' independent reader
# sqlite3: the record test reads the database with SQL
# busybox-static: guest-check.sh runs under busybox sh in the host tests
# man-db: the man page test
# strace: the test that export -o syncs before it renames
# prometheus: promtool tests the alert rules and lints the export; the
#   end-to-end test runs its own Prometheus server on 127.0.0.1
# prometheus-node-exporter: the end-to-end test serves the export with the
#   textfile collector on 127.0.0.1 (its own process, on a free port)
# curl: the end-to-end test scrapes node_exporter and queries Prometheus
# systemd: systemd-analyze verifies the service and the timer (nothing is
#   started: the tests run the service's commands themselves)
missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2> /dev/null | grep -q 'install ok installed' && continue
	# any busybox will do for busybox sh
	[ "$p" = busybox-static ] && command -v busybox > /dev/null && continue
	missing="$missing $p"
done
[ -n "$missing" ] || { echo "allocinfo deps: all installed"; exit 0; }
echo "allocinfo deps: installing$missing"
if [ "$(id -u)" != 0 ]; then
	echo "allocinfo deps: missing Debian packages:$missing; run 'make deps' as root" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
# shellcheck disable=SC2086
apt-get install -y --no-install-recommends $missing || {
	apt-get update
	apt-get install -y --no-install-recommends $missing
}
