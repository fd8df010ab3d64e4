"""Installed without an extra, a feature that needs it fails with the
project's own error naming the extra to install, not a bare import error.
Each case runs in a fresh interpreter with the module blocked, since this
one has every extra imported already."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.support import REPO

PRELUDE = """
import sys
for name in {blocked!r}:
    sys.modules[name] = None  # what an uninstalled package looks like to import
import hudi_ray
from hudi_ray.core.exceptions import HudiMissingExtraError, HudiUnsupportedError
"""

CHECK = """
try:
    {call}
except HudiMissingExtraError as exc:
    assert isinstance(exc, HudiUnsupportedError) and isinstance(exc, ModuleNotFoundError)
    print(type(exc).__name__, exc.name, str(exc), sep="|")
else:
    raise SystemExit("no error")
"""


def _python(blocked: list[str], code: str) -> str:
    """What ``code`` prints, run with ``blocked`` modules uninstalled."""
    done = subprocess.run(
        [sys.executable, "-c", PRELUDE.format(blocked=blocked) + code],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def _run(blocked: list[str], call: str) -> list[str]:
    return _python(blocked, CHECK.format(call=call)).split("|")


def test_read_hudi_without_ray() -> None:
    kind, module, message = _run(["ray", "ray.data"], "hudi_ray.read_hudi")
    assert kind == "HudiMissingExtraError"
    assert module == "ray.data"
    assert message == "hudi_ray.read_hudi needs Ray Data (ray.data is not installed): pip install 'hudi-ray[ray]'"


def test_read_hudi_import_without_ray() -> None:
    _, _, message = _run(["ray", "ray.data"], "from hudi_ray.datasource import read_hudi")
    assert message.endswith("pip install 'hudi-ray[ray]'")


@pytest.mark.parametrize("blocked", ["ray", "raydp"])
def test_spark_on_ray_without_its_extra(blocked: str) -> None:
    kind, module, message = _run([blocked], "from hudi_ray.spark import init_spark; init_spark()")
    assert (kind, module) == ("HudiMissingExtraError", blocked)
    assert message == f"Spark on Ray (RayDP) needs {blocked}, which is not installed: pip install 'hudi-ray[spark]'"


def test_read_hudi_spark_without_ray() -> None:
    """A plain PySpark session needs neither Ray nor RayDP."""
    assert _python(["ray", "raydp"], "from hudi_ray.spark import read_hudi_spark\nprint('imported')") == "imported"


def test_spark_without_pyspark() -> None:
    kind, module, message = _run(["pyspark"], "import hudi_ray.spark")
    assert (kind, module) == ("HudiMissingExtraError", "pyspark")
    assert message.startswith("Reading Hudi tables into Spark needs pyspark, which is not installed")


def test_s3_without_s3fs() -> None:
    _, module, message = _run(["s3fs"], "hudi_ray.HudiTableBuilder.from_base_uri('s3://bucket/trips').build()")
    assert module == "s3fs"
    assert message == "Reading s3://bucket/trips needs s3fs, which is not installed: pip install 'hudi-ray[s3]'"


def test_cli_names_the_extra_in_one_line(tmp_path) -> None:
    code = (
        "import sys; sys.modules['s3fs'] = None\n"
        "from hudi_ray.cli import main\n"
        "raise SystemExit(main(['info', 's3://bucket/trips']))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert done.returncode == 1
    assert done.stderr == (
        "hudi-ray: error: Reading s3://bucket/trips needs s3fs, which is not installed: pip install 'hudi-ray[s3]'\n"
    )
