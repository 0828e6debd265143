// Reading a graph saved by hnswlib's saveIndex, as both builds do it: src/graph.cc (the native
// addon) and wasm/graph.cc (WebAssembly) include this after hnswlib.h, so a saved graph is checked
// once, the same way, with the same messages (the tests compare them across builds). What truly
// differs stays in each file: where the bytes come from, the width of the saved size_t fields
// (`Size`: size_t natively; uint64_t in wasm32, which reads the 64-bit layout) and the base layer
// (read straight into memory natively; wasm32 narrows each 8-byte label to hnswlib's 4 bytes).
//
// A byte source is a class with Bytes(out, n), which refuses to read past the end, and Left().
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <stdexcept>
#include <vector>

namespace saved_graph {
// Internal linkage, as the rest of each build: one translation unit includes this, and the addon
// exports nothing but its module.
namespace {

using Hnsw = hnswlib::HierarchicalNSW<float>;
using hnswlib::linklistsizeint;
using hnswlib::tableint;

inline void Require(bool condition, const char* what) {
  if (!condition) throw std::runtime_error(what);
}

/** Bytes in memory. */
class MemoryBytes {
 public:
  MemoryBytes(const uint8_t* data, size_t size) : data_(data), size_(size) {}

  void Bytes(void* out, size_t n) {
    if (n > size_ - at_) throw std::runtime_error("it ends early");
    std::memcpy(out, data_ + at_, n);
    at_ += n;
  }

  size_t Left() const { return size_ - at_; }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t at_ = 0;
};

/** The next sizeof(T) bytes of a byte source as a T. */
template <typename T, typename In>
T Pod(In& in) {
  T value;
  in.Bytes(&value, sizeof value);
  return value;
}

/**
 * Room a graph may keep beyond its count: up to its count again, plus a new graph's 1024. A graph
 * that starts with room for 1024 and doubles when full (@quarry/core's HnswGraph) never has more,
 * and the bound keeps what a load allocates within a small multiple of the file's size.
 */
constexpr uint64_t kSpareElements = 1024;

/** hnswlib's entry point and top layer while a graph is empty (its constructor's -1s). */
constexpr tableint kNoEntryPoint = static_cast<tableint>(-1);

/** The fields saveIndex writes first, in its order; a saved label takes sizeof(Size) bytes. */
template <typename Size>
struct Header {
  Size offsetLevel0;
  Size maxElements;
  Size count;
  Size sizeDataPerElement;
  Size labelOffset;
  Size offsetData;
  int32_t maxLevel;
  tableint enterpoint;
  Size maxM;
  Size maxM0;
  Size m;
  double mult;
  Size efConstruction;
};

/** Reads each field in turn, in the order given (a comma fold runs left to right). */
template <typename In, typename... T>
void Fields(In& in, T&... fields) {
  (in.Bytes(&fields, sizeof fields), ...);
}

/**
 * Reads the header and checks every field against the space's vector size (`dataSize` bytes), the
 * bytes left for the base layer and the other fields, before anything is allocated from it: each
 * holds what hnswlib's constructor and addPoint can make of it, and no more.
 */
template <typename Size, typename In>
Header<Size> ReadHeader(In& in, Size dataSize) {
  Header<Size> h;
  Fields(in, h.offsetLevel0, h.maxElements, h.count, h.sizeDataPerElement, h.labelOffset, h.offsetData, h.maxLevel,
         h.enterpoint, h.maxM, h.maxM0, h.m, h.mult, h.efConstruction);

  // hnswlib's constructor: maxM = M (at most 10000), maxM0 = 2 M, mult = 1 / ln M, efConstruction >= M.
  Require(h.m >= 2 && h.m <= 10000 && h.maxM == h.m && h.maxM0 == 2 * h.m, "its degree is invalid");
  const Size sizeLinks0 = h.maxM0 * sizeof(tableint) + sizeof(linklistsizeint);
  Require(h.offsetLevel0 == 0 && h.offsetData == sizeLinks0 && h.labelOffset == sizeLinks0 + dataSize &&
              h.sizeDataPerElement == h.labelOffset + sizeof(Size),
          "its element layout does not match the index's dimensions");
  Require(h.count <= h.maxElements && h.maxElements <= 0xffffffffull, "its element counts are invalid");
  Require(h.count <= in.Left() / h.sizeDataPerElement, "it ends early");
  Require(h.maxElements - h.count <= h.count + kSpareElements, "it reserves room for more elements than twice its count plus 1024");
  // The level of a new element is -ln(u) * mult: a larger mult would let one add allocate gigabytes.
  Require(std::isfinite(h.mult) && std::fabs(h.mult * std::log(static_cast<double>(h.m)) - 1) < 1e-9, "its level multiplier is invalid");
  Require(h.efConstruction >= h.m && h.efConstruction <= 0xffffffffull, "its construction breadth is invalid");
  if (h.count == 0) {
    Require(h.enterpoint == kNoEntryPoint && h.maxLevel == -1, "it is empty but has an entry point");
  } else {
    Require(h.enterpoint < h.count && h.maxLevel >= 0, "its entry point is invalid");
  }
  return h;
}

/**
 * Gives a fresh graph the header's fields, the space's distance and hnswlib's per-element
 * bookkeeping. The base layer's memory (`perElement` bytes an element) is the caller's to allocate.
 */
template <typename Size>
void Adopt(Hnsw& g, const Header<Size>& h, hnswlib::SpaceInterface<float>& space, size_t perElement) {
  const auto maxElements = static_cast<size_t>(h.maxElements);
  g.offsetLevel0_ = 0;
  g.max_elements_ = maxElements;
  g.size_data_per_element_ = perElement;
  g.label_offset_ = static_cast<size_t>(h.labelOffset);
  g.offsetData_ = static_cast<size_t>(h.offsetData);
  g.maxlevel_ = h.maxLevel;
  g.enterpoint_node_ = h.enterpoint;
  g.maxM_ = static_cast<size_t>(h.maxM);
  g.maxM0_ = static_cast<size_t>(h.maxM0);
  g.M_ = static_cast<size_t>(h.m);
  g.mult_ = h.mult;
  g.revSize_ = 1.0 / h.mult;
  g.ef_construction_ = static_cast<size_t>(h.efConstruction);
  g.ef_ = 10;
  g.data_size_ = space.get_data_size();
  g.fstdistfunc_ = space.get_dist_func();
  g.dist_func_param_ = space.get_dist_func_param();
  g.size_links_level0_ = static_cast<size_t>(h.maxM0 * sizeof(tableint) + sizeof(linklistsizeint));
  g.size_links_per_element_ = static_cast<size_t>(h.maxM * sizeof(tableint) + sizeof(linklistsizeint));

  g.linkLists_ = static_cast<char**>(std::calloc(maxElements > 0 ? maxElements : 1, sizeof(void*)));
  if (g.linkLists_ == nullptr) throw std::bad_alloc();
  g.element_levels_ = std::vector<int>(maxElements);
  std::vector<std::mutex>(maxElements).swap(g.link_list_locks_);
  std::vector<std::mutex>(Hnsw::MAX_LABEL_OPERATION_LOCKS).swap(g.label_op_locks_);
  g.visited_list_pool_.reset(new hnswlib::VisitedListPool(1, static_cast<int>(maxElements)));
}

/**
 * The upper layers, which follow the base layer: each element's list size, then its lists. Read
 * whole first (a few percent of the file), so a file is read in two reads, not one per element.
 * `labelFits(i)` says whether element i's saved label was a uint32; it is asked once element i is
 * read, so both builds refuse the same element of a file.
 */
template <typename Size, typename In, typename LabelFits>
void ReadUpperLayers(Hnsw& g, const Header<Size>& h, In& in, LabelFits labelFits) {
  std::vector<uint8_t> rest(static_cast<size_t>(in.Left()));
  in.Bytes(rest.data(), rest.size());
  MemoryBytes lists(rest.data(), rest.size());
  g.label_lookup_.reserve(static_cast<size_t>(h.count));
  for (size_t i = 0; i < h.count; i++) {
    // Elements count only once read in full, so a failure part way frees exactly what was made.
    const auto listSize = Pod<linklistsizeint>(lists);
    if (listSize != 0) {
      Require(listSize % g.size_links_per_element_ == 0 && listSize <= lists.Left(), "a link list is invalid");
      g.linkLists_[i] = static_cast<char*>(std::malloc(listSize));
      if (g.linkLists_[i] == nullptr) throw std::bad_alloc();
      g.element_levels_[i] = static_cast<int>(listSize / g.size_links_per_element_);
      lists.Bytes(g.linkLists_[i], listSize);
    }
    g.cur_element_count = i + 1;
    Require(labelFits(i), "a label is not a uint32");
    Require(g.label_lookup_.emplace(g.getExternalLabel(static_cast<tableint>(i)), static_cast<tableint>(i)).second, "two elements have the same label");
  }
  Require(lists.Left() == 0, "it has bytes after the last element");
}

/** Links of `id` at `level` (0: the base layer): their count and where they start. */
inline const tableint* Links(const Hnsw& g, tableint id, int level, size_t* count) {
  const linklistsizeint* list = level == 0
      ? reinterpret_cast<const linklistsizeint*>(g.data_level0_memory_ + id * g.size_data_per_element_ + g.offsetLevel0_)
      : reinterpret_cast<const linklistsizeint*>(g.linkLists_[id] + (level - 1) * g.size_links_per_element_);
  *count = *reinterpret_cast<const unsigned short*>(list);
  return list + 1;
}

/**
 * Checks a graph read in full: its entry point has the top layer and no element has more, every
 * link names an element that exists and has that layer, and no list is longer than the graph's
 * degree allows; then counts the deleted elements.
 */
template <typename Size>
void CheckLinks(Hnsw& g, const Header<Size>& h) {
  Require(h.count == 0 || g.element_levels_[h.enterpoint] == h.maxLevel, "its entry point is invalid");
  for (size_t i = 0; i < h.count; i++) {
    const auto id = static_cast<tableint>(i);
    Require(g.element_levels_[i] <= h.maxLevel, "an element has more layers than the entry point");
    for (int level = 0; level <= g.element_levels_[i]; level++) {
      size_t n = 0;
      const tableint* links = Links(g, id, level, &n);
      Require(n <= (level == 0 ? h.maxM0 : h.maxM), "a link list is too long");
      for (size_t j = 0; j < n; j++) {
        Require(links[j] < h.count && g.element_levels_[links[j]] >= level, "a link names no element of its layer");
      }
    }
    if (g.isMarkedDeleted(id)) g.num_deleted_ += 1;
  }
}

}  // namespace
}  // namespace saved_graph
