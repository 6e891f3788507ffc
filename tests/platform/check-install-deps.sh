#!/bin/sh
# check-install-deps.sh - the ctest "install_deps_package_managers": scripts/install-deps.sh on
# the systems it knows, with stub package managers on a PATH of their own (a temp dir holding
# only the few tools the script needs): nothing is installed, the stubs log their arguments.
#   dnf:   rpm says which packages are there; dnf is asked for exactly the missing ones, with
#          EPEL names; nothing when all are there; a failed install names EPEL/CRB and exits 1
#   yum:   used when there is no dnf
#   apt:   apt-get/dpkg-query stubs: the Debian names
#   none:  exit 1 and the exact package names of both families
# Usage: check-install-deps.sh SOURCE_DIR
set -u
src=$1
script=$src/scripts/install-deps.sh
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tally-deps.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
fails=0
ok() { echo "ok: $1"; }
bad() { echo "FAIL: $1" >&2; fails=$((fails + 1)); }

# bin: the tools the script uses, and nothing else (no apt-get, dnf, yum, rpm, dpkg-query)
mkbin() {
  rm -rf "$tmp/bin" "$tmp/log"
  mkdir -p "$tmp/bin"
  : >"$tmp/log"
  for t in sh grep id cat; do
    ln -s "$(command -v $t)" "$tmp/bin/$t"
  done
  stub sudo 'exec "$@"' # as a user that is not root
}
# stub NAME 'shell body': a command that logs "NAME args" and runs the body
stub() {
  printf '#!/bin/sh\necho "%s $*" >>"%s/log"\n%s\n' "$1" "$tmp" "$2" >"$tmp/bin/$1"
  chmod +x "$tmp/bin/$1"
}
run() {
  PATH="$tmp/bin" TALLY_SKIP_DEPS=0 "$tmp/bin/sh" "$script" "$@" >"$tmp/out" 2>&1
}
installs() { grep -E "^(dnf|yum|apt-get) .*install" "$tmp/log" | grep -v "^rpm" ; }

# 1. dnf: gcc, make and cmake are installed, the rest is not
mkbin
stub rpm 'case $2 in gcc|make|cmake) exit 0;; *) exit 1;; esac'
stub dnf 'exit 0'
run build
rc=$?
want="dnf install -y pkgconf zlib-devel jansson-devel libarchive-devel libzstd-devel isa-l-devel binutils-devel sqlite-devel python3 python3-devel"
if [ $rc = 0 ] && [ "$(installs)" = "$want" ]; then
  ok "dnf installs exactly the missing build packages"
else
  bad "dnf build: rc $rc, installs '$(installs)', want '$want'; output: $(cat "$tmp/out")"
fi
if grep -q "installing missing packages with dnf: pkgconf" "$tmp/out"; then
  ok "dnf: says what it installs"
else
  bad "dnf: no message naming the packages: $(cat "$tmp/out")"
fi
run test
for p in libcmocka-devel openmpi-devel python3-devel isa-l-devel; do
  if installs | grep -q " $p\b"; then ok "dnf test: $p"; else bad "dnf test: $p not asked for: $(installs)"; fi
done
if installs | grep -Eq " gcc( |$)| make( |$)"; then bad "dnf test: asks for installed packages: $(installs)"; fi

# 2. dnf, everything installed: no install, exit 0
mkbin
stub rpm 'exit 0'
stub dnf 'exit 0'
run test
rc=$?
if [ $rc = 0 ] && [ -z "$(installs)" ] && [ ! -s "$tmp/out" ]; then
  ok "dnf: nothing to do, nothing said"
else
  bad "dnf all installed: rc $rc, installs '$(installs)', output '$(cat "$tmp/out")'"
fi

# 3. dnf fails (EPEL not enabled): exit 1, says EPEL and CRB
mkbin
stub rpm 'exit 1'
stub dnf 'echo "No match for argument: isa-l-devel" >&2; exit 1'
run build
rc=$?
if [ $rc = 1 ] && grep -q "EPEL" "$tmp/out" && grep -q "could not install" "$tmp/out"; then
  ok "dnf failure: exit 1, EPEL named"
else
  bad "dnf failure: rc $rc, output: $(cat "$tmp/out")"
fi

# 4. yum without dnf
mkbin
stub rpm 'exit 1'
stub yum 'exit 0'
run build
rc=$?
if [ $rc = 0 ] && installs | grep -q "^yum install -y gcc make cmake pkgconf zlib-devel jansson-devel"; then
  ok "yum used when there is no dnf"
else
  bad "yum: rc $rc, installs '$(installs)'"
fi

# 5. apt: Debian names, only the missing ones
mkbin
stub dpkg-query 'case $3 in cmake|build-essential) echo "install ok installed";; *) echo "unknown ok not-installed";; esac'
stub apt-get 'exit 0'
stub dnf 'exit 0'
stub rpm 'exit 1'
run build
rc=$?
want="apt-get install -y -qq --no-install-recommends pkg-config zlib1g-dev libjansson-dev libarchive-dev libzstd-dev libisal-dev libiberty-dev libsqlite3-dev python3 python3-dev"
if [ $rc = 0 ] && [ "$(installs)" = "$want" ] && grep -q "^apt-get update" "$tmp/log"; then
  ok "apt-get installs exactly the missing Debian packages"
else
  bad "apt: rc $rc, installs '$(installs)', want '$want'"
fi

# 6. no package manager, nothing installed: exit 1 and both lists of names
mkbin
run test
rc=$?
if [ $rc = 1 ] && grep -q "no apt-get, dnf or yum here" "$tmp/out" &&
   grep -q "libjansson-dev .*libcmocka-dev" "$tmp/out" &&
   grep -q "jansson-devel .*isa-l-devel .*libcmocka-devel .*openmpi-devel" "$tmp/out"; then
  ok "no package manager: exit 1, the packages named"
else
  bad "no package manager: rc $rc, output: $(cat "$tmp/out")"
fi

# 7. no package manager, everything present (stub tools and pkg-config): exit 0, silent
mkbin
for t in cmake make cc python3; do stub $t 'exit 0'; done
stub pkg-config 'exit 0'
run test
rc=$?
if [ $rc = 0 ] && [ ! -s "$tmp/out" ]; then
  ok "no package manager, all present: exit 0"
else
  bad "no package manager, all present: rc $rc, output: $(cat "$tmp/out")"
fi

# 8. a bad mode is a usage error
mkbin
run everything
rc=$?
if [ $rc = 2 ]; then ok "bad mode: exit 2"; else bad "bad mode: rc $rc"; fi

if [ $fails != 0 ]; then
  echo "$fails failed" >&2
  exit 1
fi
echo "all install-deps.sh checks passed"
