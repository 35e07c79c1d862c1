#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <span>

namespace newsflow::dedup::internal {

/// A short list of 32-bit numbers (the stories that have a term) in 16 bytes, its first two
/// held in place: most terms are in one story, where a `std::vector` took 24 bytes and a heap
/// block of 32. Past two, the numbers move to a heap block that doubles as it fills. Copyable.
class SlotList {
 public:
  SlotList() = default;
  SlotList(const SlotList& o) { assign(o.view()); }
  SlotList& operator=(const SlotList& o) {
    if (this != &o) assign(o.view());
    return *this;
  }
  SlotList(SlotList&& o) noexcept { steal(o); }
  SlotList& operator=(SlotList&& o) noexcept {
    if (this != &o) {
      release();
      steal(o);
    }
    return *this;
  }
  ~SlotList() { release(); }

  std::uint32_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  std::uint32_t* begin() { return data(); }
  std::uint32_t* end() { return data() + size_; }
  const std::uint32_t* begin() const { return data(); }
  const std::uint32_t* end() const { return data() + size_; }
  std::uint32_t back() const { return data()[size_ - 1]; }
  std::span<const std::uint32_t> view() const { return {data(), size_}; }

  void push_back(std::uint32_t v) {
    if (size_ == capacity_) grow(capacity_ * 2);
    data()[size_++] = v;
  }
  /// Takes out the last `v` held, the last number in its place (order is not kept there).
  void remove_last(std::uint32_t v) {
    std::uint32_t* d = data();
    for (std::uint32_t i = size_; i-- > 0;) {
      if (d[i] == v) {
        d[i] = d[size_ - 1];
        --size_;
        return;
      }
    }
  }
  void clear() {
    release();
    size_ = 0;
  }
  /// Holds `values` instead (what a saved list held).
  void assign(std::span<const std::uint32_t> values) {
    clear();
    if (values.size() > kInline) grow(static_cast<std::uint32_t>(values.size()));
    std::copy(values.begin(), values.end(), data());
    size_ = static_cast<std::uint32_t>(values.size());
  }
  /// Heap bytes held (0 while the numbers fit in place).
  std::size_t heap_bytes() const { return capacity_ > kInline ? capacity_ * 4u : 0; }

 private:
  static constexpr std::uint32_t kInline = 2;
  std::uint32_t* data() { return capacity_ > kInline ? heap_ : in_place_; }
  const std::uint32_t* data() const { return capacity_ > kInline ? heap_ : in_place_; }
  void grow(std::uint32_t capacity) {
    auto* next = new std::uint32_t[capacity];
    std::copy(data(), data() + size_, next);
    release();
    heap_ = next;
    capacity_ = capacity;
  }
  void release() {
    if (capacity_ > kInline) delete[] heap_;
    capacity_ = kInline;
  }
  void steal(SlotList& o) {
    size_ = o.size_;
    capacity_ = o.capacity_;
    if (capacity_ > kInline) {
      heap_ = o.heap_;
    } else {
      std::memcpy(in_place_, o.in_place_, sizeof in_place_);
    }
    o.capacity_ = kInline;
    o.size_ = 0;
  }

  std::uint32_t size_ = 0;
  std::uint32_t capacity_ = kInline;  // kInline: the numbers are in place
  union {
    std::uint32_t in_place_[kInline] = {};
    std::uint32_t* heap_;
  };
};
static_assert(sizeof(SlotList) == 16);

}  // namespace newsflow::dedup::internal
