#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace newsflow::dedup::internal {

/// Room for one more in `v`, grown by a quarter (doubling leaves a third of a full book's term
/// table and members' lists unused on average), at most to `cap`.
template <typename T>
void grow_by_quarter(std::vector<T>& v, std::size_t cap = SIZE_MAX) {
  if (v.size() < v.capacity()) return;
  v.reserve(std::min(cap, std::max<std::size_t>(4, v.capacity() + v.capacity() / 4)));
}

}  // namespace newsflow::dedup::internal
