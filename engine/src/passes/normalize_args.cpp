// Argument normalisation through operator schemas.
#include "graft/passes/normalize_args.hpp"
#include "graft/passes/pass_registry.hpp"

#include <utility>

#include "graft/ir/schema_binding.hpp"

namespace graft {

namespace {

struct Canonical {
  std::vector<Argument> args;
  Kwargs kwargs;
  friend bool operator==(const Canonical&, const Canonical&) = default;
};

/// The canonical spelling of one binding (bind_call checked that every required argument is there).
Canonical canonical_form(const BoundCall& call, const NormalizeOptions& o, bool python_names, bool method) {
  const DefaultArguments defaults = o.defaults;
  const auto& params = call.schema->arguments;
  std::vector<std::optional<Argument>> values = call.values;
  for (std::size_t i = 0; i < params.size(); ++i) {
    if (defaults == DefaultArguments::Keep) break;
    std::optional<Argument> d = schema_default(params[i]);
    if (!d) continue;
    if (defaults == DefaultArguments::Explicit && !values[i]) values[i] = std::move(d);
    else if (defaults == DefaultArguments::Drop && values[i] && *values[i] == *d) values[i].reset();
  }
  Canonical out;
  bool positional = true;
  for (std::size_t i = 0; i < params.size(); ++i) {
    if (!values[i]) {
      if (!params[i].kwarg_only) positional = false;
      continue;
    }
    // A method's receiver, and `self` of a torch.ops operator (which Python cannot pass by
    // keyword to an OpOverload), stay positional.
    if (o.keywords && !(i == 0 && (method || (!python_names && params[0].name == "self")))) positional = false;
    if (positional && !params[i].kwarg_only) {
      out.args.push_back(std::move(*values[i]));
    } else {
      const std::string& name = python_names && params[i].name == "self" ? std::string("input") : params[i].name;
      out.kwargs.emplace_back(name, std::move(*values[i]));
    }
  }
  return out;
}

}  // namespace

NormalizeReport normalize_arguments(Graph& g, const OpSchemaRegistry& schemas, const NormalizeOptions& options) {
  NormalizeReport report;
  for (NodeId n = g.first(); n != kNoNode; n = g.next(n)) {
    const OpKind op = g.op(n);
    if (op != OpKind::CallFunction && !(op == OpKind::CallMethod && options.methods)) continue;
    const CallSchemas candidates = schemas_for_call(schemas, op, g.target(n));
    if (candidates.candidates.empty()) {
      ++report.no_schema;
      continue;
    }
    std::string why;
    const std::vector<BoundCall> bound = bind_call(schemas, g, n, &why);
    if (bound.empty()) {
      report.skipped.push_back({n, "no schema fits its arguments (" + why + ")"});
      continue;
    }
    const bool method = op == OpKind::CallMethod;
    Canonical form = canonical_form(bound.front(), options, candidates.python_names, method);
    bool ambiguous = false;
    for (std::size_t i = 1; i < bound.size() && !ambiguous; ++i)
      ambiguous = !(canonical_form(bound[i], options, candidates.python_names, method) == form);
    if (ambiguous) {
      std::string names;
      for (const BoundCall& b : bound) names += (names.empty() ? "" : ", ") + to_string(*b.schema);
      report.skipped.push_back({n, "its arguments fit several overloads that spell them differently: " + names});
      continue;
    }
    if (form.args == g.args(n) && form.kwargs == g.kwargs(n)) {
      ++report.unchanged;
      continue;
    }
    // Same values, new places: set_args and set_kwargs cannot fail for values the node had.
    (void)g.set_args(n, std::move(form.args));
    (void)g.set_kwargs(n, std::move(form.kwargs));
    ++report.changed;
  }
  return report;
}

NormalizeOptions normalize_options(const PassOptions& options) {
  NormalizeOptions out;
  const std::string defaults = options.word("defaults", "explicit");
  out.defaults = defaults == "drop" ? DefaultArguments::Drop
      : defaults == "keep"          ? DefaultArguments::Keep
                                    : DefaultArguments::Explicit;
  out.methods = options.flag("methods", out.methods);
  out.keywords = options.flag("keywords", out.keywords);
  return out;
}

ReportValue normalize_report(NormalizeReport r) {
  ReportValue skipped = ReportValue::list();
  skipped.items.reserve(r.skipped.size());
  for (NormalizeSkip& skip : r.skipped)
    skipped.add(ReportValue::record()
                    .set("node", ReportValue::node_ref(skip.node))
                    .set("reason", ReportValue::string(std::move(skip.reason))));
  ReportValue out = ReportValue::record();
  out.set("changed", ReportValue::integer(static_cast<std::int64_t>(r.changed)))
      .set("unchanged", ReportValue::integer(static_cast<std::int64_t>(r.unchanged)))
      .set("no_schema", ReportValue::integer(static_cast<std::int64_t>(r.no_schema)))
      .set("skipped", std::move(skipped));
  return out;
}

extern const PassInfo kNormalizeArgsPass{
    .name = "normalize_args",
    .method = "normalize_args",
    .summary = "Every call with a known schema in one spelling (torch.fx's normalize_function).",
    .report = "{changed, unchanged, no_schema, skipped = {{node, reason}}}",
    .options = {{.name = "defaults",
                 .choices = {"explicit", "drop", "keep"},
                 .fallback = "explicit",
                 .doc = "arguments equal to their default: written out, left out, or as they are"},
                {.name = "methods", .choices = {}, .fallback = "true", .doc = "also call_method nodes"},
                {.name = "keywords", .choices = {}, .fallback = "false", .doc = "every argument as a keyword"}},
    .run = [](PassContext& c, const PassOptions& options) -> Result<ReportValue> {
      NormalizeReport r = normalize_arguments(c.graph(), c.schemas, normalize_options(options));
      return c.wants_report ? normalize_report(std::move(r)) : ReportValue{};
    },
};

}  // namespace graft
