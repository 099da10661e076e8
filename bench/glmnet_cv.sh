#!/usr/bin/env bash
# Cross-validation along an L1 logistic path against cv.glmnet and liblinear (issue 32):
# `nimbus cv --folds 5 --path-length 10 --intercept`, every other option default (CV_ALGORITHM:
# --algorithm), against cv.glmnet 4.1 (Debian's r-cran-glmnet: scripts/install-deps --bench) on
# the same grid and the same folds (nimbus's --write-folds), on one core with its default thresh
# and standardize = FALSE (bench/glmnet_cv.R), and liblinear-train -s 6 -B 1 -v 5 at each lambda
# in turn, as a liblinear user would (C = 1 / (N lambda); its own folds, and its bias is
# regularized). Times: nimbus's whole process (load included); glmnet's cv.glmnet() alone;
# liblinear's processes (each loads the file). Each lambda's mean held-out log loss from nimbus
# and glmnet.
#
#   bench/glmnet_cv.sh NIMBUS [OUTDIR]    (OUTDIR default /tmp/nimbus-bench-solvers)
#   SET=debian (default; or fashion, zipf: bench/data/build.sh)   CV_DATA=FILE.svm: a file of one's own
#   CV_WORKERS=2   CV_FOLDS=5   CV_POINTS=10   CV_ALGORITHM=A
#   CV_LIBLINEAR=0, CV_GLMNET=0: leave liblinear, or glmnet, out (glmnet's fit of Debian's weak end
#                  alone takes over 10 minutes: docs/evaluation.md, "Paths by columns")
#   CV_AGREE=R     exit 1 if a lambda's mean log loss differs from glmnet's by more than R, relative
set -euo pipefail
nimbus=${1:?usage: bench/glmnet_cv.sh NIMBUS [OUTDIR]}
out=${2:-/tmp/nimbus-bench-solvers}
set_name=${SET:-debian}
workers=${CV_WORKERS:-2}
folds=${CV_FOLDS:-5}
points=${CV_POINTS:-10}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
command -v Rscript > /dev/null || { echo "glmnet_cv.sh: no Rscript: run scripts/install-deps --bench" >&2; exit 1; }
# shellcheck source=data/build.sh
source "$here/data/build.sh"
if [ -n "${CV_DATA:-}" ]; then
  data=$CV_DATA
  set_name=$(basename "$data" .svm)
else
  suite_build_data "$out" "$set_name" "$nimbus"
  data=$(suite_data_file "$out" "$set_name")
fi
work=$out/glmnet-cv-$set_name
mkdir -p "$work"
log() { echo "glmnet_cv.sh: $*" >&2; }

algorithm_flags=()
[ -n "${CV_ALGORITHM:-}" ] && algorithm_flags=(--algorithm "$CV_ALGORITHM")
log "nimbus cv --folds $folds --path-length $points --intercept --workers $workers ${algorithm_flags[*]}"
/usr/bin/time -f %e -o "$work/nimbus-time.txt" "$nimbus" cv --quiet --no-plots --data "$data" --folds "$folds" \
  --path-length "$points" --intercept --workers "$workers" "${algorithm_flags[@]}" --write-folds \
  --out "$work/nimbus" > /dev/null
python3 -c 'import json, sys
for p in json.load(open(sys.argv[1]))["points"]: print(repr(p["lambda"]))' "$work/nimbus/cv.json" > "$work/lambdas.txt"
if [ "${CV_GLMNET:-1}" != 0 ]; then
  log "cv.glmnet over the same $(wc -l < "$work/lambdas.txt") lambdas and folds (one core)"
  Rscript "$here/glmnet_cv.R" "$data" "$work/lambdas.txt" "$work/nimbus/folds.txt" "$work/glmnet.tsv" \
    2> "$work/glmnet-stderr.txt" || { cat "$work/glmnet-stderr.txt" >&2; exit 1; }
  grep -i "warning\|convergence" "$work/glmnet-stderr.txt" >&2 || true
else
  : > "$work/glmnet.tsv"
fi

liblinear_seconds=""
if [ "${CV_LIBLINEAR:-1}" != 0 ]; then
  rows=$(wc -l < "$data")
  log "liblinear-train -s 6 -B 1 -v $folds at each lambda"
  liblinear_seconds=0
  while read -r lambda; do
    c=$(awk "BEGIN { printf \"%.17g\", 1 / ($rows * $lambda) }")
    /usr/bin/time -f %e -o "$work/ll-time.txt" liblinear-train -s 6 -B 1 -v "$folds" -c "$c" -q "$data" > /dev/null
    liblinear_seconds=$(awk "BEGIN { print $liblinear_seconds + $(tail -1 "$work/ll-time.txt") }")
  done < "$work/lambdas.txt"
fi

python3 - "$work/nimbus/cv.json" "$work/glmnet.tsv" "$(tail -1 "$work/nimbus-time.txt")" "$data" \
  "$workers workers, --algorithm ${CV_ALGORITHM:-auto}" "$liblinear_seconds" "${CV_AGREE:-}" > "$work/glmnet-cv.md" <<'PY' ||
import json, sys
cv = json.load(open(sys.argv[1]))
glmnet, fit_seconds = {}, None
for line in open(sys.argv[2]):
    fields = line.split("\t")
    if fields[0] == "fit_seconds":
        fit_seconds = float(fields[1])
    else:
        glmnet[float(fields[0])] = float(fields[1])
nimbus_seconds = float(sys.argv[3])
liblinear = float(sys.argv[6]) if sys.argv[6] else None
agree = float(sys.argv[7]) if sys.argv[7] else None
points = cv["points"]
print(f"nimbus cv against cv.glmnet 4.1: {sys.argv[4]}, {cv['folds']} folds, {len(points)} lambdas, nimbus {sys.argv[5]}")
print()
def ratio(seconds):  # a small file's times may round to 0 s
    return f"{nimbus_seconds / seconds:.2f}" if seconds > 0 else "-"
print("| runner | seconds | nimbus / runner |")
print("|---|---|---|")
print(f"| nimbus cv (the whole process, load included) | {nimbus_seconds:.2f} | 1.00 |")
if fit_seconds is not None:
    print(f"| cv.glmnet (its fit alone, one core, default thresh) | {fit_seconds:.2f} | {ratio(fit_seconds)} |")
if liblinear is not None:
    print(f"| liblinear-train -s 6 -B 1 -v {cv['folds']}, each lambda (load included) | {liblinear:.2f} | "
          f"{ratio(liblinear)} |")
print()
print("| lambda | nimbus nonzeros | nimbus mean held-out log loss | glmnet's | (glmnet - nimbus) / nimbus |")
print("|---|---|---|---|---|")
worst = 0.0
for p in points:
    lam = float(repr(p["lambda"]))
    ours = p["scores"]["log_loss"]["mean"]
    theirs = glmnet.get(lam)
    if theirs is None:
        print(f"| {lam:.4g} | {p['nonzeros']} | {ours:.8f} | not returned | |")
        continue
    difference = (theirs - ours) / ours
    worst = max(worst, abs(difference))
    print(f"| {lam:.4g} | {p['nonzeros']} | {ours:.8f} | {theirs:.8f} | {difference:+.2e} |")
if agree is not None and worst > agree:
    print(f"\nglmnet_cv.sh: the held-out log losses differ by {worst:.2e}, relative, more than {agree:g}")
    sys.exit(1)
PY
  { cat "$work/glmnet-cv.md"; exit 1; }
cat "$work/glmnet-cv.md"
