"""Poetry's own tables read as requirement lines (envs/poetry.py): poetry 1.8's pyproject.toml had
no [project] table, so the tests section installed pytest alone and every test of a backport
failed to import (``No module named 'httpretty'``)."""

from __future__ import annotations

import pytest
from packaging.specifiers import SpecifierSet

from harness.envs.poetry import specifier
from harness.envs.spec import read_spec

POETRY_18 = b"""[tool.poetry]
name = "poetry"
version = "1.8.5"

[tool.poetry.dependencies]
python = "^3.8"
poetry-core = "1.9.1"
cachecontrol = { version = "^0.14.0", extras = ["filecache"] }
importlib-metadata = { version = ">=4.4", python = "<3.10" }
tomli = { version = "^2", python = "<3.11.2" }
platformdirs = ">=3.0.0,<5"
xattr = { version = "^1.0.0", markers = "sys_platform == 'darwin'" }
fancy = { version = "^2", optional = true }
forked = { git = "https://example.invalid/forked.git" }

[tool.poetry.group.dev.dependencies]
pre-commit = ">=2.10"

[tool.poetry.group.test.dependencies]
pytest = "^8.0"
pytest-xdist = { version = "^3.1", extras = ["psutil"] }

[tool.poetry.group.typing.dependencies]
mypy = ">=1.8.0"

[build-system]
requires = ["poetry-core>=1.5.0"]
build-backend = "poetry.core.masonry.api"
"""


@pytest.mark.parametrize(
    ("constraint", "inside", "outside"),
    [
        ("^1.2.3", ["1.2.3", "1.9"], ["1.2.2", "2.0.0"]),
        ("^0.2.3", ["0.2.3", "0.2.9"], ["0.3.0"]),
        ("^0.0.3", ["0.0.3"], ["0.0.4"]),
        ("^0", ["0.9"], ["1.0"]),
        ("~1.2.3", ["1.2.3", "1.2.9"], ["1.3.0"]),
        ("~1.2", ["1.2.0", "1.2.7"], ["1.3"]),
        ("~1", ["1.9"], ["2.0"]),
        ("~=1.2", ["1.9"], ["2.0"]),
        ("1.9.1", ["1.9.1"], ["1.9.2"]),
        (">= 1.2 < 2.0", ["1.5"], ["2.0", "1.1"]),
        (">=3.0.0,<5", ["4.9"], ["5.0"]),
        ("1.2.*", ["1.2.7"], ["1.3"]),
        ("*", ["0.1", "99"], []),
        ("^1.0 || ^2.0", ["1.5", "2.5", "3.0"], []),  # (no PEP 440 form: any version)
    ],
)
def test_poetrys_constraints_read_as_poetry_reads_them(constraint, inside, outside):
    spec = SpecifierSet(specifier(constraint))
    assert all(spec.contains(v, prereleases=True) for v in inside), spec
    assert not any(spec.contains(v, prereleases=True) for v in outside), spec


def test_poetrys_tables_are_the_projects_requirements_and_its_test_groups():
    spec = read_spec({"pyproject.toml": POETRY_18}.get, ["pyproject.toml"])
    assert (
        spec.requirements
        == [
            "poetry-core==1.9.1",
            "cachecontrol[filecache]>=0.14.0,<0.15.0",
            'importlib-metadata>=4.4 ; python_version < "3.10"',
            'tomli>=2,<3 ; python_full_version < "3.11.2"',
            "platformdirs>=3.0.0,<5",
            "xattr>=1.0.0,<2.0.0 ; (sys_platform == 'darwin')",
            "pytest>=8.0,<9.0",
            "pytest-xdist[psutil]>=3.1,<4.0",
            "pre-commit>=2.10",
        ]
    )  # python is the interpreter's range; an optional one comes through an extra; typing is no test group
    assert spec.sources == [
        "pyproject.toml [tool.poetry.dependencies]",
        "pyproject.toml [tool.poetry.group.test.dependencies]",
        "pyproject.toml [tool.poetry.group.dev.dependencies]",
    ]
    assert spec.project == "poetry"
    assert spec.dropped == [
        "pyproject.toml [tool.poetry.dependencies]: 'forked' (not a distribution from the package "
        "index)"
    ]
    older = read_spec(
        {
            "pyproject.toml": b'[tool.poetry]\nname = "calc"\n[tool.poetry.dependencies]\n'
            b'python = "^3.8"\ncalc = "*"\n[tool.poetry.dev-dependencies]\nhypothesis = "^6"\n'
        }.get,
        ["pyproject.toml"],
    )
    assert older.requirements == ["hypothesis>=6,<7", "pytest"]  # the project itself never


def test_a_python_range_of_two_parts_holds_every_patch_release():
    """``python = "3.8"`` is 3.8.x as poetry reads it: as ``python_full_version == "3.8"`` the
    dependency was left out on 3.8.10."""
    from packaging.markers import Marker

    spec = read_spec(
        {
            "pyproject.toml": b'[tool.poetry]\nname = "calc"\n[tool.poetry.dependencies]\n'
            b'six = { version = "*", python = "3.8" }\nattrs = { version = "*", python = ">3.8" }\n'
        }.get,
        ["pyproject.toml"],
    )
    six, attrs = (Marker(r.split(";", 1)[1]) for r in spec.requirements[:2])
    at = {"python_version": "3.8", "python_full_version": "3.8.10"}
    assert six.evaluate(at) and not attrs.evaluate(at)
    assert attrs.evaluate({"python_version": "3.9", "python_full_version": "3.9.1"})
