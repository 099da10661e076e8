#include "nimbus/core/pod_array.h"

#ifndef _GNU_SOURCE
#define _GNU_SOURCE  // mremap
#endif
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <string>

namespace nimbus {
namespace {

std::size_t PageSize() {
  static const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  return page;
}

std::size_t RoundUpToPage(std::size_t bytes) {
  const std::size_t page = PageSize();
  return (bytes + page - 1) / page * page;
}

// The `bytes` mapped at `data`, moved to a mapping of `length` (mremap: the pages move, nothing
// is copied; the kernel grows the mapping in place where it can).
Result<void*> Move(void* data, std::size_t bytes, std::size_t length) {
#if defined(__SANITIZE_THREAD__)
  // ThreadSanitizer does not intercept mremap, so the pages a move lands on would keep the shadow
  // of whatever was mapped there before (another thread's array, itself moved away by mremap),
  // and TSan would report that thread's old writes as racing with ours. Under TSan the move lands
  // on a range just mapped, which TSan has seen and marked as this thread's. (Not in other
  // builds: the fresh range would count a second time against a worker's RLIMIT_AS.)
  void* target = mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (target == MAP_FAILED) return ErrnoError("cannot reserve " + std::to_string(length) + " bytes", errno);
  void* p = mremap(data, bytes, length, MREMAP_MAYMOVE | MREMAP_FIXED, target);
  if (p == MAP_FAILED) munmap(target, length);
#else
  void* p = mremap(data, bytes, length, MREMAP_MAYMOVE);
#endif
  if (p == MAP_FAILED) return ErrnoError("cannot grow a mapping to " + std::to_string(length) + " bytes", errno);
  return p;
}

}  // namespace

int64_t MemoryInUse() {
  std::FILE* statm = std::fopen("/proc/self/statm", "r");
  if (statm == nullptr) return 0;
  long long size = 0, resident = 0;
  const bool read = std::fscanf(statm, "%lld %lld", &size, &resident) == 2;
  std::fclose(statm);
  rlimit address_space{};
  const bool limited = ::getrlimit(RLIMIT_AS, &address_space) == 0 && address_space.rlim_cur != RLIM_INFINITY;
  return read ? (limited ? size : resident) * static_cast<int64_t>(PageSize()) : 0;
}

Result<MappedRegion> MappedRegion::Reserve(std::size_t bytes) {
  MappedRegion region;
  if (bytes == 0) return region;
  const std::size_t length = RoundUpToPage(bytes);
  void* p = mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return ErrnoError("cannot reserve " + std::to_string(length) + " bytes", errno);
  // Large arrays fill faster in 2 MiB pages: a fault per 2 MiB instead of per 4 KiB. Only a
  // hint; where transparent huge pages are off this does nothing.
  ::madvise(p, length, MADV_HUGEPAGE);
  region.data_ = p;
  region.bytes_ = length;
  return region;
}

MappedRegion::~MappedRegion() {
  if (data_ != nullptr) munmap(data_, bytes_);
}

MappedRegion& MappedRegion::operator=(MappedRegion&& other) noexcept {
  if (this != &other) {
    if (data_ != nullptr) munmap(data_, bytes_);
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void MappedRegion::Truncate(std::size_t keep) {
  const std::size_t kept = RoundUpToPage(keep);
  if (data_ == nullptr || kept >= bytes_) return;
  munmap(static_cast<char*>(data_) + kept, bytes_ - kept);
  bytes_ = kept;
  if (bytes_ == 0) data_ = nullptr;
}

Status MappedRegion::Grow(std::size_t bytes) {
  const std::size_t length = RoundUpToPage(bytes);
  if (length <= bytes_) return Status::Ok();
  if (data_ == nullptr) {
    NIMBUS_ASSIGN_OR_RETURN(*this, Reserve(length));
    return Status::Ok();
  }
  NIMBUS_ASSIGN_OR_RETURN(void* const p, Move(data_, bytes_, length));
  ::madvise(p, length, MADV_HUGEPAGE);
  data_ = p;
  bytes_ = length;
  return Status::Ok();
}

}  // namespace nimbus
