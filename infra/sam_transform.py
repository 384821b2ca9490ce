"""Expands the packaged SAM template into plain CloudFormation, offline, with AWS's own SAM translator.

cfn-lint reads SAM resources against loose schemas: an unknown or mistyped property of a DynamoDB
event source passes it. CloudFormation runs this same translator at deploy time, so running it here
catches what the deploy would refuse, and linting its output checks the generated event source
mapping, stage and permissions against CloudFormation's full resource schemas.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

# Stand-ins for the S3 locations `aws cloudformation package` writes in place of the local zips.
PLACEHOLDER_CODE = "s3://placeholder-bucket/deployment.zip"
PLACEHOLDER_LAYER = "s3://placeholder-bucket/layer-deployment.zip"


class _NoManagedPolicies:
    """The template names no managed policy, so the translator never needs to look one up in IAM."""

    def load(self) -> dict[str, str]:
        return {}


def with_s3_locations(template: dict[str, Any]) -> dict[str, Any]:
    """A copy whose code locations are S3 URIs, as the translator requires."""
    copy = json.loads(json.dumps(template))
    for resource in copy.get("Resources", {}).values():
        props = resource.get("Properties", {})
        if resource.get("Type") == "AWS::Serverless::Function":
            props["CodeUri"] = PLACEHOLDER_CODE
        elif resource.get("Type") == "AWS::Serverless::LayerVersion":
            props["ContentUri"] = PLACEHOLDER_LAYER
    return copy


def expand(template: dict[str, Any]) -> dict[str, Any]:
    """The CloudFormation template the SAM transform makes of `template`; raises on what it refuses."""
    from samtranslator.public.exceptions import InvalidDocumentException
    from samtranslator.translator.transform import transform

    try:
        return transform(with_s3_locations(template), {}, _NoManagedPolicies())
    except InvalidDocumentException as exc:
        causes = "; ".join(str(cause) for cause in exc.causes)
        raise SystemExit(f"the SAM transform refuses the template: {causes}") from exc


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print("usage: sam_transform.py SAM.json OUTPUT.json", file=sys.stderr)
        return 2
    expanded = expand(json.loads(Path(argv[1]).read_text()))
    Path(argv[2]).write_text(json.dumps(expanded, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
