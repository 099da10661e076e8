"""The nimbus wheel: CMake builds the extension (_nimbus) and the worker binaries (bin/nimbus,
bin/nimbus-lambda), and the wheel carries them beside the package's Python files.

    pip install --no-build-isolation .             # into the current environment
    python3 -m build --wheel --no-isolation        # dist/nimbus-VERSION-cp3XX-cp3XX-linux_x86_64.whl

NIMBUS_BUILD_DIR=DIR uses a CMake build tree that is already configured (make's build/) instead
of configuring one under build/wheel; NIMBUS_BUILD_JOBS sets the build's parallelism (default:
the machine's cores).
"""
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
EXTENSION_TARGET = "nimbus_python"  # python/CMakeLists.txt: the extension, and the binaries it carries


def project_version():
    match = re.search(r"project\(nimbus VERSION ([0-9.]+)", (ROOT / "CMakeLists.txt").read_text())
    if not match:
        raise RuntimeError(f"{ROOT / 'CMakeLists.txt'}: no 'project(nimbus VERSION x.y.z'")
    return match.group(1)


def run(command):
    print("setup.py:", " ".join(str(part) for part in command), flush=True)
    subprocess.run([str(part) for part in command], check=True)


def cmake_build(build_temp):
    """Builds the package's binaries; returns the directory CMake assembles the package in."""
    given = os.environ.get("NIMBUS_BUILD_DIR")
    build_dir = Path(given).resolve() if given else Path(build_temp).resolve() / "cmake"
    if given and not (build_dir / "CMakeCache.txt").is_file():
        raise RuntimeError(f"NIMBUS_BUILD_DIR={given}: not a configured CMake build (no CMakeCache.txt)")
    if not given:
        configure = ["cmake", "-S", ROOT, "-B", build_dir, "-DCMAKE_BUILD_TYPE=Release",
                     f"-DPython_EXECUTABLE={sys.executable}"]
        if shutil.which("ccache"):  # objects shared with make's build
            configure.append("-DCMAKE_CXX_COMPILER_LAUNCHER=ccache")
        run(configure)
    jobs = os.environ.get("NIMBUS_BUILD_JOBS", str(os.cpu_count() or 1))
    run(["cmake", "--build", build_dir, "--target", EXTENSION_TARGET, "-j", jobs])
    package = build_dir / "python" / "nimbus"
    if not list(package.glob("_nimbus*.so")):
        raise RuntimeError(f"{build_dir}: CMake built no Python extension (its configure output says why; "
                           "pybind11-dev and python3-dev are needed: scripts/install-deps)")
    return package


class BuildPackage(build_py):
    """The Python files as usual, then the extension and bin/ from CMake's build."""

    def run(self):
        super().run()
        built = cmake_build(self.get_finalized_command("build").build_temp)
        target = Path(self.build_lib) / "nimbus"
        for extension in built.glob("_nimbus*.so"):
            shutil.copy2(extension, target / extension.name)
        shutil.copytree(built / "bin", target / "bin", dirs_exist_ok=True)


class BinaryDistribution(Distribution):
    """Compiled code inside: a wheel for this platform and this Python, not a pure one."""

    def has_ext_modules(self):
        return True


os.makedirs(ROOT / "build" / "wheel", exist_ok=True)  # setup.cfg's egg_base must exist
setup(version=project_version(), distclass=BinaryDistribution, cmdclass={"build_py": BuildPackage})
