// Graph files in the canonical layout (what graft and graft_fx write: one module and one root
// node per line), read a line at a time, and large ones on three threads.
#include "io/canonical_reader.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <system_error>
#include <thread>

#include "graft/io/graph_json.hpp"
#include "io/dom_reader.hpp"

namespace graft::detail {

namespace {

namespace dom = simdjson::dom;

// Walks the body of a canonical array (one element per line, each but the last ending in a
// comma) one element at a time, without building a list of a million lines first.
class ElementLines {
 public:
  explicit ElementLines(std::string_view body) : rest_(body) {}
  /// The next element without its comma; false at the end, or where the layout breaks.
  bool next(std::string_view& element) {
    if (done_) return false;
    std::size_t nl = rest_.find('\n');
    bool last = nl == std::string_view::npos;
    std::string_view line = last ? rest_ : rest_.substr(0, nl);
    done_ = last;
    if (last == (!line.empty() && line.back() == ',')) {
      laid_out_ = false;
      done_ = true;
      return false;
    }
    element = last ? line : line.substr(0, line.size() - 1);
    if (!last) rest_ = rest_.substr(nl + 1);
    return true;
  }
  /// False if the walk stopped where the layout broke.
  bool laid_out() const { return laid_out_; }
  /// How many lines the body has: an upper bound of the elements, for reserving.
  static std::size_t count(std::string_view body) {
    return static_cast<std::size_t>(std::count(body.begin(), body.end(), '\n')) + 1;
  }

 private:
  std::string_view rest_;
  bool done_ = false;
  bool laid_out_ = true;
};

bool split_element_lines(std::string_view body, std::vector<std::string_view>& lines) {
  ElementLines walk(body);
  for (std::string_view line; walk.next(line);) lines.push_back(line);
  return walk.laid_out();
}

// Parses one element line in place: the line is followed by the rest of the buffer and its
// padding, so no copy is needed.
bool parse_line(dom::parser& parser, std::string_view line, dom::element& out) {
  return parser.parse(reinterpret_cast<const std::uint8_t*>(line.data()), line.size(), false).get(out) ==
         simdjson::SUCCESS;
}

// What a part of a canonical file came to: a value, a load error (with its JSON path), or
// "not canonical after all" (nullopt in the caller: use the whole-document path).
template <class T>
struct PartResult {
  std::optional<T> value;
  std::optional<LoadError> error;
  bool canonical = true;
};

// Everything before the nodes: format, version, meta, and the module table, read one module
// line at a time when the modules are laid out one per line (a module with its own graph
// spans lines: then the head is read as one document).
PartResult<GraphModule> read_canonical_head(std::string_view before_nodes) {
  PartResult<GraphModule> out;
  try {
    constexpr std::string_view kModules = ",\n\"modules\": [\n";
    constexpr std::string_view kModulesEnd = "\n],";
    dom::parser parser;
    std::size_t marker = before_nodes.find(kModules);
    std::vector<std::string_view> module_lines;
    bool by_line = marker != std::string_view::npos && before_nodes.find(kModules, marker + 1) == std::string_view::npos &&
                   before_nodes.size() >= marker + kModules.size() + kModulesEnd.size() &&
                   before_nodes.substr(before_nodes.size() - kModulesEnd.size()) == kModulesEnd &&
                   split_element_lines(before_nodes.substr(marker + kModules.size(),
                                                           before_nodes.size() - kModulesEnd.size() - marker - kModules.size()),
                                       module_lines);
    if (by_line) try {
      simdjson::padded_string head(std::string(before_nodes.substr(0, marker)) + ",\n\"modules\": [],\n\"nodes\": []\n}\n");
      dom::element root;
      if (parser.parse(head).get(root) != simdjson::SUCCESS) {
        out.canonical = false;
        return out;
      }
      DomReader reader;
      GraphModule gm = reader.read(root);
      gm.modules.reserve(module_lines.size());
      for (std::size_t i = 0; i < module_lines.size(); ++i) {
        dom::element m;
        if (!parse_line(parser, module_lines[i], m)) {
          by_line = false;  // e.g. a module with its own graph: read the head whole
          break;
        }
        reader.root_module(m, i, gm.modules);
      }
      if (by_line) {
        out.value = std::move(gm);
        return out;
      }
    } catch (const LoadError&) {
      // The head document is walked before the module lines; read it whole so that errors
      // come in document order, as they do when the modules are not one per line.
    }
    simdjson::padded_string head(std::string(before_nodes) + "\n\"nodes\": []\n}\n");
    dom::element root;
    if (parser.parse(head).get(root) != simdjson::SUCCESS) {
      out.canonical = false;
      return out;
    }
    out.value = DomReader{}.read(root);
  } catch (const LoadError& e) {
    out.error = e;
  }
  return out;
}

// The root graph's nodes, one line each, on one thread.
PartResult<Graph> read_canonical_nodes(std::string_view body) {
  PartResult<Graph> out;
  try {
    dom::parser parser;
    Graph g;
    g.reserve(ElementLines::count(body));
    GraphScope scope(g);
    DomReader reader;
    ElementLines lines(body);
    std::size_t i = 0;
    for (std::string_view line; lines.next(line); ++i) {
      dom::element node;
      if (!parse_line(parser, line, node)) {
        out.canonical = false;
        return out;
      }
      reader.root_node(node, i, scope);
    }
    out.canonical = lines.laid_out();
    out.value = std::move(g);
  } catch (const LoadError& e) {
    out.error = e;
  }
  return out;
}

// A node read off the builder's thread, waiting to be appended. Its node references are not
// resolved yet: each is kPendingRef + an index into its batch's ref_names.
struct ReadNode {
  OpKind op{};
  std::string_view target;  ///< in its batch's text arena
  std::vector<Argument> args;
  Kwargs kwargs;
  std::string name;
  NodeMeta meta;
  std::string_view line;  ///< where it came from, to read it again for the exact error
};

constexpr NodeId kPendingRef = NodeId{1} << 31;  // no graph has two billion slots

// Text copied out of the parser (whose buffers the next line overwrites), in chunks that
// never move: views into it stay valid while the batch travels. Copying a name is cheaper than
// finding where the file spells it.
class TextArena {
 public:
  std::string_view add(std::string_view text) {
    char* at;
    if (text.size() > kChunk / 4) {
      // A long text gets a chunk of its own; the current chunk stays current.
      at = big_.emplace_back(std::make_unique<char[]>(text.size())).get();
    } else {
      if (chunks_.empty() || kChunk - used_ < text.size()) {
        chunks_.push_back(std::make_unique<char[]>(kChunk));
        used_ = 0;
      }
      at = chunks_.back().get() + used_;
      used_ += text.size();
    }
    std::copy(text.begin(), text.end(), at);
    return {at, text.size()};
  }

 private:
  static constexpr std::size_t kChunk = std::size_t{64} << 10;
  std::vector<std::unique_ptr<char[]>> chunks_;  // each kChunk bytes; the last one is current
  std::vector<std::unique_ptr<char[]>> big_;
  std::size_t used_ = 0;  // of the current chunk
};

struct ReadBatch {
  std::vector<ReadNode> nodes;
  std::vector<std::string_view> ref_names;  ///< in text
  TextArena text;
};

// Batches of read nodes from the reading thread to the building one, at most a few in flight
// so the reader cannot run far ahead and hold the whole graph twice.
class ReadNodeQueue {
 public:
  /// False if the builder gave up (then the reader should stop).
  bool push(ReadBatch batch) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return batches_.size() < kMaxInFlight || abandoned_; });
    if (abandoned_) return false;
    batches_.push_back(std::move(batch));
    changed_.notify_all();
    return true;
  }
  /// False once the reader closed the queue and it is empty.
  bool pop(ReadBatch& batch) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return !batches_.empty() || closed_; });
    if (batches_.empty()) return false;
    batch = std::move(batches_.front());
    batches_.pop_front();
    changed_.notify_all();
    return true;
  }
  void close() {
    std::lock_guard lock(mutex_);
    closed_ = true;
    changed_.notify_all();
  }
  void abandon() {
    std::lock_guard lock(mutex_);
    abandoned_ = true;
    changed_.notify_all();
  }

 private:
  static constexpr std::size_t kMaxInFlight = 8;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<ReadBatch> batches_;
  bool closed_ = false;
  bool abandoned_ = false;
};

// The reading side of a pipelined load: everything but names. References stay pending and
// names unchecked; the builder resolves and checks them against the graph, which holds
// exactly the nodes before the one it appends, as reading in turn would.
class PipelinedScope final : public NodeScope {
 public:
  explicit PipelinedScope(ReadNodeQueue& queue) : queue_(queue) { batch_.nodes.reserve(kBatch); }

  NodeId find(std::string_view name) override {
    // A batch is handed over once it holds kMaxRefs references, so only one line with over
    // a billion of them could get here (it would not fit in memory first).
    if (batch_.ref_names.size() >= kMaxRefsPerLine) throw LoadError{"$.nodes", "too many node references on one line"};
    batch_.ref_names.push_back(batch_.text.add(name));
    return kPendingRef + static_cast<NodeId>(batch_.ref_names.size() - 1);
  }

  bool add(OpKind op, std::string_view target, std::vector<Argument> args, Kwargs kwargs, std::string_view name,
           NodeMeta meta) override {
    batch_.nodes.push_back(ReadNode{op, batch_.text.add(target), std::move(args), std::move(kwargs), std::string(name), std::move(meta), line_});
    if (batch_.nodes.size() == kBatch || batch_.ref_names.size() >= kMaxRefs) flush();
    return true;
  }

  /// The line being read (in the file buffer, which outlives the load).
  void set_line(std::string_view line) { line_ = line; }

  /// Hands the last batch over; false if the builder gave up.
  bool flush() {
    if (batch_.nodes.empty()) return !stopped_;
    stopped_ = stopped_ || !queue_.push(std::move(batch_));
    batch_ = {};
    batch_.nodes.reserve(kBatch);
    return !stopped_;
  }
  bool stopped() const { return stopped_; }

 private:
  static constexpr std::size_t kBatch = 2048;
  static constexpr std::size_t kMaxRefs = std::size_t{1} << 20;
  static constexpr std::size_t kMaxRefsPerLine = std::size_t{1} << 30;  // pending ids stay below kNoNode
  ReadNodeQueue& queue_;
  std::string_view line_;
  ReadBatch batch_;
  bool stopped_ = false;
};

// The error reading line `index` in turn gives, with the graph holding the nodes before it:
// the builder's way to report exactly what reading in turn reports.
LoadError error_reading_in_turn(std::string_view line, std::size_t index, Graph& g, const LoadError& otherwise) {
  try {
    dom::parser parser;
    dom::element node;
    if (!parse_line(parser, line, node)) return otherwise;
    GraphScope scope(g);
    DomReader{}.root_node(node, index, scope);
  } catch (const LoadError& e) {
    return e;
  }
  return otherwise;
}

// The same, on two threads: a second thread parses the lines and the calling thread resolves
// names and puts the nodes into the graph, so parsing, allocating and first touches overlap.
PartResult<Graph> read_canonical_nodes_pipelined(std::string_view body) {
  ReadNodeQueue queue;
  PipelinedScope scope(queue);
  PartResult<Graph> read;  // what the reading thread found: an error or "not canonical"
  std::string_view failed_line;  // the line of read.error
  std::size_t failed_index = 0;
  std::exception_ptr crashed;  // anything else the reading thread threw (out of memory)
  std::jthread reader_thread;  // joined on every way out: it uses the locals above
  try {
    reader_thread = std::jthread([&] {
      try {
        dom::parser parser;
        DomReader reader;
        ElementLines lines(body);
        std::size_t i = 0;
        for (std::string_view line; !scope.stopped() && lines.next(line); ++i) {
          dom::element node;
          if (!parse_line(parser, line, node)) {
            read.canonical = false;
            break;
          }
          scope.set_line(line);
          failed_line = line;
          failed_index = i;
          reader.root_node(node, i, scope);
        }
        read.canonical = read.canonical && lines.laid_out();
        // Also before a line that is not JSON or a break in the layout: the builder may find
        // an error in the nodes before it, which reading in turn would report first.
        scope.flush();
      } catch (const LoadError& e) {
        try {
          read.error = e;
          scope.flush();  // the nodes before the error: the builder may find an earlier one
        } catch (...) {
          crashed = std::current_exception();
        }
      } catch (...) {
        crashed = std::current_exception();
      }
      queue.close();
    });
  } catch (const std::system_error&) {
    return read_canonical_nodes(body);  // no thread to be had
  }

  PartResult<Graph> out;
  Graph g;
  try {
    g.reserve(ElementLines::count(body));
    ReadBatch batch;
    std::size_t appended = 0;
    while (!out.error && queue.pop(batch)) {
      for (ReadNode& n : batch.nodes) {
        bool resolved = true;
        auto resolve = [&](NodeId id) {
          NodeId found = g.find(batch.ref_names[id - kPendingRef]);
          resolved = resolved && found != kNoNode;
          return found;
        };
        for (Argument& a : n.args) map_node_refs(a, resolve);
        for (auto& kv : n.kwargs) map_node_refs(kv.second, resolve);
        Result<NodeId> id = resolved ? g.append_node(n.op, g.intern_target(n.target), std::move(n.args), std::move(n.kwargs),
                                                     std::move(n.name), std::move(n.meta))
                                     : Result<NodeId>(Status::error("unresolved reference"));
        if (!id || id.value() != appended) {
          // An unknown reference or a taken name: read the line again in turn for its exact error.
          out.error = error_reading_in_turn(n.line, appended, g,
                                            LoadError{root_node_path(appended), id ? "internal error: node ids out of step"
                                                                                 : id.status().message()});
          queue.abandon();
          break;
        }
        ++appended;
      }
    }
    reader_thread.join();
    // The reading thread's error, unless its line holds an earlier one (a reference checked here).
    if (!out.error && read.error) out.error = error_reading_in_turn(failed_line, failed_index, g, *read.error);
  } catch (...) {
    queue.abandon();
    throw;
  }
  if (crashed) std::rethrow_exception(crashed);
  if (out.error) return out;
  if (!read.canonical) return read;
  out.value = std::move(g);
  return out;
}

std::atomic<std::size_t> g_parallel_threshold{std::size_t{4} << 20};
std::atomic<std::size_t> g_threaded_loads{0};

}  // namespace

// The canonical form (what graft and graft_fx write) puts each module and each root node on
// its own line, after `"modules": [` and `"nodes": [` lines. Such a file is read as a small
// head document plus one small document per line, with reused parsers: a parser then touches
// kilobytes instead of about three times the file, which is most of a cold load's cost.
// Anything else, and any line that is not valid JSON on its own, returns nullopt and takes
// the whole-document path, which reports syntax errors with their line and column.
std::optional<Result<GraphModule>> parse_canonical(const char* text, std::size_t size, std::string_view source) {
  constexpr std::string_view kMarker = "\n\"nodes\": [\n";
  constexpr std::string_view kEnd = "\n]\n}\n";
  std::string_view all(text, size);
  // The first marker ends the head. Another one later would be a node line `"nodes": [`, which
  // is not JSON on its own: that line sends the file to the whole-document path.
  std::size_t marker = all.find(kMarker);
  if (marker == std::string_view::npos) return std::nullopt;
  std::size_t body_begin = marker + kMarker.size();
  if (all.size() < body_begin + kEnd.size() || all.substr(all.size() - kEnd.size()) != kEnd) return std::nullopt;
  std::string_view before_nodes = all.substr(0, marker);

  // Large files read their head (the module table) on a second thread, and their nodes on two
  // more (see read_canonical_nodes_pipelined); below the threshold threads cost more than they save.
  bool parallel = size >= g_parallel_threshold.load(std::memory_order_relaxed);
  PartResult<GraphModule> head;
  std::exception_ptr head_crashed;
  std::jthread head_reader;  // joined on every way out: it uses the locals above
  if (parallel) {
    try {
      head_reader = std::jthread([&] {
        try {
          head = read_canonical_head(before_nodes);
        } catch (...) {
          head_crashed = std::current_exception();
        }
      });
    } catch (const std::system_error&) {
      parallel = false;  // no thread to be had: read in turn
    }
  }
  // One node per line, without its trailing comma; a broken layout is found on the way, and
  // errors before it are the same in turn and on threads.
  std::string_view body = all.substr(body_begin, all.size() - kEnd.size() - body_begin);
  PartResult<Graph> nodes;
  if (parallel) {
    g_threaded_loads.fetch_add(1, std::memory_order_relaxed);
    nodes = read_canonical_nodes_pipelined(body);
    head_reader.join();
    if (head_crashed) std::rethrow_exception(head_crashed);
  } else {
    head = read_canonical_head(before_nodes);
    if (head.canonical && !head.error) nodes = read_canonical_nodes(body);
  }
  // Errors in file order: the head's come first.
  auto error = [&](const LoadError& e) {
    return Result<GraphModule>(Status::error(Diagnostic{.file = std::string(source), .path = e.path, .message = e.message}));
  };
  if (!head.canonical) return std::nullopt;
  if (head.error) return error(*head.error);
  if (!nodes.canonical) return std::nullopt;
  if (nodes.error) return error(*nodes.error);
  GraphModule gm = std::move(*head.value);
  gm.graph = std::move(*nodes.value);
  return Result<GraphModule>(std::move(gm));
}

std::size_t set_parallel_load_threshold(std::size_t bytes) { return g_parallel_threshold.exchange(bytes); }

std::size_t threaded_loads() { return g_threaded_loads.load(std::memory_order_relaxed); }

}  // namespace graft::detail
