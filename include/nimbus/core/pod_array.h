// PodArray<T>: an array of plain values in its own anonymous memory mapping.
//
// Reserve() maps address space only (MAP_NORESERVE); pages become resident when written.
// So a reader that does not know the final size can reserve a generous upper bound and
// append without ever reallocating: peak memory is what was written, not twice that, as it
// would be with a doubling std::vector.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <span>
#include <type_traits>
#include <utility>

#include "nimbus/core/status.h"

namespace nimbus {

// The memory this process holds now as its limits count it: its address space where that is
// limited (RLIMIT_AS), else what it holds resident (Linux: /proc/self/statm; 0 where unknown).
int64_t MemoryInUse();

// An anonymous read-write mapping; the untyped half of PodArray.
class MappedRegion {
 public:
  MappedRegion() = default;
  static Result<MappedRegion> Reserve(std::size_t bytes);
  ~MappedRegion();
  MappedRegion(MappedRegion&& other) noexcept { *this = std::move(other); }
  MappedRegion& operator=(MappedRegion&& other) noexcept;
  MappedRegion(const MappedRegion&) = delete;
  MappedRegion& operator=(const MappedRegion&) = delete;

  void* data() const { return data_; }
  std::size_t bytes() const { return bytes_; }
  // Gives back the address space past the first `keep` bytes (rounded up to a page).
  void Truncate(std::size_t keep);
  // At least `bytes` long, keeping the contents (mremap: the pages move, nothing is copied).
  Status Grow(std::size_t bytes);

 private:
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
};

template <typename T>
class PodArray {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  PodArray() = default;
  static Result<PodArray> Reserve(std::size_t capacity) {
    NIMBUS_ASSIGN_OR_RETURN(MappedRegion region, MappedRegion::Reserve(capacity * sizeof(T)));
    PodArray array;
    array.region_ = std::move(region);
    array.capacity_ = capacity;
    return array;
  }

  T* data() { return static_cast<T*>(region_.data()); }
  const T* data() const { return static_cast<const T*>(region_.data()); }
  std::size_t size() const { return size_; }
  std::size_t capacity() const { return capacity_; }
  bool full() const { return size_ == capacity_; }
  T& operator[](std::size_t i) { return data()[i]; }
  const T& operator[](std::size_t i) const { return data()[i]; }
  // The caller checks full() first (or reserves with Ensure): appending past the reservation
  // is a bug.
  void push_back(const T& value) { data()[size_++] = value; }
  // Room for `more` entries past size(): the reservation grows by at least half when it must,
  // so that appending stays amortized O(1) while the address space stays near what is
  // written (a limit on it, RLIMIT_AS, then holds for what the data needs).
  Status Ensure(std::size_t more) {
    if (size_ + more <= capacity_) return Status::Ok();
    const std::size_t wanted = std::max({size_ + more, capacity_ + capacity_ / 2, 4096 / sizeof(T)});
    NIMBUS_RETURN_IF_ERROR(region_.Grow(wanted * sizeof(T)));
    capacity_ = region_.bytes() / sizeof(T);
    return Status::Ok();
  }
  void clear() { size_ = 0; }
  // The same memory as an array of `size` values of another type (its bytes as they are; the
  // caller has written them as such).
  template <typename U>
  PodArray<U> Reinterpret(std::size_t size) && {
    PodArray<U> other;
    other.region_ = std::move(region_);
    other.capacity_ = other.region_.bytes() / sizeof(U);
    other.size_ = size;
    size_ = capacity_ = 0;
    return other;
  }
  // n <= capacity(). Entries past the old size are zero.
  void resize(std::size_t n) {
    if (n > size_) std::memset(data() + size_, 0, (n - size_) * sizeof(T));
    size_ = n;
  }
  std::span<T> span() { return {data(), size_}; }
  std::span<const T> span() const { return {data(), size_}; }
  // Gives back the reserved address space past size().
  void ShrinkToFit() {
    region_.Truncate(size_ * sizeof(T));
    capacity_ = size_;
  }

 private:
  template <typename U>
  friend class PodArray;
  MappedRegion region_;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
};

}  // namespace nimbus
