"""The S3 store of a bucket history (`s3://bucket/prefix`; history/objects.py holds the protocol): boto3 writes
(the manifest's create-only put is `put_object(IfNoneMatch="*")`, honoured by S3 since 2024), pyarrow's own
`S3FileSystem` reads. Both take credentials, region and `AWS_ENDPOINT_URL` from the environment as the AWS CLI
does (MinIO, Ceph, R2 or a local moto server by setting `AWS_ENDPOINT_URL`)."""

from __future__ import annotations

import os

from ..core.errors import InputError

_TAKEN = ("PreconditionFailed", "ConditionalRequestConflict")  # If-None-Match: * lost (or raced) to another put
_MISSING = ("404", "NoSuchKey", "NotFound")


def failures() -> tuple[type[BaseException], ...]:
    """The SDK's errors: a refusal, no credentials, no endpoint. Asked first: without the SDK, the one line that
    says to install it."""
    try:
        import boto3  # noqa: F401  (the client's)
        from botocore.exceptions import BotoCoreError, ClientError
    except ImportError:
        raise InputError(None, "writing a history to s3:// needs boto3: pip install 'ncu-roofline[s3]'") from None
    return ClientError, BotoCoreError


def client():
    import boto3
    from botocore.config import Config

    return boto3.client("s3", config=Config(retries={"mode": "standard"}))


def _code(exc: BaseException) -> str:
    return str(getattr(exc, "response", {}).get("Error", {}).get("Code", ""))


def put(client, bucket: str, key: str, body: bytes, *, if_absent: bool = False) -> bool:
    """Put one object; with `if_absent`, only if no object has that key. False: one had (nothing was written)."""
    from botocore.exceptions import ClientError

    try:
        client.put_object(Bucket=bucket, Key=key, Body=body, **({"IfNoneMatch": "*"} if if_absent else {}))
    except ClientError as exc:
        if if_absent and _code(exc) in _TAKEN:
            return False
        raise
    return True


def exists(client, bucket: str, key: str) -> bool:
    from botocore.exceptions import ClientError

    try:
        client.head_object(Bucket=bucket, Key=key)
    except ClientError as exc:
        if _code(exc) in _MISSING:
            return False
        raise
    return True


def delete(client, bucket: str, key: str) -> None:
    client.delete_object(Bucket=bucket, Key=key)


def filesystem():
    import pyarrow.fs

    kwargs = {"endpoint_override": os.environ["AWS_ENDPOINT_URL"]} if os.environ.get("AWS_ENDPOINT_URL") else {}
    region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
    return pyarrow.fs.S3FileSystem(region=region, **kwargs) if region else pyarrow.fs.S3FileSystem(**kwargs)
