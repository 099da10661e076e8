# cv.glmnet's K-fold cross-validation of an L1 logistic path on a LIBSVM file, for bench/glmnet_cv.sh.
#
#   Rscript bench/glmnet_cv.R DATA.svm LAMBDAS.txt FOLDS.txt OUT.tsv
#
# LAMBDAS.txt: one lambda per line, largest first (nimbus's grid); FOLDS.txt: each row's fold,
# 0-based, one per line (nimbus cv --write-folds), so that both hold out the same rows. glmnet
# fits every fold and the whole on one core with its defaults (thresh 1e-7) but
# standardize = FALSE, so that its problem is nimbus's (bench/glmnet_path.R); type.measure
# "deviance" is twice the mean log loss. Writes a row per lambda: lambda, the mean over the folds
# of the held-out log loss, and a last row "fit_seconds" (cv.glmnet() alone: reading the file is
# not counted).
suppressPackageStartupMessages({
  library(Matrix)
  library(glmnet)
})
args <- commandArgs(trailingOnly = TRUE)
if (length(args) != 4) stop("usage: Rscript glmnet_cv.R DATA.svm LAMBDAS.txt FOLDS.txt OUT.tsv")
source_dir <- dirname(sub("--file=", "", grep("--file=", commandArgs(FALSE), value = TRUE)))
source(file.path(source_dir, "glmnet_libsvm.R"))

data <- read_libsvm(args[1])
lambdas <- scan(args[2], quiet = TRUE)
folds <- scan(args[3], quiet = TRUE) + 1
if (length(folds) != length(data$y)) stop("FOLDS.txt: ", length(folds), " lines for ", length(data$y), " rows")
y01 <- as.numeric(data$y > 0)
elapsed <- system.time(
  fit <- cv.glmnet(data$x, y01, family = "binomial", lambda = lambdas, foldid = folds, type.measure = "deviance",
                   standardize = FALSE, intercept = TRUE)
)[["elapsed"]]

lines <- c(sprintf("%.17g\t%.17g", fit$lambda, fit$cvm / 2), sprintf("fit_seconds\t%.3f", elapsed))
tmp <- paste0(args[4], ".tmp")
writeLines(lines, tmp)
invisible(file.rename(tmp, args[4]))
