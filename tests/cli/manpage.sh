#!/bin/sh
# The man page and the shell completions against the binary: every command
# and every option `tally help CMD` lists is in docs/tally.1, the bash
# completion offers them, and `cmake --install` installs all three.
#
# usage: manpage.sh TALLY_BINARY SOURCE_DIR BUILD_DIR
set -u
tally=$1 src=$2 build=$3
fail=0 pass=0
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
man=$src/docs/tally.1
commands=$("$tally" --help | awk '/^commands:/ { f = 1; next } f && /^  [a-z]/ { print $1 } f && /^$/ { exit }')
[ -n "$commands" ] || bad "no commands in tally --help"
for c in $commands; do
    grep -q "^\.B $c\$" "$man" || grep -q "^\.B tally $c\$" "$man" || bad "man page: no command $c"
    for o in $("$tally" help "$c" | grep -oE -- '--[a-z][a-z-]+' | sort -u); do
        roff=$(printf '%s' "$o" | sed 's/-/\\\\-/g')
        grep -q -- "$roff" "$man" || bad "man page: $c's option $o is not described"
        pass=$((pass + 1))
    done
done
# the page renders without warnings
if command -v groff >/dev/null; then
    out=$(groff -man -Tutf8 -ww -z "$man" 2>&1)
    [ -z "$out" ] || bad "groff warnings: $out"
fi
# bash completion: commands and a command's options
if command -v bash >/dev/null; then
    got=$(PATH=$(dirname "$tally"):$PATH bash -c '
        . "$1/tools/completions/tally.bash"
        COMP_WORDS=(tally co); COMP_CWORD=1; _tally; echo "${COMPREPLY[*]}"
        COMP_WORDS=(tally compare --fail); COMP_CWORD=2; _tally; echo "${COMPREPLY[*]}"
        COMP_WORDS=(tally compare --metric ""); COMP_CWORD=3; _tally; echo "${COMPREPLY[*]}"
        COMP_WORDS=(tally summary --color ""); COMP_CWORD=3; _tally; echo "${COMPREPLY[*]}"' sh "$src")
    [ "$got" = "compare
--fail-on-regression
median mean total
auto always never" ] || bad "bash completion: got $got"
fi
# cmake --install puts the page and both completions in place
prefix=$(mktemp -d)
if cmake --install "$build" --prefix "$prefix" >/dev/null 2>&1; then
    for f in share/man/man1/tally.1 share/bash-completion/completions/tally share/zsh/site-functions/_tally bin/tally; do
        [ -f "$prefix/$f" ] || bad "not installed: $f"
    done
else
    bad "cmake --install failed"
fi
rm -rf "$prefix"
echo "manpage: $pass options checked, $fail failed"
[ $fail = 0 ]
