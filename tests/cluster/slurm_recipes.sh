#!/bin/sh
# slurm_recipes.sh TALLY TALLY_MPI GENERATOR WORKDIR - samples/cluster/ run as
# written, with a fake `sbatch` (array tasks run one after another with
# SLURM_ARRAY_TASK_ID, a dependent job after them) and a fake `srun` (mpirun)
# first on PATH; Slurm is not installed here.
#   1. submit.sh: 10 generated ranks (one a non-profile) in 4 array tasks of 3;
#      task 1 is lost on its first run (FAKE_SLURM_LOSE=1): the merge names it
#      and the line that retries it alone, exit 1, no report; the retry alone
#      and the merge again give the report of a single `tally report` over the
#      same inputs (JSON byte for byte) plus the non-profile named with why.
#   2. a slice of non-profiles only: part-i.failed, its paths named in the report.
#   3. staged-merge.sh over 10 one-rank partials with FANIN 3 (3 levels) equals
#      `tally merge` of all of them at once.
#   4. tally-mpi.sbatch under the fake srun (mpirun -n 2): tally's bytes.
set -eu
tally=$1 tmpi=$2 gen=$3 work=$4
src=$(cd "$(dirname "$0")/../.." && pwd)
rm -rf "$work"
mkdir -p "$work/bin"
work=$(cd "$work" && pwd)
export SOURCE_DATE_EPOCH=1700000000
fail() { echo "FAIL: $*" >&2; exit 1; }

# the fake sbatch: --array=LIST (a-b or a,b,c), --dependency (already met: jobs run at once),
# --parsable; prints a job id. FAKE_SLURM_LOSE=i: task i is lost the first time it runs.
cat >"$work/bin/sbatch" <<'FAKE'
#!/bin/sh
set -u
array= script=
for a in "$@"; do
    case $a in
    --array=*) array=${a#--array=} ;;
    --*) ;;
    *) script=$a ;;
    esac
done
state=${FAKE_SLURM_STATE:?}
mkdir -p "$state"
id=$(( $(ls "$state" | wc -l) + 1000 ))
touch "$state/$id"
if [ -z "$array" ]; then
    SLURM_JOB_ID=$id sh "$script" >"$state/$id.log" 2>&1
    echo "$?" >"$state/$id.rc"
else
    for range in $(echo "$array" | tr ',' ' '); do
        lo=${range%-*} hi=${range#*-}
        i=$lo
        while [ "$i" -le "$hi" ]; do
            if [ "${FAKE_SLURM_LOSE:-x}" = "$i" ] && [ ! -e "$state/lost-$i" ]; then
                touch "$state/lost-$i" # the node went away: the task ran nothing
            else
                SLURM_ARRAY_JOB_ID=$id SLURM_ARRAY_TASK_ID=$i sh "$script" >"$state/$id.$i.log" 2>&1 ||
                    echo "task $i: exit $?" >>"$state/$id.failed"
            fi
            i=$((i + 1))
        done
    done
fi
echo "$id"
FAKE
cat >"$work/bin/srun" <<'FAKE'
#!/bin/sh
# the fake srun: tally-mpi's processes under mpirun (Slurm's --mpi option dropped)
[ "${1:-}" = "--mpi=pmix" ] && shift
root=
[ "$(id -u)" != 0 ] || root=--allow-run-as-root
exec timeout 120 mpirun $root --oversubscribe -n "${FAKE_SRUN_N:-2}" "$@"
FAKE
chmod +x "$work/bin/sbatch" "$work/bin/srun"
export PATH="$work/bin:$PATH" TALLY="$tally" FAKE_SLURM_STATE="$work/slurm"

# inputs: 10 generated ranks and a non-profile among them
"$gen" --ranks 10 --dir "$work/traces" --steps 4 --layers 1 --seed 3 --quiet
echo "not a profile" >"$work/traces/rank10.pt.trace.json"
cd "$work"
find traces -name '*.pt.trace.json*' | sort -V >inputs.txt
"$tally" report -q --inputs-from inputs.txt -o one.html --json one.json 2>/dev/null || true

# 1. the array, a lost task, the merge refusing, the retry alone, the merge
PER_TASK=3 FAKE_SLURM_LOSE=1 sh "$src/samples/cluster/submit.sh" inputs.txt parts out >submit.out
merge_job=$(tail -n 1 submit.out)
[ "$(cat "slurm/$merge_job.rc")" = 1 ] || fail "the merge after a lost task exits $(cat "slurm/$merge_job.rc"), not 1"
grep -q 'tasks 1 of 4 left no partial; retry them alone' "slurm/$merge_job.log" || fail "the lost task is not named: $(cat "slurm/$merge_job.log")"
grep -q 'sbatch --array=1 array.sbatch' "slurm/$merge_job.log" || fail "no retry line"
[ ! -e out/report.html ] || fail "a report was written with a task missing"
export INPUTS="$work/inputs.txt" PARTS=parts OUT=out PER_TASK=3 RECIPES="$src/samples/cluster"
sbatch --array=1 "$src/samples/cluster/array.sbatch" >/dev/null
[ -e parts/part-1.json ] || fail "the retried task wrote no partial"
# with more than STAGE_OVER partials the merge stages them first (staged-merge.sh, fan-in 2)
job=$(STAGE_OVER=2 FANIN=2 sbatch --dependency=afterany:1 "$src/samples/cluster/merge.sbatch")
[ "$(cat "slurm/$job.rc")" = 0 ] || fail "the merge after the retry exits $(cat "slurm/$job.rc"): $(cat "slurm/$job.log")"
cmp one.json out/aggregate.json || fail "the array's report differs from one tally report over the same inputs"
[ -d out/stages/level2 ] || fail "the merge did not stage 4 partials at fan-in 2"
grep -q 'rank10.pt.trace.json: damaged profile (a rank in its name): not JSON' out/summary.md ||
    fail "the non-profile is not named in the merged report"
echo "ok: job array, a lost task retried alone, dependent merge"

# 2. a slice with no profile at all leaves part-i.failed, named in the report
mkdir -p bad
echo "nothing" >bad/rank20.pt.trace.json
echo "nothing" >bad/rank21.pt.trace.json
{ cat inputs.txt; echo bad/rank20.pt.trace.json; echo bad/rank21.pt.trace.json; } >inputs2.txt
export INPUTS="$work/inputs2.txt" PARTS=parts2 OUT=out2 PER_TASK=11
sbatch --array=0-1 "$src/samples/cluster/array.sbatch" >/dev/null
[ -e parts2/part-1.failed ] && [ ! -e parts2/part-1.json ] || fail "a slice of non-profiles left no part-1.failed"
job=$(sbatch "$src/samples/cluster/merge.sbatch")
[ "$(cat "slurm/$job.rc")" = 0 ] || fail "merge with a failed slice: exit $(cat "slurm/$job.rc")"
for r in 20 21; do
    grep -q "bad/rank$r.pt.trace.json: damaged profile" out2/summary.md || fail "bad/rank$r is not named in the report"
done
echo "ok: a slice of non-profiles is named in the merged report"

# 3. the staged merge: 3 levels of FANIN 3 equal one merge
ls parts/part-*.json >/dev/null
mkdir -p one
for f in $(sed -n 1,10p inputs.txt); do
    "$tally" aggregate -q --partial "$f" -o "one/$(basename "$f").json" 2>/dev/null || true
done
ls one/*.json | sort >one.txt
top=$(FANIN=3 JOBS=2 sh "$src/samples/cluster/staged-merge.sh" one.txt stages)
[ -d stages/level3 ] && [ ! -d stages/level4 ] || fail "10 partials at fan-in 3: not 3 levels"
"$tally" merge -q --inputs-from one.txt -o flat.json
"$tally" report -q "$top" --json staged.report.json -o staged.html
"$tally" report -q flat.json --json flat.report.json -o flat.html
cmp staged.report.json flat.report.json || fail "the staged merge differs from one merge"
echo "ok: staged merge"

# 4. srun tally-mpi (fake srun = mpirun -n 2), when tally-mpi and mpirun are here
if [ -x "$tmpi" ] && command -v mpirun >/dev/null; then
    export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
    export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_hwloc_base_binding_policy=none
    TRACES=traces OUT=mpiout TALLY_MPI="$tmpi" sh "$src/samples/cluster/tally-mpi.sbatch" 2>mpi.err ||
        fail "tally-mpi.sbatch: $(tail -3 mpi.err)"
    cmp one.json mpiout/aggregate.json || fail "srun tally-mpi differs from tally report"
    echo "ok: srun tally-mpi"
else
    echo "skip: srun tally-mpi (no tally-mpi or mpirun)"
fi
echo "the Slurm recipes run"
