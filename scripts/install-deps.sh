#!/bin/sh
# Install the packages tally needs to build and test, when missing.
# Usage: scripts/install-deps.sh [build|test|bench]
#   build: compiler, make, cmake (>= 3.22), pkg-config, zlib, jansson, libarchive, zstd,
#          isa-l (fast gzip inflate), libiberty (C++ name demangling), SQLite (Nsight Systems
#          exports), python3 and its headers
#          (the `tally` Python module, which make demo runs beside the C sample)
#   test:  also cmocka, pip and setuptools (pip install ./python),
#          python3-jsonschema (schema checks), clang (fuzz
#          targets), chromium, chromium-driver, python3-selenium (the HTML report's browser
#          checks), OpenMPI (tally-mpi and its tests under mpirun), xmllint (compare's JUnit
#          against Jenkins xUnit's schema)
#   bench: build's, plus the optional baselines of bench/ (Debian only: simdjson, yajl,
#          isa-l's igzip, libdeflate-gunzip); the benchmarks skip a baseline that is missing
# Debian and Ubuntu: apt-get (dpkg-query says what is installed). RHEL, Rocky, Alma, Fedora:
# dnf, else yum, with EPEL's package names (rpm -q says what is installed). Elsewhere: prints
# the packages to install (Debian and RPM names) and exits 1 when a tool or library is missing.
# Uses sudo when not root. Prints what it installs; installs nothing when all is present.
# TALLY_SKIP_DEPS=1 skips every check (a site whose packages are installed some other way).
set -eu
mode=${1:-build}
case $mode in
  build|test|bench) ;;
  *) echo "usage: scripts/install-deps.sh [build|test|bench]" >&2; exit 2 ;;
esac
if [ "${TALLY_SKIP_DEPS:-0}" = 1 ]; then
  exit 0
fi

deb="build-essential cmake pkg-config zlib1g-dev libjansson-dev libarchive-dev libzstd-dev libisal-dev libiberty-dev libsqlite3-dev python3 python3-dev"
rpm_pkgs="gcc make cmake pkgconf zlib-devel jansson-devel libarchive-devel libzstd-devel isa-l-devel binutils-devel sqlite-devel python3 python3-devel"
if [ "$mode" = test ]; then
  deb="$deb libcmocka-dev python3-pip python3-setuptools python3-jsonschema clang chromium chromium-driver python3-selenium libopenmpi-dev openmpi-bin libxml2-utils"
  rpm_pkgs="$rpm_pkgs libcmocka-devel python3-pip python3-setuptools python3-jsonschema clang chromium chromedriver python3-selenium openmpi openmpi-devel libxml2"
fi
if [ "$mode" = bench ]; then
  deb="$deb libsimdjson-dev libyajl-dev isal libdeflate-tools"
fi

SUDO=""
if [ "$(id -u)" != 0 ]; then
  SUDO=sudo
fi

if command -v apt-get >/dev/null 2>&1 && command -v dpkg-query >/dev/null 2>&1; then
  missing=""
  for p in $deb; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
      missing="$missing $p"
    fi
  done
  if [ -z "$missing" ]; then
    exit 0
  fi
  echo "tally: installing missing Debian packages:$missing" >&2
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq >&2
  # shellcheck disable=SC2086
  $SUDO apt-get install -y -qq --no-install-recommends $missing >&2
  exit 0
fi

pm=""
if command -v dnf >/dev/null 2>&1; then
  pm=dnf
elif command -v yum >/dev/null 2>&1; then
  pm=yum
fi
if [ -n "$pm" ] && command -v rpm >/dev/null 2>&1; then
  missing=""
  for p in $rpm_pkgs; do
    if ! rpm -q "$p" >/dev/null 2>&1; then
      missing="$missing $p"
    fi
  done
  if [ -z "$missing" ]; then
    exit 0
  fi
  echo "tally: installing missing packages with $pm:$missing" >&2
  # shellcheck disable=SC2086
  if ! $SUDO $pm install -y $missing >&2; then
    echo "tally: $pm could not install:$missing" >&2
    echo "tally: on RHEL, Rocky and Alma some are in EPEL and CRB (PowerTools on 8): $pm install epel-release && $pm config-manager --set-enabled crb, then run make again" >&2
    exit 1
  fi
  exit 0
fi

# No package manager that this script knows: check what it can (tools on PATH, libraries through
# pkg-config) and name what is missing.
missing=""
for t in cmake make pkg-config; do
  command -v "$t" >/dev/null 2>&1 || missing="$missing $t"
done
if ! command -v cc >/dev/null 2>&1 && ! command -v gcc >/dev/null 2>&1; then
  missing="$missing cc"
fi
mods="zlib jansson libarchive libzstd"
if [ "$mode" = test ]; then
  mods="$mods cmocka"
  command -v python3 >/dev/null 2>&1 || missing="$missing python3"
fi
for m in $mods; do
  if ! command -v pkg-config >/dev/null 2>&1 || ! pkg-config --exists "$m" 2>/dev/null; then
    missing="$missing $m"
  fi
done
if [ -z "$missing" ]; then
  exit 0
fi
echo "tally: no apt-get, dnf or yum here, and these are missing:$missing" >&2
echo "tally: install these packages (Debian/Ubuntu names): $deb" >&2
echo "tally: or (RHEL/Rocky/Alma/Fedora names, EPEL): $rpm_pkgs" >&2
echo "tally: then run make again (TALLY_SKIP_DEPS=1 skips this check)" >&2
exit 1
