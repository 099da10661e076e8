"""What the Python tests share: data written as LIBSVM, models read from nimbus's JSON.

A test imports it with its folder on the path:
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "support"))
"""
import json

import numpy as np


def write_libsvm(path, a, y):
    """Rows of the dense matrix a with labels y, zeros left out, at full precision."""
    with open(path, "w") as out:
        for row, label in zip(a, y):
            features = " ".join(f"{j + 1}:{v:.17g}" for j, v in enumerate(row) if v != 0)
            out.write(f"{label:.17g} {features}\n")


def read_model(path, cols):
    """A nimbus JSON model as (dense coefficients over cols features, intercept or 0, loss name)."""
    with open(path) as file:
        model = json.load(file)
    coef = np.zeros(cols)
    for index, value in zip(model["weights"]["indices"], model["weights"]["values"]):
        coef[index - 1] = value
    return coef, model.get("bias", 0.0), model["loss"]


def read_multiclass_model(path, cols):
    """A nimbus JSON model of C classes as (coefficients cols x C, intercepts (C,), class values)."""
    with open(path) as file:
        model = json.load(file)
    classes = model["classes"]
    coef = np.zeros((cols, classes))
    for index, values in zip(model["weights"]["indices"], model["weights"]["values"]):
        coef[index - 1, :] = values
    intercept = np.array(model["bias"]) if model["intercept"] else np.zeros(classes)
    labels = model["labels"]
    values = labels.get("classes", [labels["negative"], labels["positive"]])
    return coef, intercept, values
