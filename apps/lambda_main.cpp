// nimbus-lambda: the bootstrap of the Lambda function that runs nimbus workers.
#include <malloc.h>

#include "nimbus/nimbus.h"

int main() {
  mallopt(M_MMAP_THRESHOLD, 256 << 20);  // as the nimbus binary does (apps/main.cpp)
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
  return nimbus::LambdaBootstrapMain();
}
