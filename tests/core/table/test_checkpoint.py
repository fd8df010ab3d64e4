"""An incremental job's checkpoint file and lease (``hudi_ray.core.incremental.checkpoint``)
on local disk and on S3 (moto on loopback): written whole, one run at a time,
moved only by the run holding the lease and only from where it started."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from hudi_ray.core.exceptions import HudiCheckpointError, HudiConcurrentRunError
from hudi_ray.core.incremental.checkpoint import CheckpointStore


def _stores(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> tuple[CheckpointStore, CheckpointStore]:
    """Two handles on one checkpoint, as two jobs would hold them."""
    if kind == "local":
        uri = str(tmp_path / "jobs" / "a.checkpoint")
        return CheckpointStore(uri), CheckpointStore(uri)
    import s3fs

    endpoint = request.getfixturevalue("s3_endpoint")
    options = request.getfixturevalue("storage_options")
    fs = s3fs.S3FileSystem(key="testing", secret="testing", client_kwargs={"endpoint_url": endpoint})
    bucket = f"ckpt-{time.monotonic_ns()}"
    fs.mkdir(bucket)
    uri = f"s3://{bucket}/jobs/a.checkpoint"
    return CheckpointStore(uri, options), CheckpointStore(uri, options)


@pytest.mark.parametrize("kind", ["local", "s3"])
def test_one_run_at_a_time_and_moves_only_from_its_start(kind: str, tmp_path: Path, request) -> None:
    one, two = _stores(kind, tmp_path, request)
    assert one.load() is None
    lease = one.acquire()
    with pytest.raises(HudiConcurrentRunError, match=f"in use by run {lease.run_id}"):
        two.acquire()
    saved = one.commit(lease, "file:///t", "19700101000000000", "20240101000000000", "20231231235959000")
    assert two.load() == saved and saved.position == "20240101000000000"
    assert one.lease() is None, "a commit gives the lease back"
    # A second run starts from the stored position; a stale start is refused.
    lease = two.acquire()
    with pytest.raises(HudiCheckpointError, match="moved to 20240101000000000"):
        two.commit(lease, "file:///t", "19700101000000000", "20250101000000000", None)
    two.release(lease)
    assert one.load() == saved
    lease = one.acquire()
    one.release(lease)
    assert one.lease() is None


def test_expired_lease_is_taken_over(tmp_path: Path) -> None:
    one, two = _stores("local", tmp_path, None)  # type: ignore[arg-type]
    old = one.acquire(lease_seconds=0.05)
    time.sleep(0.1)
    new = two.acquire()
    assert new.run_id != old.run_id
    with pytest.raises(HudiConcurrentRunError, match="no longer holds the lease"):
        one.commit(old, "file:///t", "19700101000000000", "20240101000000000", None)
    one.release(old)  # not its lease any more: left alone
    assert two.lease() == new


def test_malformed_files_and_arguments(tmp_path: Path) -> None:
    store, _ = _stores("local", tmp_path, None)  # type: ignore[arg-type]
    path = tmp_path / "jobs" / "a.checkpoint"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('{"table": "file:///t"}')
    with pytest.raises(HudiCheckpointError, match="malformed"):
        store.load()
    path.write_text("[1]")
    with pytest.raises(HudiCheckpointError, match="JSON object"):
        store.load()
    with pytest.raises(HudiCheckpointError, match="lease_seconds"):
        store.acquire(lease_seconds=0)
    with pytest.raises(HudiCheckpointError, match="checkpoint must be"):
        CheckpointStore("")
