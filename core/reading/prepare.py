"""What a process loads before it reads its first slice, loaded ahead of time."""

from __future__ import annotations

from hudi_ray.core.util.compiled import load

# The compiled code a merge-on-read slice runs: Avro log decoding and key matching.
READ_KERNELS = ("hudi_ray.core.log_file.avro_kernels", "hudi_ray.core.merge.key_kernels")


def prepare_reader() -> None:
    """Import the slice reader with pyarrow, and load the decode and merge kernels
    (from numba's cache, as ``./dev`` left them). A fresh worker that does this while
    the read is still being planned starts its first slice at once."""
    import pyarrow.parquet  # noqa: F401 - the base file reader

    # A reader task unpickles a plan (read_plan, with its estimates) and reads its slices.
    import hudi_ray.core.reading.read_plan
    import hudi_ray.core.reading.slice_reader  # noqa: F401

    for module in READ_KERNELS:
        load(module)
