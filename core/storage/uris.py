"""A table's base URI: its scheme and root, and the fsspec filesystem it needs."""

from __future__ import annotations

import os
import re
from urllib.parse import unquote, urlparse

from hudi_ray.core.exceptions import HudiMissingExtraError, HudiStorageError
from hudi_ray.core.storage.paths import split_credentials

# Filesystems whose paths are whole URLs (``_strip_protocol`` keeps or parses
# the host and user info): their root is the URI itself.
URL_ROOTS = {"http", "https", "webhdfs", "swebhdfs"}
# Schemes fsspec knows under another name.
FS_PROTOCOL = {"s3n": "s3"}
# The package extra that brings a filesystem's fsspec implementation along.
_EXTRAS = {
    "s3": "s3",
    "s3a": "s3",
    "s3n": "s3",
    "gs": "gcs",
    "gcs": "gcs",
    "abfs": "azure",
    "abfss": "azure",
    "az": "azure",
}


def normalize_base_uri(base_uri: str, *, keep_credentials: bool = False) -> tuple[str, str]:
    """Return ``(protocol, root)``: ``file`` with an absolute path, or a URL's scheme and path
    (the whole URL where the filesystem addresses files by URL, as for ``https``).

    Credentials in the URI are left out of the root unless ``keep_credentials``:
    only :class:`Storage` keeps them, for clients that authenticate from the URI,
    and it redacts them for display.
    """
    if not base_uri:
        raise HudiStorageError("Empty table base URI")
    if not keep_credentials:
        base_uri = split_credentials(base_uri)[0]
    parsed = urlparse(base_uri)
    if parsed.scheme in ("", "file") or (len(parsed.scheme) == 1 and os.name == "nt"):
        path = unquote(parsed.path) if parsed.scheme == "file" else base_uri
        return "file", os.path.abspath(os.path.expanduser(path)).rstrip("/") or "/"
    if parsed.scheme.lower() in URL_ROOTS:
        return parsed.scheme, base_uri.rstrip("/")
    root = f"{parsed.netloc}{parsed.path}".rstrip("/")
    return parsed.scheme, root


def url_kwargs(protocol: str, uri: str) -> dict:
    """What fsspec itself takes from the URI (WebHDFS: host, port, user, password)."""
    import fsspec

    try:
        return dict(fsspec.get_filesystem_class(protocol)._get_kwargs_from_urls(uri))
    except Exception:  # no such filesystem: fsspec.filesystem reports it below
        return {}


def missing_filesystem(protocol: str, base_url: str, exc: ImportError) -> HudiMissingExtraError:
    """The error for a URI whose fsspec filesystem is not installed, naming what to install."""
    from fsspec.registry import known_implementations

    # fsspec raises a bare ImportError without a module name; its registry knows the package.
    impl = known_implementations.get(FS_PROTOCOL.get(protocol.lower(), protocol.lower()), {})
    module = exc.name or str(impl.get("class", "")).split(".")[0] or f"a filesystem for {protocol}://"
    extra = _EXTRAS.get(protocol.lower())
    install = f"pip install 'hudi-ray[{extra}]'" if extra else f"pip install {module}"
    return HudiMissingExtraError(f"Reading {base_url} needs {module}, which is not installed: {install}", module)


# hudi-rs's names of an Azure account, any of which given wins over the URI's.
_AZURE_ACCOUNT_KEYS = frozenset({"azure_storage_account_name", "account_name"})
_AZURE_HOST = re.compile(r"^(?P<account>[^.@/]+)\.(dfs|blob)\.core\.windows\.net$", re.IGNORECASE)


def azure_root(root: str, options: dict[str, str]) -> tuple[str, dict[str, str]]:
    """An Azure root (``container@account.dfs.core.windows.net/path``, or
    ``container/path``) as ``container/path``, and the options with the URI's account."""
    head, sep, rest = root.partition("/")
    container, at, host = head.partition("@")
    if not at:
        return root, options
    m = _AZURE_HOST.match(host)
    if m is None:
        raise HudiStorageError(f"Not an Azure storage account: {host!r} (expected <account>.dfs.core.windows.net)")
    if {k.lower() for k in options}.isdisjoint(_AZURE_ACCOUNT_KEYS):
        options = {**options, "azure_storage_account_name": m["account"]}
    return f"{container}{sep}{rest}".rstrip("/"), options
