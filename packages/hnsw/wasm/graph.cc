// @quarry/hnsw's WebAssembly graph: the same vendored hnswlib 0.8.0 as src/graph.cc, behind a small
// C ABI that wasm/index.cjs wraps in a class with the native Graph's interface. Two things differ
// from a plain build of hnswlib, both so that a graph answers and saves exactly as the native one:
//   - distances: hnswlib's SSE kernels (what the native x64 build runs, chosen by dimension) are
//     redone with wasm f32x4 operations in the same order, lane sums and residuals included, so every
//     distance is the native one bit for bit (built with -ffp-contract=off: no fused multiply-add);
//   - the file format: in wasm32 size_t (and so hnswlib's label) is 4 bytes, while a saved graph holds
//     the 64-bit layout; the reader and writer here widen and narrow every size_t field and label, and
//     the reader checks it with src/saved-graph.h, as src/graph.cc's ReadGraph does.
// Bytes come and go through two imports (quarry_read, quarry_write) so a graph is read from memory or
// a file, and written, without a second copy of it in wasm memory.
#include <emscripten/emscripten.h>
#include <wasm_simd128.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include <queue>
#include <random>

namespace std {
/**
 * std::priority_queue with libstdc++'s heap algorithms (push_heap, and pop_heap's __adjust_heap),
 * step for step. hnswlib orders candidates by distance alone (CompareByFirst), so among equal
 * distances (duplicate vectors, or a chance tie) which one a queue keeps or pops first is up to
 * the heap algorithm, and libc++'s differs: with this one both builds break ties alike.
 */
template <class T, class Container = vector<T>, class Compare = less<typename Container::value_type>>
class quarry_priority_queue {
 public:
  bool empty() const { return c_.empty(); }
  size_t size() const { return c_.size(); }
  const T& top() const { return c_.front(); }
  void push(const T& value) {
    c_.push_back(value);
    PushHeap();
  }
  void push(T&& value) {
    c_.push_back(std::move(value));
    PushHeap();
  }
  template <class... Args>
  void emplace(Args&&... args) {
    c_.emplace_back(std::forward<Args>(args)...);
    PushHeap();
  }
  void pop() {
    const ptrdiff_t len = static_cast<ptrdiff_t>(c_.size());
    if (len > 1) {
      // __pop_heap: the last element goes into the hole that __adjust_heap walks from the root.
      T value = std::move(c_[len - 1]);
      c_[len - 1] = std::move(c_[0]);
      AdjustHeap(0, len - 1, std::move(value));
    }
    c_.pop_back();
  }

 private:
  void PushHeap() {
    T value = std::move(c_.back());
    SiftUp(static_cast<ptrdiff_t>(c_.size()) - 1, 0, std::move(value));
  }
  /** __push_heap. */
  void SiftUp(ptrdiff_t hole, ptrdiff_t top, T value) {
    ptrdiff_t parent = (hole - 1) / 2;
    while (hole > top && comp_(c_[parent], value)) {
      c_[hole] = std::move(c_[parent]);
      hole = parent;
      parent = (hole - 1) / 2;
    }
    c_[hole] = std::move(value);
  }
  /** __adjust_heap: the larger child up to the bottom (the right one on a tie), then sift up. */
  void AdjustHeap(ptrdiff_t hole, ptrdiff_t len, T value) {
    const ptrdiff_t top = hole;
    ptrdiff_t second = hole;
    while (second < (len - 1) / 2) {
      second = 2 * (second + 1);
      if (comp_(c_[second], c_[second - 1])) second--;
      c_[hole] = std::move(c_[second]);
      hole = second;
    }
    if ((len & 1) == 0 && second == (len - 2) / 2) {
      second = 2 * (second + 1);
      c_[hole] = std::move(c_[second - 1]);
      hole = second - 1;
    }
    SiftUp(hole, top, std::move(value));
  }

  Container c_;
  Compare comp_;
};
}  // namespace std

// The native build's standard library where hnswlib's choices depend on it: the engine it draws
// each new element's level from (libstdc++'s default_random_engine is minstd_rand0, libc++'s
// minstd_rand) and the heaps above. So the same inserts and seed build the same graph, byte for
// byte, in both builds, and equal distances are ordered alike in a search.
#define default_random_engine minstd_rand0
#define priority_queue quarry_priority_queue
#include "hnswlib.h"
#undef priority_queue
#undef default_random_engine
#include "bitset-filter.h"
#include "saved-graph.h"

static_assert(sizeof(size_t) == 4, "this file is for wasm32; the native build is src/graph.cc");

extern "C" {
/** Copies the next `n` bytes of the graph being read to `to`; returns n, 0 at the end, or < 0 on a read error. */
__attribute__((import_module("env"), import_name("quarry_read"))) int32_t quarry_read(void* to, uint32_t n);
/** Takes the next `n` bytes of the graph being written; returns < 0 on a write error. */
__attribute__((import_module("env"), import_name("quarry_write"))) int32_t quarry_write(const void* from, uint32_t n);
}

namespace {

using Hnsw = hnswlib::HierarchicalNSW<float>;
using hnswlib::labeltype;
using hnswlib::tableint;

// ---- Distances: hnswlib's SSE kernels, lane for lane ----------------------------------------------

float Lanes(v128_t sum) {
  // _mm_store_ps then TmpRes[0] + TmpRes[1] + TmpRes[2] + TmpRes[3], left to right.
  return wasm_f32x4_extract_lane(sum, 0) + wasm_f32x4_extract_lane(sum, 1) + wasm_f32x4_extract_lane(sum, 2) +
         wasm_f32x4_extract_lane(sum, 3);
}

/** L2SqrSIMD4Ext / L2SqrSIMD16ExtSSE: one accumulator of 4 lanes over `n` (a multiple of 4) floats. */
float L2Vector(const float* a, const float* b, size_t n) {
  v128_t sum = wasm_f32x4_splat(0.0f);
  for (size_t i = 0; i < n; i += 4) {
    const v128_t diff = wasm_f32x4_sub(wasm_v128_load(a + i), wasm_v128_load(b + i));
    sum = wasm_f32x4_add(sum, wasm_f32x4_mul(diff, diff));
  }
  return Lanes(sum);
}

/** hnswlib::L2Sqr. */
float L2Scalar(const float* a, const float* b, size_t n) {
  float res = 0;
  for (size_t i = 0; i < n; i++) {
    const float t = a[i] - b[i];
    res += t * t;
  }
  return res;
}

/** InnerProductSIMD4ExtSSE / InnerProductSIMD16ExtSSE (before 1 -): one accumulator of 4 lanes. */
float IpVector(const float* a, const float* b, size_t n) {
  v128_t sum = wasm_f32x4_splat(0.0f);
  for (size_t i = 0; i < n; i += 4) sum = wasm_f32x4_add(sum, wasm_f32x4_mul(wasm_v128_load(a + i), wasm_v128_load(b + i)));
  return Lanes(sum);
}

/** hnswlib::InnerProduct. */
float IpScalar(const float* a, const float* b, size_t n) {
  float res = 0;
  for (size_t i = 0; i < n; i++) res += a[i] * b[i];
  return res;
}

// Which kernel hnswlib's L2Space / InnerProductSpace choose under USE_SSE, by dimension: whole
// (dim % 16 == 0 or dim % 4 == 0), blocks of 16 then a scalar tail (dim > 16), blocks of 4 then a
// scalar tail (dim > 4), or scalar.
float L2Whole(const void* a, const void* b, const void* dim) {
  return L2Vector(static_cast<const float*>(a), static_cast<const float*>(b), *static_cast<const size_t*>(dim));
}
template <size_t Block>
float L2Residuals(const void* av, const void* bv, const void* dim) {
  const size_t n = *static_cast<const size_t*>(dim);
  const size_t whole = n / Block * Block;
  const auto* a = static_cast<const float*>(av);
  const auto* b = static_cast<const float*>(bv);
  const float res = L2Vector(a, b, whole);
  const float tail = L2Scalar(a + whole, b + whole, n - whole);
  return res + tail;
}
float L2Plain(const void* a, const void* b, const void* dim) {
  return L2Scalar(static_cast<const float*>(a), static_cast<const float*>(b), *static_cast<const size_t*>(dim));
}
float IpWhole(const void* a, const void* b, const void* dim) {
  return 1.0f - IpVector(static_cast<const float*>(a), static_cast<const float*>(b), *static_cast<const size_t*>(dim));
}
template <size_t Block>
float IpResiduals(const void* av, const void* bv, const void* dim) {
  const size_t n = *static_cast<const size_t*>(dim);
  const size_t whole = n / Block * Block;
  const auto* a = static_cast<const float*>(av);
  const auto* b = static_cast<const float*>(bv);
  const float res = IpVector(a, b, whole);
  const float tail = IpScalar(a + whole, b + whole, n - whole);
  return 1.0f - (res + tail);
}
float IpPlain(const void* a, const void* b, const void* dim) {
  return 1.0f - IpScalar(static_cast<const float*>(a), static_cast<const float*>(b), *static_cast<const size_t*>(dim));
}

class Space : public hnswlib::SpaceInterface<float> {
 public:
  Space(bool l2, size_t dim) : dim_(dim) {
    if (dim % 16 == 0 || dim % 4 == 0) {
      dist_ = l2 ? L2Whole : IpWhole;
    } else if (dim > 16) {
      dist_ = l2 ? L2Residuals<16> : IpResiduals<16>;
    } else if (dim > 4) {
      dist_ = l2 ? L2Residuals<4> : IpResiduals<4>;
    } else {
      dist_ = l2 ? L2Plain : IpPlain;
    }
  }
  size_t get_data_size() override { return dim_ * sizeof(float); }
  hnswlib::DISTFUNC<float> get_dist_func() override { return dist_; }
  void* get_dist_func_param() override { return &dim_; }

 private:
  size_t dim_;
  hnswlib::DISTFUNC<float> dist_;
};

// ---- Errors --------------------------------------------------------------------------------------

std::string lastError;

/** Runs `body`; 0 when it returns, 1 with lastError set when it throws (the native Guard's messages). */
template <typename Body>
int Guard(Body body) {
  try {
    body();
    return 0;
  } catch (const std::bad_alloc&) {
    lastError = "not enough memory for the graph";
  } catch (const std::exception& e) {
    lastError = e.what();
  }
  return 1;
}

/**
 * hnswlib computes its base layer's size as maxElements * bytesPerElement in size_t, which wraps in
 * wasm32 where the native build would simply fail to allocate; refuse those sizes the way it does.
 */
void RequireRoom(uint64_t maxElements, uint64_t bytesPerElement, const char* what) {
  // The largest per-element allocation besides the base layer is a mutex per element.
  const uint64_t per = std::max<uint64_t>(bytesPerElement, sizeof(std::mutex));
  if (maxElements * per >= (uint64_t{1} << 32)) throw std::runtime_error(what);
}

// ---- Reading and writing hnswlib's 64-bit saveIndex layout ---------------------------------------

/** The graph's bytes, pulled through quarry_read; every read refuses to go past `size`. */
class Source {
 public:
  explicit Source(uint64_t size) : size_(size) {}

  void Bytes(void* out, uint64_t n) {
    if (n > size_ - at_) throw std::runtime_error("it ends early");
    char* to = static_cast<char*>(out);
    while (n > 0) {
      const uint32_t part = static_cast<uint32_t>(std::min<uint64_t>(n, 1u << 30));
      const int32_t got = quarry_read(to, part);
      if (got < 0) throw std::runtime_error("it could not be read");
      if (got == 0) throw std::runtime_error("it ends early");
      to += got;
      n -= static_cast<uint32_t>(got);
      at_ += static_cast<uint32_t>(got);
    }
  }
  uint64_t Left() const { return size_ - at_; }

 private:
  uint64_t size_;
  uint64_t at_ = 0;
};

constexpr uint64_t kLabel64 = 8;  // labeltype on a 64-bit machine, as saved

/**
 * src/graph.cc's ReadGraph for the 64-bit layout, with the same checks (saved-graph.h). Only the
 * base layer is read here: each saved element is its links and vector, then an 8-byte label,
 * narrowed to hnswlib's 4-byte one.
 */
void ReadGraph(Hnsw& g, hnswlib::SpaceInterface<float>& space, Source& in) {
  const auto h = saved_graph::ReadHeader<uint64_t>(in, space.get_data_size());
  const uint64_t count = h.count;
  const size_t labelOffset = static_cast<size_t>(h.labelOffset);
  const size_t perElement = labelOffset + sizeof(labeltype);
  const uint64_t room = h.maxElements > 0 ? h.maxElements : 1;
  RequireRoom(room, perElement, "not enough memory for the graph");
  saved_graph::Adopt(g, h, space, perElement);
  g.data_level0_memory_ = static_cast<char*>(std::malloc(static_cast<size_t>(room * perElement)));
  if (g.data_level0_memory_ == nullptr) throw std::bad_alloc();

  // A slice of elements at a time. The first label above uint32 is refused where the native reader
  // refuses it (after that element's upper layers), so both name the same fault.
  const size_t saved = static_cast<size_t>(h.sizeDataPerElement);
  const size_t slice = std::max<size_t>(1, (size_t{4} << 20) / saved);
  std::vector<uint8_t> buffer(std::min<uint64_t>(count, slice) * saved);
  uint64_t firstWideLabel = count;
  for (uint64_t from = 0; from < count; from += slice) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(slice, count - from));
    in.Bytes(buffer.data(), uint64_t{n} * saved);
    for (size_t i = 0; i < n; i++) {
      const uint8_t* element = buffer.data() + i * saved;
      char* to = g.data_level0_memory_ + (from + i) * perElement;
      std::memcpy(to, element, labelOffset);
      uint64_t label;
      std::memcpy(&label, element + labelOffset, sizeof label);
      if (label > 0xffffffffull && firstWideLabel == count) firstWideLabel = from + i;
      const auto narrow = static_cast<uint32_t>(label);
      std::memcpy(to + labelOffset, &narrow, sizeof narrow);
    }
  }

  saved_graph::ReadUpperLayers(g, h, in, [&](size_t i) { return i != firstWideLabel; });
  saved_graph::CheckLinks(g, h);
}

/** Collects output for quarry_write in slices, so a graph is never written as a second whole copy. */
class Sink {
 public:
  Sink() { buffer_.reserve(kSlice); }
  void Bytes(const void* from, size_t n) {
    const auto* p = static_cast<const uint8_t*>(from);
    buffer_.insert(buffer_.end(), p, p + n);
    if (buffer_.size() >= kSlice) Flush();
  }
  template <typename T>
  void Pod(T value) {
    Bytes(&value, sizeof value);
  }
  void Flush() {
    if (!buffer_.empty() && quarry_write(buffer_.data(), static_cast<uint32_t>(buffer_.size())) < 0) {
      throw std::runtime_error("it could not be written");
    }
    buffer_.clear();
  }

 private:
  static constexpr size_t kSlice = size_t{4} << 20;
  std::vector<uint8_t> buffer_;
};

/** hnswlib's saveIndex as a 64-bit build writes it: size_t fields and labels as 8 bytes. */
void WriteGraph(const Hnsw& g, Sink& out) {
  const uint64_t count = g.cur_element_count;
  out.Pod<uint64_t>(g.offsetLevel0_);
  out.Pod<uint64_t>(g.max_elements_);
  out.Pod<uint64_t>(count);
  out.Pod<uint64_t>(uint64_t{g.label_offset_} + kLabel64);
  out.Pod<uint64_t>(g.label_offset_);
  out.Pod<uint64_t>(g.offsetData_);
  out.Pod<int32_t>(g.maxlevel_);
  out.Pod<tableint>(g.enterpoint_node_);
  out.Pod<uint64_t>(g.maxM_);
  out.Pod<uint64_t>(g.maxM0_);
  out.Pod<uint64_t>(g.M_);
  out.Pod<double>(g.mult_);
  out.Pod<uint64_t>(g.ef_construction_);
  for (uint64_t i = 0; i < count; i++) {
    const char* element = g.data_level0_memory_ + i * g.size_data_per_element_;
    out.Bytes(element, g.label_offset_);
    uint32_t label;
    std::memcpy(&label, element + g.label_offset_, sizeof label);
    out.Pod<uint64_t>(label);
  }
  for (uint64_t i = 0; i < count; i++) {
    const int levels = g.element_levels_[i];
    const unsigned int size = levels > 0 ? static_cast<unsigned int>(g.size_links_per_element_ * levels) : 0;
    out.Pod<unsigned int>(size);
    if (size != 0) out.Bytes(g.linkLists_[i], size);
  }
  out.Flush();
}

struct Graph {
  std::unique_ptr<Space> space;
  std::unique_ptr<Hnsw> graph;
};

}  // namespace

// ---- The C ABI (wasm/index.cjs): 0 for success and 1 with quarry_error() for a refusal -----------

extern "C" {

EMSCRIPTEN_KEEPALIVE const char* quarry_error() { return lastError.c_str(); }

/** A graph of `dim` floats; l2 when `l2` is 1, inner product otherwise. JavaScript checks the arguments. */
EMSCRIPTEN_KEEPALIVE Graph* quarry_new(int l2, uint32_t dim) {
  auto* g = new (std::nothrow) Graph();
  if (g == nullptr) return nullptr;
  g->space.reset(new (std::nothrow) Space(l2 != 0, dim));
  if (!g->space) {
    delete g;
    return nullptr;
  }
  return g;
}

EMSCRIPTEN_KEEPALIVE void quarry_free(Graph* g) { delete g; }

EMSCRIPTEN_KEEPALIVE int quarry_ready(Graph* g) { return g->graph ? 1 : 0; }

EMSCRIPTEN_KEEPALIVE int quarry_init(Graph* g, uint32_t maxElements, uint32_t m, uint32_t efConstruction, uint32_t seed) {
  return Guard([&] {
    const uint64_t maxM0 = uint64_t{std::min<uint32_t>(m, 10000)} * 2;
    RequireRoom(maxElements, maxM0 * 4 + 4 + g->space->get_data_size() + sizeof(labeltype), "Not enough memory");
    g->graph = std::make_unique<Hnsw>(g->space.get(), maxElements, m, efConstruction, seed, false);
  });
}

/** Reads `size` bytes through quarry_read; the graph stays as it was on any error. */
EMSCRIPTEN_KEEPALIVE int quarry_load(Graph* g, double size) {
  return Guard([&] {
    Source in(static_cast<uint64_t>(size));
    auto next = std::make_unique<Hnsw>(g->space.get());
    ReadGraph(*next, *g->space, in);
    g->graph = std::move(next);
  });
}

/** Writes the graph through quarry_write. */
EMSCRIPTEN_KEEPALIVE int quarry_save(Graph* g) {
  return Guard([&] {
    Sink out;
    WriteGraph(*g->graph, out);
  });
}

EMSCRIPTEN_KEEPALIVE int quarry_resize(Graph* g, uint32_t maxElements) {
  return Guard([&] {
    if (maxElements >= g->graph->cur_element_count) {
      RequireRoom(maxElements, g->graph->size_data_per_element_, "Not enough memory: resizeIndex failed to allocate base layer");
    }
    g->graph->resizeIndex(maxElements);
  });
}

EMSCRIPTEN_KEEPALIVE int quarry_add(Graph* g, const float* vector, uint32_t label) {
  return Guard([&] { g->graph->addPoint(vector, label, false); });
}

EMSCRIPTEN_KEEPALIVE int quarry_mark_delete(Graph* g, uint32_t label) {
  return Guard([&] { g->graph->markDelete(label); });
}

EMSCRIPTEN_KEEPALIVE void quarry_set_ef(Graph* g, uint32_t ef) { g->graph->setEf(ef); }

/**
 * At most k labels, best first, and their distances into `labels` and `distances`; only labels
 * whose bit is set in the `words` 32-bit words at `allow` when `allow` is not null. Returns how
 * many, or -1 with quarry_error().
 */
EMSCRIPTEN_KEEPALIVE int32_t quarry_search(Graph* g, const float* query, uint32_t k, uint32_t* labels, float* distances,
                                           const uint32_t* allow, uint32_t words) {
  int32_t n = 0;
  const int status = Guard([&] {
    BitsetFilter filter(allow, words);
    auto best = g->graph->searchKnn(query, k, allow != nullptr ? &filter : nullptr);
    n = static_cast<int32_t>(best.size());
    for (size_t i = best.size(); i-- > 0; best.pop()) {
      labels[i] = static_cast<uint32_t>(best.top().second);
      distances[i] = best.top().first;
    }
  });
  return status == 0 ? n : -1;
}

EMSCRIPTEN_KEEPALIVE double quarry_max_elements(Graph* g) { return static_cast<double>(g->graph->max_elements_); }

EMSCRIPTEN_KEEPALIVE double quarry_size(Graph* g) { return static_cast<double>(g->graph->cur_element_count.load()); }

}  // extern "C"
