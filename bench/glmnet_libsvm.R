# A LIBSVM file as glmnet's input (bench/glmnet_path.R, bench/glmnet_cv.R): a sparse matrix
# (Matrix's dgCMatrix) of its features and its labels.
read_libsvm <- function(path) {
  lines <- readLines(path)
  fields <- strsplit(lines, "[[:space:]]+")
  labels <- as.numeric(vapply(fields, `[`, "", 1))
  pairs <- lapply(fields, function(f) f[-1][f[-1] != ""])
  counts <- lengths(pairs)
  flat <- unlist(pairs, use.names = FALSE)
  colon <- regexpr(":", flat, fixed = TRUE)
  cols <- as.integer(substr(flat, 1, colon - 1))
  values <- as.numeric(substr(flat, colon + 1, nchar(flat)))
  rows <- rep.int(seq_along(lines), counts)
  x <- sparseMatrix(i = rows, j = cols, x = values, dims = c(length(lines), max(cols)))
  list(x = x, y = labels)
}
