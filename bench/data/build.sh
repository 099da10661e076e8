# The benchmark suite's data sets, built once into a cache directory and reused: sourced by
# the benchmarks (bench/solvers.sh, evaluation.sh, relays.sh, ...), so that all measure the
# same bytes.
#
#   source bench/data/build.sh
#   suite_data_file DIR NAME            the file NAME lives in: DIR/fashion-train.svm, ...
#   suite_build_data DIR NAME NIMBUS    builds it unless it is there (its builder's report in
#                                       FILE.log); non-zero status if it cannot be built
#   suite_json_field FILE KEY           a top-level field of a JSON object (a profile, a
#                                       --summary-json), printed as it is
#
# NAME is one of fashion (Fashion-MNIST, binary: classes 0, 2, 4, 6 against the rest),
# fashion10 (Fashion-MNIST's 10 classes, labels 0..9; bench/multiclass.sh), debian
# (a bag of words from Debian's package descriptions), zipf (two Zipf topics) or gen (the
# `nimbus gen` problem the defaults were tuned on). docs/benchmarks.md describes each.

suite_data_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
suite_python=/usr/bin/python3   # Debian's, with python3-numpy (scripts/install-deps)

suite_json_field() {  # FILE KEY
  "$suite_python" -c 'import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"
}

suite_data_file() {  # DIR NAME
  case $2 in
    fashion) echo "$1/fashion-train.svm" ;;
    fashion10) echo "$1/f10-train.svm" ;;
    debian) echo "$1/debian-packages.svm" ;;
    zipf) echo "$1/zipf-text.svm" ;;
    gen) echo "$1/nimbus-gen.svm" ;;
    *) echo "unknown data set '$2' (fashion, fashion10, debian, zipf, gen)" >&2; return 1 ;;
  esac
}

# The apt lists with long descriptions (Translation-en): the system's if it has them, else a
# private copy under DIR fetched by apt-get (the system's lists are left alone).
suite_debian_lists() {  # DIR
  if compgen -G "/var/lib/apt/lists/*_i18n_Translation-en*" > /dev/null; then echo /var/lib/apt/lists; return; fi
  local lists=$1/apt-lists
  if ! compgen -G "$lists/*_i18n_Translation-en*" > /dev/null; then
    echo "the system's apt lists have no long descriptions (Translation-en); fetching Debian's lists into $lists" >&2
    mkdir -p "$lists/partial"
    apt-get update -o Acquire::Languages=en -o Dir::State::Lists="$lists" -o Dir::Cache::pkgcache= \
      -o Dir::Cache::srcpkgcache= >&2 || return 1
  fi
  echo "$lists"
}

suite_build_data() {  # DIR NAME NIMBUS
  local dir=$1 name=$2 nimbus=$3 f lists start
  f=$(suite_data_file "$dir" "$name") || return 1
  [ -s "$f" ] && return 0
  mkdir -p "$dir"
  start=$(date +%s.%N)
  case $name in
    fashion) "$suite_python" "$suite_data_dir/fashion_mnist.py" --split train --out "$f" 2> "$f.log" ;;
    fashion10) "$suite_python" "$suite_data_dir/fashion_mnist.py" --split train --multiclass --out "$f" 2> "$f.log" ;;
    debian) lists=$(suite_debian_lists "$dir") &&
      "$suite_python" "$suite_data_dir/debian_packages.py" --lists "$lists" --out "$f" 2> "$f.log" ;;
    zipf) "$suite_python" "$suite_data_dir/zipf_text.py" --out "$f" 2> "$f.log" ;;
    gen) "$nimbus" gen --rows 200000 --cols 100000 --nnz-per-row 40 --seed 1 --out "$f" > "$f.log" 2>&1 ;;
  esac || { cat "$f.log" >&2 2> /dev/null; return 1; }
  echo "built $f in $(awk "BEGIN { printf \"%.1f\", $(date +%s.%N) - $start }") s: $(cat "$f.log")" >&2
}
