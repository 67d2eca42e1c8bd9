// Graph files in the canonical layout (what graft and graft_fx write: one module and one root
// node per line), read a line at a time, and large ones on four threads.
#include "io/canonical_reader.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <system_error>
#include <thread>

#include "graft/io/graph_json.hpp"
#include "io/dom_reader.hpp"
#include "io/file_buffer.hpp"
#include "io/load_hooks.hpp"
#include "ir/memory.hpp"

namespace graft::detail {

namespace {

namespace dom = simdjson::dom;

std::atomic<std::uint64_t> g_stream_read_limit{~std::uint64_t{0}};

// Where the body of a canonical array is: in memory (followed by simdjson's padding), or the
// bytes [begin, end) of an open file. A large file's nodes are read from the file a chunk at a
// time into one reused buffer: reading the whole file first put a quarter of a gigabyte into
// fresh pages, which on this VM cost more than parsing it.
struct BodySource {
  std::string_view memory;  ///< when fd < 0
  int fd = -1;
  std::uint64_t begin = 0;
  std::uint64_t end = 0;

  static BodySource in_memory(std::string_view body) { return BodySource{body}; }
  static BodySource in_file(int fd, std::uint64_t begin, std::uint64_t end) { return BodySource{{}, fd, begin, end}; }
  bool streamed() const { return fd >= 0; }
  std::uint64_t size() const { return streamed() ? end - begin : memory.size(); }

  /// Up to `count` bytes at body offset `offset` into `out`; how many it got (short if the
  /// file shrank or could not be read).
  std::size_t read(std::uint64_t offset, char* out, std::size_t count) const {
    count = static_cast<std::size_t>(std::min<std::uint64_t>(count, size() - std::min(offset, size())));
    if (!streamed()) {
      std::copy_n(memory.data() + offset, count, out);
      return count;
    }
    if (begin + offset >= g_stream_read_limit.load(std::memory_order_relaxed)) return 0;  // tests: a file cut short
    return read_range(fd, out, begin + offset, count);
  }

  /// Where the first line that starts in [pos, limit) starts; `limit` if none does; nullopt
  /// if the file could not be read that far (it shrank, or failed). Searches only up to
  /// `limit`, so stretches inside one very long line cost a stretch each, not the whole line.
  std::optional<std::uint64_t> line_start_in(std::uint64_t pos, std::uint64_t limit) const {
    if (pos == 0) return 0;
    std::uint64_t end = std::min(limit - 1, size());  // a newline at end - 1 starts a line before limit
    char window[16384];
    for (std::uint64_t at = pos - 1; at < end;) {
      std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(sizeof window, end - at));
      std::size_t got = read(at, window, want);
      if (got != want) return std::nullopt;
      if (const void* nl = std::memchr(window, '\n', got))
        return at + static_cast<std::uint64_t>(static_cast<const char*>(nl) - window) + 1;
      at += got;
    }
    return limit;
  }

  /// The body text at [offset, offset + count), padded for simdjson (a line to read again).
  simdjson::padded_string text(std::uint64_t offset, std::size_t count) const {
    std::string out(count, '\0');
    out.resize(read(offset, out.data(), count));
    return simdjson::padded_string(out);
  }

  /// How many lines to make room for: counted in memory; in a file, estimated from its first
  /// mebibyte with a margin (reading the whole file twice to count would cost more than room
  /// for a few more slots, which stays untouched virtual memory).
  std::size_t expected_lines() const {
    if (!streamed()) return static_cast<std::size_t>(std::count(memory.begin(), memory.end(), '\n')) + 1;
    constexpr std::size_t kSample = std::size_t{1} << 20;
    std::vector<char> sample(static_cast<std::size_t>(std::min<std::uint64_t>(kSample, size())));
    std::size_t got = read(0, sample.data(), sample.size());
    auto lines = static_cast<std::uint64_t>(
                     std::count(sample.begin(), sample.begin() + static_cast<std::ptrdiff_t>(got), '\n')) +
        1;
    if (got == size() || got == 0) return static_cast<std::size_t>(lines);
    std::uint64_t estimate = size() * lines / got;
    return static_cast<std::size_t>(estimate + estimate / 5 + 1024);
  }
};

// Walks the body of a canonical array (one element per line, each but the last ending in a
// comma) one element at a time, without building a list of a million lines first. A streamed
// body is read in chunks into one buffer, which grows only for a line longer than it.
class ElementLines {
 public:
  explicit ElementLines(const BodySource& source) : source_(source) { restart(0, kNoLimit); }

  /// Walks the elements whose lines start in [start, limit) instead; `start` must be where a
  /// line starts. Keeps the buffer.
  void restart(std::uint64_t start, std::uint64_t limit) {
    limit_ = limit;
    pos_ = 0;
    offset_ = 0;
    done_ = start > source_.size();  // no line starts there: an empty stretch
    laid_out_ = true;
    reached_end_ = false;
    tail_step_ = kTailStep;
    if (done_) start = source_.size();
    if (!source_.streamed()) {
      data_ = source_.memory.data();
      base_ = 0;
      pos_ = static_cast<std::size_t>(start);
      filled_ = source_.memory.size();
      read_to_ = filled_;
    } else {
      data_ = chunk_ ? chunk_.get() : "";
      base_ = start;
      filled_ = 0;
      read_to_ = start;
    }
  }

  /// The next element without its comma, valid until the next call; false at the end, where
  /// the layout breaks, or where a streamed file could not be read (a break, too: the caller
  /// then reads the file whole, which reports what went wrong).
  bool next(std::string_view& element) {
    if (done_ || base_ + pos_ >= limit_) return false;
    const char* nl = nullptr;
    std::size_t from = pos_;  // what of the line was searched already is not searched again
    while ((nl = static_cast<const char*>(std::memchr(data_ + from, '\n', filled_ - from))) == nullptr &&
           read_to_ < source_.size()) {
      std::size_t searched = filled_ - pos_;
      if (!refill()) {
        laid_out_ = false;
        done_ = true;
        return false;
      }
      from = pos_ + searched;
    }
    bool last = nl == nullptr;
    reached_end_ = last;
    std::string_view line(data_ + pos_, last ? filled_ - pos_ : static_cast<std::size_t>(nl - (data_ + pos_)));
    done_ = last;
    if (last == (!line.empty() && line.back() == ',')) {
      laid_out_ = false;
      done_ = true;
      return false;
    }
    element = last ? line : line.substr(0, line.size() - 1);
    offset_ = base_ + pos_;
    if (!last) pos_ += line.size() + 1;
    return true;
  }
  /// False if the walk stopped where the layout broke.
  bool laid_out() const { return laid_out_; }
  /// Where the last element next() gave starts, from the start of the body.
  std::uint64_t offset() const { return offset_; }
  /// True once next() gave the body's last element (the one without a comma).
  bool reached_end() const { return reached_end_; }

 private:
  // Keeps the unread tail of the chunk (a line the chunk's end cut) and reads more after it.
  bool refill() {
    std::size_t keep = filled_ - pos_;
    if (keep == capacity_) {
      std::size_t bigger = std::max(kChunk, capacity_ * 2);
      auto grown = std::make_unique<char[]>(bigger + simdjson::SIMDJSON_PADDING);
      std::copy_n(data_ + pos_, keep, grown.get());
      chunk_ = std::move(grown);
      capacity_ = bigger;
    } else {
      std::memmove(chunk_.get(), data_ + pos_, keep);
    }
    data_ = chunk_.get();
    base_ += pos_;
    pos_ = 0;
    filled_ = keep;
    // Up to the limit, and past it only in growing steps: the rest of the last line.
    std::uint64_t until = limit_;
    if (read_to_ >= limit_) {
      until = read_to_ + tail_step_;
      tail_step_ = std::min(tail_step_ * 2, kChunk);
    }
    std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(capacity_ - filled_, until - read_to_));
    std::size_t got = source_.read(read_to_, chunk_.get() + filled_, want);
    filled_ += got;
    read_to_ += got;
    return got > 0;
  }

  static constexpr std::size_t kChunk = std::size_t{1} << 20;
  static constexpr std::size_t kTailStep = std::size_t{16} << 10;
  static constexpr std::uint64_t kNoLimit = ~std::uint64_t{0};
  const BodySource& source_;
  std::unique_ptr<char[]> chunk_;  // streamed: capacity_ bytes plus padding
  std::size_t capacity_ = 0;
  const char* data_ = "";
  std::size_t pos_ = 0;  // unread text is data_[pos_, filled_)
  std::size_t filled_ = 0;
  std::uint64_t base_ = 0;  // body offset of data_[0]
  std::uint64_t read_to_ = 0;  // body bytes read so far
  std::uint64_t offset_ = 0;
  std::uint64_t limit_ = kNoLimit;
  std::size_t tail_step_ = kTailStep;
  bool done_ = false;
  bool laid_out_ = true;
  bool reached_end_ = false;
};

bool split_element_lines(std::string_view body, std::vector<std::string_view>& lines) {
  BodySource source = BodySource::in_memory(body);
  ElementLines walk(source);
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
    bool by_line = marker != std::string_view::npos &&
        before_nodes.find(kModules, marker + 1) == std::string_view::npos &&
        before_nodes.size() >= marker + kModules.size() + kModulesEnd.size() &&
        before_nodes.substr(before_nodes.size() - kModulesEnd.size()) == kModulesEnd &&
        split_element_lines(before_nodes.substr(marker + kModules.size(),
                                                before_nodes.size() - kModulesEnd.size() - marker - kModules.size()),
                            module_lines);
    if (by_line) try {
        simdjson::padded_string head(std::string(before_nodes.substr(0, marker)) +
                                     ",\n\"modules\": [],\n\"nodes\": []\n}\n");
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
  } catch (const LoadError& e) { out.error = e; }
  return out;
}

// The root graph's nodes, one line each, on one thread.
PartResult<Graph> read_canonical_nodes(const BodySource& body) {
  PartResult<Graph> out;
  try {
    dom::parser parser;
    Graph g;
    g.reserve(body.expected_lines());
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
  } catch (const LoadError& e) { out.error = e; }
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
  std::uint64_t line_offset = 0;  ///< where it came from in the body, to read it again for the exact error
  std::size_t line_size = 0;
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

// What reading one segment of the node lines came to: its nodes, in batches, and where it
// stopped early, if it did.
struct SegmentRead {
  std::vector<ReadBatch> batches;
  bool canonical = true;  ///< false: a line that is not JSON on its own, or a break in the layout
  std::optional<LoadError> error;  ///< its path's index counts from the segment: the builder reads the line again
  std::uint64_t failed_offset = 0;  ///< the line the error is on
  std::size_t failed_size = 0;
  std::size_t failed_index = 0;  ///< the line's index in the segment
  bool reached_end = false;  ///< it holds the body's last line
};

// The body is cut into segments (the lines that start in each stretch of S bytes), read by
// several threads and taken by the builder strictly in order. A thread claims the next segment
// only while fewer than kAhead wait for the builder, so the graph is never held twice.
class SegmentQueue {
 public:
  explicit SegmentQueue(std::size_t count) : count_(count) {}

  /// The next segment to read; false when none is left, an earlier one stopped early, or the
  /// builder gave up.
  bool claim(std::size_t& k) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return next_ < taken_ + kAhead || next_ >= count_ || stopped_; });
    if (stopped_ || next_ >= count_) return false;
    k = next_++;
    return true;
  }
  void deliver(std::size_t k, SegmentRead read) {
    std::lock_guard lock(mutex_);
    if (!read.canonical || read.error) count_ = std::min(count_, k + 1);  // later segments no longer matter
    ready_.emplace(k, std::move(read));
    changed_.notify_all();
  }
  /// Segment k once read; false if a reading thread failed (it says why) or k is past the end.
  bool take(std::size_t k, SegmentRead& read) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return ready_.count(k) > 0 || failed_ || k >= count_; });
    auto it = ready_.find(k);
    if (it == ready_.end()) return false;
    read = std::move(it->second);
    ready_.erase(it);
    taken_ = k + 1;
    changed_.notify_all();
    return true;
  }
  /// The builder gave up: reading threads stop claiming.
  void stop() {
    std::lock_guard lock(mutex_);
    stopped_ = true;
    changed_.notify_all();
  }
  /// A reading thread failed (out of memory): everyone stops.
  void fail() {
    std::lock_guard lock(mutex_);
    failed_ = stopped_ = true;
    changed_.notify_all();
  }

 private:
  static constexpr std::size_t kAhead = 6;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::size_t, SegmentRead> ready_;
  std::size_t count_;
  std::size_t next_ = 0;  // the next segment to claim
  std::size_t taken_ = 0;  // segments the builder took
  bool stopped_ = false;
  bool failed_ = false;
};

// The reading side of a pipelined load: everything but names. References stay pending and
// names unchecked; the builder resolves and checks them against the graph, which holds
// exactly the nodes before the one it appends, as reading in turn would.
class PipelinedScope final : public NodeScope {
 public:
  explicit PipelinedScope(std::vector<ReadBatch>& out) : out_(out) { batch_.nodes.reserve(kBatch); }

  NodeId find(std::string_view name) override {
    // A batch is handed over once it holds kMaxRefs references, so only one line with over
    // a billion of them could get here (it would not fit in memory first).
    if (batch_.ref_names.size() >= kMaxRefsPerLine) throw LoadError{"$.nodes", "too many node references on one line"};
    batch_.ref_names.push_back(batch_.text.add(name));
    return kPendingRef + static_cast<NodeId>(batch_.ref_names.size() - 1);
  }

  bool add(OpKind op, std::string_view target, std::vector<Argument> args, Kwargs kwargs, std::string_view name,
           NodeMeta meta) override {
    batch_.nodes.push_back(ReadNode{op, batch_.text.add(target), std::move(args), std::move(kwargs), std::string(name),
                                    std::move(meta), line_offset_, line_size_});
    if (batch_.nodes.size() == kBatch || batch_.ref_names.size() >= kMaxRefs) flush();
    return true;
  }

  /// Where the line being read is in the body.
  void set_line(std::uint64_t offset, std::size_t size) {
    line_offset_ = offset;
    line_size_ = size;
  }

  /// Hands the current batch over.
  void flush() {
    if (batch_.nodes.empty()) return;
    out_.push_back(std::move(batch_));
    batch_ = {};
    batch_.nodes.reserve(kBatch);
  }

 private:
  static constexpr std::size_t kBatch = 2048;
  static constexpr std::size_t kMaxRefs = std::size_t{1} << 20;
  static constexpr std::size_t kMaxRefsPerLine = std::size_t{1} << 30;  // pending ids stay below kNoNode
  std::vector<ReadBatch>& out_;
  std::uint64_t line_offset_ = 0;
  std::size_t line_size_ = 0;
  ReadBatch batch_;
};

// The error reading line `index` in turn gives, with the graph holding the nodes before it:
// the builder's way to report exactly what reading in turn reports.
LoadError error_reading_in_turn(const BodySource& body, std::uint64_t offset, std::size_t size, std::size_t index,
                                Graph& g, const LoadError& otherwise) {
  try {
    simdjson::padded_string line = body.text(offset, size);
    dom::parser parser;
    dom::element node;
    if (line.size() != size || !parse_line(parser, line, node)) return otherwise;
    GraphScope scope(g);
    DomReader{}.root_node(node, index, scope);
  } catch (const LoadError& e) { return e; }
  return otherwise;
}

// The same, on three threads: two parse segments of the lines, and the calling thread resolves
// names and puts the nodes into the graph, segment after segment, so parsing, allocating and
// first touches overlap and neither core waits.
PartResult<Graph> read_canonical_nodes_pipelined(const BodySource& body) {
  // Segments of a mebibyte (a few thousand lines); smaller in small files, so that tests that
  // force this path on them cross segments too.
  const std::uint64_t segment =
      std::clamp<std::uint64_t>(body.size() / 16, std::uint64_t{64} << 10, std::uint64_t{1} << 20);
  SegmentQueue segments(static_cast<std::size_t>(body.size() / segment + 1));
  std::mutex crash_mutex;
  std::exception_ptr crashed;  // anything but a LoadError a reading thread threw (out of memory)
  auto read_segments = [&] {
    try {
      dom::parser parser;
      DomReader reader;
      ElementLines lines(body);
      for (std::size_t k = 0; segments.claim(k);) {
        SegmentRead read;
        PipelinedScope scope(read.batches);
        std::optional<std::uint64_t> start = body.line_start_in(k * segment, (k + 1) * segment);
        lines.restart(start.value_or(0), start ? (k + 1) * segment : 0);
        read.canonical = start.has_value();  // unreadable: the whole-file path reports why
        try {
          std::size_t i = 0;
          for (std::string_view line; lines.next(line); ++i) {
            dom::element node;
            if (!parse_line(parser, line, node)) {
              read.canonical = false;
              break;
            }
            scope.set_line(lines.offset(), line.size());
            read.failed_offset = lines.offset();
            read.failed_size = line.size();
            read.failed_index = i;
            reader.root_node(node, i, scope);
          }
          read.canonical = read.canonical && lines.laid_out();
          read.reached_end = lines.reached_end();
        } catch (const LoadError& e) { read.error = e; }
        // Also before an error, a line that is not JSON or a break in the layout: the builder
        // may find an error in the nodes before it, which reading in turn would report first.
        scope.flush();
        segments.deliver(k, std::move(read));
      }
    } catch (...) {
      std::lock_guard lock(crash_mutex);
      if (!crashed) crashed = std::current_exception();
      segments.fail();
    }
  };
  std::jthread readers[2];  // joined on every way out: they use the locals above
  struct StopFirst {  // destroyed before the readers: whatever happens, they stop claiming, then are joined
    SegmentQueue& segments;
    ~StopFirst() { segments.stop(); }
  } stop_first{segments};
  std::size_t started = 0;
  for (std::jthread& t : readers) {
    try {
      t = std::jthread(read_segments);
      ++started;
    } catch (const std::exception&) {
      break;  // fewer threads to be had: the ones running read every segment
    }
  }
  if (started == 0) return read_canonical_nodes(body);

  PartResult<Graph> out;
  Graph g;
  g.reserve(body.expected_lines());
  std::size_t appended = 0;
  // Appends a segment's nodes; at the first it cannot append (an unknown reference or a taken
  // name), reads that line again in turn for its exact error and returns false.
  constexpr std::size_t kPrefetchAhead = 8;
  auto append_segment = [&](SegmentRead& read) {
    for (ReadBatch& batch : read.batches)
      for (std::size_t j = 0; j < batch.nodes.size(); ++j) {
        ReadNode& n = batch.nodes[j];
        // A name's bucket is anywhere in a table of tens of megabytes: asking for it a few
        // nodes early hides most of a cache miss per node (5-9% of a cold load, in alternating runs).
        if (j + kPrefetchAhead < batch.nodes.size()) g.prefetch_name(batch.nodes[j + kPrefetchAhead].name);
        bool resolved = true;
        auto resolve = [&](NodeId id) {
          NodeId found = g.find(batch.ref_names[id - kPendingRef]);
          resolved = resolved && found != kNoNode;
          return found;
        };
        for (Argument& a : n.args) map_node_refs(a, resolve);
        for (auto& kv : n.kwargs) map_node_refs(kv.second, resolve);
        Result<NodeId> id = resolved ? g.append_node(n.op, g.intern_target(n.target), std::move(n.args),
                                                     std::move(n.kwargs), std::move(n.name), std::move(n.meta))
                                     : Result<NodeId>(Status::error("unresolved reference"));
        if (!id || id.value() != appended) {
          out.error = error_reading_in_turn(
              body, n.line_offset, n.line_size, appended, g,
              LoadError{root_node_path(appended), id ? "internal error: node ids out of step" : id.status().message()});
          return false;
        }
        ++appended;
      }
    return true;
  };
  bool reached_end = false;
  SegmentRead read;
  for (std::size_t k = 0; !out.error && out.canonical && segments.take(k, read); ++k) {
    if (!append_segment(read)) break;
    // Where the segment stopped early: every node before that line is in the graph now, so
    // reading the line again in turn gives the exact error (a reference checked only here
    // may come before the value the reading thread stopped at).
    if (read.error) {
      LoadError otherwise = *read.error;  // with the line's index in the file, not the segment
      std::string local = root_node_path(read.failed_index);
      if (otherwise.path.rfind(local, 0) == 0)
        otherwise.path = root_node_path(appended) + otherwise.path.substr(local.size());
      out.error = error_reading_in_turn(body, read.failed_offset, read.failed_size, appended, g, otherwise);
    }
    out.canonical = read.canonical;
    reached_end = reached_end || read.reached_end;
  }
  // Every segment read, yet the last line never seen: the file shrank while it was read.
  if (!out.error && out.canonical && !reached_end) out.canonical = false;
  // Joined before `crashed` is read (an exception on the way is handled by stop_first).
  segments.stop();
  for (std::jthread& t : readers)
    if (t.joinable()) t.join();
  if (crashed) std::rethrow_exception(crashed);
  if (out.error || !out.canonical) return out;
  out.value = std::move(g);
  return out;
}

std::atomic<std::size_t> g_parallel_threshold{std::size_t{4} << 20};
std::atomic<std::size_t> g_threaded_loads{0};
std::atomic<std::size_t> g_streamed_loads{0};

constexpr std::string_view kNodesMarker = "\n\"nodes\": [\n";
constexpr std::string_view kEnd = "\n]\n}\n";

// The head (everything before the nodes marker) and the node lines of a canonical file, read
// as parse_canonical describes; `parallel` puts them on four threads (head, two node parsers, builder).
std::optional<Result<GraphModule>> read_head_and_nodes(const BodySource& before_nodes, const BodySource& body,
                                                       std::string_view source, bool parallel) {
  // Large files read their head (the module table) on a second thread, and their nodes on two
  // more (see read_canonical_nodes_pipelined); below the threshold threads cost more than they save.
  auto read_head = [&before_nodes]() -> PartResult<GraphModule> {
    if (!before_nodes.streamed()) return read_canonical_head(before_nodes.memory);
    // A file's head is read here, on the head's own thread, while the nodes are being read.
    auto size = static_cast<std::size_t>(before_nodes.size());
    auto text = std::make_unique_for_overwrite<char[]>(size + simdjson::SIMDJSON_PADDING);
    advise_huge_pages(text.get(), size);
    std::fill_n(text.get() + size, simdjson::SIMDJSON_PADDING, '\0');
    if (before_nodes.read(0, text.get(), size) != size) {
      PartResult<GraphModule> unreadable;  // the whole-file path reports why
      unreadable.canonical = false;
      return unreadable;
    }
    return read_canonical_head(std::string_view(text.get(), size));
  };
  PartResult<GraphModule> head;
  std::exception_ptr head_crashed;
  std::jthread head_reader;  // joined on every way out: it uses the locals above
  if (parallel) {
    try {
      head_reader = std::jthread([&] {
        try {
          head = read_head();
        } catch (...) { head_crashed = std::current_exception(); }
      });
    } catch (const std::system_error&) {
      parallel = false;  // no thread to be had: read in turn
    }
  }
  // One node per line, without its trailing comma; a broken layout is found on the way, and
  // errors before it are the same in turn and on threads.
  PartResult<Graph> nodes;
  if (parallel) {
    g_threaded_loads.fetch_add(1, std::memory_order_relaxed);
    nodes = read_canonical_nodes_pipelined(body);
    head_reader.join();
    if (head_crashed) std::rethrow_exception(head_crashed);
  } else {
    head = read_head();
    if (head.canonical && !head.error) nodes = read_canonical_nodes(body);
  }
  // Errors in file order: the head's come first.
  auto error = [&](const LoadError& e) {
    return Result<GraphModule>(
        Status::error(Diagnostic{.file = std::string(source), .path = e.path, .message = e.message}));
  };
  if (!head.canonical) return std::nullopt;
  if (head.error) return error(*head.error);
  if (!nodes.canonical) return std::nullopt;
  if (nodes.error) return error(*nodes.error);
  GraphModule gm = std::move(*head.value);
  gm.graph = std::move(*nodes.value);
  return Result<GraphModule>(std::move(gm));
}

// An open file, closed on every way out.
struct OpenFile {
  int fd = -1;
  ~OpenFile() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

// The canonical form (what graft and graft_fx write) puts each module and each root node on
// its own line, after `"modules": [` and `"nodes": [` lines. Such a file is read as a small
// head document plus one small document per line, with reused parsers: a parser then touches
// kilobytes instead of about three times the file, which is most of a cold load's cost.
// Anything else, and any line that is not valid JSON on its own, returns nullopt and takes
// the whole-document path, which reports syntax errors with their line and column.
std::optional<Result<GraphModule>> parse_canonical(const char* text, std::size_t size, std::string_view source) {
  std::string_view all(text, size);
  // The first marker ends the head. Another one later would be a node line `"nodes": [`, which
  // is not JSON on its own: that line sends the file to the whole-document path.
  std::size_t marker = all.find(kNodesMarker);
  if (marker == std::string_view::npos) return std::nullopt;
  std::size_t body_begin = marker + kNodesMarker.size();
  if (all.size() < body_begin + kEnd.size() || all.substr(all.size() - kEnd.size()) != kEnd) return std::nullopt;
  BodySource body = BodySource::in_memory(all.substr(body_begin, all.size() - kEnd.size() - body_begin));
  return read_head_and_nodes(BodySource::in_memory(all.substr(0, marker)), body, source,
                             size >= g_parallel_threshold.load(std::memory_order_relaxed));
}

// The same for a file on disk, which is never in memory whole: the head is read up to the
// nodes marker, and the node lines are streamed from the file (BodySource).
std::optional<Result<GraphModule>> parse_canonical_file(const std::string& path) {
  OpenFile file{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  struct stat st {};
  if (file.fd < 0 || ::fstat(file.fd, &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;  // FileBuffer says why
  auto size = static_cast<std::uint64_t>(st.st_size);
  if (size < g_parallel_threshold.load(std::memory_order_relaxed) || size < kEnd.size()) return std::nullopt;
  BodySource whole = BodySource::in_file(file.fd, 0, size);
  char tail[kEnd.size()];
  if (read_range(file.fd, tail, size - kEnd.size(), kEnd.size()) != kEnd.size() ||
      std::string_view(tail, kEnd.size()) != kEnd)
    return std::nullopt;

  // Where the nodes start: the first marker, found through a small reused window (the head's
  // thread reads the head itself, while the nodes are read).
  constexpr std::size_t kWindow = std::size_t{1} << 20;
  std::vector<char> window(kWindow);
  std::uint64_t marker = 0;
  for (std::uint64_t at = 0;; at += window.size() - (kNodesMarker.size() - 1)) {
    std::size_t got = whole.read(at, window.data(), window.size());
    if (got < kNodesMarker.size()) return std::nullopt;  // no marker, or unreadable: the whole-file path says which
    if (std::size_t found = std::string_view(window.data(), got).find(kNodesMarker); found != std::string_view::npos) {
      marker = at + found;
      break;
    }
    if (got < window.size()) return std::nullopt;
  }
  std::uint64_t body_begin = marker + kNodesMarker.size();
  if (size < body_begin + kEnd.size()) return std::nullopt;
  std::optional<Result<GraphModule>> read =
      read_head_and_nodes(BodySource::in_file(file.fd, 0, marker),
                          BodySource::in_file(file.fd, body_begin, size - kEnd.size()), path, true);
  if (read) g_streamed_loads.fetch_add(1, std::memory_order_relaxed);
  return read;
}

std::size_t set_parallel_load_threshold(std::size_t bytes) { return g_parallel_threshold.exchange(bytes); }

std::size_t threaded_loads() { return g_threaded_loads.load(std::memory_order_relaxed); }

std::size_t streamed_loads() { return g_streamed_loads.load(std::memory_order_relaxed); }

std::uint64_t set_stream_read_limit(std::uint64_t bytes) { return g_stream_read_limit.exchange(bytes); }

}  // namespace graft::detail
