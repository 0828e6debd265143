// @quarry/hnsw: the HNSW graph of @quarry/core, a Node-API class over hnswlib (vendor/hnswlib,
// v0.8.0). It differs from a general-purpose binding in three ways, each measured in bench/:
//   - vectors cross as Float32Arrays and answers are written into typed arrays the caller owns, so
//     a search reads no JavaScript array element by element and builds no arrays of numbers;
//   - a filter is a bitset (a Uint32Array of label bits) tested in C++, never a JavaScript callback;
//   - a saved graph is read from bytes in memory or from an open file (two reads; the caller checks
//     its sha256 meanwhile), with every header field and link checked, so a search can never follow
//     a link out of the graph, whatever the bytes.
// The file format is hnswlib's own (saveIndex), byte for byte.
#include <napi.h>
#include <uv.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "hnswlib.h"
#include "bitset-filter.h"
#include "saved-graph.h"

#ifdef __linux__
#include <sys/mman.h>
#endif

namespace {

using Hnsw = hnswlib::HierarchicalNSW<float>;
using hnswlib::tableint;

/** Where a saved graph's bytes come from; every read refuses to go past their end. */
class Source {
 public:
  virtual ~Source() = default;
  virtual void Bytes(void* out, size_t n) = 0;
  virtual size_t Left() const = 0;
};

/** Bytes in memory. */
class MemorySource : public Source {
 public:
  MemorySource(const uint8_t* data, size_t size) : bytes_(data, size) {}
  void Bytes(void* out, size_t n) override { bytes_.Bytes(out, n); }
  size_t Left() const override { return bytes_.Left(); }

 private:
  saved_graph::MemoryBytes bytes_;
};

/** The first `size` bytes of an open file (a Node file descriptor), read by position. */
class FileSource : public Source {
 public:
  FileSource(uv_file fd, size_t size) : fd_(fd), size_(size) {}

  void Bytes(void* out, size_t n) override {
    if (n > size_ - at_) throw std::runtime_error("it ends early");
    char* to = static_cast<char*>(out);
    while (n > 0) {
      uv_fs_t req;
      uv_buf_t buf = uv_buf_init(to, static_cast<unsigned int>(std::min<size_t>(n, 1u << 30)));
      const int got = uv_fs_read(nullptr, &req, fd_, &buf, 1, static_cast<int64_t>(at_), nullptr);
      uv_fs_req_cleanup(&req);
      if (got < 0) throw std::runtime_error(std::string("it could not be read (") + uv_err_name(got) + ")");
      if (got == 0) throw std::runtime_error("it ends early");
      to += got;
      n -= static_cast<size_t>(got);
      at_ += static_cast<size_t>(got);
    }
  }

  size_t Left() const override { return size_ - at_; }

 private:
  uv_file fd_;
  size_t size_;
  size_t at_ = 0;
};

/**
 * The base layer's memory (every element's links, vector and label; what hnswlib frees and
 * reallocates). On Linux it is aligned to 2 MB and advised into transparent huge pages: first
 * touches then fault 2 MB at a time rather than 4 kB (a 33 MB graph read here took 100 ms of page
 * faults on 4 kB pages), and walks miss the TLB less.
 */
char* BaseLayerMemory(size_t bytes) {
#ifdef __linux__
  constexpr size_t kHuge = size_t{2} << 20;
  if (bytes >= kHuge) {
    void* p = nullptr;
    if (posix_memalign(&p, kHuge, bytes) != 0) throw std::bad_alloc();
    madvise(p, bytes / kHuge * kHuge, MADV_HUGEPAGE);
    return static_cast<char*>(p);
  }
#endif
  char* p = static_cast<char*>(std::malloc(bytes > 0 ? bytes : 1));
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

/**
 * Moves a graph's base layer into BaseLayerMemory, keeping its elements. hnswlib allocates the
 * layer with malloc (constructor) and grows it with realloc (resizeIndex): 4 kB pages, so a graph
 * grown by inserts would walk its links with more TLB misses than the same graph read from a file
 * (bench/suites/dense-grown.ts compares the two). hnswlib frees the layer with free(), which takes
 * posix_memalign's memory too.
 */
void MoveBaseLayer(Hnsw& g) {
  char* next = BaseLayerMemory((g.max_elements_ > 0 ? g.max_elements_ : 1) * g.size_data_per_element_);
  std::memcpy(next, g.data_level0_memory_, g.cur_element_count * g.size_data_per_element_);
  std::free(g.data_level0_memory_);
  g.data_level0_memory_ = next;
}

/**
 * Fills a fresh graph from what hnswlib's saveIndex wrote (what its loadIndex reads from a file),
 * with saved-graph.h's checks: each link names an element that exists and has that layer, and no
 * list is longer than the graph's degree allows. The base layer is read straight into its memory.
 */
void ReadGraph(Hnsw& g, hnswlib::SpaceInterface<float>& space, Source& in) {
  const auto h = saved_graph::ReadHeader<size_t>(in, space.get_data_size());
  saved_graph::Adopt(g, h, space, h.sizeDataPerElement);
  g.data_level0_memory_ = BaseLayerMemory((h.maxElements > 0 ? h.maxElements : 1) * h.sizeDataPerElement);
  in.Bytes(g.data_level0_memory_, h.count * h.sizeDataPerElement);
  saved_graph::ReadUpperLayers(g, h, in, [&](size_t i) { return g.getExternalLabel(static_cast<tableint>(i)) <= 0xffffffffull; });
  saved_graph::CheckLinks(g, h);
}

template <typename T>
T* TypedData(const Napi::Value& value, napi_typedarray_type type, size_t minLength, const char* what) {
  if (!value.IsTypedArray() || value.As<Napi::TypedArray>().TypedArrayType() != type) throw Napi::TypeError::New(value.Env(), what);
  auto array = value.As<Napi::TypedArrayOf<T>>();
  if (array.ElementLength() < minLength) throw Napi::RangeError::New(value.Env(), what);
  return array.Data();
}

uint32_t Count(const Napi::Value& value, const char* what) {
  if (!value.IsNumber()) throw Napi::TypeError::New(value.Env(), what);
  const double n = value.As<Napi::Number>().DoubleValue();
  if (!(n >= 0 && n <= 0xffffffff && std::floor(n) == n)) throw Napi::RangeError::New(value.Env(), what);
  return static_cast<uint32_t>(n);
}

class Graph : public Napi::ObjectWrap<Graph> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "Graph",
                       {
                           InstanceMethod<&Graph::Init>("init"),
                           InstanceMethod<&Graph::Load>("load"),
                           InstanceMethod<&Graph::SaveSync>("saveSync"),
                           InstanceMethod<&Graph::Save>("save"),
                           InstanceMethod<&Graph::Resize>("resize"),
                           InstanceMethod<&Graph::Add>("add"),
                           InstanceMethod<&Graph::MarkDelete>("markDelete"),
                           InstanceMethod<&Graph::SetEf>("setEf"),
                           InstanceMethod<&Graph::Search>("search"),
                           InstanceMethod<&Graph::MaxElements>("maxElements"),
                           InstanceMethod<&Graph::Size>("size"),
                       });
  }

  /** new Graph(space: 'l2' | 'ip', dim) */
  explicit Graph(const Napi::CallbackInfo& info) : Napi::ObjectWrap<Graph>(info) {
    const std::string space = info[0].IsString() ? info[0].As<Napi::String>().Utf8Value() : "";
    dim_ = Count(info[1], "dim must be a positive integer");
    if (dim_ == 0) throw Napi::RangeError::New(info.Env(), "dim must be a positive integer");
    if (space == "l2") {
      space_ = std::make_unique<hnswlib::L2Space>(dim_);
    } else if (space == "ip") {
      space_ = std::make_unique<hnswlib::InnerProductSpace>(dim_);
    } else {
      throw Napi::TypeError::New(info.Env(), "space must be 'l2' or 'ip'");
    }
  }

 private:
  Hnsw& Ready(Napi::Env env) {
    if (!graph_) throw Napi::Error::New(env, "the graph has not been initialized or loaded");
    return *graph_;
  }

  /** init(maxElements, m, efConstruction, seed) */
  void Init(const Napi::CallbackInfo& info) {
    const uint32_t maxElements = Count(info[0], "maxElements must be an integer");
    const uint32_t m = Count(info[1], "m must be an integer");
    const uint32_t efConstruction = Count(info[2], "efConstruction must be an integer");
    const uint32_t seed = Count(info[3], "seed must be an integer");
    Guard(info.Env(), [&] {
      auto next = std::make_shared<Hnsw>(space_.get(), maxElements, m, efConstruction, seed, false);
      MoveBaseLayer(*next);
      graph_ = std::move(next);
    });
  }

  /**
   * load(bytes: Uint8Array) or load(fd: number, size: number): the graph saved in those bytes, or in
   * the first `size` bytes of the open file `fd` (read by position), replaces this one; on any error
   * this one stays as it was.
   */
  void Load(const Napi::CallbackInfo& info) {
    std::unique_ptr<Source> source;
    if (info[0].IsNumber()) {
      const uint32_t fd = Count(info[0], "fd must be a file descriptor");
      const double size = info[1].IsNumber() ? info[1].As<Napi::Number>().DoubleValue() : -1;
      if (!(size >= 0 && size <= 9007199254740991.0 && std::floor(size) == size)) throw Napi::RangeError::New(info.Env(), "size must be a byte count");
      source = std::make_unique<FileSource>(static_cast<uv_file>(fd), static_cast<size_t>(size));
    } else {
      const uint8_t* data = TypedData<uint8_t>(info[0], napi_uint8_array, 0, "bytes must be a Uint8Array (or give a file descriptor and a size)");
      source = std::make_unique<MemorySource>(data, info[0].As<Napi::Uint8Array>().ElementLength());
    }
    Guard(info.Env(), [&] {
      auto next = std::make_shared<Hnsw>(space_.get());
      ReadGraph(*next, *space_, *source);
      graph_ = std::move(next);
    });
  }

  /** saveSync(path): hnswlib's saveIndex. */
  void SaveSync(const Napi::CallbackInfo& info) {
    const std::string path = info[0].As<Napi::String>().Utf8Value();
    Hnsw& g = Ready(info.Env());
    Guard(info.Env(), [&] { g.saveIndex(path); });
  }

  /** save(path): Promise<void>, saveIndex on a libuv thread; the graph must not change until it settles. */
  Napi::Value Save(const Napi::CallbackInfo& info);

  void Resize(const Napi::CallbackInfo& info) {
    const uint32_t maxElements = Count(info[0], "maxElements must be an integer");
    Hnsw& g = Ready(info.Env());
    Guard(info.Env(), [&] {
      g.resizeIndex(maxElements);
      // resizeIndex's realloc leaves no 2 MB alignment nor advice, even on a loaded graph's layer.
      MoveBaseLayer(g);
    });
  }

  /** add(vector: Float32Array, label): inserts, replaces, or revives a deleted label in place. */
  void Add(const Napi::CallbackInfo& info) {
    const float* vector = TypedData<float>(info[0], napi_float32_array, dim_, "vector must be a Float32Array of the graph's dimensions");
    const uint32_t label = Count(info[1], "label must be a uint32");
    Hnsw& g = Ready(info.Env());
    Guard(info.Env(), [&] { g.addPoint(vector, label, false); });
  }

  void MarkDelete(const Napi::CallbackInfo& info) {
    const uint32_t label = Count(info[0], "label must be a uint32");
    Hnsw& g = Ready(info.Env());
    Guard(info.Env(), [&] { g.markDelete(label); });
  }

  void SetEf(const Napi::CallbackInfo& info) { Ready(info.Env()).setEf(Count(info[0], "ef must be an integer")); }

  /**
   * search(query: Float32Array, k, labels: Uint32Array, distances: Float32Array, allow?: Uint32Array)
   * writes at most k labels, best first, with hnswlib's distances; returns how many.
   */
  Napi::Value Search(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    const float* query = TypedData<float>(info[0], napi_float32_array, dim_, "query must be a Float32Array of the graph's dimensions");
    const uint32_t k = Count(info[1], "k must be an integer");
    uint32_t* labels = TypedData<uint32_t>(info[2], napi_uint32_array, k, "labels must be a Uint32Array of at least k elements");
    float* distances = TypedData<float>(info[3], napi_float32_array, k, "distances must be a Float32Array of at least k elements");
    Hnsw& g = Ready(env);
    const bool filtered = info.Length() > 4 && !info[4].IsUndefined();
    BitsetFilter filter = filtered ? BitsetFilter(TypedData<uint32_t>(info[4], napi_uint32_array, 0, "allow must be a Uint32Array"),
                                                  info[4].As<Napi::Uint32Array>().ElementLength())
                                   : BitsetFilter(nullptr, 0);
    if (k == 0) return Napi::Number::New(env, 0);
    size_t n = 0;
    Guard(env, [&] {
      auto best = g.searchKnn(query, k, filtered ? &filter : nullptr);
      n = best.size();
      for (size_t i = n; i-- > 0; best.pop()) {
        labels[i] = static_cast<uint32_t>(best.top().second);
        distances[i] = best.top().first;
      }
    });
    return Napi::Number::New(env, static_cast<double>(n));
  }

  Napi::Value MaxElements(const Napi::CallbackInfo& info) {
    return Napi::Number::New(info.Env(), static_cast<double>(Ready(info.Env()).max_elements_));
  }

  /** Elements in the graph, deleted ones included. */
  Napi::Value Size(const Napi::CallbackInfo& info) {
    return Napi::Number::New(info.Env(), static_cast<double>(Ready(info.Env()).cur_element_count.load()));
  }

  /** Runs `body`, turning hnswlib's exceptions into JavaScript errors. */
  template <typename Body>
  static void Guard(Napi::Env env, Body body) {
    try {
      body();
    } catch (const Napi::Error&) {
      throw;
    } catch (const std::bad_alloc&) {
      throw Napi::Error::New(env, "not enough memory for the graph");
    } catch (const std::exception& e) {
      throw Napi::Error::New(env, e.what());
    }
  }

  uint32_t dim_ = 0;
  std::unique_ptr<hnswlib::SpaceInterface<float>> space_;
  std::shared_ptr<Hnsw> graph_;
};

/** One save on libuv's pool, holding both the JavaScript object and the graph until it settles. */
class SaveWorker : public Napi::AsyncWorker {
 public:
  SaveWorker(Napi::Env env, Napi::Object owner, std::shared_ptr<Hnsw> graph, std::string path)
      : Napi::AsyncWorker(env), deferred_(Napi::Promise::Deferred::New(env)), owner_(Napi::Persistent(owner)),
        graph_(std::move(graph)), path_(std::move(path)) {}

  Napi::Promise Promise() const { return deferred_.Promise(); }

 protected:
  void Execute() override {
    try {
      graph_->saveIndex(path_);
    } catch (const std::exception& e) {
      SetError(e.what());
    }
  }
  void OnOK() override { deferred_.Resolve(Env().Undefined()); }
  void OnError(const Napi::Error& error) override { deferred_.Reject(error.Value()); }

 private:
  Napi::Promise::Deferred deferred_;
  Napi::ObjectReference owner_;
  std::shared_ptr<Hnsw> graph_;
  std::string path_;
};

Napi::Value Graph::Save(const Napi::CallbackInfo& info) {
  const std::string path = info[0].As<Napi::String>().Utf8Value();
  Ready(info.Env());
  auto* worker = new SaveWorker(info.Env(), info.This().As<Napi::Object>(), graph_, path);
  const Napi::Promise promise = worker->Promise();
  worker->Queue();
  return promise;
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  exports.Set("Graph", Graph::Define(env));
  return exports;
}

}  // namespace

NODE_API_MODULE(quarry_hnsw, Init)
