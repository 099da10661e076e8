#!/usr/bin/env bash
# The Python suite against the package as a user installs it: a wheel built offline
# (python3 -m build --wheel --no-isolation, from a copy of the sources, so the tree stays
# clean) and installed into a fresh virtual environment that sees Debian's numpy, scipy and
# scikit-learn (--system-site-packages); then `pip install --no-build-isolation` of the sources
# into a second one, and a fit there. Both reuse BUILD_DIR's CMake build (NIMBUS_BUILD_DIR).
#
# usage: tests/python/wheel_suite.sh SOURCE_DIR BUILD_DIR PYTHON [PYTEST ARGS...]
set -euo pipefail
source_dir=$(cd "${1:?usage: wheel_suite.sh SOURCE_DIR BUILD_DIR PYTHON}" && pwd)
build_dir=$(cd "${2:?usage: wheel_suite.sh SOURCE_DIR BUILD_DIR PYTHON}" && pwd)
python=${3:?usage: wheel_suite.sh SOURCE_DIR BUILD_DIR PYTHON}
shift 3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
say() { echo "wheel_suite.sh: $*"; }

# What a source distribution holds for the build: the packaging files, the Python sources and
# the version's source (CMakeLists.txt); the C++ is NIMBUS_BUILD_DIR's.
mkdir -p "$work/src/python"
cp "$source_dir"/{pyproject.toml,setup.py,setup.cfg,CMakeLists.txt} "$work/src/"
cp -r "$source_dir/python/nimbus" "$work/src/python/"
export NIMBUS_BUILD_DIR=$build_dir

say "building the wheel"
(cd "$work/src" && "$python" -m build --wheel --no-isolation --outdir "$work/dist" . > "$work/build.log" 2>&1) ||
  { cat "$work/build.log"; say "the wheel did not build"; exit 1; }
wheel=$(ls "$work"/dist/nimbus-*.whl)
say "built $(basename "$wheel")"
for member in nimbus/__init__.py nimbus/linear_model.py nimbus/bin/nimbus nimbus/_nimbus; do
  "$python" -c 'import sys, zipfile; names = zipfile.ZipFile(sys.argv[1]).namelist()
sys.exit(0 if any(n.startswith(sys.argv[2]) for n in names) else f"{sys.argv[1]}: no {sys.argv[2]}")' "$wheel" "$member"
done

# The package the suite imports must be the venv's: from outside the source tree, and checked.
imports_from() {  # VENV: nimbus imports from VENV's site-packages, and its worker program runs
  (cd "$work" && "$1/bin/python" -c 'import os, subprocess, sys, nimbus, nimbus.linear_model as lm
assert nimbus.__file__.startswith(sys.argv[1] + "/lib/"), nimbus.__file__
subprocess.run([lm.WORKER_PROGRAM, "help"], check=True, stdout=subprocess.DEVNULL)
print("wheel_suite.sh: nimbus from", os.path.dirname(nimbus.__file__))' "$1")
}
"$python" -m venv --system-site-packages "$work/venv"
"$work/venv/bin/python" -m pip install --no-index --quiet "$wheel"
imports_from "$work/venv"
say "the Python suite against the installed wheel"
(cd "$work" && "$work/venv/bin/python" -m pytest -q -p no:cacheprovider -rs "$source_dir/tests/python" "$@")

say "pip install --no-build-isolation of the sources into a second environment"
"$python" -m venv --system-site-packages "$work/venv-pip"
"$work/venv-pip/bin/python" -m pip install --no-index --no-build-isolation --quiet "$work/src" > "$work/pip.log" 2>&1 ||
  { cat "$work/pip.log"; say "pip install failed"; exit 1; }
imports_from "$work/venv-pip"
(cd "$work" && "$work/venv-pip/bin/python" -c '
import numpy as np, nimbus
from sklearn.datasets import load_svmlight_file
X, y = load_svmlight_file("/usr/share/doc/liblinear-tools/examples/heart_scale")
model = nimbus.LogisticRegression(penalty="l1", C=0.5, n_workers=2, runtime="process").fit(X, y)
assert model.score(X, y) > 0.8, model.score(X, y)
print("wheel_suite.sh: a fit on process workers from the pip-installed package: accuracy", model.score(X, y))')
