"""A fit's progress (linear_model._Progress): a tqdm bar where tqdm is installed, plain lines
otherwise, only once a fit has run its first second (here: at once), and none when asked."""

import sys

import pytest

import nimbus
from nimbus import linear_model


@pytest.fixture
def at_once(monkeypatch):
    monkeypatch.setattr(linear_model._Progress, "delay_seconds", 0.0)


def test_a_bar_that_ends_at_the_stop_test(at_once, heart, capfd):
    pytest.importorskip("tqdm", reason="Debian's python3-tqdm (scripts/install-deps)")
    X, y = heart
    nimbus.LogisticRegression(penalty="l1", C=0.5, tol=1e-8).fit(X, y)
    err = capfd.readouterr().err
    assert "nimbus:" in err and "|" in err, err  # tqdm's bar
    assert "100%" in err, err  # the stop test met: the whole way
    assert "iteration" in err and "objective" in err, err


def test_plain_lines_without_tqdm(at_once, heart, capfd, monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)  # as if tqdm were not installed
    X, y = heart
    nimbus.LogisticRegression(penalty="l1", C=0.5, tol=1e-8).fit(X, y)
    err = capfd.readouterr().err
    assert err.startswith("nimbus: "), err
    assert "%" in err and "iteration" in err and "|" not in err, err


def test_cross_validation_counts_the_grids_points(at_once, heart, capfd, monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)
    monkeypatch.setattr(linear_model._Progress, "plain_every_seconds", 0.0)
    X, y = heart
    nimbus.LogisticRegressionCV(Cs=3, cv=3, penalty="l1").fit(X, y)
    err = capfd.readouterr().err
    assert "C 1 of 3" in err and "C 3 of 3" in err, err


def test_none_when_asked_or_when_verbose_prints_the_iterations(at_once, heart, capfd):
    X, y = heart
    nimbus.LogisticRegression(penalty="l1", C=0.5, progress=False).fit(X, y)
    captured = capfd.readouterr()
    assert captured.err == "" and captured.out == ""
    nimbus.LogisticRegression(penalty="l1", C=0.5, verbose=1).fit(X, y)
    captured = capfd.readouterr()
    assert "%" not in captured.err and "nimbus: iteration" in captured.out
