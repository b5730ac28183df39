import pytest

from harness.engines.versions import parse_spec, version_from_pin
from harness.errors import UsageError


@pytest.mark.parametrize(
    "pin, version",
    [
        ("v0.5.18-cu130-runtime", "0.5.18"),
        ("lmsysorg/sglang:v0.5.18-cu130", "0.5.18"),
        ("0.5.18", "0.5.18"),
        ("sglang==0.5.22", "0.5.22"),
        ("lmsysorg/sglang:v0.5.15.post1-cu126", "0.5.15.post1"),
        ("docker.io/lmsysorg/sglang:v0.5.11", "0.5.11"),
        ("latest", None),
        ("lmsysorg/sglang:latest", None),
        ("lmsysorg/sglang@sha256:0123abcd", None),
        ("sglang>=0.5.18", None),
        ("1.2.3.4", None),
        ("", None),
    ],
)
def test_version_from_pin(pin, version):
    assert version_from_pin(pin) == version


def test_parse_spec_accepts_pin_values():
    assert parse_spec("sglang==0.5.18") == ("sglang", "0.5.18")
    assert parse_spec("sglang==v0.5.18-cu130-runtime") == ("sglang", "0.5.18")


@pytest.mark.parametrize("spec", ["sglang", "sglang>=0.5.18", "vllm==0.6.0", "sglang==latest"])
def test_parse_spec_rejects(spec):
    with pytest.raises(UsageError):
        parse_spec(spec)
