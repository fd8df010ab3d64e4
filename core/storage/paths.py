"""Containment of table-relative paths, and redaction of credentials.

Paths in commit metadata, the metadata table and ``hoodie.properties`` are
data, not trusted input: a crafted table must not make a read open files
outside its base URI. Credentials given in a URI or as storage options must
not reach reprs, error messages or logs.
"""

from __future__ import annotations

import functools
import inspect
import re
from collections.abc import Mapping
from urllib.parse import unquote, urlsplit

from hudi_ray.core.exceptions import HudiUnsafePathError

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*://")


def _has_scheme(value: str) -> bool:
    # The regex only where it can match: every path of a read comes here, and
    # each match grows the regex engine's stack through malloc, which (with
    # threads decoding Parquet beside it) costs tens of microseconds.
    return "://" in value and _SCHEME.match(value) is not None


# Bucket names of these stores cannot hold ':' or '@', so ``key:secret@`` in
# front of the bucket is credentials even when the secret's '/' is unencoded
# (AWS secrets often contain one).
_S3_STORES = {"s3", "s3a", "s3n"}
_OBJECT_STORES = _S3_STORES | {"gs", "gcs"}
_OBJECT_STORE_CREDENTIALS = re.compile(r"^(?P<user>[^:/@]*):(?P<password>[^@]*)@(?P<rest>[^/@]+(?:/.*)?)$", re.S)

# In Azure URIs the part before '@' is the container, not a credential.
_AZURE = {"abfs", "abfss", "az", "adl", "wasb", "wasbs"}

# ``scheme://user:secret@`` (an object store's secret may hold '/'), or ``scheme://token@``.
_URI_USERINFO = re.compile(
    r"(?P<scheme>\b(?P<name>[A-Za-z][A-Za-z0-9+.\-]*)://)"
    r"(?P<userinfo>[^\s'\"@/:]*:(?P<password>[^\s'\"@]*)|[^\s'\"@/:]+)@"
)

# The option names of a URI's user and password per scheme, preferred name
# first: an explicit option under any of them wins over the URI.
_S3_CREDENTIAL_OPTIONS = (
    ("aws_access_key_id", "access_key_id", "key", "username"),
    ("aws_secret_access_key", "secret_access_key", "secret", "password"),
)
_USER_PASSWORD_OPTIONS = (("username", "user"), ("password",))

REDACTED = "***"

_SECRET_WORDS = ("secret", "token", "password", "passwd", "credential", "private", "signature", "sas")
_SECRET_KEYS = {
    "key",
    "aws_access_key_id",
    "access_key_id",
    "account_key",
    "azure_storage_account_key",
    "azure_storage_key",
    "azure_storage_access_key",
    "azure_storage_master_key",
    "access_key",
    "master_key",
    "google_service_account_key",
    "service_account_key",
    "connection_string",
}


def contained_path(rel: str) -> str | None:
    """``rel`` normalised below a storage root, or None if it leads outside.

    A leading '/' is dropped (paths are relative to the root by contract);
    '..' may not climb above the root, and a URI (``s3://other-bucket/x``,
    ``file:///etc``) is never relative to anything. Nothing is URL-decoded:
    no storage client decodes paths, so ``%2e%2e`` is an ordinary name.
    """
    if _has_scheme(rel):
        return None
    parts: list[str] = []
    for part in rel.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if not parts:
                return None
            parts.pop()
        else:
            parts.append(part)
    return "/".join(parts)


def metadata_path_problem(value: str) -> str | None:
    """Why a relative path read from table metadata is unsafe, or None.

    Stricter than :func:`contained_path`: Hudi writes plain relative paths,
    so any '.', '..', leading '/' or scheme is a crafted or damaged value,
    even where it would resolve inside the table.
    """
    if _has_scheme(value):
        return "is a URI, not a path relative to the table"
    if value.startswith("/"):
        return "is an absolute path, not a path relative to the table"
    # A component is "." or ".." exactly when, between slashes, it shows as "/./" or "/../".
    wrapped = f"/{value}/"
    if "/./" in wrapped or "/../" in wrapped:
        return "has a '.' or '..' component"
    return None


def check_metadata_path(value: str, what: str, where: str, base: str) -> None:
    """Raise :class:`HudiUnsafePathError` naming ``what`` and ``where`` when ``value`` is unsafe."""
    problem = metadata_path_problem(value)
    if problem is not None:
        raise HudiUnsafePathError(
            f"{what} {value!r} in {redact_text(where)} {problem}; refusing to read outside the table "
            f"{redact_text(base)}"
        )


def check_file_name(value: str, what: str, where: str, base: str) -> None:
    """A file name from table metadata must be one plain path component."""
    if "/" in value or value in ("", ".", ".."):
        raise HudiUnsafePathError(
            f"{what} {value!r} in {redact_text(where)} is not a plain file name; refusing to read outside "
            f"the table {redact_text(base)}"
        )


# -- credentials -------------------------------------------------------------------


def split_credentials(uri: str) -> tuple[str, str | None, str | None]:
    """``(uri without user info, user, password)``; user and password are None when absent."""
    scheme, sep, rest = uri.partition("://")
    if not sep or scheme.lower() in _AZURE:
        return uri, None, None
    if scheme.lower() in _OBJECT_STORES:
        m = _OBJECT_STORE_CREDENTIALS.match(rest)
        if m is None:
            return uri, None, None
        return f"{scheme}://{m['rest']}", unquote(m["user"]), unquote(m["password"])
    parts = urlsplit(uri)
    if parts.password is None:
        return uri, None, None
    netloc = parts.netloc.rsplit("@", 1)[1]
    return parts._replace(netloc=netloc).geturl(), unquote(parts.username or ""), unquote(parts.password)


@functools.lru_cache(maxsize=64)
def _takes_user_password(scheme: str) -> bool:
    """Whether fsspec's filesystem for ``scheme`` takes ``username`` and ``password`` arguments."""
    try:
        import fsspec

        cls = fsspec.get_filesystem_class(scheme)
        params = inspect.signature(cls.__init__).parameters
    except Exception:  # unknown scheme, implementation not installed, no signature
        return False
    return "username" in params and "password" in params


def credential_options(scheme: str) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """The option names a ``scheme`` URI's user and password move to, or None
    when they stay in the URI (its storage client authenticates from it:
    aiohttp for ``http(s)``, WebHDFS, ...)."""
    s = scheme.lower()
    if s in _S3_STORES:
        return _S3_CREDENTIAL_OPTIONS
    if s in _OBJECT_STORES or _takes_user_password(s):
        return _USER_PASSWORD_OPTIONS
    return None


def move_credentials(uri: str, options: Mapping[str, str]) -> tuple[str, dict[str, str]]:
    """``uri`` without user info, and ``options`` with its credentials added,
    for schemes whose storage client takes credentials as options (object
    stores); any other URI is returned unchanged and only redacted for display.

    Options given explicitly win over the URI's: a URI credential is not set
    when the options hold any alias of it (``key`` or ``aws_access_key_id``...).
    """
    merged = dict(options)
    if not isinstance(uri, str):
        return uri, merged  # not a URI: the caller reports it
    bare, user, password = split_credentials(uri)
    if password is None:
        return uri, merged
    names = credential_options(bare.split("://", 1)[0])
    if names is None:
        return uri, merged
    given = {str(k).lower() for k in merged}
    for aliases, value in zip(names, (user or "", password)):
        if given.isdisjoint(aliases):
            merged[aliases[0]] = value
    return bare, merged


def _keeps_userinfo(m: re.Match[str]) -> bool:
    name = m["name"].lower()
    if ":" not in m["userinfo"]:
        return name in _AZURE  # the container, not a credential
    # Only an object store's secret may hold '/'; elsewhere the '/' ends the
    # authority, and ``host:port/path@x`` is a path holding an '@'.
    return "/" in m["password"] and name not in _OBJECT_STORES


def redact_text(text: str) -> str:
    """``text`` with the user info of every URI in it replaced by ``***``."""
    out: list[str] = []
    pos = 0
    while (m := _URI_USERINFO.search(text, pos)) is not None:
        if _keeps_userinfo(m):
            # Not user info: keep the scheme and look on from there (a later
            # URI in the same run of text may still hold credentials).
            out.append(text[pos : m.end("scheme")])
            pos = m.end("scheme")
        else:
            out.append(f"{text[pos : m.start()]}{m['scheme']}{REDACTED}@")
            pos = m.end()
    out.append(text[pos:])
    return "".join(out)


def is_secret_key(key: str) -> bool:
    k = key.lower()
    if k.startswith("hoodie."):
        return False
    return k in _SECRET_KEYS or any(word in k for word in _SECRET_WORDS)


def redact_options(options: Mapping[str, str]) -> dict[str, str]:
    """A copy of ``options`` safe to show: secret values replaced, URIs redacted."""
    return {
        k: REDACTED if is_secret_key(str(k)) else redact_text(v) if isinstance(v, str) else v
        for k, v in options.items()
    }
