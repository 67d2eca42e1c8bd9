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
  bool keep_names = false;  ///< new nodes in replaced nodes' places take their names
  std::string meta;  ///< drop, outputs or all ("" = keep_meta decides)
  bool modules_by_class = false;  ///< the pattern's module calls match modules of the same class
  MatchOptions match{};
  bool json = false;
  bool keep_unused_modules =
      false;  ///< keep module entries no node uses after the rewrite  ///< print the per-replacement report as JSON instead of the summary line
};

int cmd_rewrite(const RewriteCommandOptions& o);

}  // namespace graft::cli
