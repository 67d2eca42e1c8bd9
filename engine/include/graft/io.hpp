// The file layer (graft::io): graph files read and written, atomic outputs, and the views a
// person reads (the table, the text notation, DOT, counts).
#pragma once

#include "graft/io/atomic_file.hpp"
#include "graft/io/dot.hpp"
#include "graft/io/graph_json.hpp"
#include "graft/io/graph_text.hpp"
#include "graft/io/stats.hpp"
#include "graft/io/tabular.hpp"
#include "graft/ir.hpp"
