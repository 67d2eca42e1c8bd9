// `graft rewrite`: replace every match of a pattern graph by a replacement graph.
#pragma once

#include <string>

#include "graft/rewrite/replace_pattern.hpp"

namespace graft::cli {

struct RewriteCommandOptions {
  std::string pattern;
  std::string replacement;
  std::string graph;
  std::string output;
  bool keep_meta = false;
  MatchOptions match{};
};

int cmd_rewrite(const RewriteCommandOptions& o);

}  // namespace graft::cli
