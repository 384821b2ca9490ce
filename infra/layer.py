"""Builds the dependency layer for the Lambda target (python3.13 on arm64) with uv or pip, whatever Python runs the build.

Chalice packages dependencies for the interpreter that runs it (3.11 on x86_64 here), so `make package`
leaves them to this module: pip fetches the target's wheels (`--platform --python-version
--implementation --only-binary`), and `wheel_problems` checks that every compiled file in the zip
can load on the declared runtime and architecture. A wrong wheel fails the build, not the first cold
start. uv (the pinned one `make install` puts next to this interpreter) resolves the same pins for the same
target in well under a second where pip takes seconds; pip does it where there is no uv.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

RUNTIME = "python3.13"
ARCHITECTURE = "arm64"
PYTHON_VERSION = (3, 13)
PIP_PLATFORM = "manylinux2014_aarch64"
# Amazon Linux 2023 (the python3.13 runtime) has glibc 2.34: no manylinux wheel may need more.
MAX_GLIBC = (2, 34)
ELF_MACHINE_AARCH64 = 183
SITE = f"python/lib/{RUNTIME}/site-packages/"
# The oldest botocore (and boto3) the code supports, run by tests/deploy/test_runtime_sdk.py: the first release
# that declares Python 3.13 (its wheel's classifiers), so no python3.13 runtime carries an older one. The layer
# ships the pinned SDK (requirements.txt); this floor covers a function that imports the runtime's copy anyway.
OLDEST_BOTOCORE = "1.35.36"
# The SDK the layer must carry: boto3 and botocore, at the versions requirements.txt pins (the tests' versions).
SDK = ("boto3", "botocore")
# A fixed timestamp: the same requirements give the same zip, so CloudFormation sees no change.
ZIP_TIME = (2020, 1, 1, 0, 0, 0)

_MANYLINUX = re.compile(r"manylinux_(\d+)_(\d+)_(\w+)")
_LEGACY = {"manylinux1": (2, 5), "manylinux2010": (2, 12), "manylinux2014": (2, 17)}


def pip_command(requirements: Path, target: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "pip",
        "install",
        "--quiet",
        "--no-compile",
        "--disable-pip-version-check",
        "--target",
        str(target),
        "--platform",
        PIP_PLATFORM,
        "--python-version",
        ".".join(map(str, PYTHON_VERSION)),
        "--implementation",
        "cp",
        "--only-binary=:all:",
        "-r",
        str(requirements),
    ]


def uv_command(uv: Path, requirements: Path, target: Path) -> list[str]:
    """The same install as pip_command's, by uv: the target's binary wheels only, no bytecode."""
    return [
        str(uv),
        "pip",
        "install",
        "--quiet",
        "--no-compile",
        "--target",
        str(target),
        "--python-platform",
        f"{PIP_PLATFORM.removeprefix('manylinux2014_')}-manylinux2014",
        "--python-version",
        ".".join(map(str, PYTHON_VERSION)),
        "--only-binary",
        ":all:",
        "-r",
        str(requirements),
    ]


def install_command(requirements: Path, target: Path) -> list[str]:
    uv = Path(sys.executable).parent / "uv"
    return uv_command(uv, requirements, target) if uv.is_file() else pip_command(requirements, target)


def build(requirements: Path, out_zip: Path, work: Path) -> int:
    """Installs the target's wheels into `work` and zips them under python/lib/python3.13/site-packages."""
    shutil.rmtree(work, ignore_errors=True)
    site = work / SITE
    site.mkdir(parents=True)
    subprocess.run(install_command(requirements, site), check=True)
    shutil.rmtree(site / "bin", ignore_errors=True)  # console scripts: nothing in Lambda runs them
    files = sorted(p for p in work.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    with zipfile.ZipFile(out_zip, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in files:
            info = zipfile.ZipInfo(path.relative_to(work).as_posix(), ZIP_TIME)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, path.read_bytes())
    return len(files)


def _platform_fits(platform: str) -> bool:
    if not platform.endswith("_aarch64"):
        return False
    match = _MANYLINUX.fullmatch(platform)
    if match:
        glibc = (int(match.group(1)), int(match.group(2)))
    else:
        legacy = platform.removesuffix("_aarch64")
        if legacy not in _LEGACY:
            return False  # musllinux, macOS, Windows: not Lambda's glibc Linux
        glibc = _LEGACY[legacy]
    return glibc <= MAX_GLIBC


def tag_fits(tag: str) -> bool:
    """Whether a wheel tag (`cp313-cp313-manylinux_2_17_aarch64`) loads on the target runtime."""
    try:
        python, abi, platform = tag.split("-")
    except ValueError:
        return False
    if platform == "any":
        return abi == "none" and all(p.startswith("py3") or p == "py2" for p in python.split("."))
    if not _platform_fits(platform):
        return False
    target = "cp{}{}".format(*PYTHON_VERSION)
    if abi == "abi3":  # the stable ABI: any CPython at least as new as the tag's
        versions = [int(p[3:]) for p in python.split(".") if re.fullmatch(r"cp3\d+", p)]
        return bool(versions) and min(versions) <= PYTHON_VERSION[1]
    return python == target and abi == target


def wheel_problems(layer_zip: Path) -> list[str]:
    """Everything in the layer that would not load on RUNTIME/ARCHITECTURE; empty when it all fits."""
    problems: list[str] = []
    with zipfile.ZipFile(layer_zip) as archive:
        names = archive.namelist()
        wheels = [n for n in names if n.endswith(".dist-info/WHEEL")]
        if not wheels:
            problems.append("no installed distribution (*.dist-info/WHEEL) in the layer")
        for name in names:
            if not name.startswith(SITE):
                problems.append(f"{name}: outside {SITE}")
        for name in wheels:
            fields = [line.partition(":") for line in archive.read(name).decode().splitlines()]
            tags = [value.strip() for key, _, value in fields if key == "Tag"]
            bad = [tag for tag in tags if not tag_fits(tag)]
            if not tags or bad:
                problems.append(f"{name}: tags {bad or 'missing'} do not fit {RUNTIME} on {ARCHITECTURE}")
        for name in names:
            if not re.search(r"\.so(\.\d+)*$", name):
                continue
            head = archive.read(name)[:20]
            machine = int.from_bytes(head[18:20], "little") if head[:4] == b"\x7fELF" else None
            if machine != ELF_MACHINE_AARCH64:
                problems.append(f"{name}: ELF machine {machine}, not aarch64 ({ELF_MACHINE_AARCH64})")
            suffix = re.search(r"\.(cpython-\d+-[\w-]+|abi3)\.so$", name)
            expected = "cpython-{}{}-aarch64-linux-gnu".format(*PYTHON_VERSION)
            if suffix and suffix.group(1) not in (expected, "abi3"):
                problems.append(f"{name}: built for {suffix.group(1)}, not {expected}")
    return problems


def pinned_versions(requirements: Path, names: tuple[str, ...] = SDK) -> dict[str, str]:
    """`name==version` pins of `names` in a requirements file (comments and other lines skipped)."""
    pins: dict[str, str] = {}
    for line in requirements.read_text().splitlines():
        name, sep, version = line.split("#")[0].strip().partition("==")
        if sep and name.strip().lower() in names:
            pins[name.strip().lower()] = version.strip()
    return pins


def sdk_problems(layer_zip: Path, requirements: Path) -> list[str]:
    """The layer must carry boto3 and botocore at requirements.txt's pins: the runtime's copy is never used."""
    pins = pinned_versions(requirements)
    problems = [f"{name} is not pinned in {requirements.name}" for name in SDK if name not in pins]
    with zipfile.ZipFile(layer_zip) as archive:
        names = set(archive.namelist())
    for name, version in pins.items():
        if f"{SITE}{name}-{version}.dist-info/METADATA" not in names or f"{SITE}{name}/__init__.py" not in names:
            problems.append(f"the layer does not carry {name} {version} (requirements.txt's pin)")
    return problems


def main(argv: list[str]) -> int:
    if len(argv) == 5 and argv[1] == "build":
        count = build(Path(argv[2]), Path(argv[3]), Path(argv[4]))
        print(f"layer: {count} files for {RUNTIME} on {ARCHITECTURE}")
        argv = [argv[0], "check", argv[3]]
    if len(argv) == 4 and argv[1] == "check-sdk":
        problems = sdk_problems(Path(argv[2]), Path(argv[3]))
        for problem in problems:
            print(problem, file=sys.stderr)
        return 1 if problems else 0
    if len(argv) == 3 and argv[1] == "check":
        problems = wheel_problems(Path(argv[2]))
        for problem in problems:
            print(problem, file=sys.stderr)
        return 1 if problems else 0
    print(
        "usage: layer.py build REQUIREMENTS OUT.zip WORKDIR | layer.py check LAYER.zip | layer.py check-sdk LAYER.zip REQUIREMENTS",
        file=sys.stderr,
    )
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
