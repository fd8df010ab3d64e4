"""Planning a read: which file slices it reads (``scan``), narrowed by the
pruners (``pruning``: partition values and stats, the record, secondary and
bloom indexes, column stats and footers), with estimates of their size."""

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
