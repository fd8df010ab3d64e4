"""The Ray layer's tunables, as the core's are (``hudi_ray.core.config``): sizes
and counts that change how fast a read runs, never what it returns."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RayTunables:
    # Rows per block a reader task yields. Large, so Ray Data's per-block cost
    # stays small; the core's batch size (HudiReadOptions, 1024 by the reader
    # spec) is the default of read_stream, a different consumer.
    block_rows: int = 131_072
    # Pinned snapshots a planner keeps; a new one starts only when commits land.
    planner_snapshots: int = 16
    # Plans a planner keeps for repeated reads (of any of its snapshots).
    planner_plans: int = 32
    # Estimated Arrow bytes a read task holds at least, unless the caller fixed
    # the number of blocks: Ray's fixed cost per task is large on a small
    # machine, so Ray's default count (by blocks, not work) would spend more
    # on tasks than on reading a table of many small files.
    min_task_bytes: int = 32 << 20
    # Estimated Arrow bytes up to which an incremental run reads its range at
    # once (read_hudi's materialize_bytes): one reader task's worth, which
    # Ray Data would read in one task too, but only after its executor's
    # fixed start-up, which costs more than reading a commit's few files.
    incremental_materialize_bytes: int = 32 << 20


RAY_TUNABLES = RayTunables()
