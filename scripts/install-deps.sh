#!/bin/sh
# Install the Debian packages tally needs to build and test, when missing.
# Usage: scripts/install-deps.sh [build|test]
#   build: compiler, cmake, zlib, jansson, libarchive, zstd, isa-l (fast gzip inflate),
#          libiberty (C++ name demangling)
#   test:  also cmocka, python3-jsonschema (schema checks), clang (fuzz targets),
#          chromium, chromium-driver, python3-selenium (the HTML report's browser checks),
#          libopenmpi-dev, openmpi-bin (tally-mpi and its tests under mpirun)
# Uses sudo when not root. Prints what it installs; installs nothing when all is present.
set -eu
mode=${1:-build}
pkgs="build-essential cmake pkg-config zlib1g-dev libjansson-dev libarchive-dev libzstd-dev libisal-dev libiberty-dev"
if [ "$mode" = test ]; then
  pkgs="$pkgs libcmocka-dev python3 python3-jsonschema clang chromium chromium-driver python3-selenium libopenmpi-dev openmpi-bin"
fi
missing=""
for p in $pkgs; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing="$missing $p"
  fi
done
if [ -z "$missing" ]; then
  exit 0
fi
echo "tally: installing missing Debian packages:$missing" >&2
SUDO=""
if [ "$(id -u)" != 0 ]; then
  SUDO=sudo
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >&2
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing >&2
