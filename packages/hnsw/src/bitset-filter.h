// The filter of a search, in both builds (src/graph.cc and wasm/graph.cc include this after
// hnswlib.h): a bitset tested in C++, so no user code runs inside hnswlib.
#pragma once

#include <cstddef>
#include <cstdint>

namespace {  // internal linkage, as the rest of each build (one translation unit includes this)

/** Accepts the labels whose bit is set in a bitset of 32-bit words (@quarry/core's Bitset). */
class BitsetFilter : public hnswlib::BaseFilterFunctor {
 public:
  BitsetFilter(const uint32_t* words, size_t length) : words_(words), length_(length) {}
  bool operator()(hnswlib::labeltype label) override {
    const size_t word = label >> 5;
    return word < length_ && ((words_[word] >> (label & 31)) & 1u) != 0;
  }

 private:
  const uint32_t* words_;
  size_t length_;
};

}  // namespace
