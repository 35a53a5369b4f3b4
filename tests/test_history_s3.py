"""A history in an S3 bucket (issue 40, item 2), against a real S3 API served locally (moto's server mode, started
here on 127.0.0.1): runs written by `analyze --history s3://...` read back whole by `history` and `--sql`, and by
DuckDB through pyarrow's filesystem; two concurrent writers of different runs both commit; of two writers of one run
id exactly one does (the conditional put); a writer killed between its parts and its manifest leaves its run absent;
`--replace` and `--repair` are refused with the reason.

Reference: the example's six launches of 1626 µs in all (fixtures/example_h100_raw.csv), and the objects the bucket
holds as boto3 lists them. The checks are tests/bucket_history.py's, shared with tests/test_history_gcs.py.
"""

from __future__ import annotations

import os
import socket

import pytest

from bucket_history import Bucket
from bucket_history import (  # noqa: F401  (collected here: the guarantees every store keeps)
    test_a_bucket_that_does_not_exist_is_named_not_read_as_holding_no_runs,
    test_a_taken_run_id_replace_and_repair_are_refused_in_one_line,
    test_a_writer_killed_between_its_parts_and_its_manifest_leaves_its_run_absent,
    test_batch_appends_each_report_to_the_bucket, test_concurrent_writers_of_different_runs_both_commit,
    test_runs_written_to_a_bucket_read_back_whole_also_from_duckdb, test_two_writers_of_one_run_id_exactly_one_commits)

moto_server = pytest.importorskip("moto.server")
boto3 = pytest.importorskip("boto3")


@pytest.fixture(scope="module")
def s3_env():
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    env = {"AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}", "AWS_ACCESS_KEY_ID": "test",
           "AWS_SECRET_ACCESS_KEY": "test", "AWS_DEFAULT_REGION": "us-east-1"}
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        yield env
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        server.stop()


@pytest.fixture
def bucket(s3_env, request):
    name = f"hist-{abs(hash(request.node.name)) % 10**8}"
    boto3.client("s3").create_bucket(Bucket=name)
    return Bucket("s3", name, s3_env, lambda: _keys(name))


def _keys(bucket: str) -> list[str]:
    listed = boto3.client("s3").list_objects_v2(Bucket=bucket)
    return [item["Key"] for item in listed.get("Contents", [])]


@pytest.fixture
def filesystem(s3_env):
    import pyarrow.fs

    return pyarrow.fs.S3FileSystem(endpoint_override=s3_env["AWS_ENDPOINT_URL"], region="us-east-1")
