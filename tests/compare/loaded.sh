#!/bin/sh
# loaded.sh TALLY DATA WORKDIR
#
# The sample pipeline's demo (4 ranks of 10 steps, rank 3 1.5x slower) run on
# this machine at load 4.3 on 2 cores (three busy loops beside it; data/demo-
# load4, as written): vae_decode +32..37 % on its 4 ranks, within 1.6 %, while
# the short stages' ranks spread by up to 2x (tokenize, 2 ms, -70..+60 %).
# The pooled variance of the stages judged decode by the noisy ones' noise
# (p 0.013 against Holm's 0.05 / 23: "unchanged", the gate passed); judged by
# its own variance moderated towards the pool's, it fails the gate.
set -eu
tally=$1 data=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
set +e
"$tally" compare -q "$data/baseline" "$data/optimized" --json "$work/c.json" --fail-on-regression 2>"$work/err"
rc=$?
set -e
[ "$rc" -eq 1 ] || { echo "loaded.sh: exit $rc, not 1 (the gate passed)" >&2; cat "$work/err" >&2; exit 1; }
grep -F 'regression: sections "vae_decode" (all ranks): per_run +34.7%' "$work/err" >/dev/null ||
    { echo "loaded.sh: vae_decode not named" >&2; cat "$work/err" >&2; exit 1; }
if grep -v 'vae_decode' "$work/err" | grep -q 'regression'; then
    echo "loaded.sh: another stage fails the gate" >&2; cat "$work/err" >&2; exit 1
fi
echo "loaded.sh: ok"
