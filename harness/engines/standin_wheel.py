"""Build a STAND-IN as a real wheel, so an offline ``pip install --no-index`` installs it like any other.

The wheel's distribution is named ``harness-standin-<package>`` (never the real one's name, so
``importlib.metadata.version("sglang-kernel")`` still says it is missing) and holds one package,
``<package>/__init__.py`` = ``sgl_kernel_standin.py`` or ``standin_module.py``: every name
resolves to a stub that raises when called. Bytes are deterministic (fixed zip dates), so its sha256 is stable.
"""

from __future__ import annotations

import base64
import hashlib
import zipfile
from pathlib import Path

STANDIN_SOURCE = Path(__file__).with_name("sgl_kernel_standin.py")
STANDIN_VERSION = "0.0.0"
_DATE = (2020, 1, 1, 0, 0, 0)


def _record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def standin_dist(package: str) -> str:
    return f"harness-standin-{package.replace('_', '-')}"


def build_standin_wheel(
    package: str, dest: Path, replaces: str, source: Path = STANDIN_SOURCE
) -> Path:
    """Write ``harness_standin_<package>-0.0.0-py3-none-any.whl`` (``source`` as the package's
    ``__init__.py``) into ``dest``; return its path."""
    dist = standin_dist(package).replace("-", "_")
    info = f"{dist}-{STANDIN_VERSION}.dist-info"
    files = {
        f"{package}/__init__.py": source.read_bytes(),
        f"{info}/METADATA": (
            f"Metadata-Version: 2.1\nName: {standin_dist(package)}\nVersion: {STANDIN_VERSION}\n"
            f"Summary: harness STAND-IN for {replaces} (the {package} package): names resolve, "
            f"calls raise\n"
        ).encode(),
        f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: harness\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = "".join(f"{name},{_record_hash(data)},{len(data)}\n" for name, data in files.items())
    files[f"{info}/RECORD"] = (record + f"{info}/RECORD,,\n").encode()
    path = dest / f"{dist}-{STANDIN_VERSION}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in files.items():
            zf.writestr(zipfile.ZipInfo(name, _DATE), data)
    return path
