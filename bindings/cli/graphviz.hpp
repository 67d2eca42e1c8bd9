// Rendering DOT to SVG with Graphviz's `dot`, when it is installed.
#pragma once

#include <string>

#include "graft/status.hpp"

namespace graft::cli {

/// True if a `dot` executable is on PATH.
bool graphviz_available();
/// Runs `dot -Tsvg` on `dot_text` and writes the SVG to `svg_path` atomically.
Status render_svg(const std::string& dot_text, const std::string& svg_path);

}  // namespace graft::cli
