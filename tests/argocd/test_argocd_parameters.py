"""Reading a plugin request from the variables Argo CD's repo-server sets."""
from __future__ import annotations

import json

import pytest

from compiler.argocd.parameters import Request, read_request
from compiler.diagnostics.problems import KrcError


def test_json_parameters_win_over_param_and_plugin_env():
    environ = {"ARGOCD_APP_PARAMETERS": json.dumps([{"name": "environment", "string": "dev"},
                                                    {"name": "values-files", "array": ["a.yaml"]}]),
               "PARAM_ENVIRONMENT": "prod", "ARGOCD_ENV_KRC_ENVIRONMENT": "staging", "PARAM_CRDS": "only"}
    assert read_request(environ) == Request("dev", "only", "exclude", "")


def test_options_win_and_defaults_apply_when_nothing_is_sent():
    assert read_request({}) == Request("", "include", "exclude", "")
    assert read_request({"ARGOCD_ENV_KRC_ENVIRONMENT": "dev", "ARGOCD_ENV_KRC_CRDS": "exclude"}) == Request(
        "dev", "exclude")
    assert read_request({"PARAM_ENVIRONMENT": "dev"}, {"environment": "prod", "crds": None}).environment == "prod"
    assert read_request({}).operator == "include"  # a single plugin app deploys the operator chart too
    assert read_request({"PARAM_OPERATOR": "only", "PARAM_CRDS": "exclude"}).operator == "only"
    # an explicitly empty value (Argo CD passes empty env entries since v3.0) falls through to the next source
    assert read_request({"PARAM_ENVIRONMENT": "", "ARGOCD_ENV_KRC_ENVIRONMENT": "dev"}).environment == "dev"


@pytest.mark.parametrize("environ, message", [
    ({"ARGOCD_APP_PARAMETERS": "[{"}, "not valid JSON"),
    ({"ARGOCD_APP_PARAMETERS": '{"name": "environment"}'}, "must be a JSON array"),
    ({"ARGOCD_APP_PARAMETERS": '[{"name": "environment", "array": ["dev"]}]'}, "must be a string parameter"),
    ({"ARGOCD_APP_PARAMETERS": '[{"string": "dev"}]'}, "has no name"),
    ({"PARAM_APPLICATIONS": "all"}, "'applications' is 'all'; use one of: include, exclude, only"),
    ({"PARAM_CRDS": "only", "PARAM_APPLICATIONS": "only"}, "exclude each other"),
    ({"PARAM_OPERATOR": "only", "PARAM_APPLICATIONS": "only"}, "applications=only and operator=only exclude each"),
    ({"PARAM_OPERATOR": "only", "PARAM_CRDS": "only"}, "crds=only and operator=only exclude each other"),
    ({"PARAM_OPERATOR": "helm"}, "'operator' is 'helm'; use one of: include, exclude, only"),
])
def test_bad_requests_are_input_errors(environ, message):
    with pytest.raises(KrcError, match=message.replace("(", r"\(")):
        read_request(environ)
