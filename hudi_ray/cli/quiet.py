"""Ray and Spark at warning level: what the command line and the main job
print is the answer, not the engines' start-up chatter."""

from __future__ import annotations

import importlib.util
import logging
import os
import tempfile
from pathlib import Path
from types import ModuleType
from typing import TextIO

from hudi_ray.cli.progress import is_terminal

# Spark's driver logging: warnings and errors to stderr. RayDP points the
# driver's log4j2 at a file name that does not exist unless told otherwise,
# so log4j2 reports "Reconfiguration failed" and Spark falls back to its
# defaults, which announce themselves ("Setting default log level...").
SPARK_LOG4J2 = """\
rootLogger.level = warn
rootLogger.appenderRef.stderr.ref = stderr
appender.console.type = Console
appender.console.name = stderr
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n%ex
# Hadoop's native libraries are optional: their absence is not worth a warning.
logger.nativecode.name = org.apache.hadoop.util.NativeCodeLoader
logger.nativecode.level = error
"""


def quiet_spark_configs() -> dict[str, str]:
    """Spark configs for ``init_spark`` that keep its console to warnings: the
    driver's log4j2 file above, and no stage progress bars (redrawn with \\r,
    they end up glued onto the next line of output)."""
    user = os.getuid() if hasattr(os, "getuid") else 0
    path = Path(tempfile.gettempdir()) / f"hudi-ray-{user}-log4j2.properties"
    if not path.exists() or path.read_text(encoding="utf-8") != SPARK_LOG4J2:
        tmp = path.with_name(f"{path.name}.{os.getpid()}")
        tmp.write_text(SPARK_LOG4J2, encoding="utf-8")
        tmp.replace(path)  # atomic: a job starting at the same time never reads half a file
    return {"spark.ui.showConsoleProgress": "false", "spark.log4j.config.file.name": str(path)}


def quiet_engines() -> None:
    """Ray's Python loggers at warning level: Ray Data logs INFO lines when
    each dataset starts and ends."""
    for name in ("ray", "ray.data"):
        logging.getLogger(name).setLevel(logging.WARNING)


def start_ray(num_cpus: int | None = None) -> ModuleType:
    """Ray, started (or joined, when RAY_ADDRESS names a cluster) at warning level."""
    from hudi_ray.core.exceptions import HudiMissingExtraError

    quiet_engines()
    try:
        import ray
        import ray.data
    except ModuleNotFoundError as exc:
        raise HudiMissingExtraError(
            f"--ray needs Ray Data ({exc.name} is not installed): pip install 'hudi-ray[ray]'", exc.name or "ray"
        ) from exc
    if not ray.is_initialized():
        address = os.environ.get("RAY_ADDRESS") or "local"
        ray.init(
            address=address,
            num_cpus=num_cpus if address == "local" else None,
            include_dashboard=False,
            log_to_driver=False,
            logging_level=logging.WARNING,
        )
    ctx = ray.data.DataContext.get_current()
    ctx.print_on_execution_start = False
    quiet_engines()  # again: importing Ray Data configures its own loggers
    return ray


def ray_progress_bars(stream: TextIO) -> bool:
    """Whether Ray Data should draw its progress bars: on a terminal, and only
    with tqdm installed (``ray[data]`` does not bring it; without it Ray Data
    warns that it disables the bars instead of drawing them)."""
    return is_terminal(stream) and importlib.util.find_spec("tqdm") is not None
