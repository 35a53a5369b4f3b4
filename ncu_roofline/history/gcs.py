"""The Google Cloud Storage store of a bucket history (`gs://bucket/prefix`; history/objects.py holds the
protocol): google-cloud-storage writes (the manifest's create-only put is `if_generation_match=0`, the JSON API's
`ifGenerationMatch=0`), pyarrow's own `GcsFileSystem` reads.

Configured the standard way: Application Default Credentials (`GOOGLE_APPLICATION_CREDENTIALS`, `gcloud auth
application-default login`, or the metadata server on Google Cloud), and `STORAGE_EMULATOR_HOST` for an emulator
(fake-gcs-server, as google-cloud-storage and gsutil read it: no credentials then). pyarrow's filesystem does not
read `STORAGE_EMULATOR_HOST` itself (it would look for credentials, and on a machine off Google Cloud wait on the
metadata server), so it is given the emulator's endpoint and scheme, anonymous, here."""

from __future__ import annotations

import os
from datetime import timedelta

from ..core.errors import InputError

EMULATOR_ENV = "STORAGE_EMULATOR_HOST"
RETRY_S = 60.0  # transient errors are retried this long (the SDK's default is 120 s; an unreachable host waits it)


def failures() -> tuple[type[BaseException], ...]:
    """The SDK's errors: a refusal, no credentials, no endpoint (requests' errors once retries give up). Asked
    first: without the SDK, the one line that says to install it."""
    try:
        import requests
        from google.api_core.exceptions import GoogleAPIError
        from google.auth.exceptions import GoogleAuthError
        from google.cloud import storage  # noqa: F401  (the client's)
    except ImportError:
        raise InputError(None, "writing a history to gs:// needs google-cloud-storage: "
                               "pip install 'ncu-roofline[gcs]'") from None
    return GoogleAPIError, GoogleAuthError, requests.RequestException


def client():
    from google.cloud import storage

    return storage.Client()  # ADC; with STORAGE_EMULATOR_HOST set, the emulator and anonymous credentials


def _retry():
    from google.cloud.storage.retry import DEFAULT_RETRY

    return DEFAULT_RETRY.with_timeout(RETRY_S)


def put(client, bucket: str, key: str, body: bytes, *, if_absent: bool = False) -> bool:
    """Put one object; with `if_absent`, only if no object has that key (generation 0: none). False: one had."""
    from google.api_core.exceptions import PreconditionFailed

    blob = client.bucket(bucket).blob(key)
    try:
        # a conditional put is retried safely (the SDK's policy); a plain part's name is new, so a retry rewrites
        # only our own object
        blob.upload_from_string(body, content_type="application/octet-stream", retry=_retry(),
                                **({"if_generation_match": 0} if if_absent else {}))
    except PreconditionFailed:
        if if_absent:
            return False
        raise
    return True


def exists(client, bucket: str, key: str) -> bool:
    return client.bucket(bucket).blob(key).exists(retry=_retry())


def delete(client, bucket: str, key: str) -> None:
    client.bucket(bucket).blob(key).delete(retry=_retry())


def filesystem():
    import pyarrow.fs

    limit = timedelta(seconds=RETRY_S)
    emulator = os.environ.get(EMULATOR_ENV)
    if emulator:
        scheme, _, host = emulator.rpartition("://")
        return pyarrow.fs.GcsFileSystem(anonymous=True, endpoint_override=host.rstrip("/"),
                                        scheme=scheme or "http", retry_time_limit=limit)
    _check_credentials()
    return pyarrow.fs.GcsFileSystem(retry_time_limit=limit)


def _check_credentials() -> None:
    """No credentials: an `OSError` in a second (as pyarrow's filesystem fails), where pyarrow's own search would
    retry the metadata server for the whole retry limit and then fail in a paragraph. Needs google-auth (the `gcs`
    extra); without it pyarrow searches alone."""
    try:
        import google.auth
        from google.auth.exceptions import DefaultCredentialsError
    except ImportError:
        return
    try:
        google.auth.default()
    except DefaultCredentialsError as exc:
        raise OSError(f"no Google Cloud credentials: {(str(exc).splitlines() or [''])[0]}") from None
