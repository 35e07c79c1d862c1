#pragma once

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <memory>
#include <vector>

namespace newsflow::extractors::internal {

// Gumbo's memory for one page: bump allocation from growing chunks, all released at once with
// the page. Gumbo makes many small allocations and frees (tokens, string buffers, vectors); with
// malloc they and the final tree walk of gumbo_destroy_output were a fifth of the parse.
// A large block (a text, attribute or child list of a quarter megabyte or more) is allocated on
// its own and freed when Gumbo frees it: Gumbo grows a buffer by allocating one twice its size
// and freeing the old, and in a bump arena the old ones stayed, the sizes of one buffer summing
// to four times its text.
class Arena {
 public:
  Arena() = default;
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;
  ~Arena() {
    for (auto& chunk : chunks_) spare().give_back(std::move(chunk));
  }

  void* allocate(std::size_t size) {
    if (size >= kLargeBytes) {
      large_.push_back(std::make_unique_for_overwrite<std::byte[]>(size));
      return large_.back().get();
    }
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
  // Frees a large block; a small one goes with the arena.
  void deallocate(void* p) {
    if (large_.empty()) return;  // the usual page: no lookup
    // Searched from the newest: a buffer that grows frees the block allocated last but one.
    for (auto it = large_.rbegin(); it != large_.rend(); ++it) {
      if (it->get() == p) {
        large_.erase(std::next(it).base());
        return;
      }
    }
  }
  static void deallocate(void* arena, void* p) { static_cast<Arena*>(arena)->deallocate(p); }

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

  static constexpr std::size_t kLargeBytes = std::size_t{256} << 10;

  std::vector<Chunk> chunks_;
  std::vector<std::unique_ptr<std::byte[]>> large_;  // live large blocks, oldest first
  std::byte* cursor_ = nullptr;
  std::size_t left_ = 0;
  std::size_t next_chunk_ = 64 * 1024;
};

}  // namespace newsflow::extractors::internal
