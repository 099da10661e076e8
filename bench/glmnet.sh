#!/usr/bin/env bash
# An L1 logistic path against glmnet (issue 32): `nimbus path` with its defaults (20 points from
# lambda_max down to 1e-3 lambda_max, warm started, an intercept), 2 workers, against glmnet 4.1
# (Debian's r-cran-glmnet: scripts/install-deps --bench) fitting the same grid on one core with
# its default thresh, standardize = FALSE so that both solve the same problem
# (bench/glmnet_path.R). Times: nimbus's whole process (load included) and its solves alone;
# glmnet's fit alone (reading the file in R is not counted). Each point's objective from both,
# and their relative difference (glmnet's computed in R from its own coefficients).
#
#   bench/glmnet.sh NIMBUS [OUTDIR]    (OUTDIR default /tmp/nimbus-bench-solvers)
#   SET=debian (default; or fashion, zipf: bench/data/build.sh)   GLMNET_WORKERS=2
#   GLMNET_DATA=FILE.svm   a file of one's own in place of the suite's set (.ci/run: a small one)
#   GLMNET_AGREE=R         exit 1 if a point both returned differs by more than R, relative
#   GLMNET_ALGORITHM=A     nimbus path --algorithm A (default: nimbus's own; columns: its blocks are
#                          --workers GLMNET_WORKERS on this process's threads)
set -euo pipefail
nimbus=${1:?usage: bench/glmnet.sh NIMBUS [OUTDIR]}
out=${2:-/tmp/nimbus-bench-solvers}
set_name=${SET:-debian}
workers=${GLMNET_WORKERS:-2}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
command -v Rscript > /dev/null || { echo "glmnet.sh: no Rscript: run scripts/install-deps --bench" >&2; exit 1; }
# shellcheck source=data/build.sh
source "$here/data/build.sh"
if [ -n "${GLMNET_DATA:-}" ]; then
  data=$GLMNET_DATA
  set_name=$(basename "$data" .svm)
else
  suite_build_data "$out" "$set_name" "$nimbus"
  data=$(suite_data_file "$out" "$set_name")
fi
work=$out/glmnet-$set_name
mkdir -p "$work"

algorithm_flags=()
[ -n "${GLMNET_ALGORITHM:-}" ] && algorithm_flags=(--algorithm "$GLMNET_ALGORITHM")
/usr/bin/time -f %e -o "$work/nimbus-time.txt" "$nimbus" path --quiet --data "$data" --intercept \
  --workers "$workers" "${algorithm_flags[@]}" --out "$work/nimbus" > /dev/null
python3 -c 'import json, sys
for p in json.load(open(sys.argv[1]))["points"]: print(repr(p["lambda"]))' "$work/nimbus/path.json" > "$work/lambdas.txt"
echo "glmnet.sh: glmnet over the same $(wc -l < "$work/lambdas.txt") lambdas (one core)" >&2
Rscript "$here/glmnet_path.R" "$data" "$work/lambdas.txt" "$work/glmnet.tsv" 2> "$work/glmnet-stderr.txt" ||
  { cat "$work/glmnet-stderr.txt" >&2; exit 1; }
grep -i "warning\|convergence" "$work/glmnet-stderr.txt" >&2 || true

python3 - "$work/nimbus/path.json" "$work/glmnet.tsv" "$(tail -1 "$work/nimbus-time.txt")" "$data" "$workers workers, --algorithm ${GLMNET_ALGORITHM:-auto}" \
  "${GLMNET_AGREE:-}" > "$work/glmnet.md" <<'EOF' || { cat "$work/glmnet.md"; exit 1; }
import json, sys
path = json.load(open(sys.argv[1]))
glmnet, fit_seconds = {}, None
for line in open(sys.argv[2]):
    fields = line.split("\t")
    if fields[0] == "fit_seconds":
        fit_seconds = float(fields[1])
    else:
        glmnet[float(fields[0])] = (float(fields[1]), int(fields[2]))
points = path["points"]
agree = float(sys.argv[6]) if sys.argv[6] else None
worst = 0.0
solve = sum(p["setup_seconds"] + p["solve_seconds"] for p in points)
print(f"nimbus path against glmnet 4.1: {sys.argv[4]}, {len(points)} points, nimbus {sys.argv[5]} (threads)")
print()
print(f"- nimbus: {float(sys.argv[3]):.2f} s the whole process (load included), {solve:.2f} s its solves")
print(f"- glmnet: {fit_seconds:.2f} s its fit (one core, default thresh); {len(glmnet)} of {len(points)} points returned")
print()
print("| lambda | nimbus nonzeros | glmnet nonzeros | nimbus objective | glmnet objective | (glmnet - nimbus) / nimbus |")
print("|---|---|---|---|---|---|")
for p in points:
    lam = float(repr(p["lambda"]))
    theirs = glmnet.get(lam)
    ours = f"| {lam:.4g} | {p['nonzeros']} |"
    if theirs is None:
        print(f"{ours} - | {p['objective']:.12f} | not returned | |")
    else:
        difference = (theirs[0] - p["objective"]) / p["objective"]
        worst = max(worst, abs(difference))
        print(f"{ours} {theirs[1]} | {p['objective']:.12f} | {theirs[0]:.12f} | {difference:+.2e} |")
if agree is not None and worst > agree:
    print(f"\nglmnet.sh: the objectives differ by {worst:.2e}, relative, more than {agree:g}")
    sys.exit(1)
EOF
cat "$work/glmnet.md"
