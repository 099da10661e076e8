"""nimbus: large regularized logistic regression across threads, processes, AWS Lambda
functions or MPI ranks, as scikit-learn estimators (docs/python.md)."""

from .linear_model import LogisticRegression, LogisticRegressionCV

__all__ = ["LogisticRegression", "LogisticRegressionCV"]
