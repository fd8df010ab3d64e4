"""Google Cloud Storage through gcsfs, fitted to the fetcher, and hudi-rs's GCS option keys.

Imported only for ``gs://`` and ``gcs://`` tables (``hudi-ray[gcs]``).

Two choices differ from ``fsspec.filesystem("gs")``:

* The JSON API client (``gcsfs.core.GCSFileSystem``), not ``gcsfs.GCSFileSystem``. Since
  gcsfs 2026.3 the latter is ``ExtendedGcsFileSystem``, which asks the gRPC Storage Control
  API for each bucket's type before reading from it. Where that call cannot be answered
  (an emulator, or credentials without the storage layout permission), the unknown answer
  is not kept, and every request waits up to a minute on it. Zonal buckets are what it
  serves; the JSON API reads every bucket type.
* No retries of gcsfs's own: it makes 6 tries over about 33 s, fixed, and those would run
  inside each of the fetcher's tries. One request per call, timed out and retried
  (jittered, within ``hoodie.io.*``) by the fetcher alone.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import gcsfs.core

from hudi_ray.core.exceptions import HudiConfigError

_TRUE = {"true", "1", "yes"}
# hudi-rs (object_store) GoogleConfigKey strings, aliases included -> what they mean here.
_SERVICE_ACCOUNT_PATH = {
    "google_service_account",
    "service_account",
    "google_service_account_path",
    "service_account_path",
    "google_application_credentials",
    "application_credentials",
}
_SERVICE_ACCOUNT_KEY = {"google_service_account_key", "service_account_key"}
_BEARER_TOKEN = {"google_bearer_token", "bearer_token"}
_BASE_URL = {"google_base_url", "base_url"}
_SKIP_SIGNATURE = {"google_skip_signature", "skip_signature"}
# Keys hudi-rs accepts that need nothing here: the bucket comes from the URI, the scheme
# of the endpoint decides http, and the fetcher owns timeouts.
_IGNORED = {
    "google_bucket",
    "google_bucket_name",
    "bucket",
    "bucket_name",
    "google_allow_http",
    "allow_http",
    "google_timeout",
    "timeout",
    "google_connect_timeout",
    "connect_timeout",
}


class GCSFileSystem(gcsfs.core.GCSFileSystem):  # type: ignore[misc]  # gcsfs is untyped
    """gcsfs's JSON API client, one try per request (see the module's docstring)."""

    _request = gcsfs.core.GCSFileSystem._request.__wrapped__


def gcsfs_kwargs(options: Mapping[str, str]) -> dict[str, Any]:
    """gcsfs arguments for hudi-rs style ``options``; other keys pass through to gcsfs.
    Without credentials among them, gcsfs finds them as Google's libraries do
    (``GOOGLE_APPLICATION_CREDENTIALS``, gcloud's defaults, the metadata server)."""
    kwargs: dict[str, Any] = {}
    for key, value in options.items():
        k = key.lower()
        if k in _SERVICE_ACCOUNT_PATH:
            kwargs["token"] = value
        elif k in _SERVICE_ACCOUNT_KEY:
            try:
                kwargs["token"] = json.loads(value)
            except (TypeError, ValueError) as exc:
                # The value is a secret: the message names the key only.
                raise HudiConfigError(f"Storage option {key!r} is not a service account key in JSON") from exc
        elif k in _BEARER_TOKEN:
            from google.oauth2.credentials import Credentials

            kwargs["token"] = Credentials(value)
        elif k in _BASE_URL:
            kwargs["endpoint_url"] = value.rstrip("/")
        elif k in _SKIP_SIGNATURE:
            if value.lower() in _TRUE:
                kwargs["token"] = "anon"
        elif k in _IGNORED:
            continue
        else:
            kwargs[key] = value
    return kwargs
