#!/bin/sh
# submit.sh INPUTS PARTS OUT - the job array of partials and its dependent merge.
#   find /lustre/proj/runs/job42 -name '*.pt.trace.json*' | sort > inputs.txt
#   sh submit.sh inputs.txt /scratch/$USER/parts /lustre/proj/reports/job42
set -eu
export INPUTS=$(realpath "$1") PARTS=$2 OUT=$3
PER_TASK=${PER_TASK:-64}
export PER_TASK
here=$(cd "$(dirname "$0")" && pwd)
export RECIPES=$here  # Slurm runs a copy of each script: merge.sbatch finds staged-merge.sh here
n=$(grep -c '' "$INPUTS")
tasks=$(((n + PER_TASK - 1) / PER_TASK))
array=$(sbatch --parsable --export=ALL --array=0-$((tasks - 1)) "$here/array.sbatch")
# afterany: the merge runs even when a task failed, and names it
sbatch --parsable --export=ALL --dependency=afterany:"$array" "$here/merge.sbatch"
