"""nimbus.LogisticRegression(runtime='lambda') with its data in S3: the estimator writes the rows
as shards to s3://data/heart (a moto_server on 127.0.0.1), and its workers are functions that
`nimbus lambda emulate` runs behind the Invoke and Runtime APIs on 127.0.0.1, reading their
shards from there. The model must be the threads runtime's."""

import os
import socket
import subprocess
import time
import urllib.request

import numpy as np
import pytest

import nimbus

pytestmark = pytest.mark.skipif(not nimbus._nimbus.runtime_available("lambda"),
                                reason="this build has no Lambda runtime (NIMBUS_WITH_LAMBDA=OFF)")

CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_REGION": "us-east-1"}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve(command, port, log_path, env):
    """Starts `command` and waits (at most 15 s) until it accepts on 127.0.0.1:port."""
    log = open(log_path, "w")
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env)
    for _ in range(300):
        if process.poll() is not None:
            break
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
            return process
        except OSError:
            time.sleep(0.05)
    process.kill()
    process.wait()
    pytest.fail("%s did not start: %s" % (command[0], open(log_path).read()))


def stop(process):
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@pytest.fixture
def s3(tmp_path, monkeypatch):
    """moto_server (the machine image's Python has it) with a bucket 'data'; this process's AWS
    environment points at it, so the estimator writes its shards there."""
    port = free_port()
    server = serve(["moto_server", "-H", "127.0.0.1", "-p", str(port)], port, tmp_path / "moto.log", dict(os.environ))
    endpoint = "http://127.0.0.1:%d" % port
    try:
        urllib.request.urlopen(urllib.request.Request(endpoint + "/data", method="PUT"), timeout=10).close()
        for name, value in CREDENTIALS.items():
            monkeypatch.setenv(name, value)
        monkeypatch.setenv("AWS_ENDPOINT_URL", endpoint)
        yield endpoint
    finally:
        stop(server)


@pytest.fixture
def functions(s3, tmp_path):
    """`nimbus lambda emulate`: its function instances read S3 at the moto_server."""
    port = free_port()
    env = dict(os.environ, AWS_ENDPOINT_URL=s3, **CREDENTIALS)
    emulator = serve([nimbus.linear_model.WORKER_PROGRAM, "lambda", "emulate", "--port", str(port)], port,
                     tmp_path / "emulator.log", env)
    try:
        yield "http://127.0.0.1:%d" % port
    finally:
        stop(emulator)


def test_lambda_workers_read_their_shards_from_s3(heart, s3, functions):
    X, y = heart
    threads = nimbus.LogisticRegression(penalty="l1", C=0.5, n_workers=3).fit(X, y)
    options = {"lambda_function": "nimbus-worker", "lambda_endpoint": functions, "shard_dir": "s3://data/heart"}
    model = nimbus.LogisticRegression(penalty="l1", C=0.5, n_workers=3, runtime="lambda",
                                      runtime_options=options).fit(X, y)
    np.testing.assert_allclose(model.coef_, threads.coef_, atol=1e-8)
    np.testing.assert_allclose(model.intercept_, threads.intercept_, atol=1e-8)
    listing = urllib.request.urlopen(s3 + "/data?list-type=2", timeout=10).read().decode()
    assert "heart/manifest.json" in listing, listing
