#!/bin/sh
# Every kind of output path `tally` can be given, and the command line
# (issue 9). Each check states what a user would see; a failure prints what
# differed. Devices are made by the test inside its own temporary directory
# (mknod, as root; skipped otherwise): the machine's /dev is never touched.
#
# usage: outputs.sh TALLY_BINARY SOURCE_DIR
set -u
tally=$1 src=$2
export SOURCE_DATE_EPOCH=1700000000
fail=0 pass=0 skipped=0
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
chmod 755 "$root"

ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
skip() { echo "skip: $*"; skipped=$((skipped + 1)); }
check() { # check DESCRIPTION COMMAND...: the command must succeed
    what_=$1; shift
    if "$@"; then ok; else bad "$what_"; fi
}
same() { cmp -s "$1" "$2"; }
is_root() { [ "$(id -u)" = 0 ]; }

# Two real ranks (DLRM, 8-rank Kineto traces in samples/) as the input.
runs=$root/runs
mkdir "$runs"
cp "$src"/samples/traces/dlrm-8rank/worker0_* "$src"/samples/traces/dlrm-8rank/worker1_* "$runs"/
rank0=$(ls "$runs"/worker0_*)
sum0=$(cksum <"$rank0")
ref=$root/ref.html
"$tally" report -q "$runs" -o "$ref" || bad "reference report"
refjson=$root/ref.json
"$tally" aggregate -q "$runs" -o "$refjson" || bad "reference aggregate"

# ---- a regular file: replaced atomically, its mode kept, nothing left ------
d=$root/regular; mkdir "$d"
echo old >"$d/r.html"; chmod 640 "$d/r.html"
"$tally" report -q "$runs" -o "$d/r.html"
check "regular: replaced by the complete report" same "$d/r.html" "$ref"
check "regular: mode 640 kept" [ "$(stat -c %a "$d/r.html")" = 640 ]
check "regular: no temporary file left" [ "$(ls -A "$d")" = r.html ]

# ---- a new path: created with the umask's mode -----------------------------
(umask 027 && "$tally" report -q "$runs" -o "$d/new.html")
check "new: written" same "$d/new.html" "$ref"
check "new: mode 0666 less umask 027" [ "$(stat -c %a "$d/new.html")" = 640 ]

# ---- a symlink: the target replaced, the link stays -------------------------
d=$root/link; mkdir "$d" "$d/real"
echo old >"$d/real/target.html"
ln -s real/target.html "$d/link.html"
"$tally" report -q "$runs" -o "$d/link.html"
check "symlink: still a symlink" [ -L "$d/link.html" ]
check "symlink: its target holds the report" same "$d/real/target.html" "$ref"
check "symlink: nothing else created" [ "$(ls -A "$d")" = "link.html
real" ]
# a dangling link: its target is created
ln -s real/new.html "$d/dangling.html"
"$tally" report -q "$runs" -o "$d/dangling.html"
check "dangling symlink: still a link, target created" [ -L "$d/dangling.html" ]
check "dangling symlink: target holds the report" same "$d/real/new.html" "$ref"

# ---- a FIFO: written directly, stays a FIFO ---------------------------------
d=$root/fifo; mkdir "$d"
mkfifo "$d/pipe"
cat "$d/pipe" >"$d/got" &
reader=$!
"$tally" report -q "$runs" -o "$d/pipe"
wait $reader
check "fifo: the reader got the report" same "$d/got" "$ref"
check "fifo: still a FIFO" [ -p "$d/pipe" ]

# ---- "-" and /dev/stdout-style paths: standard output ----------------------
"$tally" report -q "$runs" -o - >"$root/stdout.html"
check "-: the report on standard output" same "$root/stdout.html" "$ref"
# the file standard output already is (`-o out > out`): written through it
"$tally" report -q "$runs" -o "$root/self.html" >"$root/self.html"
check "-o F >F: one complete report" same "$root/self.html" "$ref"

# ---- devices made here (root): /dev/null-like stays a device; full fails ---
d=$root/dev; mkdir "$d"
if is_root && mknod "$d/null" c 1 3 2>/dev/null && mknod "$d/full" c 1 7 2>/dev/null; then
    "$tally" report -q "$runs" -o "$d/null"
    rc=$?
    check "null device: exit 0" [ $rc = 0 ]
    check "null device: still a character device" [ -c "$d/null" ]
    "$tally" report -q "$runs" -o "$d/full" 2>"$d/err"
    rc=$?
    check "full device: exit 4" [ $rc = 4 ]
    check "full device: says why" grep -q "full: write failed: No space left on device" "$d/err"
    check "full device: still a character device" [ -c "$d/full" ]
    # all outputs or none: the JSON beside a failing HTML is not written
    echo old >"$d/agg.json"
    "$tally" report -q "$runs" -o "$d/full" --json "$d/agg.json" 2>"$d/err"
    rc=$?
    check "full device + json: exit 4" [ $rc = 4 ]
    check "full device + json: the old JSON kept" [ "$(cat "$d/agg.json")" = old ]
    check "full device + json: says none was written" grep -q "none of the 2 outputs was written" "$d/err"
    check "full device + json: nothing left behind" [ "$(ls -A "$d" | tr '\n' ' ')" = "agg.json err full null " ]
    "$tally" summary "$runs" >"$d/full" 2>"$d/err"
    rc=$?
    check "summary > full device: exit 4" [ $rc = 4 ]
    check "summary > full device: says so" grep -q "standard output: write failed" "$d/err"
    # a JSON output fails as loudly, with the reason (not "Input/output error")
    "$tally" aggregate -q "$runs" -o "$d/full" 2>"$d/err"
    rc=$?
    check "aggregate -o full device: exit 4" [ $rc = 4 ]
    check "aggregate -o full device: says why" grep -q "full: write failed: No space left on device" "$d/err"
else
    skip "device nodes (needs root and mknod)"
fi

# ---- errors before anything is written: exit 4, the message says which/why -
"$tally" aggregate -q "$runs" -o '' 2>"$root/empty.err"
rc=$?
check "empty output name: exit 4" [ $rc = 4 ]
check "empty output name: says so" grep -q "'': is an empty file name" "$root/empty.err"
d=$root/err; mkdir "$d" "$d/adir"
expect_refused() { # DESCRIPTION WANTED_MESSAGE COMMAND...
    what=$1 msg=$2; shift 2
    "$@" 2>"$d/e" >/dev/null
    rc=$?
    check "$what: exit 4" [ $rc = 4 ]
    if ! grep -q -- "$msg" "$d/e"; then bad "$what: message '$msg' not in: $(cat "$d/e")"; else ok; fi
}
expect_refused "directory" "adir: is a directory" "$tally" report -q "$runs" -o "$d/adir"
expect_refused "missing parent" "the directory $d/nope does not exist" "$tally" report -q "$runs" -o "$d/nope/r.html"
check "missing parent: nothing created" [ ! -e "$d/nope" ]
expect_refused "one file for two outputs" "the same file as the output" "$tally" report -q "$runs" --json "$d/x" --markdown "$d/x"
"$tally" report -q "$runs" -o - --json - >"$d/stdout" 2>"$d/e"
check "two documents on standard output: exit 4" [ $? = 4 ]
check "two documents on standard output: says why" grep -q "the same file as the output" "$d/e"
check "two documents on standard output: nothing written" [ ! -s "$d/stdout" ]
check "one file for two outputs: nothing written" [ ! -e "$d/x" ]
# an input found by walking a directory, for every output option
for args in "report -o" "report --json" "report --markdown" "aggregate -o" "aggregate --partial -o"; do
    expect_refused "walked input ($args)" "is one of the inputs; refusing to overwrite it" \
        "$tally" $args "$rank0" "$runs"
done
base=$root/base; mkdir "$base"; cp "$runs"/worker0_* "$base"/
for opt in -o --json --markdown --junit; do
    expect_refused "walked input (compare $opt)" "is one of the inputs" \
        "$tally" compare -q "$base" "$runs" $opt "$rank0"
done
"$tally" aggregate -q --partial "$runs" -o "$d/p.json"
cp "$d/p.json" "$d/p.orig"
expect_refused "merge over its partial" "is one of the inputs" "$tally" merge -q "$d/p.json" -o "$d/p.json"
expect_refused "compare over its partial" "is one of the inputs" "$tally" compare -q "$d/p.json" "$runs" --json "$d/p.json"
check "merge/compare: the partial untouched" same "$d/p.json" "$d/p.orig"
check "walked input: the trace is untouched" [ "$(cksum <"$rank0")" = "$sum0" ]
# a hard link to an input is the same file
ln "$rank0" "$d/hardlink.json"
expect_refused "hard link to an input" "is one of the inputs" "$tally" report -q "$runs" -o "$d/hardlink.json"
# a symlink to an input
ln -s "$rank0" "$d/symlink.json"
expect_refused "symlink to an input" "is one of the inputs" "$tally" report -q "$runs" -o "$d/symlink.json"
# an archive input is an input too
tar -C "$runs" -cf "$d/runs.tar" .
expect_refused "archive input" "is one of the inputs" "$tally" report -q "$d/runs.tar" -o "$d/runs.tar"
check "walked input: the trace is still untouched" [ "$(cksum <"$rank0")" = "$sum0" ]

# ---- SIGKILL: the old file intact, no temporary file left -------------------
d=$root/kill; mkdir "$d"
echo old >"$d/r.html"
mkfifo "$d/json"
# The HTML is rendered into its temporary file, then opening the FIFO for the
# JSON blocks (no reader): killed there, before any rename.
"$tally" report -q "$runs" -o "$d/r.html" --json "$d/json" &
pid=$!
sleep 1
kill -KILL $pid 2>/dev/null
wait $pid 2>/dev/null
check "SIGKILL before the commit: the old file intact" [ "$(cat "$d/r.html")" = old ]
check "SIGKILL: no temporary file left" [ "$(ls -A "$d" | tr '\n' ' ')" = "json r.html " ]
# Killed at random moments: the file is always the old one or the whole report.
i=0
while [ $i -lt 20 ]; do
    echo old >"$d/r2.html"
    "$tally" report -q "$runs" -o "$d/r2.html" &
    pid=$!
    sleep "0.0$((i % 6))"
    kill -KILL $pid 2>/dev/null
    wait $pid 2>/dev/null
    if [ "$(cat "$d/r2.html")" != old ] && ! same "$d/r2.html" "$ref"; then
        bad "SIGKILL at ${i}0 ms: a half file"
    fi
    i=$((i + 1))
done
ok

# ---- two runs at once on one output -----------------------------------------
d=$root/race; mkdir "$d"
i=0
while [ $i -lt 5 ]; do
    "$tally" aggregate -q "$runs" -o "$d/a.json" &
    p1=$!
    "$tally" aggregate -q "$runs" -o "$d/a.json" &
    p2=$!
    wait $p1; r1=$?
    wait $p2; r2=$?
    [ $r1 = 0 ] && [ $r2 = 0 ] || bad "concurrent runs: exit $r1 and $r2"
    same "$d/a.json" "$refjson" || bad "concurrent runs: the result is not one whole output"
    i=$((i + 1))
done
check "concurrent runs: nothing left behind" [ "$(ls -A "$d")" = a.json ]

# ---- another user's traps (run as nobody with setpriv, when root) -----------
if is_root && command -v setpriv >/dev/null && setpriv --reuid=nobody --regid=nogroup --clear-groups true 2>/dev/null; then
    as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }
    d=$root/shared; mkdir "$d"; chmod 1777 "$d"
    echo secret >"$root/victim"; chmod 644 "$root/victim"
    # nobody plants symlinks at every temporary name older versions used
    # (path.tmp.PID) and at the names of the first free pids
    as_nobody sh -c "i=1; while [ \$i -le 400 ]; do ln -s '$root/victim' '$d/r.html.tmp.'\$((\$(cat /proc/sys/kernel/ns_last_pid) + \$i)); i=\$((i+1)); done"
    as_nobody sh -c "for n in 1 2 3 4 5; do ln -s '$root/victim' '$d/.r.html.tmp'\$n; done"
    "$tally" report -q "$runs" -o "$d/r.html"
    check "planted symlinks: root's run wrote the report" same "$d/r.html" "$ref"
    check "planted symlinks: the victim is untouched" [ "$(cat "$root/victim")" = secret ]
    check "planted symlinks: the links are still links" [ -L "$d/.r.html.tmp1" ]
    # a symlink nobody planted AS the output in a sticky shared directory:
    # not followed (the kernel's protected_symlinks rule)
    as_nobody ln -s "$root/victim" "$d/planted.html"
    "$tally" report -q "$runs" -o "$d/planted.html" 2>"$d.err"
    rc=$?
    check "planted output symlink: exit 4" [ $rc = 4 ]
    check "planted output symlink: says why" grep -q "refusing to follow it" "$d.err"
    check "planted output symlink: the victim is untouched" [ "$(cat "$root/victim")" = secret ]
    # nobody's own run in the shared directory works, with nobody's files
    as_nobody "$tally" report -q "$runs" -o "$d/mine.html"
    check "nobody's run: written" same "$d/mine.html" "$ref"
    check "nobody's run: owned by nobody" [ "$(stat -c %U "$d/mine.html")" = nobody ]
    # a read-only file is not replaced; a writable one in a read-only directory is
    d=$root/perm; mkdir "$d"; chmod 755 "$d"
    echo old >"$d/ro.html"; chown nobody "$d/ro.html"; chmod 444 "$d/ro.html"
    as_nobody "$tally" report -q "$runs" -o "$d/ro.html" 2>"$d.err"
    rc=$?
    check "read-only file: exit 4" [ $rc = 4 ]
    check "read-only file: kept" [ "$(cat "$d/ro.html")" = old ]
    echo old >"$d/rw.html"; chown nobody "$d/rw.html"; chmod 644 "$d/rw.html"
    as_nobody "$tally" report -q "$runs" -o "$d/rw.html" 2>"$d.err"
    rc=$?
    check "writable file in a read-only directory: exit 0" [ $rc = 0 ]
    check "writable file in a read-only directory: rewritten" same "$d/rw.html" "$ref"
    check "writable file in a read-only directory: still nobody's" [ "$(stat -c %U "$d/rw.html")" = nobody ]
    # root replacing nobody's file keeps its owner and mode
    echo old >"$d/theirs.html"; chown nobody:nogroup "$d/theirs.html"; chmod 664 "$d/theirs.html"
    "$tally" report -q "$runs" -o "$d/theirs.html"
    check "root over nobody's file: owner kept" [ "$(stat -c %U:%G:%a "$d/theirs.html")" = nobody:nogroup:664 ]
    # a writable file in a read-only directory on a full disk: rewritten in
    # place only when the room is there (reserved first), else kept whole
    if command -v unshare >/dev/null 2>&1 && unshare -m true 2>/dev/null; then
        d=$root/full; mkdir "$d"
        unshare -m sh -c "mount -t tmpfs -o size=400k,mode=755 tmpfs '$d' &&
            echo old >'$d/rw.json' && chown nobody '$d/rw.json' &&
            dd if=/dev/zero of='$d/fill' bs=1k count=330 2>/dev/null;
            setpriv --reuid=nobody --regid=nogroup --clear-groups '$tally' aggregate -q '$runs' -o '$d/rw.json' 2>'$root/full.err';
            echo \$? >'$root/full.rc'; cat '$d/rw.json' >'$root/full.kept'"
        check "in place on a full disk: exit 4" [ "$(cat "$root/full.rc")" = 4 ]
        check "in place on a full disk: the old file kept whole" [ "$(cat "$root/full.kept")" = old ]
        check "in place on a full disk: says why" grep -q "No space left on device" "$root/full.err"
    else
        skip "full disk in place (needs unshare -m)"
    fi
else
    skip "other-user checks (needs root and setpriv)"
fi

# ---- an interrupt while the outputs are put in place --------------------------
# Signals are held then: three outputs end all new (the interrupt comes after),
# never one new and two old with the backups left beside them.
if command -v strace >/dev/null 2>&1 && strace -qq -o /dev/null true 2>/dev/null; then
    d=$root/commit; mkdir "$d"
    echo old >"$d/o.html"; echo old >"$d/o.json"; echo old >"$d/o.md"
    strace -f -qq -o /dev/null -e trace=renameat -e inject=renameat:signal=INT:when=2 \
        "$tally" report -q "$runs" -o "$d/o.html" --json "$d/o.json" --markdown "$d/o.md" 2>/dev/null
    new=0
    for f in o.html o.json o.md; do [ "$(cat "$d/$f")" = old ] || new=$((new + 1)); done
    check "interrupted commit: all three outputs new" [ $new = 3 ]
    check "interrupted commit: nothing left beside them" [ "$(ls -A "$d" | wc -l)" = 3 ]
else
    skip "interrupt during the commit (needs strace)"
fi

# ---- a path longer than the system takes: named by its ends, exit 4 --------------
long=$root/$(printf 'a%.0s' $(seq 1 300))/$(printf 'b%.0s' $(seq 1 4700)).html
"$tally" report -q "$runs" -o "$long" 2>"$root/long.err"
rc=$?
check "an output path too long: exit 4" [ $rc = 4 ]
check "an output path too long: named by its ends" grep -q "bbb.html ([0-9]* bytes): File name too long" "$root/long.err"

# ---- standard output redirected into the input directory -----------------------
# The shell makes the file before tally runs: walking the directory, tally
# must not read its own (empty) output back as a damaged rank.
d=$root/selfout; mkdir "$d"; cp "$runs"/* "$d"/
"$tally" aggregate "$d" >"$d/all.json" 2>"$d.err"
check "stdout into the inputs' directory: exit 0" [ $? = 0 ]
check "stdout into the inputs' directory: not read back" grep -q "all.json: this command's standard output; not read" "$d.err"
check "stdout into the inputs' directory: no damaged input" sh -c "! grep -q 'damaged\|not JSON' '$d.err'"
"$tally" validate -q "$d/all.json" >/dev/null 2>&1
check "stdout into the inputs' directory: the aggregate validates" [ $? = 0 ]

# ---- only the outputs asked for ---------------------------------------------
d=$root/asked; mkdir "$d"
(cd "$d" && "$tally" compare "$base" "$runs" --junit j.xml >/dev/null 2>"$d.err")
check "compare --junit: no compare.html" [ ! -e "$d/compare.html" ]
check "compare --junit: the JUnit file" [ -s "$d/j.xml" ]
(cd "$d" && "$tally" report "$runs" --json a.json 2>"$d.err")
check "report --json: no report.html" [ ! -e "$d/report.html" ]
(cd "$d" && "$tally" report "$runs" 2>"$d.err")
check "report without outputs: report.html" [ -s "$d/report.html" ]
check "report without outputs: says so" grep -q "no output asked for; writing the HTML report to report.html" "$d.err"

# ---- option forms -----------------------------------------------------------
d=$root/opts; mkdir "$d"
for form in "-o $d/a.json" "-o$d/b.json" "--output=$d/c.json" "--output $d/d.json"; do
    "$tally" aggregate -q $form "$runs" || bad "option form $form"
done
"$tally" aggregate -qj4 -o "$d/e.json" "$runs" || bad "bundled -qj4"
"$tally" aggregate -qo "$d/f.json" "$runs" 2>"$d.err" || bad "bundled -qo FILE"
"$tally" aggregate --jobs=2 -j 1 "$runs" -q --output "$d/g.json" || bad "options after inputs"
for f in a b c d e f g; do
    same "$d/$f.json" "$refjson" || bad "option form $f: a different output"
done
check "bundled -q: nothing on stderr" [ ! -s "$d.err" ]
cp "$rank0" "$d/-odd.json"
(cd "$d" && "$tally" aggregate -q -o out.json -- -odd.json) || bad "-- ends the options"
check "--: the input named -odd.json was read" grep -q '"ranks"' "$d/out.json"
"$tally" report -o 2>"$d.err" >/dev/null
check "a missing value: usage exit" [ $? = 2 ]
check "a missing value: says so" grep -q -- "-o needs a value" "$d.err"
"$tally" summary --strict=1 "$runs" 2>"$d.err" >/dev/null
check "a value for a flag: usage exit" [ $? = 2 ]
check "a value for a flag: says so" grep -q -- "'--strict' takes no value" "$d.err"

# ---- help and suggestions ---------------------------------------------------
"$tally" help report >"$d/h1"
check "tally help report: exit 0" [ $? = 0 ]
"$tally" report --help >"$d/h2"
check "help CMD and CMD --help agree" same "$d/h1" "$d/h2"
check "help lists --output" grep -q -- "-o, --output FILE" "$d/h1"
check "help lists the common options" grep -q -- "--no-progress" "$d/h1"
for c in aggregate merge compare summary validate inspect; do
    "$tally" help $c | grep -q "^usage: tally $c " || bad "tally help $c"
done
"$tally" reprot x 2>"$d.err"
check "unknown command: exit 2" [ $? = 2 ]
check "unknown command: did you mean report" grep -q "did you mean 'report'?" "$d.err"
"$tally" help comapre 2>"$d.err"
check "help of an unknown command: suggestion" grep -q "did you mean 'compare'?" "$d.err"
"$tally" report --jsno x.json "$runs" 2>"$d.err"
check "unknown option: exit 2" [ $? = 2 ]
check "unknown option: did you mean --json" grep -q "unknown option '--jsno'; did you mean '--json'?" "$d.err"
"$tally" compare --treshold=5 a b 2>"$d.err"
check "unknown option with a value: suggestion" grep -q "did you mean '--threshold'?" "$d.err"
"$tally" summary -z "$runs" 2>"$d.err"
check "unknown short option" grep -q "unknown option '-z'" "$d.err"
"$tally" xyzzy 2>"$d.err"
check "nothing close: no suggestion" sh -c "! grep -q 'did you mean' '$d.err'"

# ---- control characters from inputs are escaped on the terminal -----------
d=$root/esc; mkdir "$d"
esc=$(printf '\033')
name="rank0-$esc[31mred.json"
printf '[{"name":"evil\\u001b]0;pwned\\u0007\\r OK","ph":"X","ts":0,"dur":5,"pid":1,"tid":1,"cat":"cpu_op"},' >"$d/$name"
printf '{"name":"ProfilerStep#1","ph":"X","ts":0,"dur":10,"pid":1,"tid":1}]' >>"$d/$name"
printf 'not json' >"$d/rank1-$esc]0;title$(printf '\007').json"
for cmd in summary inspect validate; do
    "$tally" $cmd "$d"/* >"$d.out" 2>"$d.err"
    if LC_ALL=C grep -q "$(printf '[\001-\010\013-\037\177]')" "$d.out" "$d.err"; then
        bad "$cmd: a raw control character reached the terminal"
    else
        ok
    fi
done
"$tally" summary "$d" >"$d.out" 2>&1
check "summary: the name shown escaped" grep -qF 'evil\e]0;pwned\a\r OK' "$d.out"
"$tally" inspect "$d" >"$d.out" 2>&1
check "inspect: the file name shown escaped" grep -qF 'rank0-\e[31mred.json' "$d.out"
"$tally" validate "$d"/* >"$d.out" 2>&1
check "validate: the file name shown escaped" grep -qF 'rank1-\e]0;title\a.json' "$d.out"
# a newline inside a name or a file name cannot forge a line of its own
nl=$root/nl; mkdir "$nl"
printf '[{"name":"a\\nfake line","ph":"X","ts":0,"dur":5,"pid":1,"tid":1,"cat":"cpu_op"}]' >"$nl/rank0
tally: OK.json"
# a second input without a rank: both are told their rank is by input order, naming the files
# (the only input of a run is not)
printf '[{"name":"b","ph":"X","ts":0,"dur":5,"pid":1,"tid":1,"cat":"cpu_op"}]' >"$nl/other.json"
"$tally" summary "$nl" >"$d.out" 2>&1
check "summary: a newline in a name shown escaped" grep -qF 'a\nfake line' "$d.out"
check "summary: a newline in a file name shown escaped" grep -qF 'rank0\ntally: OK.json' "$d.out"
check "summary: no forged line" sh -c "! grep -q '^tally: OK.json' '$d.out'"
"$tally" inspect "$nl" >"$d.out" 2>&1
check "inspect: no forged line" sh -c "! grep -q '^tally: OK.json' '$d.out'"
# a document on standard output is not altered: JSON escapes on its own
"$tally" inspect --json "$d" >"$d.json"
check "inspect --json: valid JSON with the name as it is" python3 -c "
import json,sys; d=json.load(open('$d.json')); sys.exit(0 if any('\x1b[31m' in x['path'] for x in d) else 1)"
# Markdown: a URL in a name is not a live link
printf '[{"name":"see http://evil.example/x and www.evil.example","ph":"X","ts":0,"dur":5,"pid":1,"tid":1,"cat":"cpu_op"}]' >"$d/rank0.json"
rm -f "$d/$name" "$d"/rank1-*
"$tally" report -q "$d" --markdown "$d.md"
check "markdown: scheme defused" grep -qF 'http&#58;//evil.example/x' "$d.md"
check "markdown: www defused" grep -qF 'www&#46;evil.example' "$d.md"
check "markdown: no live URL" sh -c "! grep -q 'http://evil' '$d.md'"

echo "outputs: $pass passed, $fail failed, $skipped skipped"
[ $fail = 0 ]
