#!/usr/bin/env bash
# The CMake package as a user meets it: install the build into a fresh prefix, build
# examples/consumer against it with find_package(nimbus), run it on liblinear's heart_scale and
# compare the objective it prints with liblinear's optimum (evaluated by `nimbus eval`).
#
# usage: consumer_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1 source=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
data=/usr/share/doc/liblinear-tools/examples/heart_scale
l1=0.01

cmake --install "$build" --prefix "$work/prefix" > "$work/install.log"
for part in include/nimbus/nimbus.h lib/cmake/nimbus/nimbusConfig.cmake bin/nimbus; do
  [ -e "$work/prefix/$part" ] || { echo "FAIL: the install lacks $part"; exit 1; }
done
# Sealed: the headers installed are nimbus.h and those it includes, no others (the modules'
# own, such as the wire's codec or the runtimes', stay in the source tree).
for internal in wire/codec.h wire/messages.h executor/executor.h solve/master.h runtime/remote_executor.h \
                worker/fault_injection.h api/plan.h; do
  [ ! -e "$work/prefix/include/nimbus/$internal" ] || { echo "FAIL: the install holds $internal"; exit 1; }
done
echo '#include <nimbus/nimbus.h>' > "$work/includes.cpp"
needed=$(g++ -std=c++20 -I"$work/prefix/include" -M "$work/includes.cpp" | tr ' \\' '\n\n' |
         grep -o 'include/nimbus/.*\.h$' | sort -u)
installed=$(cd "$work/prefix" && find include/nimbus -name '*.h' | sort)
[ "$needed" = "$installed" ] || { echo "FAIL: installed headers differ from those nimbus.h includes:"
                                   diff <(echo "$needed") <(echo "$installed"); exit 1; }
echo "installed: $(echo "$installed" | wc -l) headers, all of them included by nimbus.h"
cmake -S "$source/examples/consumer" -B "$work/consumer" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$work/prefix" > "$work/configure.log" || { cat "$work/configure.log"; exit 1; }
cmake --build "$work/consumer" > "$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
printed=$("$work/consumer/solve_file" "$data" "$l1")
echo "consumer: $printed"
objective=${printed#objective }

# liblinear -s 6 solves the same problem with C = 1 / (N l1), N = 270 rows.
liblinear-train -s 6 -c "$(awk -v l1=$l1 'BEGIN { printf "%.17g", 1 / (270 * l1) }')" -e 1e-8 -q "$data" "$work/ll.model"
reference=$("$work/prefix/bin/nimbus" eval --model "$work/ll.model" --data "$data" --l1 $l1 --l2 0 --json |
            sed 's/.*"objective":\([^,}]*\).*/\1/')
echo "liblinear: objective $reference"
awk -v f="$objective" -v ref="$reference" 'BEGIN {
  if (f > ref * (1 + 1e-6)) { print "FAIL: the consumer objective is above liblinear'\''s by more than 1e-6 relative"; exit 1 }
  print "ok: within 1e-6 of liblinear" }'
