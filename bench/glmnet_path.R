# glmnet's L1 logistic path on a LIBSVM file, for bench/glmnet.sh.
#
#   Rscript bench/glmnet_path.R DATA.svm LAMBDAS.txt OUT.tsv
#
# LAMBDAS.txt: one lambda per line, largest first (nimbus's grid). glmnet fits them on one core
# with its defaults (thresh 1e-7) but standardize = FALSE, so that its problem is nimbus's:
#   (1/N) sum_r log(1 + exp(-y_r (a_r . x + b)))  +  lambda ||x||_1,   b not penalized.
# Writes a row per lambda: lambda, the objective of glmnet's fit (computed here from its
# coefficients), its nonzeros; and a last row "fit_seconds" with the fit's elapsed time
# (glmnet() alone: reading the file is not counted).
suppressPackageStartupMessages({
  library(Matrix)
  library(glmnet)
})
args <- commandArgs(trailingOnly = TRUE)
if (length(args) != 3) stop("usage: Rscript glmnet_path.R DATA.svm LAMBDAS.txt OUT.tsv")
source_dir <- dirname(sub("--file=", "", grep("--file=", commandArgs(FALSE), value = TRUE)))
source(file.path(source_dir, "glmnet_libsvm.R"))

data <- read_libsvm(args[1])
lambdas <- scan(args[2], quiet = TRUE)
y01 <- as.numeric(data$y > 0)
elapsed <- system.time(
  fit <- glmnet(data$x, y01, family = "binomial", lambda = lambdas, standardize = FALSE, intercept = TRUE)
)[["elapsed"]]

sign_y <- 2 * y01 - 1
out <- data.frame(lambda = fit$lambda, objective = NA_real_, nonzeros = fit$df)
for (k in seq_along(fit$lambda)) {
  margins <- as.numeric(data$x %*% fit$beta[, k]) + fit$a0[k]
  z <- -sign_y * margins
  loss <- mean(ifelse(z > 0, z + log1p(exp(-z)), log1p(exp(z))))
  out$objective[k] <- loss + fit$lambda[k] * sum(abs(fit$beta[, k]))
}
lines <- c(sprintf("%.17g\t%.17g\t%d", out$lambda, out$objective, out$nonzeros), sprintf("fit_seconds\t%.3f", elapsed))
tmp <- paste0(args[3], ".tmp")
writeLines(lines, tmp)
invisible(file.rename(tmp, args[3]))
