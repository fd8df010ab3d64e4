"""Containment of table-relative paths, and redaction of credentials.

Paths in commit metadata, the metadata table and ``hoodie.properties`` are
data, not trusted input: a crafted table must not make a read open files
outside its base URI. Credentials given in a URI or as storage options must
not reach reprs, error messages or logs.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from urllib.parse import unquote, urlsplit

from hudi_ray.core.exceptions import HudiUnsafePathError

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*://")

# Bucket names of these stores cannot hold ':' or '@', so ``key:secret@`` in
# front of the bucket is credentials even when the secret's '/' is unencoded
# (AWS secrets often contain one).
_OBJECT_STORES = {"s3", "s3a", "s3n", "gs", "gcs"}
_OBJECT_STORE_CREDENTIALS = re.compile(r"^(?P<user>[^:/@]*):(?P<password>[^@]*)@(?P<rest>[^/@]+(?:/.*)?)$", re.S)

# In Azure URIs the part before '@' is the container, not a credential.
_AZURE = {"abfs", "abfss", "az", "adl", "wasb", "wasbs"}

# ``scheme://user:secret@`` (the secret may hold '/'), or ``scheme://token@``.
_URI_USERINFO = re.compile(
    r"(?P<scheme>\b(?P<name>[A-Za-z][A-Za-z0-9+.\-]*)://)(?P<userinfo>[^\s'\"@/:]*:[^\s'\"@]*|[^\s'\"@/:]+)@"
)

REDACTED = "***"

_SECRET_WORDS = ("secret", "token", "password", "passwd", "credential", "private", "signature", "sas")
_SECRET_KEYS = {
    "key",
    "aws_access_key_id",
    "access_key_id",
    "account_key",
    "azure_storage_account_key",
    "azure_storage_key",
}


def contained_path(rel: str) -> str | None:
    """``rel`` normalised below a storage root, or None if it leads outside.

    A leading '/' is dropped (paths are relative to the root by contract);
    '..' may not climb above the root, and a URI (``s3://other-bucket/x``,
    ``file:///etc``) is never relative to anything. Nothing is URL-decoded:
    no storage client decodes paths, so ``%2e%2e`` is an ordinary name.
    """
    if _SCHEME.match(rel):
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
    if _SCHEME.match(value):
        return "is a URI, not a path relative to the table"
    if value.startswith("/"):
        return "is an absolute path, not a path relative to the table"
    if any(part in (".", "..") for part in value.split("/")):
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


def move_credentials(uri: str, options: Mapping[str, str]) -> tuple[str, dict[str, str]]:
    """``uri`` without user info, and ``options`` with its credentials added.

    Options given explicitly win over the URI's. Everything downstream then
    carries a URI that is safe to print.
    """
    merged = dict(options)
    if not isinstance(uri, str):
        return uri, merged  # not a URI: the caller reports it
    bare, user, password = split_credentials(uri)
    if password is None:
        return uri, merged
    if bare.split("://", 1)[0].lower() in ("s3", "s3a", "s3n"):
        merged.setdefault("aws_access_key_id", user or "")
        merged.setdefault("aws_secret_access_key", password)
    else:
        merged.setdefault("username", user or "")
        merged.setdefault("password", password)
    return bare, merged


def _redact_userinfo(m: re.Match[str]) -> str:
    if ":" not in m["userinfo"] and m["name"].lower() in _AZURE:
        return m.group(0)
    return f"{m['scheme']}{REDACTED}@"


def redact_text(text: str) -> str:
    """``text`` with the user info of every URI in it replaced by ``***``."""
    return _URI_USERINFO.sub(_redact_userinfo, text)


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
