// Graph files: canonical round trips, every argument kind, and one clear error per malformed input.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "graft/io/atomic_file.hpp"
#include "graft/io/graph_json.hpp"
#include "graft/io/json_text.hpp"
#include "graft/ir/lint.hpp"
#include "graft/passes/topological_sort.hpp"
#include "io/canonical_reader.hpp"
#include "io/load_hooks.hpp"

using namespace graft;

namespace {

std::string data(const char* name) { return std::string(GRAFT_TEST_DATA) + "/" + name; }

std::string read(const std::string& path) {
  Result<std::string> r = read_file(path);
  REQUIRE(r.is_ok());
  return r.value();
}

// A minimal valid file around the given nodes.
std::string doc(const std::string& nodes) {
  return "{\n\"format\": \"graft-graph\",\n\"version\": 1,\n\"meta\": {},\n\"modules\": [],\n\"nodes\": [\n" + nodes +
      "\n]\n}\n";
}

std::string error_of(const std::string& text) {
  Result<GraphModule> r = parse_graph_json(text, "g.json");
  REQUIRE_FALSE(r.is_ok());
  return r.status().message();
}

// A fresh folder under the system temp dir, removed again at the end of the test.
struct ScratchDir {
  std::filesystem::path path;
  // The process id keeps two test runs at once (a build and a sanitizer build) apart.
  explicit ScratchDir(const char* name)
      : path(std::filesystem::temp_directory_path() / (std::string(name) + "_" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~ScratchDir() { std::filesystem::remove_all(path); }
  std::string file(const char* name) const { return (path / name).string(); }
};

const char* kX = R"({"name":"x","op":"placeholder","target":"x","args":[],"kwargs":{},"meta":{}})";

}  // namespace

TEST_CASE("json: floats are spelled as Python's repr spells them") {
  // Expected strings are what CPython 3.11 prints for repr() of the same doubles.
  const std::pair<double, const char*> cases[] = {{1.0, "1.0"},
                                                  {0.1, "0.1"},
                                                  {1e-05, "1e-05"},
                                                  {0.0001, "0.0001"},
                                                  {1e16, "1e+16"},
                                                  {1e15, "1000000000000000.0"},
                                                  {123456789.5, "123456789.5"},
                                                  {-2.5e-07, "-2.5e-07"},
                                                  {5e-324, "5e-324"},
                                                  {1.7976931348623157e308, "1.7976931348623157e+308"},
                                                  {-0.0, "-0.0"},
                                                  {0.0, "0.0"},
                                                  {1152921504606846976.0, "1.152921504606847e+18"},
                                                  {1.0 / 3, "0.3333333333333333"},
                                                  {100.0, "100.0"},
                                                  {1e22, "1e+22"},
                                                  {12345678901234567.0, "1.2345678901234568e+16"}};
  for (auto [value, expected] : cases) {
    std::string out;
    detail::append_python_float(out, value);
    CHECK(out == expected);
  }
}

TEST_CASE("json: strings are escaped as json.dumps(ensure_ascii=True) escapes them") {
  std::string out;
  detail::append_json_string(out, "a\"b\\c\n\t\x01\x7f caf\xc3\xa9 \xf0\x9f\x98\x80/");
  CHECK(out == R"("a\"b\\c\n\t\u0001\u007f caf\u00e9 \ud83d\ude00/")");
}

TEST_CASE("json: a canonical file loads and saves to the same bytes") {
  std::string text = read(data("all_kinds.json"));
  Result<GraphModule> gm = parse_graph_json(text, "all_kinds.json");
  REQUIRE_MESSAGE(gm.is_ok(), gm.status().message());
  Result<std::string> again = to_graph_json(gm.value());
  REQUIRE(again.is_ok());
  CHECK(again.value() == text);
  CHECK(lint(*gm).is_ok());
  // Values and settings the file carries for importers (FORMAT.md §3) are kept as they are.
  CHECK(gm->modules.find("")->parameters[0].data == std::optional<std::string>("AACAPw=="));
  CHECK_FALSE(gm->modules.find("layers.0.attn.q_proj")->parameters[0].data.has_value());
  // A tensor's layout and device, when they are not row-major on the cpu (meta propagation reads them).
  const TensorSpec& weight = gm->modules.find("layers.0.attn.q_proj")->parameters[0];
  REQUIRE(weight.stride.has_value());
  CHECK(*weight.stride == Dims{Dim(1), Dim(8)});
  CHECK(weight.device == "cuda:0");
  CHECK_FALSE(gm->modules.find("layers.0.attn.q_proj")->parameters[1].stride.has_value());
  CHECK(gm->modules.find("layers.0.attn.q_proj")->attributes_json ==
        R"({"in_features":8,"out_features":8,"training":false,"pair":{"tuple":[1,2.5]}})");
  CHECK(gm->modules.find("sub")->attributes_json.empty());
}

TEST_CASE("json: every argument kind reads back with its exact type") {
  Result<GraphModule> r = load_graph_file(data("all_kinds.json"));
  REQUIRE(r.is_ok());
  const Graph& g = r->graph;
  NodeId to = g.find("to");
  CHECK(g.op(to) == OpKind::CallMethod);
  CHECK(g.args(to)[1] == Argument(DType{"bfloat16"}));
  CHECK(g.kwargs(to)[0].first == "device");
  CHECK(g.kwargs(to)[0].second == Argument(Device{"cuda:0"}));
  CHECK(g.kwargs(to)[1].second == Argument(false));
  CHECK(g.kwargs(to)[2].second.is_none());

  NodeId full = g.find("full");
  CHECK(g.args(full)[0] == Argument::list({2, 3}));
  CHECK(g.args(full)[1] == Argument(-INFINITY));
  CHECK(g.kwargs(full)[1].second == Argument(Layout{"strided"}));
  CHECK(g.kwargs(full)[4].second == Argument(MemoryFormat{"contiguous_format"}));

  NodeId getitem = g.find("getitem");
  const Argument& index = g.args(getitem)[1];
  REQUIRE(index.holds<Tuple>());
  CHECK(index.get<Tuple>().items[0] == Argument(Slice{{NoneValue{}, NoneValue{}, NoneValue{}}}));
  CHECK(index.get<Tuple>().items[1] == Argument(0));
  CHECK(index.get<Tuple>().items[2] == Argument(Slice{{1, -1, 2}}));
  CHECK(index.get<Tuple>().items[3] == Argument(EllipsisValue{}));
  CHECK(index.get<Tuple>().items[3] != Argument(NoneValue{}));

  NodeId clamp = g.find("clamp");
  CHECK(std::isnan(g.kwargs(clamp)[0].second.get<double>()));

  NodeId pack = g.find("pack");
  const Dict& d = g.args(pack)[0].get<Dict>();
  CHECK(d.key(0) == Argument("a"));
  CHECK(d.value(0) == Argument::node(clamp));
  CHECK(d.value(1) == Argument::list({1.0, 0.1, 1e-05, 1e16, 123456789.5, -2.5e-07}));
  CHECK(d.key(2) == Argument(3));
  CHECK(d.value(2) == Argument(true));
  CHECK(g.args(pack)[1] == Argument("it's \"quoted\"\n\t\\"));
  CHECK(g.users(clamp) == std::vector<NodeId>{pack});

  const ValueMeta& vm = g.meta(pack).tensor_meta;
  REQUIRE(vm.kind == ValueMeta::Kind::Tuple);
  CHECK(vm.elements[0].tensor.shape == std::vector<Dim>{2});
  CHECK(vm.elements[1].kind == ValueMeta::Kind::None);
  CHECK(vm.elements[2].elements[0].tensor.dtype.str() == "bool");
  CHECK(g.meta(g.find("x")).tensor_meta.tensor.shape == std::vector<Dim>{Dim::symbol("s0"), 8});
  CHECK(*g.meta(g.find("q_proj")).find_extra("stack_trace") == R"j("File \"model.py\", line 3\n  return self.q(x)")j");

  const ModuleInfo* q = r->modules.find("layers.0.attn.q_proj");
  REQUIRE(q != nullptr);
  CHECK(q->class_name == "torch.nn.modules.linear.Linear");
  CHECK(r->modules.find_tensor("layers.0.attn.q_proj.bias")->shape == std::vector<Dim>{8});
  CHECK(r->modules.find_tensor("scale") != nullptr);
  const ModuleInfo* sub = r->modules.find("sub");
  REQUIRE(sub->graph);
  CHECK(sub->graph->size() == 4);
  CHECK(r->meta_json ==
        R"({"producer":"hand-written","note":"caf\u00e9 \ud83d\ude00","numbers":[1,1.5,-0.0,1e-05,1e+16]})");
}

TEST_CASE("json: any spelling of a graph saves in the one canonical form") {
  Result<GraphModule> gm = load_graph_file(data("noncanonical.json"));
  REQUIRE_MESSAGE(gm.is_ok(), gm.status().message());
  CHECK(to_graph_json(gm.value()).value() == read(data("noncanonical.expected.json")));
}

TEST_CASE("json: malformed input gives one error naming the file and the place") {
  const std::string node_x = kX;
  SUBCASE("syntax error has line and column") {
    CHECK(error_of("{\n\"format\": \"graft-graph\",\n\"version\": 1,,\n}") ==
          "g.json:3:14: invalid JSON: syntax error while parsing object key - unexpected ','; expected string literal");
  }
  SUBCASE("syntax error in a node line of a canonical file") {
    CHECK(error_of(
              doc(node_x + ",\n" +
                  R"({"name":"y","op":"call_function","target":"f","args":[{"node":"x"}}],"kwargs":{},"meta":{}})")) ==
          "g.json:8:67: invalid JSON: syntax error while parsing array - unexpected '}'; expected ']'");
  }
  SUBCASE("two nodes on one line are still read") {
    Result<GraphModule> r = parse_graph_json(
        doc(node_x + ", " +
            R"({"name":"y","op":"output","target":"output","args":[{"node":"x"}],"kwargs":{},"meta":{}})"),
        "g.json");
    REQUIRE(r.is_ok());
    CHECK(r->graph.size() == 2);
    CHECK(lint(*r).is_ok());
  }
  SUBCASE("empty file") {
    CHECK(
        error_of("") ==
        "g.json:1:1: invalid JSON: syntax error while parsing value - unexpected end of input; expected '[', '{', or a literal");
  }
  SUBCASE("truncated file") {
    CHECK(
        error_of("{\"format\":\"graft-graph\",\n\"nodes\":[") ==
        "g.json:2:10: invalid JSON: syntax error while parsing value - unexpected end of input; expected '[', '{', or a literal");
  }
  SUBCASE("not a graph file") { CHECK(error_of("[1, 2]") == "g.json: $: expected an object, found an array"); }
  SUBCASE("no format key") { CHECK(error_of("{}") == "g.json: $: missing key 'format' (is this a graft graph file?)"); }
  SUBCASE("newer version") {
    CHECK(error_of(R"({"format":"graft-graph","version":2,"future":[]})") ==
          "g.json: $.version: unsupported format version 2 (this graft reads version 1)");
  }
  SUBCASE("unknown top-level key") {
    CHECK(error_of(R"({"format":"graft-graph","version":1,"nodez":[]})") ==
          "g.json: $: unknown key 'nodez' (expected: format, version, meta, modules, nodes)");
  }
  SUBCASE("missing nodes") {
    CHECK(error_of(R"({"format":"graft-graph","version":1,"meta":{},"modules":[]})") ==
          "g.json: $: missing key 'nodes'");
  }
  SUBCASE("dangling node reference") {
    CHECK(error_of(
              doc(node_x + ",\n" +
                  R"({"name":"y","op":"call_function","target":"f","args":[1,{"node":"z"}],"kwargs":{},"meta":{}})")) ==
          "g.json: $.nodes[1].args[1].node: unknown node 'z' (a node may only use nodes listed before it)");
  }
  SUBCASE("forward reference") {
    CHECK(error_of(doc(R"({"name":"y","op":"call_function","target":"f","args":[{"node":"x"}],"kwargs":{},"meta":{}})"
                       ",\n" +
                       node_x)) ==
          "g.json: $.nodes[0].args[0].node: unknown node 'x' (a node may only use nodes listed before it)");
  }
  SUBCASE("duplicate node name") {
    CHECK(error_of(doc(node_x + ",\n" + node_x)) == "g.json: $.nodes[1].name: duplicate node name 'x'");
  }
  SUBCASE("unknown op") {
    CHECK(
        error_of(doc(R"({"name":"x","op":"call","target":"x","args":[],"kwargs":{},"meta":{}})")) ==
        "g.json: $.nodes[0].op: unknown op 'call' (expected placeholder, get_attr, call_function, call_method, call_module or output)");
  }
  SUBCASE("missing key in a node") {
    CHECK(error_of(doc(R"({"name":"x","op":"placeholder","target":"x","args":[],"meta":{}})")) ==
          "g.json: $.nodes[0]: missing key 'kwargs'");
  }
  SUBCASE("duplicate key in a node") {
    CHECK(error_of(doc(R"({"name":"x","name":"y","op":"placeholder","target":"x","args":[],"kwargs":{},"meta":{}})")) ==
          "g.json: $.nodes[0].name: duplicate key");
  }
  SUBCASE("wrong type") {
    CHECK(error_of(doc(R"({"name":"x","op":"placeholder","target":"x","args":{},"kwargs":{},"meta":{}})")) ==
          "g.json: $.nodes[0].args: expected an array, found an object");
  }
  SUBCASE("unknown argument tag") {
    CHECK(
        error_of(
            doc(R"({"name":"x","op":"placeholder","target":"x","args":[{"complex":[1,2]}],"kwargs":{},"meta":{}})")) ==
        "g.json: $.nodes[0].args[0]: unknown argument tag 'complex' (expected node, tuple, dict, slice, ellipsis, float, dtype, device, layout or memory_format)");
  }
  SUBCASE("ellipsis with a value") {
    CHECK(error_of(
              doc(R"({"name":"x","op":"placeholder","target":"x","args":[{"ellipsis":1}],"kwargs":{},"meta":{}})")) ==
          R"(g.json: $.nodes[0].args[0].ellipsis: Python's Ellipsis is written {"ellipsis":null})");
  }
  SUBCASE("integer out of range") {
    CHECK(error_of(doc(
              R"({"name":"x","op":"placeholder","target":"x","args":[18446744073709551615],"kwargs":{},"meta":{}})")) ==
          "g.json: $.nodes[0].args[0]: integer does not fit in 64 bits");
  }
  SUBCASE("bad special float") {
    CHECK(error_of(doc(
              R"({"name":"x","op":"placeholder","target":"x","args":[{"float":"infinity"}],"kwargs":{},"meta":{}})")) ==
          "g.json: $.nodes[0].args[0].float: expected \"inf\", \"-inf\" or \"nan\", found \"infinity\"");
  }
  SUBCASE("bad tensor meta") {
    CHECK(
        error_of(doc(
            R"({"name":"x","op":"placeholder","target":"x","args":[],"kwargs":{},"meta":{"tensor_meta":{"shape":[1.5],"dtype":"f","stride":[],"device":"cpu"}}})")) ==
        "g.json: $.nodes[0].meta.tensor_meta.shape[0]: expected an integer, found a float");
  }
  SUBCASE("negative size") {
    CHECK(
        error_of(doc(
            R"({"name":"x","op":"placeholder","target":"x","args":[],"kwargs":{},"meta":{"tensor_meta":{"shape":[2,-3],"dtype":"f","stride":[1,1],"device":"cpu"}}})")) ==
        "g.json: $.nodes[0].meta.tensor_meta.shape[1]: a size cannot be negative");
  }
  SUBCASE("half a surrogate pair is not text (test_format.py: the same rule in Python)") {
    for (const char* half : {R"(\ud800)", R"(\udc00)", R"(\ud83dx)"}) {
      CAPTURE(half);
      const std::string e = error_of(std::string(R"({"format":"graft-graph","version":1,"meta":{"s":")") + half +
                                     R"("},"modules":[],"nodes":[]})");
      CHECK(e.find("g.json:1:") == 0);
      CHECK(e.find("surrogate") != std::string::npos);
    }
    CHECK(parse_graph_json(
              R"({"format":"graft-graph","version":1,"meta":{"s":"\ud83d\ude00"},"modules":[],"nodes":[]})", "g.json")
              .is_ok());
  }
  SUBCASE("empty targets, but the output's") {
    CHECK(error_of(doc(R"({"name":"x","op":"placeholder","target":"","args":[],"kwargs":{},"meta":{}})")) ==
          "g.json: $.nodes[0].target: target is empty");
    CHECK(parse_graph_json(doc(R"({"name":"x","op":"placeholder","target":"x","args":[],"kwargs":{},"meta":{}},
{"name":"output","op":"output","target":"","args":[{"node":"x"}],"kwargs":{},"meta":{}})"),
                           "g.json")
              .is_ok());
  }
  SUBCASE("duplicate key inside free-form metadata") {
    CHECK(
        error_of(doc(
            R"({"name":"x","op":"placeholder","target":"x","args":[],"kwargs":{},"meta":{"stack":{"a":1,"a":2}}})")) ==
        "g.json: $.nodes[0].meta.stack.a: duplicate key");
  }
  SUBCASE("dotted parameter name") {
    CHECK(
        error_of(
            R"({"format":"graft-graph","version":1,"meta":{},"modules":[{"path":"","class":"A","parameters":[{"name":"a.b","shape":[],"dtype":"float32"}],"buffers":[]}],"nodes":[]})") ==
        "g.json: $.modules[0].parameters[0].name: a parameter or buffer name is one non-empty segment without dots");
  }
  SUBCASE("module settings that are not an object; a tensor value that is not a string") {
    CHECK(
        error_of(
            R"({"format":"graft-graph","version":1,"meta":{},"modules":[{"path":"","class":"A","parameters":[],"buffers":[],"attributes":[1]}],"nodes":[]})") ==
        "g.json: $.modules[0].attributes: expected an object of the module's settings");
    CHECK(
        error_of(
            R"({"format":"graft-graph","version":1,"meta":{},"modules":[{"path":"","class":"A","parameters":[{"name":"a","shape":[],"dtype":"float32","data":1}],"buffers":[]}],"nodes":[]})")
            .find("$.modules[0].parameters[0].data") != std::string::npos);
    CHECK(
        error_of(
            R"({"format":"graft-graph","version":1,"meta":{},"modules":[{"path":"","class":"A","parameters":[{"name":"a","shape":[2,3],"dtype":"float32","stride":[1]}],"buffers":[]}],"nodes":[]})") ==
        "g.json: $.modules[0].parameters[0].stride: one stride per dim of the shape");
  }
  SUBCASE("a tensor with no elements keeps its empty value through a save") {
    const std::string text = R"({
"format": "graft-graph",
"version": 1,
"meta": {},
"modules": [
{"path":"","class":"A","parameters":[],"buffers":[{"name":"e","shape":[0],"dtype":"float32","data":""}]}
],
"nodes": []
}
)";
    Result<GraphModule> gm = parse_graph_json(text, "g.json");
    REQUIRE_MESSAGE(gm.is_ok(), gm.status().message());
    CHECK(to_graph_json(gm.value()).value() == text);
  }
  SUBCASE("duplicate module path") {
    CHECK(
        error_of(
            R"({"format":"graft-graph","version":1,"meta":{},"modules":[{"path":"a","class":"A","parameters":[],"buffers":[]},{"path":"a","class":"A","parameters":[],"buffers":[]}],"nodes":[]})") ==
        "g.json: $.modules[1].path: duplicate module path 'a'");
  }
  SUBCASE("invalid UTF-8") {
    CHECK(error_of(doc(std::string(R"({"name":"x)") + "\xff" +
                       R"(","op":"placeholder","target":"x","args":[],"kwargs":{},"meta":{}})"))
              .rfind("g.json", 0) == 0);
  }
}

namespace {

// Runs a test with canonical files of any size read on threads (the path of files over 4 MiB).
struct ThreadedLoads {
  std::size_t saved = detail::set_parallel_load_threshold(0);
  ~ThreadedLoads() { detail::set_parallel_load_threshold(saved); }
};

// What `r` came to: the saved bytes or the error.
std::string outcome_of(const Result<GraphModule>& r) {
  if (!r) return "error: " + r.status().message();
  Status linted = lint(*r);
  REQUIRE_MESSAGE(linted.is_ok(), linted.message());
  return to_graph_json(r.value()).value();
}

// What parsing `text` gives, read in turn and on threads: the saved bytes or the error. On
// threads it is read twice, from memory and as a file whose node lines are streamed from disk
// (the path of large files); both must give the same.
std::pair<std::string, std::string> both_ways(const std::string& text) {
  std::string in_turn = outcome_of(parse_graph_json(text, "g.json"));
  // Whether the canonical layout holds all the way, read in turn: then the threads must not
  // have fallen back to reading the whole document either.
  std::string padded = text + std::string(64, '\0');  // simdjson's padding
  bool laid_out = detail::parse_canonical(padded.data(), text.size(), "g.json").has_value();
  ThreadedLoads threaded;
  std::size_t before = detail::threaded_loads();
  std::string on_threads = outcome_of(parse_graph_json(text, "g.json"));
  // Unless the text is not in the canonical layout at all, it took the threaded path.
  bool canonical = text.find("\n\"nodes\": [\n") != std::string::npos;
  if (canonical) CHECK(detail::threaded_loads() == before + 1);

  ScratchDir dir("graft_json_streamed");
  REQUIRE(write_output_file(dir.file("g.json"), text).is_ok());
  std::size_t streamed_before = detail::streamed_loads();
  std::string streamed = outcome_of(load_graph_file(dir.file("g.json")));
  if (std::string prefix = "error: " + dir.file(""); streamed.rfind(prefix, 0) == 0)
    streamed = "error: " + streamed.substr(prefix.size());
  CHECK(detail::parse_canonical(padded.data(), text.size(), "g.json").has_value() == laid_out);
  // Streamed exactly when the layout holds all the way (else the file is read whole after all).
  CHECK(detail::streamed_loads() == streamed_before + (laid_out ? 1 : 0));
  CHECK(streamed == on_threads);
  return {in_turn, on_threads};
}

// A canonical file with modules one per line.
std::string doc_with_modules(const std::string& modules, const std::string& nodes) {
  return "{\n\"format\": \"graft-graph\",\n\"version\": 1,\n\"meta\": {},\n\"modules\": [\n" + modules +
      "\n],\n\"nodes\": [\n" + nodes + "\n]\n}\n";
}

const char* kModuleA =
    R"({"path":"a","class":"A","parameters":[{"name":"w","shape":[2,"s0"],"dtype":"float32"}],"buffers":[]})";

}  // namespace

TEST_CASE("json: what an error quotes from the file is escaped: it cannot forge a line or reorder one") {
  // A name with a line break, a right-to-left override, NUL and a byte that is not UTF-8 (the
  // reader refuses such a file, so only escape_text sees the last two).
  CHECK(escape_text("a\n ok: verified\u202e\x01\x7f") == "a\\n ok: verified\\u202e\\x01\\x7f");
  CHECK(escape_text(std::string("\0\r\t\xff|\xc3\xa9|\u2066\u2069\u2028\u200f\xc2\x85", 22)) ==
        "\\x00\\r\\t\\xff|\xc3\xa9|\\u2066\\u2069\\u2028\\u200f\\u0085");
  CHECK(escape_message("two\nlines\tand \u202e") == "two\nlines\tand \\u202e");  // graft's own line breaks stay
  CHECK(quoted_text("relu") == "'relu'");
  Diagnostic d{.file = "g\n.json", .path = "$.nodes[0].kwargs.a\nb", .node = "x\ny", .message = "m\u202e\nn"};
  CHECK(d.to_string() == "g\\n.json: $.nodes[0].kwargs.a\\nb: node 'x\\ny': m\\u202e\nn");
  auto error_of = [](std::string_view text) { return parse_graph_json(text, "g.json").status().message(); };
  const std::string head = R"({"format":"graft-graph","version":1,"meta":{},"modules":[],"nodes":[)"
                           R"({"name":"x","op":"placeholder","target":"x","args":[],"kwargs":{},"meta":{}},)";
  CHECK(error_of(head +
                 R"({"name":"y","op":"call_function","target":"t","args":[{"node":"z\n ok: verified\u202e"}],)"
                 R"("kwargs":{},"meta":{}}]})") ==
        "g.json: $.nodes[1].args[0].node: unknown node 'z\\n ok: verified\\u202e' (a node may only use nodes listed "
        "before it)");
  CHECK(error_of(head + R"({"name":"x","op":"call_f\nunction","target":"t","args":[],"kwargs":{},"meta":{}}]})") ==
        "g.json: $.nodes[1].op: unknown op 'call_f\\nunction' (expected placeholder, get_attr, call_function, "
        "call_method, call_module or output)");
  Result<GraphModule> named = parse_graph_json(
      head + R"({"name":"a\u202e\n b","op":"call_function","target":"t","args":[],"kwargs":{},"meta":{}}]})", "g.json");
  REQUIRE(named);
  CHECK(lint(*named).message() == "node 'a\\u202e\\n b': name is not a valid identifier");
}

TEST_CASE("json: a file read on threads gives what reading it in turn gives") {
  SUBCASE("a real model, modules one per line") {
    std::string text = read(std::string(GRAFT_TEST_DATA) + "/../../examples/graphs/vit_b_16.aten.json");
    auto [in_turn, threaded] = both_ways(text);
    CHECK(in_turn == text);
    CHECK(threaded == text);
  }
  SUBCASE("a module with its own graph spans lines: the head is read whole") {
    std::string text = read(data("all_kinds.json"));
    auto [in_turn, threaded] = both_ways(text);
    CHECK(in_turn == text);
    CHECK(threaded == text);
  }
  SUBCASE("many nodes, so that they cross batches and fill the queue between the threads") {
    std::string nodes = kX;
    for (int i = 0; i < 40000; ++i)
      nodes += ",\n" + std::string(R"({"name":"r)") + std::to_string(i) + R"(","op":"call_function","target":"f)" +
          std::to_string(i % 7) + R"(","args":[{"node":")" + (i == 0 ? std::string("x") : "r" + std::to_string(i / 2)) +
          R"("}],"kwargs":{},"meta":{}})";
    nodes +=
        ",\n" +
        std::string(
            R"({"name":"output","op":"output","target":"output","args":[{"node":"r39999"}],"kwargs":{},"meta":{}})");
    std::string text = doc_with_modules(kModuleA, nodes);
    auto [in_turn, threaded] = both_ways(text);
    CHECK(in_turn == text);
    CHECK(threaded == text);
  }
  SUBCASE("names and targets longer than the parser's text chunks") {
    std::string long_name(70000, 'n');
    std::string long_target = "pkg." + std::string(70000, 't');
    std::string nodes = std::string(kX) + ",\n" + R"({"name":")" + long_name + R"(","op":"call_function","target":")" +
        long_target + R"(","args":[{"node":"x"}],"kwargs":{},"meta":{}})" + ",\n" +
        R"({"name":"output","op":"output","target":"output","args":[{"node":")" + long_name +
        R"("}],"kwargs":{},"meta":{}})";
    std::string text = doc_with_modules(kModuleA, nodes);
    auto [in_turn, threaded] = both_ways(text);
    CHECK(in_turn == text);
    CHECK(threaded == text);
  }
  SUBCASE("a line longer than the buffer a file's lines are streamed through") {
    std::string nodes = std::string(kX) + ",\n" +
        R"({"name":"y","op":"call_function","target":"f","args":[{"node":"x"},")" +
        std::string(std::size_t{3} << 20, 'a') + R"("],"kwargs":{},"meta":{}})" + ",\n" +
        R"({"name":"output","op":"output","target":"output","args":[{"node":"y"}],"kwargs":{},"meta":{}})";
    std::string text = doc_with_modules(kModuleA, nodes);
    auto [in_turn, threaded] = both_ways(text);
    CHECK(in_turn == text);
    CHECK(threaded == text);
  }
  const std::string node_x = kX;
  const std::string node_y_uses_z =
      R"({"name":"y","op":"call_function","target":"f","args":[{"node":"z"}],"kwargs":{},"meta":{}})";
  struct Case {
    const char* what;
    std::string text;
    const char* error;
  };
  std::string many;  // a late error, after several batches went to the graph
  for (int i = 0; i < 4500; ++i)
    many += R"({"name":"n)" + std::to_string(i) +
        R"(","op":"placeholder","target":"n","args":[],"kwargs":{},"meta":{}},)" + "\n";
  std::string lots;  // over a mebibyte: the failing line is read again from past the first streamed buffer
  for (int i = 0; i < 15000; ++i)
    lots += R"({"name":"n)" + std::to_string(i) +
        R"(","op":"placeholder","target":"n","args":[],"kwargs":{},"meta":{}},)" + "\n";
  const Case cases[] = {
      {"unknown node past the first mebibyte", doc_with_modules(kModuleA, lots + node_y_uses_z),
       "g.json: $.nodes[15000].args[0].node: unknown node 'z' (a node may only use nodes listed before it)"},
      {"a bad value past the first mebibyte",
       doc_with_modules(
           kModuleA,
           lots +
               R"({"name":"y","op":"call_function","target":"f","args":[],"kwargs":{},"meta":{"tensor_meta":{"shape":[1.5],"dtype":"f","stride":[],"device":"cpu"}}})"),
       "g.json: $.nodes[15000].meta.tensor_meta.shape[0]: expected an integer, found a float"},
      {"duplicate name late in a large file", doc_with_modules(kModuleA, many + node_x + ",\n" + node_x),
       "g.json: $.nodes[4501].name: duplicate node name 'x'"},
      {"unknown node late in a large file", doc_with_modules(kModuleA, many + node_y_uses_z),
       "g.json: $.nodes[4500].args[0].node: unknown node 'z' (a node may only use nodes listed before it)"},
      {"errors in a module line and a node line: the module's comes first",
       doc_with_modules(std::string(kModuleA) + ",\n" + kModuleA, node_y_uses_z),
       "g.json: $.modules[1].path: duplicate module path 'a'"},
      {"bad key in a module line", doc_with_modules(R"({"path":"a","klass":"A","parameters":[],"buffers":[]})", node_x),
       "g.json: $.modules[0]: unknown key 'klass' (expected: path, class, parameters, buffers, attributes, origin, opaque, graph)"},
      {"wrong format in the head", doc_with_modules(kModuleA, node_y_uses_z).replace(13, 11, "graft-grap_"),
       "g.json: $.format: expected \"graft-graph\", found \"graft-grap_\""},
      {"syntax error in a node line", doc_with_modules(kModuleA, node_x + ",\n{\"name\":}"),
       "g.json:10:9: invalid JSON: syntax error while parsing value - unexpected '}'; expected '[', '{', or a literal"},
      {"a bad node before a break in the one-per-line layout",
       doc_with_modules(kModuleA, node_y_uses_z + ",\n" + node_x + ", " + node_x),
       "g.json: $.nodes[0].args[0].node: unknown node 'z' (a node may only use nodes listed before it)"},
      {"a break in the layout before a bad node",
       doc_with_modules(kModuleA, node_x + ", " + node_x + ",\n" + node_y_uses_z),
       "g.json: $.nodes[1].name: duplicate node name 'x'"},
      {"an unknown node and a bad value later on the same line: the reference comes first",
       doc_with_modules(
           kModuleA,
           many +
               R"({"name":"y","op":"call_function","target":"f","args":[{"node":"z"}],"kwargs":{},"meta":{"tensor_meta":{"shape":[1.5],"dtype":"f","stride":[],"device":"cpu"}}})"),
       "g.json: $.nodes[4500].args[0].node: unknown node 'z' (a node may only use nodes listed before it)"},
      {"a taken name whose line also names an unknown node: the reference comes first",
       doc_with_modules(
           kModuleA,
           many + R"({"name":"n7","op":"call_function","target":"f","args":[{"node":"z"}],"kwargs":{},"meta":{}})"),
       "g.json: $.nodes[4500].args[0].node: unknown node 'z' (a node may only use nodes listed before it)"},
      {"a reference spelled with escapes",
       doc_with_modules(
           kModuleA,
           many +
               R"({"name":"y","op":"call_function","target":"f\u0041","args":[{"node":"n\u0031"}],"kwargs":{},"meta":{}},)" +
               "\n" + node_y_uses_z),
       "g.json: $.nodes[4501].args[0].node: unknown node 'z' (a node may only use nodes listed before it)"},
      {"an unknown node, then a line that is not JSON",
       doc_with_modules(kModuleA, many + node_y_uses_z + ",\n{\"name\":}"),
       "g.json: $.nodes[4500].args[0].node: unknown node 'z' (a node may only use nodes listed before it)"},
      {"a taken name, then a missing comma",
       doc_with_modules(kModuleA, many + node_x + ",\n" + node_x + ",\n" + node_x + "\n" + node_x),
       "g.json: $.nodes[4501].name: duplicate node name 'x'"},
      {"a bad module line and no meta: the module comes first, as in the document",
       std::string("{\n\"format\": \"graft-graph\",\n\"version\": 1,\n\"modules\": [\n") +
           R"({"path":"a","klass":"A","parameters":[],"buffers":[]})" + "\n],\n\"nodes\": [\n" + node_x + "\n]\n}\n",
       "g.json: $.modules[0]: unknown key 'klass' (expected: path, class, parameters, buffers, attributes, origin, opaque, graph)"},
      {"syntax error in a module line", doc_with_modules("{\"path\":}", node_x),
       "g.json:6:9: invalid JSON: syntax error while parsing value - unexpected '}'; expected '[', '{', or a literal"},
  };
  for (const Case& c : cases) {
    INFO(c.what);
    auto [in_turn, threaded] = both_ways(c.text);
    CHECK(in_turn == std::string("error: ") + c.error);
    CHECK(threaded == in_turn);
  }
}

TEST_CASE("json: a file cut short while its lines are streamed is read whole, never loaded in part") {
  std::string nodes = kX;
  for (int i = 0; i < 40000; ++i)
    nodes += ",\n" + std::string(R"({"name":"r)") + std::to_string(i) +
        R"(","op":"call_function","target":"f","args":[{"node":")" +
        (i == 0 ? std::string("x") : "r" + std::to_string(i - 1)) + R"("}],"kwargs":{},"meta":{}})";
  nodes += ",\n" +
      std::string(
               R"({"name":"output","op":"output","target":"output","args":[{"node":"r39999"}],"kwargs":{},"meta":{}})");
  std::string text = doc_with_modules(kModuleA, nodes);
  ScratchDir dir("graft_json_cut_short");
  REQUIRE(write_output_file(dir.file("g.json"), text).is_ok());
  ThreadedLoads threaded;
  // Where the cut falls: in the head, in a middle segment, in the last line, and (white box:
  // the reader cuts bodies under 16 MiB into sixteen segments) just before the second and the
  // sixth segment, where only the search for the segment's first line reads past it.
  std::uint64_t body = text.find("\n\"nodes\": [\n") + 12;
  std::uint64_t segment = std::max<std::uint64_t>((text.size() - 5 - body) / 16, 65536);
  for (std::uint64_t cut : {std::uint64_t{100}, std::uint64_t{text.size() * 3 / 5}, std::uint64_t{text.size() - 40},
                            body + segment - 1, body + 5 * segment - 1}) {
    INFO("cut at " << cut << " of " << text.size());
    struct Restore {
      ~Restore() { detail::set_stream_read_limit(~std::uint64_t{0}); }
    } restore;
    detail::set_stream_read_limit(cut);
    std::size_t streamed_before = detail::streamed_loads();
    Result<GraphModule> gm = load_graph_file(dir.file("g.json"));
    REQUIRE_MESSAGE(gm.is_ok(), gm.status().message());
    CHECK(gm->graph.size() == 40002);  // all of it, read whole after the streamed read came up short
    CHECK(to_graph_json(gm.value()).value() == text);
    CHECK(detail::streamed_loads() == streamed_before);
  }
  std::size_t streamed_before = detail::streamed_loads();
  CHECK(load_graph_file(dir.file("g.json")).is_ok());
  CHECK(detail::streamed_loads() == streamed_before + 1);  // uncut, it is streamed
}

TEST_CASE("json: a file with a head of 65 MiB loads exactly, streamed or read whole in two halves at once") {
  std::string head = "{\n\"format\": \"graft-graph\",\n\"version\": 1,\n\"meta\": {\"pad\":\"" +
      std::string(std::size_t{65} << 20, 'p') + "\"},\n\"modules\": [],\n\"nodes\": [";
  std::string output =
      R"({"name":"output","op":"output","target":"output","args":[{"node":"x"}],"kwargs":{},"meta":{}})";
  ScratchDir dir("graft_json_big_file");
  SUBCASE("canonical: the node lines are streamed, the head is found past many scan windows") {
    std::string text = head + "\n" + kX + ",\n" + output + "\n]\n}\n";
    REQUIRE(write_output_file(dir.file("big.json"), text).is_ok());
    std::size_t streamed_before = detail::streamed_loads();
    Result<GraphModule> gm = load_graph_file(dir.file("big.json"));
    REQUIRE_MESSAGE(gm.is_ok(), gm.status().message());
    CHECK(to_graph_json(gm.value()).value() == text);
    CHECK(detail::streamed_loads() == streamed_before + 1);
  }
  SUBCASE("not canonical (two nodes on one line): the file is read whole, in two halves at once") {
    std::string text = head + "\n" + kX + ", " + output + "\n]\n}\n";
    REQUIRE(write_output_file(dir.file("big.json"), text).is_ok());
    std::size_t streamed_before = detail::streamed_loads();
    Result<GraphModule> gm = load_graph_file(dir.file("big.json"));
    REQUIRE_MESSAGE(gm.is_ok(), gm.status().message());
    CHECK(gm->graph.size() == 2);
    CHECK(to_graph_json(gm.value()).value() == head + "\n" + kX + ",\n" + output + "\n]\n}\n");
    CHECK(detail::streamed_loads() == streamed_before);  // it tried, found the layout broken, and read it whole
  }
}

TEST_CASE("json: a missing file is an error naming it") {
  Result<GraphModule> r = load_graph_file("/nonexistent/graph.json");
  REQUIRE_FALSE(r.is_ok());
  CHECK(r.status().message() == "/nonexistent/graph.json: cannot open: No such file or directory");
}

TEST_CASE("json: saving is atomic and leaves nothing behind on failure") {
  namespace fs = std::filesystem;
  ScratchDir dir("graft_json_test");
  Result<GraphModule> gm = load_graph_file(data("all_kinds.json"));
  REQUIRE(gm.is_ok());
  std::string out = dir.file("out.json");
  REQUIRE(save_graph_file(gm.value(), out).is_ok());
  CHECK(read(out) == read(data("all_kinds.json")));

  Status bad = save_graph_file(gm.value(), dir.file("missing/out.json"));
  CHECK_FALSE(bad.is_ok());
  CHECK(std::distance(fs::directory_iterator(dir.path), fs::directory_iterator()) == 1);
}

TEST_CASE("json: saving keeps an existing file's permissions and honours the umask for new ones") {
  namespace fs = std::filesystem;
  ScratchDir dir("graft_mode_test");
  Result<GraphModule> gm = load_graph_file(data("all_kinds.json"));
  REQUIRE(gm.is_ok());
  std::string existing = dir.file("existing.json");
  REQUIRE(write_output_file(existing, "old").is_ok());
  fs::permissions(existing, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  REQUIRE(save_graph_file(gm.value(), existing).is_ok());
  CHECK(fs::status(existing).permissions() == (fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read));

  mode_t mask = ::umask(022);
  std::string fresh = dir.file("fresh.json");
  REQUIRE(save_graph_file(gm.value(), fresh).is_ok());
  ::umask(mask);
  CHECK(fs::status(fresh).permissions() ==
        (fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::others_read));
}

TEST_CASE("json: saving refuses a graph whose order is not topological") {
  // x; a = relu(x); b = sigmoid(a); c = neg(x); output(b) -- then b reads c, defined after it.
  GraphModule gm;
  Graph& g = gm.graph;
  NodeId x = g.placeholder("x");
  NodeId a = g.create_node(OpKind::CallFunction, "torch.relu", {Argument::node(x)});
  NodeId b = g.create_node(OpKind::CallFunction, "torch.sigmoid", {Argument::node(a)});
  NodeId c = g.create_node(OpKind::CallFunction, "torch.neg", {Argument::node(x)});
  g.output(Argument::node(b));
  g.replace_all_uses_with(a, c);
  Result<std::string> text = to_graph_json(gm);
  REQUIRE_FALSE(text.is_ok());
  CHECK(text.status().message() ==
        "node 'sigmoid': uses 'neg' before it is defined (stable_topological_sort() orders the graph)");
  REQUIRE(stable_topological_sort(g).is_ok());
  Result<std::string> fixed = to_graph_json(gm);
  REQUIRE(fixed.is_ok());
  CHECK(parse_graph_json(fixed.value()).is_ok());
}
