#!/usr/bin/env bash
# `make package`: the deployable SAM template and zips in build/package, built offline, then linted.
#
# 1. copies the app (app.py, chalicelib/ without bytecode, requirements.txt, .chalice/ config and
#    policy files) into build/stage, so nothing stray from the work tree ends up in the zip;
# 2. composes infra/tables.json + infra/stack.json into build/merge-template.json;
# 3. runs `chalice package --stage dev --merge-template ...` into build/package (sam.json and
#    deployment.zip with the app; chalice gets no requirements.txt, so it packages no dependency);
# 3b. builds layer-deployment.zip from requirements.txt with uv (pip where uv is missing) for the Lambda
#    target (python3.13 on arm64, infra/layer.py) and fails if any compiled file in it does not fit that target;
# 4. refuses an app zip that carries boto3/botocore or chalice's local server, prints the zip sizes (the layer
#    carries boto3/botocore at requirements.txt's pins, checked in step 6: the runtime's own copy is never used);
# 5. runs cfn-lint on sam.json, expands it with AWS's SAM translator (as CloudFormation will) into
#    build/lint/cloudformation.json and runs cfn-lint on that too: any error, warning or informational
#    finding fails;
# 7. runs checkov on the expansion and parliament on every permissions policy in it
#    (infra/security_checks.py, tools in .venv-checks from requirements-checks.txt): a finding not
#    listed with its reason in infra/check_skips.json fails, and so does a listed one no longer found.
#
# Nothing here reaches AWS: the region and credentials are dummies, no profile or config file is
# read, and every AWS endpoint points at a closed local port. chalice does fetch the Lambda-platform
# wheels of requirements.txt from the package index (PyPI), as pip would.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# The tools (chalice, cfn-lint, the SAM translator, checkov) keep their bytecode in their venvs, even where
# PYTHONDONTWRITEBYTECODE is set (as on these machines): recompiled in memory on every build, they doubled its
# time (23 s -> 43 s for the CloudFormation test's build). chalice package imports the staged app, where no
# __pycache__ may appear (step 4 refuses a zip that carries one): its bytecode goes to $BUILD/pycache instead.
unset PYTHONDONTWRITEBYTECODE
cd "$ROOT"

PY="${PY:-$ROOT/.venv/bin/python}"
BIN="$(dirname "$PY")"
# PACKAGE_BUILD_DIR: tests build elsewhere, so they never race `make package` or clobber its output.
mkdir -p "${PACKAGE_BUILD_DIR:-$ROOT/build}"
BUILD="$(cd "${PACKAGE_BUILD_DIR:-$ROOT/build}" && pwd)"
STAGE="$BUILD/stage"
OUT="$BUILD/package"
MERGE="$BUILD/merge-template.json"
LINT="$BUILD/lint"

# The packaging checks' tools (requirements-package.txt), if this venv was made without them.
if ! "$PY" -c "import cfnlint, samtranslator" 2>/dev/null; then
  "$PY" -m pip install -q -r requirements-package.txt
fi

# ---- offline AWS environment ----------------------------------------------------------------
export AWS_DEFAULT_REGION=us-east-1
export AWS_REGION=us-east-1
export AWS_ACCESS_KEY_ID=offline-packaging-only
export AWS_SECRET_ACCESS_KEY=offline-packaging-only
unset AWS_SESSION_TOKEN AWS_SECURITY_TOKEN AWS_PROFILE AWS_DEFAULT_PROFILE
export AWS_CONFIG_FILE=/dev/null
export AWS_SHARED_CREDENTIALS_FILE=/dev/null
export AWS_EC2_METADATA_DISABLED=true
export AWS_ENDPOINT_URL=http://127.0.0.1:9  # closed port: an accidental AWS call fails here, fast

# ---- 1. stage the app -----------------------------------------------------------------------
# build/stage/.chalice/deployments is chalice's cache of the dependency layer: kept between runs.
mkdir -p "$STAGE/.chalice"
rm -rf "$STAGE/app.py" "$STAGE/chalicelib" "$STAGE/requirements.txt" "$STAGE"/.chalice/*.json
cp app.py "$STAGE/"  # requirements.txt stays out: chalice would fetch them for this interpreter (3.11, x86_64)
tar --exclude='__pycache__' --exclude='*.pyc' -cf - chalicelib | tar -xf - -C "$STAGE"
cp .chalice/config.json .chalice/policy-*.json "$STAGE/.chalice/"

# ---- 2. the merge template --------------------------------------------------------------------
"$PY" infra/compose_template.py "$MERGE"

# ---- 3. chalice package -----------------------------------------------------------------------
rm -rf "$OUT"
(cd "$STAGE" && PYTHONPYCACHEPREFIX="$BUILD/pycache" "$BIN/chalice" package --stage dev --merge-template "$MERGE" "$OUT")

# ---- 3b. the dependency layer, for the Lambda's runtime and architecture, not this machine's ----
"$PY" infra/layer.py build requirements.txt "$OUT/layer-deployment.zip" "$BUILD/layer"

# ---- 4. what the zips carry -------------------------------------------------------------------
"$PY" - "$OUT" <<'PY'
import sys
import zipfile
from pathlib import Path

out = Path(sys.argv[1])
# The app zip carries the app alone; the SDK lives in the layer (checked in step 6), at requirements.txt's pins.
forbidden = {"deployment.zip": ("boto3/", "botocore/", "s3transfer/", "chalice/local.py", "chalice/cli/")}
total = 0
for archive in sorted(out.glob("*.zip")):
    names = zipfile.ZipFile(archive).namelist()
    banned = forbidden.get(archive.name, ())
    bad = sorted({n.split("/")[0] for n in names if banned and n.startswith(banned)} | {n for n in names if "__pycache__" in n})
    if bad:
        sys.exit(f"{archive.name} must not carry: {', '.join(bad[:10])}")
    size = archive.stat().st_size
    total += size
    print(f"{archive.name}: {size / 1_000_000:.2f} MB ({len(names)} files)")
print(f"total: {total / 1_000_000:.2f} MB")
PY

# ---- 5. cfn-lint, on the SAM template and on its expansion -------------------------------------
# No rule is ignored: zero errors, warnings and informational findings (see docs/deploy.md).
rm -rf "$LINT" && mkdir -p "$LINT"
"$PY" infra/sam_transform.py "$OUT/sam.json" "$LINT/cloudformation.json"
# Its findings as JSON in build/lint/cfn-lint.json (`[]` when none), which the package tests read.
if ! "$BIN/cfn-lint" --format json --non-zero-exit-code informational -- "$OUT/sam.json" "$LINT/cloudformation.json" \
  > "$LINT/cfn-lint.json"; then
  cat "$LINT/cfn-lint.json" >&2
  echo "package: cfn-lint found the problems above in $OUT/sam.json or its SAM expansion" >&2
  exit 1
fi
echo "package: $OUT/sam.json and its SAM expansion pass cfn-lint"

# ---- 6. what API Gateway refuses at import, and the wheels' runtime ------------------------------
# Neither cfn-lint nor the SAM translator (nor moto) knows API Gateway's import rules (one variable
# path part per parent, path part characters, greedy last, the 29 s integration timeout): a template
# that breaks one deploys nothing. infra/apigateway_rules.py checks them, from AWS's documentation.
"$PY" infra/apigateway_rules.py "$OUT/sam.json" "$LINT/cloudformation.json"
"$PY" infra/layer.py check "$OUT/layer-deployment.zip"
"$PY" infra/layer.py check-sdk "$OUT/layer-deployment.zip" requirements.txt
echo "package: the API passes API Gateway's import rules; the layer's wheels fit $("$PY" -c 'import sys; sys.path.insert(0, "infra"); import layer; print(layer.RUNTIME, "on", layer.ARCHITECTURE)')"

# ---- 7. checkov and parliament, from their own venv ---------------------------------------------
# CHECKS_PYTHON: the checks venv's interpreter (python3 on PATH); not .venv's (the Makefile's PYTHON): checkov's pins
# ask for CPython 3.11.5 or newer (soupsieve), and Debian 12's python3.11, which .venv prefers, is 3.11.2.
CHECKS_VENV="${CHECKS_VENV:-$ROOT/.venv-checks}"
# Under a lock: two package builds at once (test workers) must not remove the venv the other is making.
(
  flock 9
  if ! cmp -s requirements-checks.txt "$CHECKS_VENV/.installed" 2>/dev/null; then
    rm -rf "$CHECKS_VENV"
    # uv (the one `make install` put in .venv, pinned there) fills it in ~1 s; pip, where uv is missing, in ~35 s.
    # No --compile-bytecode: checkov imports a fraction of what the venv holds and writes the bytecode of that
    # on its first run (1 + 8 CPU-s, against 9 + 4 compiling everything; docs/notes.md).
    if [ -x "$BIN/uv" ]; then
      "$BIN/uv" venv -q --python "${CHECKS_PYTHON:-python3}" "$CHECKS_VENV"
      "$BIN/uv" pip install -q --python "$CHECKS_VENV/bin/python" -r requirements-checks.txt
    else
      "${CHECKS_PYTHON:-python3}" -m venv "$CHECKS_VENV"
      "$CHECKS_VENV/bin/python" -m pip install -q -r requirements-checks.txt
    fi
    cp requirements-checks.txt "$CHECKS_VENV/.installed"
  fi
  # The JSONPath parse tables checkov would rebuild for every path it reads (8 of its 10 CPU-s); once per venv.
  "$CHECKS_VENV/bin/python" infra/checkov_parse_tables.py
) 9>"$CHECKS_VENV.lock"
"$CHECKS_VENV/bin/python" infra/security_checks.py "$LINT/cloudformation.json" infra/check_skips.json
