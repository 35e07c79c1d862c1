#pragma once

#include <algorithm>
#include <cstddef>
#include <memory>
#include <vector>

namespace newsflow::extractors::internal {

// Gumbo's memory for one page: bump allocation from growing chunks, all released at once with
// the page. Gumbo makes many small allocations and frees (tokens, string buffers, vectors); with
// malloc they and the final tree walk of gumbo_destroy_output were a fifth of the parse.
class Arena {
 public:
  Arena() = default;
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;
  ~Arena() {
    for (auto& chunk : chunks_) spare().give_back(std::move(chunk));
  }

  void* allocate(std::size_t size) {
    size = (size + 15) & ~std::size_t{15};
    if (size > left_) {
      Chunk chunk = spare().take(std::max(size, next_chunk_));
      next_chunk_ = std::min<std::size_t>(next_chunk_ * 2, std::size_t{4} << 20);
      cursor_ = chunk.bytes.get();
      left_ = chunk.size;
      chunks_.push_back(std::move(chunk));
    }
    void* p = cursor_;
    cursor_ += size;
    left_ -= size;
    return p;
  }
  static void* allocate(void* arena, std::size_t size) {
    return static_cast<Arena*>(arena)->allocate(size);
  }
  static void deallocate(void*, void*) {}

 private:
  struct Chunk {
    std::unique_ptr<std::byte[]> bytes;
    std::size_t size = 0;
  };
  // The chunks of the pages parsed before on this thread, kept for the next page: a fresh
  // multi-megabyte chunk for every page cost its page faults and the zeroing of its memory.
  class Spare {
   public:
    Chunk take(std::size_t at_least) {
      for (auto it = chunks_.begin(); it != chunks_.end(); ++it) {
        if (it->size >= at_least) {
          Chunk chunk = std::move(*it);
          chunks_.erase(it);
          bytes_ -= chunk.size;
          return chunk;
        }
      }
      return {std::make_unique_for_overwrite<std::byte[]>(at_least), at_least};
    }
    void give_back(Chunk chunk) {
      if (bytes_ + chunk.size > kMaxBytes) return;  // freed: a huge page does not pin memory
      bytes_ += chunk.size;
      chunks_.push_back(std::move(chunk));
    }

   private:
    static constexpr std::size_t kMaxBytes = std::size_t{16} << 20;
    std::vector<Chunk> chunks_;
    std::size_t bytes_ = 0;
  };
  static Spare& spare() {
    thread_local Spare spare;
    return spare;
  }

  std::vector<Chunk> chunks_;
  std::byte* cursor_ = nullptr;
  std::size_t left_ = 0;
  std::size_t next_chunk_ = 64 * 1024;
};

}  // namespace newsflow::extractors::internal
