"""Planning a read: which file slices it reads (``scan``), narrowed by the
pruners (``pruning``: partition values and stats, the record, secondary and
bloom indexes, column stats and footers), with estimates of their size."""

from typing import TYPE_CHECKING

from hudi_ray.core.lazy import lazy_package

if TYPE_CHECKING:  # what static tools see; each name loads its module on first use
    from hudi_ray.core.planning.estimate import Estimator, SliceEstimate, table_stats
    from hudi_ray.core.planning.explain import NoExplain, PlanExplain
    from hudi_ray.core.planning.scan import ScanFiles, TableSources, scan_for
    from hudi_ray.core.planning.slice_stats import footers_decide, with_footer_stats

__all__ = [
    "Estimator",
    "NoExplain",
    "PlanExplain",
    "ScanFiles",
    "SliceEstimate",
    "TableSources",
    "footers_decide",
    "scan_for",
    "table_stats",
    "with_footer_stats",
]

__getattr__, __dir__ = lazy_package(
    globals(),
    {
        "hudi_ray.core.planning.estimate": ("Estimator", "SliceEstimate", "table_stats"),
        "hudi_ray.core.planning.explain": ("NoExplain", "PlanExplain"),
        "hudi_ray.core.planning.scan": ("ScanFiles", "TableSources", "scan_for"),
        "hudi_ray.core.planning.slice_stats": ("footers_decide", "with_footer_stats"),
    },
)
