"""Map hudi-rs style storage option keys onto fsspec filesystem arguments."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from hudi_ray.core.storage.fetch import IO_TUNABLES, IOTunables

_TRUE = {"true", "1", "yes"}

# hudi-rs (object_store) key -> s3fs constructor argument.
_S3_KEYS = {
    "aws_access_key_id": "key",
    "access_key_id": "key",
    "aws_secret_access_key": "secret",
    "secret_access_key": "secret",
    "aws_session_token": "token",
    "session_token": "token",
    "aws_token": "token",
}
_S3_CLIENT_KEYS = {
    "aws_region": "region_name",
    "region": "region_name",
    "aws_endpoint_url": "endpoint_url",
    "aws_endpoint": "endpoint_url",
    "endpoint_url": "endpoint_url",
    "endpoint": "endpoint_url",
}
# Keys hudi-rs accepts that have no fsspec counterpart; accepted and ignored.
_IGNORED = {"aws_ca_bundle", "aws_allow_http", "allow_http", "aws_virtual_hosted_style_request"}


if TYPE_CHECKING:
    import fsspec

GCS_PROTOCOLS = frozenset({"gs", "gcs"})
AZURE_PROTOCOLS = frozenset({"abfs", "abfss", "az"})


def open_filesystem(protocol: str, kwargs: dict[str, Any]) -> fsspec.AbstractFileSystem:
    """The filesystem of ``protocol`` (an fsspec name) with ``kwargs`` (``fsspec_kwargs``):
    GCS and Azure get clients fitted to the fetcher (``gcs``, ``azure``), others fsspec's.
    ImportError when the filesystem's package is missing."""
    p = protocol.lower()
    if p in GCS_PROTOCOLS:
        from hudi_ray.core.storage.gcs import GCSFileSystem

        return GCSFileSystem(**kwargs)
    if p in AZURE_PROTOCOLS:
        from hudi_ray.core.storage.azure import AzureBlobFileSystem

        return AzureBlobFileSystem(**kwargs)
    import fsspec

    return fsspec.filesystem(protocol, **kwargs)


def fsspec_kwargs(protocol: str, options: Mapping[str, str], io: IOTunables = IO_TUNABLES) -> dict[str, Any]:
    """Translate storage options for ``protocol``; keys fsspec knows pass through.

    GCS and Azure take hudi-rs's keys as ``gcs.gcsfs_kwargs`` and ``azure.adlfs_kwargs`` map
    them. For S3 the client is fitted to ``io`` unless the options say otherwise: a
    connection per request in flight (botocore keeps 10), its timeouts, and no
    retries of botocore's own, so that one policy (the fetcher's, jittered) retries.
    """
    if protocol in ("file", "local", ""):
        return {}
    if protocol.lower() in GCS_PROTOCOLS:
        from hudi_ray.core.storage.gcs import gcsfs_kwargs

        return _without_listings_cache(gcsfs_kwargs(options))
    if protocol.lower() in AZURE_PROTOCOLS:
        from hudi_ray.core.storage.azure import adlfs_kwargs

        return _without_listings_cache(adlfs_kwargs(options))
    kwargs: dict[str, Any] = {}
    if protocol.lower() in ("s3", "s3a", "s3n"):
        client: dict[str, Any] = {}
        for key, value in options.items():
            k = key.lower()
            if k in _S3_KEYS:
                kwargs[_S3_KEYS[k]] = value
            elif k in _S3_CLIENT_KEYS:
                client[_S3_CLIENT_KEYS[k]] = value
            elif k in ("aws_allow_http", "allow_http"):
                if value.lower() in _TRUE:
                    kwargs["use_ssl"] = False
            elif k in _IGNORED:
                continue
            else:
                kwargs[key] = value
        if client:
            kwargs["client_kwargs"] = client
        config = dict(kwargs.get("config_kwargs") or {})
        config.setdefault("max_pool_connections", io.max_requests)
        config.setdefault("connect_timeout", io.request_timeout)
        config.setdefault("read_timeout", io.request_timeout)
        config.setdefault("retries", {"total_max_attempts": 1})
        kwargs["config_kwargs"] = config
        return _without_listings_cache(kwargs)
    return dict(options)


def _without_listings_cache(kwargs: dict[str, Any]) -> dict[str, Any]:
    # s3fs, gcsfs and adlfs keep listings per client, and clients are shared by the
    # process: a table built again must see commits made since, never a cached listing.
    kwargs.setdefault("use_listings_cache", False)
    return kwargs
