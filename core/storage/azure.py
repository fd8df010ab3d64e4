"""Azure Blob Storage and ADLS Gen2 through adlfs, fitted to the fetcher, and hudi-rs's
Azure option keys.

Imported only for ``abfs://``, ``abfss://`` and ``az://`` tables (``hudi-ray[azure]``).
ADLS Gen2 accounts are read through their Blob endpoint, as adlfs and hudi-rs both do.

The Azure SDK retries a failed request itself (4 tries over about 80 s, 429 never), and
adlfs passes no retry settings to it. Those retries would run inside each of the
fetcher's tries, so the client made here retries nothing: one request per call, timed out
and retried (jittered, within ``hoodie.io.*``) by the fetcher alone.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Mapping
from typing import Any

import adlfs
from azure.core.exceptions import ResourceNotFoundError

_TRUE = {"true", "1", "yes"}
# hudi-rs (object_store) AzureConfigKey strings, aliases included -> adlfs arguments.
_KEYS = {
    "azure_storage_account_name": "account_name",
    "account_name": "account_name",
    "azure_storage_account_key": "account_key",
    "azure_storage_access_key": "account_key",
    "azure_storage_master_key": "account_key",
    "master_key": "account_key",
    "account_key": "account_key",
    "access_key": "account_key",
    "azure_storage_client_id": "client_id",
    "azure_client_id": "client_id",
    "client_id": "client_id",
    "azure_storage_client_secret": "client_secret",
    "azure_client_secret": "client_secret",
    "client_secret": "client_secret",
    "azure_storage_tenant_id": "tenant_id",
    "azure_storage_authority_id": "tenant_id",
    "azure_tenant_id": "tenant_id",
    "azure_authority_id": "tenant_id",
    "tenant_id": "tenant_id",
    "authority_id": "tenant_id",
    "azure_storage_sas_key": "sas_token",
    "azure_storage_sas_token": "sas_token",
    "sas_key": "sas_token",
    "sas_token": "sas_token",
}
_EMULATOR = {"azure_storage_use_emulator", "use_emulator"}
_ENDPOINT = {"azure_storage_endpoint", "azure_endpoint", "endpoint"}
_SKIP_SIGNATURE = {"azure_skip_signature", "skip_signature"}
_FABRIC = {"azure_use_fabric_endpoint", "use_fabric_endpoint"}
# Azurite's account, as object_store's ``use_emulator`` takes it: its well-known key is
# public, published with Azurite.
EMULATOR_ACCOUNT = "devstoreaccount1"
EMULATOR_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="


class AzureBlobFileSystem(adlfs.AzureBlobFileSystem):  # type: ignore[misc]  # adlfs is untyped
    """adlfs's client, one try per request (see the module's docstring), listing a folder in
    one request. Made again from its arguments wherever it is unpickled, as every fsspec
    filesystem is, so this holds there too."""

    def do_connect(self) -> None:
        super().do_connect()
        clients = self.service_client if isinstance(self.service_client, list) else [self.service_client]
        for client in clients:
            policy = getattr(getattr(client, "_config", None), "retry_policy", None)
            if policy is not None:
                policy.total_retries = 0

    async def _ls(self, path: str, detail: bool = False, **kwargs: Any) -> list[Any]:
        """A folder's entries from one listing of ``folder/`` (more pages for a large one).

        adlfs lists ``folder`` first, to tell a file from a folder, then ``folder/``: two
        round trips one after the other for every folder a table load walks, and two more
        for a missing one. Here an empty answer costs one more, for the blob itself.
        """
        plain = detail and not kwargs.get("versions") and not kwargs.get("version_id") and not kwargs.get("return_glob")
        container, key, _ = self.split_path(path)
        if not plain or not container or not key.strip("/") or kwargs.get("delimiter", "/") != "/":
            return await super()._ls(path, detail=detail, **kwargs)
        prefix = key.strip("/") + "/"
        items, marked = [], False
        try:
            async with self.service_client.get_container_client(container=container) as cc:
                async for item in cc.walk_blobs(name_starts_with=prefix, include=["metadata"], delimiter="/"):
                    if item["name"] == prefix:  # the folder's own marker blob, where a tool wrote one
                        marked = True
                    else:
                        items.append(item)
        except ResourceNotFoundError as exc:  # no such container
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), path) from exc
        if not items:  # nothing below: an empty folder, a file, or nothing
            return [] if marked else await self._ls_empty(container, key.strip("/"))
        # A folder may list twice, as its prefix and as a marker blob (a hierarchical
        # namespace's, or a tool's): it is one folder.
        entries: dict[str, dict[str, Any]] = {}
        for entry in await self._details(items, target_path=f"{container}/{prefix}".rstrip("/")):
            name = entry["name"].rstrip("/")
            if name not in entries or entry["type"] == "directory":
                entries[name] = {**entry, "name": name}
        return list(entries.values())

    async def _ls_empty(self, container: str, key: str) -> list[Any]:
        """What listing ``key`` gives when nothing lies below it, from one request for the
        blob itself: a file lists as itself, a folder's marker as an empty folder, and
        nothing is ``FileNotFoundError``, as adlfs answers (in two more round trips)."""
        try:
            async with self.service_client.get_blob_client(container, key) as bc:
                props = await bc.get_blob_properties()
        except ResourceNotFoundError as exc:
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), f"{container}/{key}") from exc
        entry = (await self._details([props]))[0]
        return [] if entry["type"] == "directory" else [entry]


def adlfs_kwargs(options: Mapping[str, str]) -> dict[str, Any]:
    """adlfs arguments for hudi-rs style ``options``; adlfs's own arguments pass through.
    Without credentials among them, adlfs reads ``AZURE_STORAGE_*`` from the environment,
    then Azure's default credential chain. Other ``azure_*`` keys of hudi-rs (managed
    identity, workload identity, the Azure CLI) need nothing here: that chain finds them."""
    kwargs: dict[str, Any] = {}
    emulator = False
    endpoint: str | None = None
    fabric = False
    for key, value in options.items():
        k = key.lower()
        if k in _KEYS:
            kwargs[_KEYS[k]] = value
        elif k in _EMULATOR:
            emulator = value.lower() in _TRUE
        elif k in _ENDPOINT:
            endpoint = value.rstrip("/")
        elif k in _SKIP_SIGNATURE:
            if value.lower() in _TRUE:
                kwargs["anon"] = True
        elif k in _FABRIC:
            fabric = value.lower() in _TRUE
        elif k.startswith("azure_") or k in ("container_name", "allow_http", "disable_tagging"):
            continue  # adlfs would hand unknown arguments to the credential chain, which refuses them
        else:
            kwargs[key] = value
    if emulator:
        kwargs.setdefault("account_name", EMULATOR_ACCOUNT)
        kwargs.setdefault("account_key", EMULATOR_KEY)
        if endpoint is None:  # Azurite's service, as object_store finds it: accounts are paths below it
            url = os.environ.get("AZURITE_BLOB_STORAGE_URL", "http://127.0.0.1:10000").rstrip("/")
            endpoint = f"{url}/{kwargs['account_name']}"
    if endpoint is not None and "connection_string" not in kwargs:
        if endpoint.startswith("https://") and "/" not in endpoint[len("https://") :]:
            kwargs["account_host"] = endpoint[len("https://") :]
        else:
            # adlfs reaches an endpoint with a path, or over http, only through a connection string.
            kwargs["connection_string"] = _connection_string(endpoint, kwargs)
    elif fabric and "account_name" in kwargs:
        kwargs.setdefault("account_host", f"{kwargs['account_name']}.blob.fabric.microsoft.com")
    return kwargs


def _connection_string(endpoint: str, kwargs: dict[str, Any]) -> str:
    parts = [f"DefaultEndpointsProtocol={endpoint.split('://', 1)[0]}", f"BlobEndpoint={endpoint}"]
    if "account_name" in kwargs:
        parts.append(f"AccountName={kwargs.pop('account_name')}")
    if "account_key" in kwargs:
        parts.append(f"AccountKey={kwargs.pop('account_key')}")
    elif "sas_token" in kwargs:
        parts.append(f"SharedAccessSignature={kwargs.pop('sas_token').lstrip('?')}")
    return ";".join(parts) + ";"
