"""nimbus.dask: fits of dask.array and dask.dataframe inputs on a real LocalCluster of three
worker processes, each partition served by a nimbus worker in a task where it lies. Checked
against the same estimator fitted on the same rows in this process (itself checked against
scikit-learn and liblinear in the other suites)."""

import os
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_iris, load_svmlight_file

import nimbus
import nimbus.dask

da = pytest.importorskip("dask.array", reason="Debian's python3-dask (scripts/install-deps)")
dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed", reason="Debian's python3-distributed (scripts/install-deps)")
pd = pytest.importorskip("pandas")

from conftest import SOURCE_DIR  # noqa: E402


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(processes=True, n_workers=3, threads_per_worker=1, dashboard_address=None) as cluster:
        with distributed.Client(cluster) as client:
            yield client


def sparse_chunks(X, sizes):
    """X (CSR, on this process) as a dask.array of CSR chunks of these row counts."""
    assert sum(sizes) == X.shape[0]
    return da.from_array(X, chunks=(tuple(sizes), X.shape[1]), asarray=False)


def expect_same_fit(dask_model, memory_model, rel=1e-8):
    assert dask_model.objective_ == pytest.approx(memory_model.objective_, rel=rel)
    np.testing.assert_allclose(dask_model.coef_, memory_model.coef_, atol=1e-5)
    # The softmax's unpenalized intercepts are unique only up to a constant added to them all.
    centred = (lambda b: b - b.mean()) if memory_model._multinomial else (lambda b: b)
    np.testing.assert_allclose(centred(dask_model.intercept_), centred(memory_model.intercept_), atol=1e-5)
    np.testing.assert_array_equal(dask_model.classes_, memory_model.classes_)


def test_l1_text_in_sparse_partitions_of_unequal_sizes_and_an_empty_one(client, text):
    X, y = text
    params = dict(penalty="l1", C=2.0, tol=1e-9)
    model = nimbus.dask.LogisticRegression(**params).fit(sparse_chunks(X, (1700, 0, 300, 1000)),
                                                          da.from_array(y, chunks=((1700, 0, 300, 1000),)))
    expect_same_fit(model, nimbus.LogisticRegression(**params).fit(X, y))
    assert model.solve_summary_["algorithm"] == "newton"
    assert np.count_nonzero(model.coef_) < X.shape[1]  # L1's zeros, as in memory
    np.testing.assert_array_equal(model.predict(X), nimbus.LogisticRegression(**params).fit(X, y).predict(X))


def test_l2_binary_with_an_intercept_on_dense_chunks(client, fashion):
    X, y = fashion
    X = X.toarray()
    params = dict(penalty="l2", C=0.1, tol=1e-10)
    model = nimbus.dask.LogisticRegression(**params).fit(da.from_array(X, chunks=((1200, 800, 1000), 784)),
                                                          da.from_array(y, chunks=((1200, 800, 1000),)))
    expect_same_fit(model, nimbus.LogisticRegression(**params).fit(X, y))


def test_l2_multinomial_of_dense_chunks(client):
    X, y = load_iris(return_X_y=True)
    labels = np.array(["setosa", "versicolor", "virginica"])[y]  # any labels, as scikit-learn takes them
    params = dict(penalty="l2", C=10.0, tol=1e-10)
    model = nimbus.dask.LogisticRegression(**params).fit(da.from_array(X, chunks=(40, 4)),
                                                          da.from_array(labels, chunks=40))
    memory = nimbus.LogisticRegression(**params).fit(X, labels)
    expect_same_fit(model, memory)
    assert model.coef_.shape == (3, 4)
    assert model._multinomial


def test_l1_multinomial_of_a_dataframe_with_row_weights(client):
    X, y = load_iris(return_X_y=True)
    weights = 1.0 + (np.arange(y.size) % 4)
    frame = pd.DataFrame(X, columns=["sepal_length", "sepal_width", "petal_length", "petal_width"])
    params = dict(penalty="l1", C=5.0, tol=1e-10)
    model = nimbus.dask.LogisticRegression(**params).fit(
        dd.from_pandas(frame, npartitions=3), dd.from_pandas(pd.Series(y), npartitions=3),
        sample_weight=dd.from_pandas(pd.Series(weights), npartitions=3))
    expect_same_fit(model, nimbus.LogisticRegression(**params).fit(X, y, sample_weight=weights))


def test_a_dask_worker_killed_mid_fit_is_replaced_and_the_answer_is_the_same(client, heart):
    X, y = heart
    params = dict(penalty="l1", C=0.5, tol=1e-9)
    model = nimbus.dask.LogisticRegression(**params)
    # Worker 1's nimbus worker kills its own process in round 3: the Dask worker that runs it
    # dies with it (its nanny starts a fresh one), and the partitions it held are recomputed.
    model._test_faults = {"inject_crash": "@1:3"}
    processes = set(client.run(os.getpid).values())
    model.fit(sparse_chunks(X, (90, 90, 90)), da.from_array(y, chunks=90))
    assert model.worker_restarts_ >= 1
    assert set(client.run(os.getpid).values()) != processes  # a Dask worker process was replaced
    expect_same_fit(model, nimbus.LogisticRegression(**params).fit(X, y))


class BytesReceived:
    """Counts the bytes of every Dask message this process receives (the client's, and the
    scheduler's, which a LocalCluster runs here too): the frames each read gives
    distributed's TCP comm to unpack."""

    def __init__(self, monkeypatch):
        import distributed.comm.tcp as tcp

        self.count = 0
        unpack = tcp.from_frames

        async def counted(frames, *args, **kwargs):
            self.count += sum(memoryview(frame).nbytes for frame in frames)
            return await unpack(frames, *args, **kwargs)

        monkeypatch.setattr(tcp, "from_frames", counted)


def test_no_partition_reaches_the_client(client, tmp_path, monkeypatch):
    out = tmp_path / "zipf.svm"
    subprocess.run([sys.executable, os.path.join(SOURCE_DIR, "bench", "data", "zipf_text.py"), "--rows", "30000",
                    "--cols", "1000", "--out", str(out)], check=True)
    X, y = load_svmlight_file(str(out), n_features=1000)
    X = X.tocsr()
    data_bytes = X.data.nbytes + X.indices.nbytes + X.indptr.nbytes
    dX, dy = da.from_array(X, chunks=(10000, 1000), asarray=False), da.from_array(y, chunks=10000)
    dX, dy = client.persist([dX, dy])  # on the workers before the fit, as a user's loaded data is
    distributed.wait([dX, dy])
    received = BytesReceived(monkeypatch)
    model = nimbus.dask.LogisticRegression(penalty="l2", C=1.0).fit(dX, dy)
    # What came to this process: Dask's messages, and the nimbus workers' replies to the master.
    assert received.count + model.bytes_received_ < data_bytes / 10, (received.count, model.bytes_received_, data_bytes)
    assert model.bytes_received_ > 0
    # The count can fail: gathering the rows brings them all.
    received.count = 0
    dX.compute()
    assert received.count > data_bytes, (received.count, data_bytes)


def test_cross_validation_deals_and_scores_the_folds_as_in_memory(client, heart):
    X, y = heart
    params = dict(Cs=5, cv=4, penalty="l1", scoring="neg_log_loss", tol=1e-9)
    model = nimbus.dask.LogisticRegressionCV(**params).fit(sparse_chunks(X, (100, 70, 100)),
                                                            da.from_array(y, chunks=((100, 70, 100),)))
    memory = nimbus.LogisticRegressionCV(**params).fit(X, y)
    np.testing.assert_allclose(model.Cs_, memory.Cs_, rtol=1e-12)
    np.testing.assert_allclose(model.C_, memory.C_, rtol=1e-12)  # the same point of the grid
    np.testing.assert_allclose(model.scores_[1.0], memory.scores_[1.0], rtol=1e-6)
    expect_same_fit(model, memory, rel=1e-6)


def nimbus_tasks_running(client):
    """The Dask workers' nimbus tasks still running (seceded ones included)."""
    def running(dask_worker):
        return [key for key, task in dask_worker.state.tasks.items()
                if str(key).startswith("nimbus-") and task.state in ("executing", "long-running", "cancelled")]
    return [key for keys in client.run(running).values() for key in keys]


def test_ctrl_c_stops_the_fit_and_the_workers_on_the_cluster(client, heart):
    import _thread
    import threading
    import time

    X, y = heart
    # Every round's replies 200 ms late: the fit's 78 rounds are still running at 1.5 s.
    model = nimbus.dask.LogisticRegression(penalty="l1", C=0.5, tol=1e-9, progress=False)
    model._test_faults = {"inject_delay": "200"}
    timer = threading.Timer(1.5, _thread.interrupt_main)  # as Ctrl-C interrupts a notebook's cell
    timer.start()
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        model.fit(sparse_chunks(X, (90, 90, 90)), da.from_array(y, chunks=90))
    timer.join()
    assert time.monotonic() - started < 30
    for _ in range(100):  # the master's BYE ends the workers' tasks (bounded: 10 s)
        if not nimbus_tasks_running(client):
            break
        time.sleep(0.1)
    assert nimbus_tasks_running(client) == []
