#!/usr/bin/env bash
# Solvers on data nimbus did not make: nimbus against liblinear on Fashion-MNIST, a bag of
# words from Debian's package descriptions, a Zipf two-topic text set (bench/data/*.py), and,
# for comparison, the `nimbus gen` problem the defaults were tuned on.
#
# For each data set x {L1, L2} x two strengths (a strongly regularized, sparse model and a
# weakly regularized, dense one):
#   F*        liblinear-train -s 6 (L1) / -s 0 (L2), C = 1/(N lambda), -e $SOLVERS_FSTAR_EPS
#             (default 1e-7); F of a liblinear model is `nimbus eval --model M --l1/--l2`.
#   liblinear the first -e of 0.1, 0.01, ..., 1e-7 whose model reaches F <= F*(1 + 1e-4), and
#             the first reaching F*(1 + 1e-6): wall time of the whole process, load included.
#   nimbus    `nimbus train --data FILE --l1|--l2 X --workers K --target-objective T
#             --summary-json J` for both targets (every other option default), K = 1, 2, 4
#             (and 16 with SOLVERS_K16=1): wall time of the whole process, rounds, iterations,
#             data passes, termination; and the same run without --target-objective (the
#             default stop test): its relative gap (F - F*)/F*, time and rounds.
#   MB/round  what crosses the wire per round: (bytes_sent + bytes_received) / rounds from the
#             summary of one extra run with --runtime process to each target (the default
#             runtime, threads, moves no bytes). SOLVERS_WIRE=0 skips these runs.
# Times are medians of $REPEATS (default 3) runs. The table goes to stdout and to
# OUTDIR/solvers.md; data (cached: delete a file to rebuild it), F* (cached per data set,
# regularizer, lambda and -e) and every run's files stay in OUTDIR.
#
# Usage: bench/solvers.sh NIMBUS [OUTDIR]     (OUTDIR default /tmp/nimbus-bench-solvers)
#   SOLVERS_QUICK=1   smoke test: 1 repeat, K = 2, a 30 s limit per nimbus run, --runtime process
#                     for the 1e-4 target only, and the strongly regularized case of each data set
#                     and regularizer (nimbus gen: L1 only)
#   SOLVERS_K16=1     also K = 16
#   SOLVERS_DATA="fashion debian zipf gen"   the data sets to run (default: all four)
#   SOLVERS_WIRE=0    no --runtime process runs (MB/round left empty)
#   SOLVERS_TIMEOUT=S a nimbus run that takes longer is stopped and shown as "> S s" (default 900;
#                     30 with SOLVERS_QUICK=1)
#   REPEATS=N         runs per time (default 3; 1 with SOLVERS_QUICK=1)
#   SOLVERS_ALGORITHM=A  nimbus runs with --algorithm A (default: none, nimbus's own choice);
#                     (columns: its MB/round on process workers, a block of columns each)
#   SOLVERS_KS="1 2"  the worker counts K (default 1 2 4; 2 with SOLVERS_QUICK=1)
#   SOLVERS_CASES="debian L1 1e-6,fashion L1 1e-5"   these cases only (comma-separated)
set -euo pipefail
nimbus=${1:?usage: bench/solvers.sh NIMBUS [OUTDIR]}
out=${2:-/tmp/nimbus-bench-solvers}
quick=${SOLVERS_QUICK:-0}
wire=${SOLVERS_WIRE:-1}
fstar_eps=${SOLVERS_FSTAR_EPS:-1e-7}
datasets=${SOLVERS_DATA:-fashion debian zipf gen}
if [ "$quick" = 1 ]; then repeats=${REPEATS:-1}; ks=(2); nimbus_limit=${SOLVERS_TIMEOUT:-30}
else repeats=${REPEATS:-3}; ks=(1 2 4); nimbus_limit=${SOLVERS_TIMEOUT:-900}; fi
[ "${SOLVERS_K16:-0}" = 1 ] && ks+=(16)
[ -n "${SOLVERS_KS:-}" ] && read -r -a ks <<< "$SOLVERS_KS"
algorithm_flags=()
[ -n "${SOLVERS_ALGORITHM:-}" ] && algorithm_flags=(--algorithm "$SOLVERS_ALGORITHM")
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=data/build.sh
source "$here/data/build.sh"   # the data sets, shared with bench/evaluation.sh
[ -x "$nimbus" ] || { echo "solvers.sh: no nimbus binary at $nimbus" >&2; exit 1; }
mkdir -p "$out/runs" "$out/fstar" "$out/bin"
# Every figure from one binary, even if the build tree is rebuilt meanwhile: run a copy (train
# --runtime process starts its workers from the running executable, so the copy is complete).
cp "$nimbus" "$out/bin/nimbus.tmp" && mv "$out/bin/nimbus.tmp" "$out/bin/nimbus"
nimbus_source=$nimbus nimbus=$out/bin/nimbus
log() { echo "solvers.sh: $*" >&2; }

# Cases: data set, regularizer, lambda; the first strength of each pair is the strong one.
all_cases=(
  "fashion L1 1e-3" "fashion L1 1e-5" "fashion L2 1e-3" "fashion L2 1e-5"
  "debian L1 1e-5" "debian L1 1e-6" "debian L2 1e-4" "debian L2 1e-6"
  "zipf L1 1e-5" "zipf L1 1e-6" "zipf L2 1e-4" "zipf L2 1e-6"
  "gen L1 3e-6" "gen L2 1e-5"
)
quick_cases=("fashion L1 1e-3" "fashion L2 1e-3" "debian L1 1e-5" "debian L2 1e-4" "zipf L1 1e-5" "zipf L2 1e-4"
  "gen L1 3e-6")
declare -A file label
for name in fashion debian zipf gen; do file[$name]=$(suite_data_file "$out" "$name"); done
label[fashion]="Fashion-MNIST" label[debian]="Debian packages" label[zipf]="Zipf topics"
label[gen]="nimbus gen (tuned on)"

field() { sed -n "s/.*\"$1\":\([^,}]*\).*/\1/p" "$2" | tr -d '"'; }
calc() { awk "BEGIN { $1 }"; }

# ---- data ---------------------------------------------------------------------------------------
# Built by bench/data/build.sh into OUTDIR unless there (cached); the builder's report in FILE.log.
build_data() { suite_build_data "$out" "$1" "$nimbus"; }

# ---- measurement --------------------------------------------------------------------------------
# Wall seconds of one run of a command, "timeout" if it ran past $limit seconds (when set), or "fail".
time_once() {
  local status=0 guard=()
  [ -n "${limit:-}" ] && guard=(timeout --kill-after=10 "$limit")
  /usr/bin/time -f %e -o "$work/time.txt" "${guard[@]}" "$@" > /dev/null 2> "$work/stderr.txt" || status=$?
  if [ "$status" = 0 ]; then tail -1 "$work/time.txt"; return; fi
  # timeout(1) exits 124 (137 after its KILL); /usr/bin/time then reports that status.
  if [ -n "${limit:-}" ] && grep -qE "exit(ed with non-zero)? status (124|137)" "$work/time.txt"; then echo timeout; return; fi
  grep -v "^Command exited" "$work/stderr.txt" | tail -3 >&2
  echo fail
}
# The median of its arguments, or "timeout"/"fail" if one is.
median() {
  [[ " $* " == *" timeout "* ]] && { echo timeout; return; }
  [[ " $* " == *" fail "* ]] && { echo fail; return; }
  printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'
}
# Median wall seconds of a command over $repeats runs (after FIRST, a time already measured, if given).
median_seconds() {
  local times=()
  [ "$1" = --first ] && { times+=("$2"); shift 2; }
  while [ "${#times[@]}" -lt "$repeats" ]; do times+=("$(time_once "$@")"); done
  median "${times[@]}"
}

reg_flags() { if [ "$reg" = L1 ]; then echo "--l1 $lambda"; else echo "--l2 $lambda"; fi; }
ll_solver() { if [ "$reg" = L1 ]; then echo 6; else echo 0; fi; }
# F of a liblinear model under this case's regularizer.
objective() {
  local eval_reg
  if [ "$reg" = L1 ]; then eval_reg="--l1 $lambda --l2 0"; else eval_reg="--l1 0 --l2 $lambda"; fi
  # shellcheck disable=SC2086
  "$nimbus" eval --model "$1" --data "$data" $eval_reg --json > "$work/eval.json"
  field objective "$work/eval.json"
}
model_nnz() { awk 'w && $1 + 0 != 0 { k++ } /^w$/ { w = 1 } END { print k + 0 }' "$1"; }
model_features() { awk '$1 == "nr_feature" { print $2; exit }' "$1"; }
fmt_time() { case $1 in fail) echo fail ;; timeout) echo "> $nimbus_limit s" ;; "") echo "not reached" ;; *) printf '%.2f s' "$1" ;; esac; }
ratio() {
  case "$1 $2" in *fail* | *timeout* | " "* | *" ") echo "-" ;; *) calc "printf \"%.2f\", $1 / $2" ;; esac
}

# liblinear: F* (cached), then the ladder. Sets fstar, sol_nnz, sol_d, ll_time[4|6], ll_eps[4|6].
run_liblinear() {
  local s c cache model eps f t
  s=$(ll_solver)
  c=$(calc "printf \"%.17g\", 1 / ($rows * $lambda)")
  cache=$out/fstar/$name-$reg-$lambda-e$fstar_eps.txt
  if [ ! -s "$cache" ] || [ "$data" -nt "$cache" ]; then
    model=$work/fstar.model
    log "$name $reg $lambda: F* from liblinear-train -s $s -c $c -e $fstar_eps"
    liblinear-train -s "$s" -c "$c" -e "$fstar_eps" -q "$data" "$model" > /dev/null
    f=$(objective "$model")
    [ -n "$f" ] || { log "$name $reg $lambda: nimbus eval failed on liblinear's model"; return 1; }
    echo "$f $(model_nnz "$model") $(model_features "$model")" > "$cache"
  fi
  read -r fstar sol_nnz sol_d < "$cache"
  target[4]=$(calc "printf \"%.17g\", $fstar * (1 + 1e-4)")
  target[6]=$(calc "printf \"%.17g\", $fstar * (1 + 1e-6)")
  ll_eps[4]="" ll_eps[6]="" ll_time[4]="" ll_time[6]=""
  for eps in 0.1 0.01 0.001 0.0001 0.00001 0.000001 0.0000001; do
    t=$(time_once liblinear-train -s "$s" -c "$c" -e "$eps" -q "$data" "$work/ll.model")
    [ "$t" != fail ] || { log "$name $reg $lambda: liblinear-train -e $eps failed"; break; }
    f=$(objective "$work/ll.model")
    [ -n "$f" ] || { log "$name $reg $lambda: nimbus eval failed on liblinear's -e $eps model"; return 1; }
    for g in 4 6; do
      if [ -z "${ll_eps[$g]}" ] && calc "exit !($f <= ${target[$g]})"; then
        ll_eps[$g]=$eps
        ll_time[$g]=$(median_seconds --first "$t" liblinear-train -s "$s" -c "$c" -e "$eps" -q "$data" "$work/ll.model")
      fi
    done
    [ -n "${ll_eps[4]}" ] && [ -n "${ll_eps[6]}" ] && break
  done
}

# One nimbus configuration: MODE is 4, 6 (--target-objective F*(1+1e-MODE)) or default.
# Sets nb_time, nb_json.
run_nimbus() {
  local k=$1 mode=$2 extra=()
  nb_json=$work/k$k-$mode.json
  [ "$mode" != default ] && extra=(--target-objective "${target[$mode]}")
  rm -f "$nb_json"
  # shellcheck disable=SC2046
  nb_time=$(limit=$nimbus_limit median_seconds "$nimbus" train --data "$data" $(reg_flags) --workers "$k" "${extra[@]}" \
    "${algorithm_flags[@]}" --summary-json "$nb_json" --quiet)
}
# MB per round on the wire: one --runtime process run.
wire_mb() {
  local k=$1 mode=$2 extra=() j sent received rounds
  j=$work/k$k-$mode-process.json
  if [ "$wire" != 1 ] || { [ "$quick" = 1 ] && [ "$mode" != 4 ]; }; then echo "-"; return; fi
  [ "$mode" != default ] && extra=(--target-objective "${target[$mode]}")
  local status=0
  # shellcheck disable=SC2046
  timeout --kill-after=10 "$nimbus_limit" "$nimbus" train --data "$data" $(reg_flags) --workers "$k" "${extra[@]}" \
    "${algorithm_flags[@]}" --runtime process --summary-json "$j" --quiet > /dev/null 2> "$work/stderr.txt" || status=$?
  case $status in 0) ;; 124 | 137) echo timeout; return ;; *) echo fail; return ;; esac
  sent=$(field bytes_sent "$j") received=$(field bytes_received "$j") rounds=$(field rounds "$j")
  calc "printf \"%.2f\", ($sent + $received) / 1e6 / ($rounds > 0 ? $rounds : 1)"
}
# The cells of a target run (MODE 4 or 6), appended to row: nimbus time, ratio, rounds (iterations), passes.
target_cells() {
  local mode=$1 term
  if [ "$nb_time" = fail ] || [ "$nb_time" = timeout ] || [ ! -s "$nb_json" ]; then
    row+=" | $(fmt_time "$nb_time") | - | - | -"
    return
  fi
  term=$(field termination "$nb_json")
  if [ "$term" = target_objective ]; then
    row+=" | $(fmt_time "$nb_time") | $(ratio "$nb_time" "${ll_time[$mode]}")"
  else  # stopped before the target: no ratio
    row+=" | $(fmt_time "$nb_time") ✗ $term | -"
  fi
  row+=" | $(field rounds "$nb_json") ($(field iterations "$nb_json") it) | $(field data_passes "$nb_json")"
}

# ---- the run ------------------------------------------------------------------------------------
started=$(date +%s.%N)
echo "nimbus solvers benchmark: $(date -u +%Y-%m-%dT%H:%MZ) on $(nproc) cores, $repeats run(s) per time (median);" \
  "K = ${ks[*]}; F* at liblinear -e $fstar_eps; $nimbus_source (run as a copy, $nimbus); files in $out"
if [ "$quick" = 1 ]; then cases=("${quick_cases[@]}"); else cases=("${all_cases[@]}"); fi
[ -n "${SOLVERS_CASES:-}" ] && IFS=, read -r -a cases <<< "$SOLVERS_CASES"

declare -A built nrows
for name in $datasets; do
  [ -n "${file[$name]:-}" ] || { log "unknown data set '$name' (fashion, debian, zipf, gen)"; exit 1; }
  if build_data "$name"; then built[$name]=1; else log "could not build ${label[$name]}: its cases are left out"; fi
done
data_built=$(date +%s.%N)

data_table="| data | file | rows | features | nonzeros | positive |
|---|---|---|---|---|---|"
for name in $datasets; do
  [ -n "${built[$name]:-}" ] || continue
  f=${file[$name]}
  if [ ! -s "$f.stats" ] || [ "$f" -nt "$f.stats" ]; then
    # rows, positive rows, nonzeros, largest feature index (every builder writes indices in increasing order)
    awk '{ n++; if ($1 + 0 > 0) p++; nz += NF - 1; if (NF > 1) { split($NF, a, ":"); if (a[1] + 0 > d) d = a[1] + 0 } }
      END { print n, p + 0, nz, d }' "$f" > "$f.stats"
  fi
  read -r r pos nz d < "$f.stats"
  nrows[$name]=$r
  data_table+=$'\n'"| ${label[$name]} | $(basename "$f") ($(($(stat -c %s "$f") / 1000000)) MB) | $r | $d | $nz | $pos ($(calc "printf \"%.1f%%\", 100 * $pos / $r")) |"
done
echo
echo "$data_table"
echo

header="| data | reg | lambda | nnz of d (F*) | K | algorithm | liblinear 1e-4 (-e) | nimbus 1e-4 | ratio | rounds | passes | MB/round"
header+=" | liblinear 1e-6 (-e) | nimbus 1e-6 | ratio | rounds | passes | MB/round | default stop: gap, time, rounds |"
separator="|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
table="$header"$'\n'"$separator"
echo "$header"
echo "$separator"
declare -A target ll_eps ll_time
for case_ in "${cases[@]}"; do
  read -r name reg lambda <<< "$case_"
  if [[ " $datasets " != *" $name "* ]] || [ -z "${built[$name]:-}" ]; then continue; fi
  data=${file[$name]}
  rows=${nrows[$name]}
  work=$out/runs/$name-$reg-$lambda
  mkdir -p "$work"
  run_liblinear || { log "$name $reg $lambda: left out"; continue; }
  log "$name $reg $lambda: F* = $fstar ($sol_nnz of $sol_d nonzero); liblinear -e ${ll_eps[4]} for 1e-4 (${ll_time[4]} s), -e ${ll_eps[6]} for 1e-6 (${ll_time[6]} s)"
  for k in "${ks[@]}"; do
    row="| ${label[$name]} | $reg | $lambda | $sol_nnz of $sol_d | $k"
    algorithm=""
    for mode in 4 6; do
      run_nimbus "$k" "$mode"
      [ -s "$nb_json" ] && algorithm=$(field algorithm "$nb_json")
      [ "$mode" = 4 ] && row+=" | ${algorithm:--}"
      row+=" | $(fmt_time "${ll_time[$mode]}") (${ll_eps[$mode]:-none})"
      target_cells "$mode"
      row+=" | $(wire_mb "$k" "$mode")"
    done
    run_nimbus "$k" default
    if [ "$nb_time" = fail ] || [ "$nb_time" = timeout ] || [ ! -s "$nb_json" ]; then
      row+=" | $(fmt_time "$nb_time") |"
    else
      f=$(field objective "$nb_json") term=$(field termination "$nb_json")
      gap=$(calc "printf \"%.2g\", ($f - $fstar) / $fstar")
      [ "$term" = converged ] && term="" || term=" ($term)"
      row+=" | $gap, $(fmt_time "$nb_time"), $(field rounds "$nb_json") r$term |"
    fi
    echo "$row"
    table+=$'\n'"$row"
  done
done
finished=$(date +%s.%N)

notes="liblinear: wall time of the whole process (load included) at the first -e of 0.1, 0.01, ..., 1e-7
that reaches the target. nimbus: wall time of \`nimbus train --target-objective\` with every other option
default (threads runtime); ✗ marks a run that stopped before the target (with its termination), '> S s'
one stopped after SOLVERS_TIMEOUT. ratio = nimbus / liblinear. rounds (it): master rounds and the
summary's iterations; passes: data_passes. MB/round: bytes sent and received per round in the same run
with --runtime process (timeout: it ran past the limit). gap: (F - F*)/F* where the default stop test
ends. nnz of d: nonzero weights of the F* model (liblinear -e $fstar_eps) out of its features.
Data built or found in $(calc "printf \"%.0f\", $data_built - $started") s; all runs in $(calc "printf \"%.0f\", $finished - $data_built") s."
echo
echo "$notes"
{
  echo "nimbus solvers benchmark: $(date -u +%Y-%m-%dT%H:%MZ) on $(nproc) cores, $repeats run(s) per time (median);" \
    "K = ${ks[*]}$([ "$quick" = 1 ] && echo "; SOLVERS_QUICK=1")"
  echo
  echo "$data_table"
  echo
  echo "$table"
  echo
  echo "$notes"
} > "$out/solvers.md.tmp"
mv "$out/solvers.md.tmp" "$out/solvers.md"
log "table written to $out/solvers.md"
