"""What API Gateway refuses at import and what the Lambda runtime cannot load: checks the offline tools lack.

cfn-lint, the SAM translator and moto all accepted the template of commit 854b17a, which API Gateway
refuses whole; its API is kept in tests/events/template-854b17a.json and must stay refused here.
"""

from __future__ import annotations

import json
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

from infra import apigateway_rules, layer
from tests.support.package import Package

ROOT = Path(__file__).resolve().parents[2]
OLD_TEMPLATE = ROOT / "tests" / "events" / "template-854b17a.json"
LAMBDA_URI = {
    "Fn::Sub": "arn:${AWS::Partition}:apigateway:${AWS::Region}:lambda:path/2015-03-31/functions/${Fn.Arn}/invocations"
}
FUNCTIONS = ("APIHandler", "UserToken", "HandleEventsStream")


def _template(paths: dict[str, Any], timeout: int = 20) -> dict[str, Any]:
    return {
        "Resources": {
            "Api": {
                "Type": "AWS::Serverless::Api",
                "Properties": {"StageName": "api", "DefinitionBody": {"paths": paths}},
            },
            "Fn": {"Type": "AWS::Serverless::Function", "Properties": {"Timeout": timeout}},
        }
    }


def _get(**integration: Any) -> dict[str, Any]:
    return {"get": {"x-amazon-apigateway-integration": {"uri": LAMBDA_URI, **integration}}}


# ---- the API -------------------------------------------------------------------------------------


def test_the_packaged_api_and_its_expansion_pass_api_gateways_import_rules(package: Package) -> None:
    assert apigateway_rules.template_problems(package.template) == []
    assert apigateway_rules.template_problems(package.expanded) == []
    assert "passes API Gateway's import rules" in package.log


def test_the_template_of_854b17a_is_refused_for_its_sibling_variables_and_its_30_s_function() -> None:
    problems = apigateway_rules.template_problems(json.loads(OLD_TEMPLATE.read_text()))
    assert (
        "RestAPI /v1/memory: only one variable path part is allowed per parent, found {entry_id}, {proposal_id}"
        in problems
    )
    assert any("APIHandler may run 30 s" in p for p in problems)


def test_two_different_variables_under_one_parent_are_refused_and_one_shared_name_is_not() -> None:
    same = {"/v1/memory/{id}": _get(), "/v1/memory/{id}/accept": _get(), "/v1/memory/journal": _get()}
    assert apigateway_rules.template_problems(_template(same)) == []
    different = {"/v1/memory/{entry_id}": _get(), "/v1/memory/{proposal_id}/accept": _get()}
    assert apigateway_rules.template_problems(_template(different)) == [
        "Api /v1/memory: only one variable path part is allowed per parent, found {entry_id}, {proposal_id}"
    ]
    # the same names under different parents are fine
    apart = {"/a/{x}": _get(), "/b/{y}": _get(), "/a/{x}/c/{z}": _get()}
    assert apigateway_rules.template_problems(_template(apart)) == []


@pytest.mark.parametrize("path", ["/v1/memory:batch", "/v1/a.b_c-d", "/{proxy+}", "/files/{path+}"])
def test_path_parts_api_gateway_accepts(path: str) -> None:
    assert apigateway_rules.template_problems(_template({path: _get()})) == []


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/v1/memory/{id}x", "may only use"),
        ("/v1/me mory", "may only use"),
        ("/v1/$memory", "may only use"),
        ("/v1/{a{b}}", "may only use"),
        ("/v1//memory", "no empty part"),
        ("/v1/memory/", "no empty part"),
        ("v1/memory", "starts with /"),
        ("/files/{path+}/meta", "greedy path part {path+} must be the last one"),
    ],
)
def test_path_parts_api_gateway_refuses(path: str, expected: str) -> None:
    problems = apigateway_rules.template_problems(_template({path: _get()}))
    assert len(problems) == 1 and expected in problems[0], problems


def test_methods_must_be_ones_api_gateway_has() -> None:
    ok = {
        "/a": {
            m: {}
            for m in (
                "get",
                "post",
                "put",
                "patch",
                "delete",
                "head",
                "options",
                "x-amazon-apigateway-any-method",
                "parameters",
            )
        }
    }
    assert apigateway_rules.template_problems(_template(ok)) == []
    for wrong in ("trace", "connect", "any", "GET"):
        problems = apigateway_rules.template_problems(_template({"/a": {wrong: {}}}))
        assert len(problems) == 1 and repr(wrong) in problems[0], (wrong, problems)


def test_integration_timeout_stays_within_29_s_and_above_the_functions_own() -> None:
    assert apigateway_rules.template_problems(_template({"/a": _get()}, timeout=28)) == []
    assert apigateway_rules.template_problems(_template({"/a": _get(timeoutInMillis=29_000)}, timeout=28)) == []
    over = apigateway_rules.template_problems(_template({"/a": _get(timeoutInMillis=30_000)}, timeout=5))
    assert over == ["Api GET /a: integration timeout 30000 ms is outside 50..29000"]
    for seconds in (29, 30, 900):
        slow = apigateway_rules.template_problems(_template({"/a": _get()}, timeout=seconds))
        assert slow == [f"Api GET /a: Fn may run {seconds} s, not under the 29000 ms integration timeout"]
    shorter = apigateway_rules.template_problems(_template({"/a": _get(timeoutInMillis=5000)}, timeout=10))
    assert shorter == ["Api GET /a: Fn may run 10 s, not under the 5000 ms integration timeout"]


def test_stage_names_and_the_resource_quota() -> None:
    bad_stage = _template({"/a": _get()})
    bad_stage["Resources"]["Api"]["Properties"]["StageName"] = "my stage"
    assert apigateway_rules.template_problems(bad_stage) == [
        "Api: stage name 'my stage' may only use alphanumerics, - and _ (1..128)"
    ]
    many = {f"/r{i}": _get() for i in range(300)}
    assert apigateway_rules.template_problems(_template(many)) == [
        "Api 301 resources: more than the 300 an API may have"
    ]
    assert apigateway_rules.template_problems({"Resources": {}}) == [
        "no REST API with an inline OpenAPI body in the template"
    ]


def test_the_deployed_api_function_stops_before_the_gateway_gives_up(package: Package) -> None:
    seconds = package.props("APIHandler")["Timeout"]
    assert isinstance(seconds, int) and seconds * 1000 < apigateway_rules.MAX_TIMEOUT_MS


# ---- the runtime and the layer's wheels -------------------------------------------------------------


@pytest.mark.parametrize("function", FUNCTIONS)
def test_every_function_runs_python_3_13_on_arm64_with_the_one_dependency_layer(
    package: Package, function: str
) -> None:
    props = package.props(function)
    assert props["Runtime"] == layer.RUNTIME == "python3.13"
    assert props["Architectures"] == [layer.ARCHITECTURE] == ["arm64"]
    assert props["Layers"] == [{"Ref": "DependenciesLayer"}]
    deps = package.props("DependenciesLayer")
    assert deps["CompatibleRuntimes"] == [layer.RUNTIME] and deps["CompatibleArchitectures"] == [layer.ARCHITECTURE]
    assert "ManagedLayer" not in package.template["Resources"]  # chalice's own (3.11/x86_64) layer is gone


def test_every_compiled_wheel_in_the_layer_matches_the_runtime_and_architecture(package: Package) -> None:
    layer_zip = package.out / "layer-deployment.zip"
    assert layer.wheel_problems(layer_zip) == []
    with zipfile.ZipFile(layer_zip) as archive:
        names = archive.namelist()
        wheels = {n: archive.read(n).decode() for n in names if n.endswith(".dist-info/WHEEL")}
    compiled = {n: text for n, text in wheels.items() if "Root-Is-Purelib: false" in text}
    assert compiled, "the layer should hold at least one compiled wheel (pydantic-core) for this test to mean anything"
    for name, text in compiled.items():
        assert "aarch64" in text and ("cp313-cp313" in text or "abi3" in text), name
    shared = [n for n in names if n.endswith(".so")]
    assert shared and all(".cpython-313-aarch64-linux-gnu.so" in n or n.endswith(".abi3.so") for n in shared), shared
    assert not any("__pycache__" in n or n.startswith(layer.SITE + "bin/") for n in names)


def _fake_layer(tmp_path: Path, tag: str, so_name: str, machine: int) -> Path:
    path = tmp_path / f"{tag}.zip"
    elf = b"\x7fELF" + bytes(14) + machine.to_bytes(2, "little") + bytes(40)
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(
            f"{layer.SITE}fast-1.0.dist-info/WHEEL", f"Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: {tag}\n"
        )
        archive.writestr(f"{layer.SITE}fast/{so_name}", elf)
    return path


def test_the_wheel_check_accepts_the_target_and_refuses_every_other_platform(tmp_path: Path) -> None:
    fits = [
        ("cp313-cp313-manylinux_2_17_aarch64", "_x.cpython-313-aarch64-linux-gnu.so"),
        ("cp311-abi3-manylinux_2_28_aarch64", "_x.abi3.so"),
        ("cp313-cp313-manylinux2014_aarch64", "_x.cpython-313-aarch64-linux-gnu.so"),
    ]
    for tag, so_name in fits:
        assert layer.wheel_problems(_fake_layer(tmp_path, tag, so_name, layer.ELF_MACHINE_AARCH64)) == [], tag
    refused = [
        ("cp311-cp311-manylinux_2_17_x86_64", "_x.cpython-311-x86_64-linux-gnu.so", 62),
        ("cp313-cp313-manylinux_2_17_x86_64", "_x.cpython-313-x86_64-linux-gnu.so", 62),
        ("cp312-cp312-manylinux_2_17_aarch64", "_x.cpython-312-aarch64-linux-gnu.so", 183),
        ("cp313-cp313-musllinux_1_2_aarch64", "_x.cpython-313-aarch64-linux-gnu.so", 183),
        ("cp313-cp313-manylinux_2_39_aarch64", "_x.cpython-313-aarch64-linux-gnu.so", 183),
        ("cp314-abi3-manylinux_2_28_aarch64", "_x.abi3.so", 183),
        ("cp313-cp313-macosx_11_0_arm64", "_x.cpython-313-darwin.so", 183),
    ]
    for tag, so_name, machine in refused:
        assert layer.wheel_problems(_fake_layer(tmp_path, tag, so_name, machine)), tag
    # a right tag over an x86-64 binary is caught by the ELF header
    wrong_binary = layer.wheel_problems(
        _fake_layer(tmp_path, "cp313-cp313-manylinux_2_17_aarch64", "_x.cpython-313-aarch64-linux-gnu.so", 62)
    )
    assert wrong_binary == [f"{layer.SITE}fast/_x.cpython-313-aarch64-linux-gnu.so: ELF machine 62, not aarch64 (183)"]


def test_chalices_own_311_layer_of_854b17a_would_be_refused(tmp_path: Path) -> None:
    old = tmp_path / "old.zip"
    with zipfile.ZipFile(old, "w") as archive:  # what chalice built before: its site-packages and tags
        site = "python/lib/python3.11/site-packages/"
        archive.writestr(
            site + "pydantic_core-2.46.4.dist-info/WHEEL",
            "Root-Is-Purelib: false\nTag: cp311-cp311-manylinux_2_17_x86_64\nTag: cp311-cp311-manylinux2014_x86_64\n",
        )
    problems = layer.wheel_problems(old)
    assert any("outside python/lib/python3.13/site-packages/" in p for p in problems)
    assert any("do not fit python3.13 on arm64" in p for p in problems)


def test_the_pip_command_asks_for_the_targets_binary_wheels_only() -> None:
    command = layer.pip_command(Path("requirements.txt"), Path("site"))
    joined = " ".join(command)
    for flag in (
        "--platform manylinux2014_aarch64",
        "--python-version 3.13",
        "--implementation cp",
        "--only-binary=:all:",
    ):
        assert flag in joined
    assert command[-2:] == ["-r", "requirements.txt"]


def test_the_uv_command_asks_for_the_same_targets_binary_wheels_only() -> None:
    command = layer.uv_command(Path("uv"), Path("requirements.txt"), Path("site"))
    joined = " ".join(command)
    for flag in (
        "--python-platform aarch64-manylinux2014",
        "--python-version 3.13",
        "--only-binary :all:",
        "--target site",
    ):
        assert flag in joined
    assert command[-2:] == ["-r", "requirements.txt"]


def test_the_layer_is_installed_by_the_uv_beside_the_interpreter_and_by_pip_without_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    python = tmp_path / "bin" / "python"
    python.parent.mkdir()
    monkeypatch.setattr(sys, "executable", str(python))
    assert layer.install_command(Path("r.txt"), Path("site"))[:3] == [str(python), "-m", "pip"]
    (tmp_path / "bin" / "uv").write_text("")
    assert layer.install_command(Path("r.txt"), Path("site"))[:3] == [str(tmp_path / "bin" / "uv"), "pip", "install"]
